package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// AI usage preferences (issue 18) against the real binary: the robots.txt's
// Content-Usage and Content-Signal lines refuse a bot whose purpose they
// refuse, on paths its Allow and Disallow rules permit; other purposes and
// people are served; the refusal names the line, is logged, counted in the
// metrics and the report, and is never a strike.

const (
	uaGPTBot    = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	uaOAISearch = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot"
	uaBrowser   = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	uaUnknown   = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"
)

// usageRobots is the attachment draft's example on the demo site, in one
// form or the other.
var usageRobots = map[string]string{
	"Content-Usage": `User-agent: *
Allow: /
Disallow: /private/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
`,
	"Content-Signal": `User-agent: *
Allow: /
Disallow: /private/
Content-Signal: search=yes, ai-train=no
`,
}

// usageLine is the line of usageRobots that refuses training.
var usageLine = map[string]string{
	"Content-Usage":  "robots.txt line 4: Content-Usage: train-ai=n",
	"Content-Signal": "robots.txt line 4: Content-Signal: search=yes, ai-train=no",
}

// usageResponse is one curl answer with all its headers.
type usageResponse struct {
	status int
	header http.Header
	body   string
}

func usageFetch(t *testing.T, base, path, ua string) usageResponse {
	t.Helper()
	out, err := exec.Command("curl", "-s", "--path-as-is", "-A", ua, "-D", "-", "-o", "-", "--max-time", "10", base+path).Output()
	if err != nil {
		t.Fatalf("curl %s: %v", path, err)
	}
	head, body, _ := strings.Cut(string(out), "\r\n\r\n")
	lines := strings.Split(head, "\r\n")
	r := usageResponse{header: http.Header{}, body: body}
	fmt.Sscanf(lines[0], "HTTP/1.1 %d", &r.status)
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ": "); ok {
			r.header.Add(k, v)
		}
	}
	return r
}

