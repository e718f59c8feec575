package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// twoSites is one Caddy with two sites, each with its own robots_guard and
// robots.txt: A, a static site (file_server), and B, an application
// behind reverse_proxy; zone, when set, is named by both guards.
type twoSites struct {
	dir, a, b, admin string
	portA, portB     int
	decisions        string
	output           *syncBuffer
}

func startTwoSites(t *testing.T, zone string) *twoSites {
	t.Helper()
	dir := t.TempDir()
	copyDir(t, "../site", filepath.Join(dir, "site"))
	appRobots := writeTestFile(t, dir, "app/robots.txt", "User-agent: *\nDisallow: /admin/\n")
	writeTestFile(t, dir, "app/index.html", "<h1>the app</h1>\n")
	writeTestFile(t, dir, "app/private/report.html", "<h1>the app's own private page</h1>\n")
	s := &twoSites{dir: dir, portA: freePort(t), portB: freePort(t), decisions: filepath.Join(dir, "robots_guard.log")}
	s.a, s.b = fmt.Sprintf("http://127.0.0.1:%d", s.portA), fmt.Sprintf("http://127.0.0.1:%d", s.portB)
	s.admin = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	app := freePort(t)
	zoneLine := ""
	if zone != "" {
		zoneLine = "zone " + zone
	}
	config := writeTestFile(t, dir, "Caddyfile", fmt.Sprintf(`{
	admin %[1]s
	auto_https off
	log robots_guard {
		output file %[2]s
		format json
		include http.handlers.robots_guard
	}
}
# A: a static site.
:%[3]d {
	bind 127.0.0.1
	robots_guard {
		robots %[4]s/site/robots.txt
		strikes 3
		verify off
		%[7]s
	}
	root * %[4]s/site
	file_server
}
# B: an application behind reverse_proxy, with a robots.txt of its own.
:%[5]d {
	bind 127.0.0.1
	robots_guard {
		robots %[8]s
		strikes 3
		verify off
		%[7]s
	}
	reverse_proxy 127.0.0.1:%[6]d
}
:%[6]d {
	bind 127.0.0.1
	root * %[4]s/app
	file_server
}
`, s.admin, s.decisions, s.portA, dir, s.portB, app, zoneLine, appRobots))
	cmd := exec.Command(caddyBin, "run", "--config", config)
	cmd.Dir = dir
	s.output = &syncBuffer{}
	cmd.Stdout, cmd.Stderr = s.output, s.output
	startProcess(t, cmd, "caddy", s.output, 5*time.Second)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ra, errA := http.Get(s.a + "/robots.txt")
		rb, errB := http.Get(s.b + "/robots.txt")
		if errA == nil && errB == nil {
			ra.Body.Close()
			rb.Body.Close()
			if ra.StatusCode == 200 && rb.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("caddy did not start:\n%s", s.output.String())
		}
	}
}

// ignoringSpider fetches its start URLs with Scrapy, robots.txt ignored,
// and writes each answer's URL and status.
const ignoringSpider = `
import json
import scrapy


class Ignoring(scrapy.Spider):
    name = "ignoring"
    custom_settings = {"ROBOTSTXT_OBEY": False, "HTTPERROR_ALLOW_ALL": True, "RETRY_ENABLED": False,
                       "CONCURRENT_REQUESTS": 1, "LOG_LEVEL": "WARNING", "TELNETCONSOLE_ENABLED": False}

    def __init__(self, urls=None, out=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.urls, self.out, self.got = urls.split(","), out, []

    def start_requests(self):
        for u in self.urls:
            yield scrapy.Request(u, dont_filter=True)

    def parse(self, response):
        self.got.append({"url": response.url, "status": response.status})

    def closed(self, reason):
        with open(self.out, "w") as f:
            json.dump(self.got, f)
`

