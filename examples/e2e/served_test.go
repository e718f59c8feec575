package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/policy"
)

// The served robots.txt (issue 26, issue 29 items 2 and 3): the site's
// own file, byte for byte, then robots_guard's additions; with no robots
// line, the file the site itself serves.

const servedGPTBot = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"

// getUA GETs base+path as ua with the header fields given as name, value
// pairs, and returns the response (its body read) and the body.
func getUA(t *testing.T, base, path, ua string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", ua)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// TestMistakeNoRobotsLine (issue 26, mistake 1): robots_guard with no
// robots line, in front of a reverse_proxy to a site that serves its own
// robots.txt ("Disallow: /admin/"), and the same with file_server. Before:
// an empty robots.txt was served in place of the site's and GPTBot read
// /admin/. Now the guard reads what the site serves, serves it byte for
// byte with the trap appended, and refuses GPTBot on /admin/, naming the
// site's line.
func TestMistakeNoRobotsLine(t *testing.T) {
	need(t, "curl")
	const site = "# The site's own robots.txt\nUser-agent: *\nDisallow: /admin/\n"
	for _, backend := range []string{"reverse_proxy", "file_server"} {
		t.Run(backend, func(t *testing.T) {
			s := start(t, options{ownRobots: true, robots: site, backend: backend})
			resp, body := getUA(t, s.front, "/robots.txt", "curl/8")
			if resp.StatusCode != 200 || !strings.HasPrefix(body, site+"\n"+policy.AddedHeading) || !strings.Contains(body, "Disallow: /private-archive/\n") {
				t.Fatalf("served robots.txt (%d):\n%s", resp.StatusCode, body)
			}
			resp, _ = getUA(t, s.front, "/admin/users.html", servedGPTBot)
			if resp.StatusCode != 403 || resp.Header.Get("X-Robots-Guard-Rule") != "robots.txt line 3: Disallow: /admin/" {
				t.Errorf("GPTBot on /admin/: %d %q", resp.StatusCode, resp.Header.Get("X-Robots-Guard-Rule"))
			}
			resp, body = getUA(t, s.front, "/about.html", firefox)
			if resp.StatusCode != 200 || !strings.Contains(body, "<h1>") {
				t.Errorf("browser on /about.html: %d", resp.StatusCode)
			}
			resp, _ = getUA(t, s.front, "/about.html", servedGPTBot)
			if resp.StatusCode != 200 {
				t.Errorf("GPTBot on an allowed page: %d", resp.StatusCode)
			}
		})
	}
}

// TestOwnRobotsFollowsSite: the site's own robots.txt is fetched again
// every robots_refresh; one that disappears (404) leaves the generated file
// (the additions only), and the log says so once.
func TestOwnRobotsFollowsSite(t *testing.T) {
	need(t, "curl")
	s := start(t, options{ownRobots: true, robots: "User-agent: *\nDisallow: /admin/\n", backend: "file_server", guard: "robots_refresh 1s"})
	if resp, _ := getUA(t, s.front, "/admin/", servedGPTBot); resp.StatusCode != 403 {
		t.Fatalf("GPTBot on /admin/: %d", resp.StatusCode)
	}
	if err := os.WriteFile(s.robots, []byte("User-agent: *\nDisallow: /admin/\nDisallow: /docs/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the changed file", func() bool {
		resp, _ := getUA(t, s.front, "/docs/", servedGPTBot)
		return resp.StatusCode == 403
	})
	if err := os.Remove(s.robots); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the generated file", func() bool {
		_, body := getUA(t, s.front, "/robots.txt", "curl/8")
		return strings.HasPrefix(body, policy.AddedHeading)
	})
	time.Sleep(2500 * time.Millisecond) // two more refreshes
	if n := strings.Count(s.output.String(), "the application has none"); n != 1 {
		t.Errorf("the missing robots.txt logged %d times, want once:\n%s", n, s.output.String())
	}
	if !strings.Contains(s.output.String(), `"from":"the site's own /robots.txt`) {
		t.Error("the log does not say where the robots.txt comes from")
	}
	if resp, _ := getUA(t, s.front, "/admin/", servedGPTBot); resp.StatusCode == 403 {
		t.Error("GPTBot still refused on /admin/ after the site's robots.txt went away")
	}
}