// adminMetric returns the value of one series on the admin API's /metrics.
func adminMetric(t *testing.T, admin, series string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// TestContentUsage: with "Content-Usage: train-ai=n" (and separately
// "Content-Signal: ai-train=no"), GPTBot is refused on a path its
// Allow/Disallow rules permit, OAI-SearchBot and a browser are served the
// page, and with "Content-Usage: /ai-ok/ train-ai=y" GPTBot is served
// under /ai-ok/.
func TestContentUsage(t *testing.T) {
	need(t, "curl")
	for _, form := range []string{"Content-Usage", "Content-Signal"} {
		t.Run(form, func(t *testing.T) {
			admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			// No rate for AI crawlers, so that any strike would show: five
			// would block GPTBot. Every refusal gets its own log line
			// (log_repeats 0), so that each one's strike count shows.
			s := start(t, options{robots: usageRobots[form], admin: admin, guard: "rate ai 0s\n\t\tlog_repeats 0"})
			okDir := filepath.Join(s.dir, "site", "ai-ok")
			if err := os.MkdirAll(okDir, 0o755); err != nil {
				t.Fatal(err)
			}
			const okPage = "<h1>Training welcome</h1>\n"
			if err := os.WriteFile(filepath.Join(okDir, "page.html"), []byte(okPage), 0o644); err != nil {
				t.Fatal(err)
			}
			about, err := os.ReadFile(filepath.Join(s.dir, "site", "about.html"))
			if err != nil {
				t.Fatal(err)
			}

			// Allow/Disallow lets every crawler fetch /about.html: a bot
			// of unknown purpose gets the page.
			if r := usageFetch(t, s.front, "/about.html", uaUnknown); r.status != 200 || r.body != string(about) {
				t.Fatalf("unknown-purpose bot: %d %q", r.status, r.body)
			}
			const refusals = 12
			for i := range refusals {
				r := usageFetch(t, s.front, "/about.html", uaGPTBot)
				if r.status != 403 || r.header.Get("X-Robots-Guard") != "content_usage" || r.header.Get("X-Robots-Guard-Rule") != usageLine[form] {
					t.Fatalf("GPTBot request %d: %d %v", i, r.status, r.header)
				}
				if strings.Contains(r.body, "About") {
					t.Fatalf("GPTBot got the page: %q", r.body)
				}
			}
			for _, ua := range []string{uaOAISearch, uaBrowser} {
				r := usageFetch(t, s.front, "/about.html", ua)
				if r.status != 200 || r.body != string(about) || r.header.Get("X-Robots-Guard") != "" {
					t.Errorf("%s: %d %q", ua, r.status, r.body)
				}
			}
			// A path Disallow covers is refused as disallowed.
			if r := usageFetch(t, s.front, "/private/", uaGPTBot); r.status != 403 || r.header.Get("X-Robots-Guard") != "disallowed" {
				t.Errorf("GPTBot /private/: %d %v", r.status, r.header)
			}
			ai := usageFetch(t, s.front, "/ai-ok/page.html", uaGPTBot)
			if form == "Content-Usage" {
				if ai.status != 200 || ai.body != okPage {
					t.Errorf("GPTBot under /ai-ok/: %d %q", ai.status, ai.body)
				}
				// Another spelling of a refused path is refused.
				if r := usageFetch(t, s.front, "/ai-ok/../about.html", uaGPTBot); r.status != 403 || r.header.Get("X-Robots-Guard") != "content_usage" {
					t.Errorf("GPTBot /ai-ok/../about.html: %d %v", r.status, r.header)
				}
			} else if ai.status != 403 {
				t.Errorf("GPTBot under /ai-ok/ with ai-train=no everywhere: %d", ai.status)
			}
			// The served robots.txt keeps the lines.
			if r := usageFetch(t, s.front, "/robots.txt", uaGPTBot); r.status != 200 || !strings.Contains(r.body, strings.TrimPrefix(usageLine[form], "robots.txt line 4: ")+"\n") {
				t.Errorf("served robots.txt: %d\n%s", r.status, r.body)
			}

			// Logged with the line, never a strike: a refusal's strike
			// count is that of the Disallow refusals before it.
			n, struck := 0, 0
			for _, e := range s.moduleEntries(t) {
				if e["reason"] == "disallowed" {
					struck++
				}
				if e["reason"] != "content_usage" {
					continue
				}
				n++
				strikes, _ := e["strikes"].(float64)
				if e["rule"] != strings.TrimPrefix(usageLine[form], "robots.txt line 4: ") || e["rule_line"] != float64(4) || e["action"] != "deny" || int(strikes) != struck {
					t.Errorf("log entry after %d strikes: %v", struck, e)
				}
			}
			want := refusals
			if form == "Content-Usage" {
				want++ // the other spelling
			} else {
				want++ // /ai-ok/ refused too
			}
			if n != want {
				t.Errorf("%d content_usage entries logged, want %d", n, want)
			}
			// Counted in the metrics and the report.
			if got := adminMetric(t, admin, `caddy_robots_guard_decisions_total{action="deny",class="ai",reason="content_usage"}`); got != float64(want) {
				t.Errorf("metric: %v, want %d", got, want)
			}
			out, err := exec.Command(caddyBin, "robots", "report", "--json", s.moduleLog).Output()
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				ByReason map[string]int `json:"by_reason"`
			}
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatal(err)
			}
			if rep.ByReason["content_usage"] != want {
				t.Errorf("report: by reason %v, want %d content_usage", rep.ByReason, want)
			}
			// caddy robots check says which preference applies and why.
			out, err = exec.Command(caddyBin, "robots", "check", "--robots", s.robots, "-A", uaGPTBot, "https://example.com/about.html").Output()
			if err != nil {
				t.Fatal(err)
			}
			if line := strings.TrimPrefix(usageLine[form], "robots.txt "); !strings.HasPrefix(string(out), "refused\thttps://example.com/about.html\t(content_usage") || !strings.Contains(string(out), "its purposes train-ai: train-ai refused") || !strings.Contains(string(out), line) {
				t.Errorf("check: %s", out)
			}
		})
	}
}

// TestContentUsageLogAndHeader: content_usage log serves GPTBot and logs
// the violation; content_usage_header states the preference on the
// responses, merged with the backend's.
func TestContentUsageLogAndHeader(t *testing.T) {
	need(t, "curl")
	s := start(t, options{robots: usageRobots["Content-Usage"], backend: "file_server", guard: "content_usage log\n\t\tcontent_usage_header /docs/ train-ai=n, search=y\n\t\trate ai 0s"})
	about, err := os.ReadFile(filepath.Join(s.dir, "site", "about.html"))
	if err != nil {
		t.Fatal(err)
	}
	if r := usageFetch(t, s.front, "/about.html", uaGPTBot); r.status != 200 || r.body != string(about) || r.header.Get("Content-Usage") != "" {
		t.Errorf("GPTBot, content_usage log: %d %v", r.status, r.header)
	}
	logged := false
	for _, e := range s.moduleEntries(t) {
		logged = logged || e["reason"] == "content_usage" && e["action"] == "allow" && e["rule"] == "Content-Usage: train-ai=n"
	}
	if !logged {
		t.Error("the violation is not logged")
	}
	for _, ua := range []string{uaBrowser, uaGPTBot} {
		r := usageFetch(t, s.front, "/docs/", ua)
		if r.status != 200 || r.header.Get("Content-Usage") != "train-ai=n, search=y" || !strings.Contains(r.body, "<h1>") {
			t.Errorf("%s /docs/: %d %v", ua, r.status, r.header)
		}
	}
}