// scrapyIgnoring fetches urls with Scrapy, robots.txt ignored, one at a
// time, and returns the statuses it got.
func scrapyIgnoring(t *testing.T, urls ...string) string {
	t.Helper()
	dir := t.TempDir()
	spider := writeTestFile(t, dir, "spider.py", ignoringSpider)
	out := filepath.Join(dir, "out.json")
	cmd := exec.Command("scrapy", "runspider", spider, "-a", "urls="+strings.Join(urls, ","), "-a", "out="+out)
	cmd.Dir = dir
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scrapy: %v\n%s", err, log)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestSitesKeepTheirState (issue 39, point 1): one Caddy, two sites, each
// with its own robots_guard and robots.txt, no zone: Scrapy, ignoring
// robots.txt on site A, is blocked there, and is served on site B, where
// it did nothing wrong; caddy robots blocked names the site of the block.
// With a zone both name, the block holds on both: the operator shared it.
func TestSitesKeepTheirState(t *testing.T) {
	need(t, "scrapy", "curl")
	const scrapyUA = "Scrapy/2.11.2 (+https://scrapy.org)"
	for _, tc := range []struct {
		zone      string
		servedOnB bool
	}{{"", true}, {"shop", false}} {
		name := "per site"
		if tc.zone != "" {
			name = "zone " + tc.zone
		}
		t.Run(name, func(t *testing.T) {
			s := startTwoSites(t, tc.zone)
			// Scrapy reads A's disallowed pages, robots.txt ignored, and
			// earns a block there.
			got := scrapyIgnoring(t, s.a+"/private/", s.a+"/~sam/", s.a+"/private/report.html", s.a+"/private/")
			t.Logf("Scrapy, robots.txt ignored, on A: %s", got)
			if code, guard, _ := curl(t, s.a, "/about.html", scrapyUA); code != 403 || guard != "blocked_client" && guard != "blocked" {
				t.Fatalf("Scrapy on A after its strikes: %d %q\n%s", code, guard, s.output.String())
			}
			code, guard, body := curl(t, s.b, "/", scrapyUA)
			if tc.servedOnB && (code != 200 || !strings.Contains(body, "the app")) {
				t.Errorf("Scrapy on B, where it did nothing wrong: %d %q %q", code, guard, body)
			}
			if !tc.servedOnB && code != 403 {
				t.Errorf("Scrapy on B, with the zone shared: %d %q", code, guard)
			}
			out, err := exec.Command(caddyBin, "robots", "blocked", "--address", s.admin).CombinedOutput()
			if err != nil {
				t.Fatalf("caddy robots blocked: %v\n%s", err, out)
			}
			t.Logf("caddy robots blocked:\n%s", out)
			want := fmt.Sprintf(":%d", s.portA) // the site whose decision blocked it
			if tc.zone != "" {
				want += " (zone " + tc.zone + ")"
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) < 3 || !strings.HasPrefix(lines[1], want+" ") || strings.Contains(string(out), fmt.Sprintf(":%d ", s.portB)) {
				t.Errorf("caddy robots blocked does not name the block's site %s:\n%s", want, out)
			}
			if _, err := os.Stat(s.decisions); err != nil {
				t.Error(err)
			}
			// check --config finds each URL's site by its port, with no
			// --site (point 7): A's rules for A, B's for B.
			config := filepath.Join(s.dir, "Caddyfile")
			for _, c := range []struct{ url, want string }{
				{s.a + "/private/", "disallowed\t" + s.a + "/private/\t(group *; line 16: Disallow: /private/)"},
				{s.b + "/private/report.html", "allowed\t" + s.b + "/private/report.html\t(group *; no rule matches)"},
				{s.b + "/admin/", "disallowed\t" + s.b + "/admin/\t(group *; line 2: Disallow: /admin/)"},
			} {
				out, err := exec.Command(caddyBin, "robots", "check", "--config", config, "-A", "ExampleBot/1.0", c.url).CombinedOutput()
				if err != nil || !strings.Contains(string(out), c.want) {
					t.Errorf("check --config %s: %v\n%s\nwant %q", c.url, err, out, c.want)
				}
			}
			// check with neither --config nor --robots (point 3): never a
			// silent "allowed" about nothing: it fetches the URL's
			// robots.txt, as the site serves it, and says so; a path
			// without its site is an error.
			out, err = exec.Command(caddyBin, "robots", "check", "-A", "ExampleBot/1.0", s.b+"/admin/").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "check: robots.txt: "+s.b+"/robots.txt, fetched now (HTTP 200") ||
				!strings.Contains(string(out), "disallowed\t"+s.b+"/admin/\t(group *; line 2: Disallow: /admin/)") {
				t.Errorf("check without rules: %v\n%s", err, out)
			}
			out, err = exec.Command(caddyBin, "robots", "check", "-A", "ExampleBot/1.0", "/admin/").CombinedOutput()
			if err == nil || !strings.Contains(string(out), "with neither --config nor --robots, give URLs with their site") {
				t.Errorf("check of a path without rules: %v\n%s", err, out)
			}
		})
	}
}