// TestServedWithComments: a site's file with comments, a group of its own
// for Googlebot and a rule-less last group is served byte for byte before
// the additions (block_class ai, the trap, a sitemap); refusals name the
// site's line numbers; and a crawler that reads the served file the RFC way
// (robotsguard's parser in both readings of the groups, and Scrapy's
// protego) finds the trap disallowed for every group, and the blocked
// class's tokens disallowed everywhere.
func TestServedWithComments(t *testing.T) {
	need(t, "curl")
	const site = "# Example site: robots welcome, mind the rules.\n" +
		"User-agent: *   # everyone\n" +
		"Disallow: /private/\n" +
		"X-Custom-Field: kept as written\n" +
		"\n" +
		"# Google may read the docs, not the drafts.\n" +
		"User-agent: Googlebot\n" +
		"Disallow: /docs/drafts/\n" +
		"\n" +
		"User-agent: FooBot\n" +
		"Crawl-delay: 3"
	s := start(t, options{robots: site, guard: "block_class ai\n\t\tsitemap http://localhost/sitemap.xml"})
	resp, served := getUA(t, s.front, "/robots.txt", "curl/8")
	if resp.StatusCode != 200 || !strings.HasPrefix(served, site+"\n") {
		t.Fatalf("the served file does not start with the site's bytes:\n%s", served)
	}
	rest := served[len(site)+1:]
	if !strings.Contains(rest, policy.AddedHeading) || !strings.Contains(rest, "Sitemap: http://localhost/sitemap.xml") {
		t.Errorf("the additions:\n%s", rest)
	}
	for _, word := range []string{"User-agent: the\n", "User-agent: spider\n", "User-agent: operator\n", "User-agent: cursor\n"} {
		if strings.Contains(served, word) {
			t.Errorf("the served file names an everyday word: %q", word)
		}
	}
	const googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	if resp, _ := getUA(t, s.front, "/docs/drafts/a.html", googlebot); resp.StatusCode != 403 || resp.Header.Get("X-Robots-Guard-Rule") != "robots.txt line 8: Disallow: /docs/drafts/" {
		t.Errorf("Googlebot on drafts: %d %q", resp.StatusCode, resp.Header.Get("X-Robots-Guard-Rule"))
	}
	if resp, _ := getUA(t, s.front, "/private/x.html", "ExampleBot/1.0 (+https://bot.example/)"); resp.StatusCode != 403 || resp.Header.Get("X-Robots-Guard-Rule") != "robots.txt line 3: Disallow: /private/" {
		t.Errorf("ExampleBot on /private/: %d %q", resp.StatusCode, resp.Header.Get("X-Robots-Guard-Rule"))
	}

	agents := []string{"*", "googlebot", "foobot", "examplebot", "gptbot", "claudebot", "ccbot"}
	blocked := map[string]bool{"gptbot": true, "claudebot": true, "ccbot": true}
	p := policy.Compile(policy.Parse([]byte(served)))
	for _, a := range agents {
		tokens := []string{a}
		if a == "*" {
			tokens = nil
		}
		for _, reading := range []policy.Reading{policy.GoogleReading, policy.SplitReading} {
			for path, allowed := range map[string]bool{"/private-archive/x": false, "/about.html": !blocked[a]} {
				tg, _ := policy.ParseTarget(path)
				if got := p.MatchReading(tokens, &tg, reading).Allowed; got != allowed {
					t.Errorf("%s, %v reading, %s: allowed %v, want %v", a, reading, path, got, allowed)
				}
			}
		}
	}
	// Scrapy's protego, as a crawler built on it reads the file.
	if _, err := exec.LookPath("python3"); err != nil {
		return
	}
	file := filepath.Join(t.TempDir(), "served.txt")
	if err := os.WriteFile(file, []byte(served), 0o644); err != nil {
		t.Fatal(err)
	}
	const script = `
import sys
try:
    from protego import Protego
except ImportError:
    print("no protego"); sys.exit(0)
rp = Protego.parse(open(sys.argv[1]).read())
for agent in sys.argv[2:]:
    print(agent, rp.can_fetch("http://localhost/private-archive/x", agent), rp.can_fetch("http://localhost/about.html", agent))
`
	out, err := exec.Command("/usr/bin/python3", append([]string{"-c", script, file}, "Mozilla/5.0", "Googlebot", "FooBot", "ExampleBot", "GPTBot", "ClaudeBot", "CCBot")...).CombinedOutput()
	if err != nil {
		t.Fatalf("protego: %v\n%s", err, out)
	}
	if strings.TrimSpace(string(out)) == "no protego" {
		t.Log("protego is not installed: the RFC reading is checked with robotsguard's parser only")
		return
	}
	want := "Mozilla/5.0 False True\nGooglebot False True\nFooBot False True\nExampleBot False True\nGPTBot False False\nClaudeBot False False\nCCBot False False\n"
	if string(out) != want {
		t.Errorf("protego reads the served file as:\n%s\nwant:\n%s", out, want)
	}
}

// TestContradictionRefused (issue 29, item 2): a robots file whose lines
// allow what the trap or block_class adds (the site's "Allow:
// /trap-here/open/" under "trap /trap-here/"; its "User-agent: GPTBot" /
// "Allow: /" under "block_class ai", where the added "Disallow: /" ties
// and loses) is refused at load, naming both lines; the same file without
// them loads.
func TestContradictionRefused(t *testing.T) {
	dir := t.TempDir()
	robots := writeTestFile(t, dir, "robots.txt", "# ours\nUser-agent: *\nAllow: /trap-here/open/\nDisallow: /private/\n\nUser-agent: GPTBot\nAllow: /\n")
	cfg := writeTestFile(t, dir, "Caddyfile", ":8080 {\n\trobots_guard {\n\t\trobots "+robots+"\n\t\ttrap /trap-here/\n\t\tblock_class ai\n\t}\n\trespond ok\n}\n")
	out, code := caddyCmd(t, dir, "validate", "--config", cfg, "--adapter", "caddyfile")
	if code == 0 {
		t.Fatalf("validate accepted the contradiction:\n%s", out)
	}
	for _, want := range []string{`robots.txt line 3 \"Allow: /trap-here/open/\" allows /trap-here/open/ for *`, `\"Disallow: /trap-here/\" (added by robots_guard)`,
		`robots.txt line 7 \"Allow: /\" allows / for gptbot`, `\"Disallow: /\" (added by robots_guard)`} {
		if !strings.Contains(out, want) {
			t.Errorf("validate's error lacks %s:\n%s", want, out)
		}
	}
	writeTestFile(t, dir, "robots.txt", "# ours\nUser-agent: *\nDisallow: /private/\n\nUser-agent: GPTBot\nDisallow: /private/\n")
	if out, code := caddyCmd(t, dir, "validate", "--config", cfg, "--adapter", "caddyfile"); code != 0 {
		t.Errorf("validate refused a file without contradictions:\n%s", out)
	}
}

// TestNoStale304AfterReload (issue 29, item 3): a reload that adds a trap
// changes the served bytes, and so their ETag and Last-Modified: a crawler
// that asks If-Modified-Since with the old date gets the new file (200),
// not 304 with the copy it has. Before, Last-Modified was the robots.txt
// file's time, which the reload does not change.
func TestNoStale304AfterReload(t *testing.T) {
	need(t, "curl")
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := start(t, options{noTrap: true, admin: admin})
	resp, before := getUA(t, s.front, "/robots.txt", "curl/8")
	lastMod, etag := resp.Header.Get("Last-Modified"), resp.Header.Get("ETag")
	if strings.Contains(before, "/trap-new/") || lastMod == "" {
		t.Fatalf("before the reload (%q):\n%s", lastMod, before)
	}
	if resp, _ := getUA(t, s.front, "/robots.txt", "curl/8", "If-Modified-Since", lastMod); resp.StatusCode != 304 {
		t.Fatalf("unchanged: %d, want 304", resp.StatusCode)
	}
	cfgPath := filepath.Join(s.dir, "Caddyfile")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // a reload within the same second as the start is the harder case; either way
	if err := os.WriteFile(cfgPath, []byte(strings.Replace(string(cfg), "\n\trobots_guard {", "\n\trobots_guard {\n\t\ttrap /trap-new/", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := caddyCmd(t, s.dir, "reload", "--config", cfgPath, "--adapter", "caddyfile", "--address", admin); code != 0 {
		t.Fatalf("reload: %s", out)
	}
	resp, after := getUA(t, s.front, "/robots.txt", "curl/8", "If-Modified-Since", lastMod)
	if resp.StatusCode != 200 || !strings.Contains(after, "Disallow: /trap-new/") {
		t.Fatalf("after the reload, If-Modified-Since %s: %d\n%s", lastMod, resp.StatusCode, after)
	}
	if resp.Header.Get("ETag") == etag || resp.Header.Get("Last-Modified") == lastMod {
		t.Errorf("validators unchanged: ETag %s, Last-Modified %s", etag, lastMod)
	}
	if resp, _ := getUA(t, s.front, "/robots.txt", "curl/8", "If-None-Match", etag); resp.StatusCode != 200 {
		t.Errorf("If-None-Match with the old ETag: %d, want 200", resp.StatusCode)
	}
}
