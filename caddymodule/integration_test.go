package caddymodule

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/source"
)

// These tests run a real Caddy (in-process, through caddytest) on fixed
// ports (admin 2999, HTTP 9080), in front of a real backend reached through
// reverse_proxy. They are skipped under -short.

const (
	uaFirefox   = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	uaGPTBot    = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	uaRoguebot  = "roguebot/1.0"
	uaExample   = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"
	uaGooglebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
)

const siteRobots = `User-agent: roguebot
Disallow: /

User-agent: *
Crawl-delay: 5
Disallow: /private/
Allow: /private/press/
`

// site is a robots.txt file and a backend for one test.
type site struct {
	dir, robots string
	zone        string
	backend     *httptest.Server
}

// siteRuns numbers the sites newSite makes, for their zones' names.
var siteRuns atomic.Int64

func newSite(t *testing.T, robots string, backend ...http.Handler) *site {
	t.Helper()
	dir := t.TempDir()
	// Per-client state and the review's statistics survive config reloads
	// by design, so each test keeps its own zone, and so does each run of
	// it (go test -count=2).
	s := &site{dir: dir, robots: filepath.Join(dir, "robots.txt"), zone: fmt.Sprintf("%s_%d", strings.ReplaceAll(t.Name(), "/", "_"), siteRuns.Add(1))}
	if err := os.WriteFile(s.robots, []byte(robots), 0o644); err != nil {
		t.Fatal(err)
	}
	var handler http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "backend:%s", r.URL.Path)
	})
	if len(backend) > 0 {
		handler = backend[0]
	}
	s.backend = httptest.NewServer(handler)
	t.Cleanup(s.backend.Close)
	return s
}

// config returns a Caddyfile that serves the site behind robots_guard.
func (s *site) config(globals, options string) string {
	return fmt.Sprintf(`{
	skip_install_trust
	admin localhost:2999
	http_port 9080
	https_port 9443
	grace_period 1ns
	%s
}
http://localhost:9080 {
	robots_guard {
		robots %s
		zone %s
		%s
	}
	reverse_proxy %s
}
`, globals, s.robots, s.zone, options, strings.TrimPrefix(s.backend.URL, "http://"))
}

// get requests path with a User-Agent and optional extra headers.
func get(t *testing.T, tester *caddytest.Tester, method, path, ua string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://localhost:9080"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", ua)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := sendAfterLoad(tester.Client, req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// sendAfterLoad sends a request (without a body) on a connection that may
// be the first after a config load. Caddy keeps the listener across a
// load, and the old config's server, shut down with the 1ns grace period,
// can still accept a connection after InitServer has returned (Caddy starts
// the old servers' shutdowns in goroutines, which a loaded machine may not
// have run yet) and then close it unanswered: that is the test harness,
// not the handler, so such a request is sent again.
func sendAfterLoad(client *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := client.Do(req)
	for try := 0; err != nil && try < 3 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)); try++ {
		time.Sleep(50 * time.Millisecond)
		resp, err = client.Do(req)
	}
	return resp, err
}

func expectStatus(t *testing.T, what string, resp *http.Response, body string, want int) {
	t.Helper()
	if resp.StatusCode != want {
		t.Fatalf("%s: status %d (body %q, X-Robots-Guard %q), want %d", what, resp.StatusCode, body, resp.Header.Get("X-Robots-Guard"), want)
	}
}

// TestIntegrationDecisions: browsers pass, bots meet the site's rules, and
// crawl-delay is enforced with 429 and Retry-After.
func TestIntegrationDecisions(t *testing.T) {
	s := newSite(t, siteRobots)
	tester := caddytest.NewTester(t)
	tester.InitServer(s.config("", "burst 1\n\t\tgrace -1\n\t\tstrikes 100\n\t\tverify off"), "caddyfile")

	resp, body := get(t, tester, "GET", "/private/report.html", uaFirefox)
	expectStatus(t, "browser on a disallowed path", resp, body, 200)
	if body != "backend:/private/report.html" {
		t.Errorf("browser got %q", body)
	}

	resp, body = get(t, tester, "GET", "/private/report.html", uaGPTBot)
	expectStatus(t, "GPTBot on a disallowed path", resp, body, 403)
	if got := resp.Header.Get("X-Robots-Guard-Rule"); got != "robots.txt line 6: Disallow: /private/" {
		t.Errorf("GPTBot refusal names rule %q", got)
	}
	resp, body = get(t, tester, "GET", "/private/press/release.html", uaGPTBot)
	expectStatus(t, "GPTBot on an allowed path", resp, body, 200)

	for _, path := range []string{"/", "/about.html", "/private/press/release.html"} {
		resp, body = get(t, tester, "GET", path, uaRoguebot)
		expectStatus(t, "roguebot on "+path, resp, body, 403)
		if got := resp.Header.Get("X-Robots-Guard-Rule"); got != "robots.txt line 2: Disallow: /" {
			t.Errorf("roguebot refusal names rule %q", got)
		}
	}

	resp, body = get(t, tester, "GET", "/a.html", uaExample)
	expectStatus(t, "first request", resp, body, 200)
	resp, body = get(t, tester, "GET", "/b.html", uaExample)
	expectStatus(t, "crawl-delay exceeded", resp, body, 429)
	if ra := resp.Header.Get("Retry-After"); ra != "5" {
		t.Errorf("Retry-After = %q, want 5", ra)
	}
}

// TestIntegrationServedRobots: the served robots.txt carries the additions,
// with the right headers, and answers conditional requests with 304.
func TestIntegrationServedRobots(t *testing.T) {
	s := newSite(t, siteRobots)
	tester := caddytest.NewTester(t)
	tester.InitServer(s.config("", "trap /trap/\n\t\tblock_class bad\n\t\tsitemap https://example.com/sitemap.xml\n\t\tverify off"), "caddyfile")

	resp, body := get(t, tester, "GET", "/robots.txt", uaGooglebot)
	expectStatus(t, "robots.txt", resp, body, 200)
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	// The site's file as written, then the additions in groups of their
	// own (issue 26).
	if !strings.HasPrefix(body, siteRobots+"\n# Added by robots_guard") {
		t.Errorf("served robots.txt does not start with the site's file and the added block:\n%s", body)
	}
	for _, want := range []string{"User-agent: *\nUser-agent: roguebot\nDisallow: /trap/\n", "User-agent: emailsiphon\n", "Sitemap: https://example.com/sitemap.xml\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("served robots.txt lacks %q:\n%s", want, body)
		}
	}
	etag, lastMod := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if etag == "" || lastMod == "" {
		t.Fatalf("ETag %q, Last-Modified %q", etag, lastMod)
	}
	resp, body = get(t, tester, "GET", "/robots.txt", uaGooglebot, "If-None-Match", etag)
	expectStatus(t, "If-None-Match", resp, body, 304)
	resp, body = get(t, tester, "GET", "/robots.txt", uaGooglebot, "If-Modified-Since", lastMod)
	expectStatus(t, "If-Modified-Since", resp, body, 304)
	resp, body = get(t, tester, "HEAD", "/robots.txt", uaGooglebot)
	expectStatus(t, "HEAD", resp, body, 200)
	if body != "" || resp.Header.Get("Content-Length") == "" {
		t.Errorf("HEAD: body %q, Content-Length %q", body, resp.Header.Get("Content-Length"))
	}
	// robots.txt is served even to a client that is blocked.
	resp, body = get(t, tester, "GET", "/trap/", uaFirefox)
	expectStatus(t, "trap", resp, body, 403)
	resp, body = get(t, tester, "GET", "/", uaFirefox)
	expectStatus(t, "after the trap", resp, body, 403)
	resp, body = get(t, tester, "GET", "/robots.txt", uaFirefox)
	expectStatus(t, "robots.txt while blocked", resp, body, 200)
}

// waitFor polls until the status of a request becomes want, and returns
// how long it took; it fails after limit.
func waitFor(t *testing.T, tester *caddytest.Tester, path, ua string, want int, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		resp, _ := get(t, tester, "GET", path, ua)
		if resp.StatusCode == want {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("%s for %s: still %d (X-Robots-Guard %q) after %v, want %d", path, ua, resp.StatusCode, resp.Header.Get("X-Robots-Guard"), limit, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIntegrationTarpit: with a tarpit, the ladder's last rung holds a
// blocked client's requests before the 403 and closes the connection; the
// block itself and other clients are answered as before, and a browser
// from the blocked address is refused at once: it may be a person
// (issue 28).
func TestIntegrationTarpit(t *testing.T) {
	const hold = 400 * time.Millisecond
	s := newSite(t, siteRobots)
	tester := caddytest.NewTester(t)
	tester.InitServer(s.config("", "trap /trap/\n\t\tverify off\n\t\ttarpit 400ms 10"), "caddyfile")
	before := adminMetrics(t) // the counters are the process's: they outlive configs

	resp, body := get(t, tester, "GET", "/trap/", uaFirefox)
	expectStatus(t, "trap", resp, body, 403)
	start := time.Now()
	resp, body = get(t, tester, "GET", "/", uaExample)
	took := time.Since(start)
	expectStatus(t, "trapped client", resp, body, 403)
	if took < hold {
		t.Errorf("the trapped client's refusal came after %v, before the %v tarpit", took, hold)
	}
	if !resp.Close || resp.Header.Get("X-Robots-Guard") != "blocked_client" {
		t.Errorf("tarpit refusal: Connection close %v, X-Robots-Guard %q", resp.Close, resp.Header.Get("X-Robots-Guard"))
	}
	start = time.Now()
	resp, body = get(t, tester, "GET", "/", uaFirefox)
	person := time.Since(start)
	expectStatus(t, "trapped address, browser", resp, body, 403)
	if person >= hold || resp.Header.Get("X-Robots-Guard") != "blocked_client" {
		t.Errorf("a browser from the blocked address: refused after %v (X-Robots-Guard %q), want at once", person, resp.Header.Get("X-Robots-Guard"))
	}
	metrics := adminMetrics(t)
	checkCounted(t, before, metrics, map[string]float64{
		`caddy_robots_guard_decisions_total{action="deny",class="browser",reason="trap"}`:           1,
		`caddy_robots_guard_decisions_total{action="tarpit",class="bot",reason="blocked_client"}`:   1,
		`caddy_robots_guard_decisions_total{action="deny",class="browser",reason="blocked_client"}`: 1,
	})
	if !strings.Contains(metrics, "caddy_robots_guard_tarpit_held 0\n") {
		t.Error("metrics lack caddy_robots_guard_tarpit_held 0")
	}
	t.Logf("tarpit held the bot's refusal for %v; the browser's came after %v", took, person)
}

// adminMetrics returns the Prometheus metrics Caddy's admin endpoint serves.
func adminMetrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://localhost:2999/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// reloadLimit bounds how long a test waits for a reload to show. It is far
// above the ~55 ms a reload takes, so that a loaded CI machine does not fail
// the test; the time taken is logged, not asserted.
const reloadLimit = 5 * time.Second

// TestIntegrationHotReload: editing robots.txt in place or by atomic rename
// changes decisions; a broken edit keeps the old rules.
func TestIntegrationHotReload(t *testing.T) {
	s := newSite(t, "User-agent: *\nDisallow: /a/\n")
	tester := caddytest.NewTester(t)
	tester.InitServer(s.config("", "verify off\n\t\tstrikes 1000\n\t\tcrawl_delay 1ms"), "caddyfile")
	bot := uaGPTBot
	waitFor(t, tester, "/a/x", bot, 403, reloadLimit)
	waitFor(t, tester, "/b/x", bot, 200, reloadLimit)

	// Write in place.
	if err := os.WriteFile(s.robots, []byte("User-agent: *\nDisallow: /b/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	took := waitFor(t, tester, "/b/x", bot, 403, reloadLimit)
	waitFor(t, tester, "/a/x", bot, 200, reloadLimit)
	t.Logf("write in place took effect in %v", took)

	// Atomic save: write a temporary file and rename it over the original.
	tmp := filepath.Join(s.dir, ".robots.txt.swp")
	if err := os.WriteFile(tmp, []byte("User-agent: *\nDisallow: /c/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, s.robots); err != nil {
		t.Fatal(err)
	}
	took = waitFor(t, tester, "/c/x", bot, 403, reloadLimit)
	waitFor(t, tester, "/b/x", bot, 200, reloadLimit)
	t.Logf("atomic rename took effect in %v", took)

	// A broken edit (an HTML error page) keeps the last good rules.
	if err := os.WriteFile(s.robots, []byte("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if resp, _ := get(t, tester, "GET", "/c/x", bot); resp.StatusCode != 403 {
			t.Fatalf("a broken robots.txt replaced the good rules: /c/x got %d", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Delete and recreate.
	if err := os.Remove(s.robots); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if resp, _ := get(t, tester, "GET", "/c/x", bot); resp.StatusCode != 403 {
		t.Errorf("a deleted robots.txt dropped the rules: %d", resp.StatusCode)
	}
	if err := os.WriteFile(s.robots, []byte("User-agent: *\nDisallow: /d/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tester, "/d/x", bot, 403, reloadLimit)
	waitFor(t, tester, "/c/x", bot, 200, reloadLimit)

	// The reloads and the state show in Caddy's metrics.
	metrics := adminMetrics(t)
	for _, want := range []string{
		`caddy_robots_guard_policy_reloads_total{result="ok"} `,
		`caddy_robots_guard_policy_reloads_total{result="invalid"} `,
		`caddy_robots_guard_tracked_clients{zone="` + s.zone + `"} `,
		`caddy_robots_guard_blocked_clients{zone="` + s.zone + `"} 0`,
		`caddy_robots_guard_decisions_total{action="deny",class="ai",reason="disallowed"} `,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestIntegrationTrustedProxies: the client IP comes from Caddy, which
// honours X-Forwarded-For only from trusted proxies.
func TestIntegrationTrustedProxies(t *testing.T) {
	s := newSite(t, siteRobots)
	tester := caddytest.NewTester(t)
	tester.InitServer(s.config("servers {\n\t\ttrusted_proxies static 127.0.0.1/32\n\t}", "trap /trap/\n\t\tverify off"), "caddyfile")
	resp, body := get(t, tester, "GET", "/trap/", uaFirefox, "X-Forwarded-For", "203.0.113.5")
	expectStatus(t, "trap via proxy", resp, body, 403)
	resp, body = get(t, tester, "GET", "/", uaFirefox, "X-Forwarded-For", "203.0.113.5")
	expectStatus(t, "trapped client via proxy", resp, body, 403)
	resp, body = get(t, tester, "GET", "/", uaFirefox, "X-Forwarded-For", "203.0.113.6")
	expectStatus(t, "another client via proxy", resp, body, 200)

	// Without trusted proxies the header is ignored: the trap blocks the
	// real peer, whatever header it sends next.
	s2 := newSite(t, siteRobots)
	tester.InitServer(s2.config("", "trap /trap/\n\t\tverify off"), "caddyfile")
	resp, body = get(t, tester, "GET", "/trap/", uaFirefox, "X-Forwarded-For", "203.0.113.7")
	expectStatus(t, "trap, untrusted header", resp, body, 403)
	resp, body = get(t, tester, "GET", "/", uaFirefox, "X-Forwarded-For", "203.0.113.8")
	expectStatus(t, "spoofed header does not escape the block", resp, body, 403)
}

// TestIntegrationReloadNoLeaks: twenty config reloads leak no goroutines or
// file descriptors (watchers are closed), and strikes survive them.
func TestIntegrationReloadNoLeaks(t *testing.T) {
	s := newSite(t, siteRobots)
	tester := caddytest.NewTester(t)
	cfg := s.config("", "strikes 3\n\t\tverify off")
	tester.InitServer(cfg, "caddyfile")
	// Two strikes before the reloads.
	for i := 0; i < 2; i++ {
		resp, body := get(t, tester, "GET", "/private/x", uaExample)
		expectStatus(t, "strike", resp, body, 403)
	}
	settle := func() (int, int) {
		tester.Client.CloseIdleConnections()
		http.DefaultClient.CloseIdleConnections()
		time.Sleep(300 * time.Millisecond)
		runtime.GC()
		return runtime.NumGoroutine(), openFDs(t)
	}
	// Warm up: the first reloads start Caddy's own long-lived goroutines.
	for i := 0; i < 3; i++ {
		tester.InitServer(cfg, "caddyfile")
	}
	g0, fd0 := settle()
	for i := 0; i < 20; i++ {
		// Alternate two configs so that every load really replaces the
		// handler.
		c := cfg
		if i%2 == 0 {
			c = s.config("", "strikes 3\n\t\tverify off\n\t\tburst 4")
		}
		tester.InitServer(c, "caddyfile")
	}
	g1, fd1 := settle()
	t.Logf("after 20 reloads: goroutines %d -> %d, open fds %d -> %d", g0, g1, fd0, fd1)
	if g1 > g0+5 {
		t.Errorf("goroutines grew from %d to %d over 20 reloads", g0, g1)
	}
	if fd1 > fd0+5 {
		t.Errorf("open file descriptors grew from %d to %d over 20 reloads", fd0, fd1)
	}
	// The third strike, after the reloads, blocks the client.
	resp, body := get(t, tester, "GET", "/private/x", uaExample)
	expectStatus(t, "third strike", resp, body, 403)
	resp, body = get(t, tester, "GET", "/allowed.html", uaExample)
	expectStatus(t, "blocked after reloads", resp, body, 403)
	if got := resp.Header.Get("X-Robots-Guard"); got != "blocked_client" {
		t.Errorf("X-Robots-Guard = %q, want blocked_client", got)
	}
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count file descriptors: %v", err)
	}
	return len(entries)
}

// TestIntegrationDryRun: dry_run refuses nothing.
func TestIntegrationDryRun(t *testing.T) {
	s := newSite(t, siteRobots)
	tester := caddytest.NewTester(t)
	tester.InitServer(s.config("", "mode dry_run\n\t\tverify off"), "caddyfile")
	for i := 0; i < 10; i++ {
		resp, body := get(t, tester, "GET", "/", uaRoguebot)
		expectStatus(t, "roguebot in dry run", resp, body, 200)
	}
}

// TestIntegrationJSONErrors: a bad value in the JSON config fails the load
// with a message that names the option.
func TestIntegrationJSONErrors(t *testing.T) {
	for option, want := range map[string]string{
		`"mode": "loud"`:              `robots_guard: mode: unknown mode \"loud\" (want enforce or dry_run)`,
		`"block_classes": ["robots"]`: `robots_guard: block_classes[0]: unknown class \"robots\"`,
		`"allow_ips": ["300.1.1.1"]`:  `robots_guard: allow_ips[0]: invalid IP \"300.1.1.1\"`,
		`"deny_status": 200`:          `robots_guard: deny_status: 200 is not an error status (400-599)`,
		`"traps": ["nope"]`:           `robots_guard: traps[0]: path \"nope\" must start with '/' or '*'`,
		`"verify": {"ranges": {"gptbot": "/nonexistent/gptbot.json"}}`: `robots_guard: verify.ranges.gptbot: /nonexistent/gptbot.json: no such file or directory`,
		`"tarpit_max": -1`:          `robots_guard: tarpit_max: must be at least 1, got -1`,
		`"sitemaps": ["not-a-url"]`: `robots_guard: sitemaps[0]: \"not-a-url\" is not an absolute http(s) URL`,
	} {
		cfg := `{"admin": {"listen": "localhost:2999"}, "apps": {"http": {"http_port": 9080, "servers": {"srv0": {"listen": [":9080"],
			"routes": [{"handle": [{"handler": "robots_guard", ` + option + `}]}]}}}}}`
		caddytest.AssertLoadError(t, cfg, "json", want)
	}
}

// TestIntegrationReloadStorm: robots.txt is rewritten in place every 10 ms,
// in bursts of a second with pauses longer than the settle time between
// them, for 30 s while clients hammer the site; no request fails, every
// answer matches either the old or the new file, never a mix or a
// half-written file, and each pause installs the file its burst left (the
// other one than the pause before).
func TestIntegrationReloadStorm(t *testing.T) {
	const fileA = "User-agent: *\nDisallow: /a/\nDisallow: /common/\n"
	const fileB = "User-agent: *\nDisallow: /b/\nDisallow: /common/\n"
	duration := 30 * time.Second
	if raceEnabled {
		duration = 5 * time.Second
	}
	s := newSite(t, fileA)
	tester := caddytest.NewTester(t)
	tester.InitServer(s.config("", "verify off\n\t\trate bot 0s\n\t\tstrikes 1000000\n\t\twindow 1s"), "caddyfile")
	genA := string(policy.Parse([]byte(fileA)).Generate())
	genB := string(policy.Parse([]byte(fileB)).Generate())

	stop, written := make(chan struct{}), make(chan struct{})
	var writes, pauses atomic.Int64
	go func() {
		defer close(written)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		burst, installed := time.Now(), fileA
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			body := fileA
			if i%2 == 1 {
				body = fileB
			}
			if err := os.WriteFile(s.robots, []byte(body), 0o644); err != nil {
				t.Error(err)
				return
			}
			writes.Add(1)
			if time.Since(burst) > time.Second {
				// Each burst ends with the file the last one did not, so
				// that every pause changes the rules in force.
				installed = map[string]string{fileA: fileB, fileB: fileA}[installed]
				if err := os.WriteFile(s.robots, []byte(installed), 0o644); err != nil {
					t.Error(err)
					return
				}
				writes.Add(1)
				pauses.Add(1)
				select { // longer than the settle time
				case <-stop:
					return
				case <-time.After(source.DefaultSettle + 500*time.Millisecond):
				}
				burst = time.Now()
			}
		}
	}()
	var requests, switches atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	deadline := time.Now().Add(duration)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			client := &http.Client{Transport: caddytest.CreateTestingTransport(), Timeout: 5 * time.Second}
			last := ""
			for i := w; time.Now().Before(deadline); i++ {
				path := []string{"/a/x", "/b/x", "/common/x", "/robots.txt"}[i%4]
				req, _ := http.NewRequest("GET", "http://localhost:9080"+path, nil)
				req.Header.Set("User-Agent", uaExample)
				var resp *http.Response
				var err error
				if i == w { // each client's first connection
					resp, err = sendAfterLoad(client, req)
				} else {
					resp, err = client.Do(req)
				}
				if err != nil {
					errs <- fmt.Sprintf("%s: %v", path, err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				requests.Add(1)
				guard := resp.Header.Get("X-Robots-Guard")
				switch {
				case path == "/robots.txt":
					if string(body) != genA && string(body) != genB {
						errs <- fmt.Sprintf("robots.txt is neither file:\n%s", body)
						return
					}
					if last != "" && string(body) != last {
						switches.Add(1)
					}
					last = string(body)
				case path == "/common/x" && (resp.StatusCode != 403 || guard != "disallowed"):
					errs <- fmt.Sprintf("/common/x got %d %q: rules of neither file", resp.StatusCode, guard)
					return
				case resp.StatusCode != 200 && (resp.StatusCode != 403 || guard != "disallowed"):
					errs <- fmt.Sprintf("%s got %d %q", path, resp.StatusCode, guard)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	<-written // the writer must not touch the file after the test's cleanup
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	t.Logf("reload storm: %d writes in %v, %d pauses, %d requests, robots.txt seen to change %d times", writes.Load(), duration, pauses.Load(), requests.Load(), switches.Load())
	// Every pause installs the other file; a client sees the change unless
	// the test ends within the pause (the last one), or a slow settle on a
	// loaded machine lets a pause pass unseen.
	if switches.Load() < max(1, pauses.Load()/2) {
		t.Errorf("the served robots.txt changed only %d times in %d pauses", switches.Load(), pauses.Load())
	}
}

// TestIntegrationIndexingAndCanonical: X-Robots-Tag headers on any resource
// type, merged with the backend's; canonical URLs from robots.txt applied
// with 301s for bots, Link headers for everyone, and rules evaluated on the
// canonical URL.
func TestIntegrationIndexingAndCanonical(t *testing.T) {
	const robots = `QueryParam: -utm_source
Domain: http://www.example.test/
IndexPage: index.html

User-agent: *
Disallow: /secret/$
QueryParam: -sid, refby=search
`
	// A backend with a PDF, an image and a page that sets its own header.
	s := newSite(t, robots, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, ".pdf"):
			w.Header().Set("Content-Type", "application/pdf")
			if r.URL.Path == "/reports/merge.pdf" {
				w.Header().Set("X-Robots-Tag", "noarchive, noindex")
			}
		case strings.HasSuffix(r.URL.Path, ".png"):
			w.Header().Set("Content-Type", "image/png")
		}
		fmt.Fprintf(w, "backend:%s", r.URL.RequestURI())
	}))
	cfg := strings.Replace(s.config("", `verify off
		rate bot 0s
		rate ai 0s
		x_robots_tag /reports/*.pdf$ noindex nofollow
		x_robots_tag /images/ googlebot: noimageindex`), "http://localhost:9080 {", "http://:9080 {", 1)
	tester := caddytest.NewTester(t)
	tester.InitServer(cfg, "caddyfile")
	const host = "www.example.test"

	// X-Robots-Tag on a PDF and an image, per agent on the image.
	resp, body := get(t, tester, "GET", "/reports/q3.pdf", uaFirefox, "Host", host)
	expectStatus(t, "pdf", resp, body, 200)
	if got := resp.Header.Values("X-Robots-Tag"); len(got) != 1 || got[0] != "noindex, nofollow" {
		t.Errorf("pdf X-Robots-Tag = %q", got)
	}
	resp, body = get(t, tester, "GET", "/images/logo.png", uaFirefox, "Host", host)
	expectStatus(t, "image", resp, body, 200)
	if got := resp.Header.Values("X-Robots-Tag"); len(got) != 1 || got[0] != "googlebot: noimageindex" {
		t.Errorf("image X-Robots-Tag = %q", got)
	}
	// Merged with the backend's header, nothing duplicated.
	resp, body = get(t, tester, "GET", "/reports/merge.pdf", uaFirefox, "Host", host)
	expectStatus(t, "merge", resp, body, 200)
	if got := resp.Header.Values("X-Robots-Tag"); len(got) != 2 || got[0] != "noarchive, noindex" || got[1] != "nofollow" {
		t.Errorf("merged X-Robots-Tag = %q", got)
	}
	// No header where no rule matches.
	resp, _ = get(t, tester, "GET", "/reports/q3.pdf.html", uaFirefox, "Host", host)
	if got := resp.Header.Values("X-Robots-Tag"); len(got) != 0 {
		t.Errorf("unmatched page X-Robots-Tag = %q", got)
	}

	// A bot asking for a non-canonical URL is redirected to the canonical
	// one: sid dropped, refby set to its default.
	client := &http.Client{Transport: caddytest.CreateTestingTransport(), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(path, ua, hostHeader string) *http.Response {
		req, _ := http.NewRequest("GET", "http://localhost:9080"+path, nil)
		req.Host = hostHeader
		req.Header.Set("User-Agent", ua)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	r := do("/page.html?sid=abc123&refby=aff&x=1", uaGPTBot, host)
	if r.StatusCode != 301 || r.Header.Get("Location") != "http://www.example.test/page.html?refby=search&x=1" {
		t.Errorf("bot redirect: %d to %q", r.StatusCode, r.Header.Get("Location"))
	}
	// A host alias is redirected to the Domain.
	r = do("/page.html", uaGPTBot, "alias.example.test")
	if r.StatusCode != 301 || r.Header.Get("Location") != "http://www.example.test/page.html" {
		t.Errorf("alias redirect: %d to %q", r.StatusCode, r.Header.Get("Location"))
	}
	// A person is not redirected, and gets the Link header.
	r = do("/page.html?sid=abc123&refby=aff", uaFirefox, host)
	if r.StatusCode != 200 {
		t.Errorf("browser: %d, want 200 without redirect", r.StatusCode)
	}
	if got := r.Header.Get("Link"); got != `<http://www.example.test/page.html?refby=search>; rel="canonical"` {
		t.Errorf("browser Link = %q", got)
	}
	// A canonical request is served, with its Link header, also for images.
	r = do("/images/logo.png", uaGPTBot, host)
	if r.StatusCode != 200 || r.Header.Get("Link") != `<http://www.example.test/images/logo.png>; rel="canonical"` {
		t.Errorf("canonical image: %d, Link %q", r.StatusCode, r.Header.Get("Link"))
	}
	// Disallow is evaluated on the canonical URL: /secret/index.html is
	// /secret/, which is disallowed.
	r = do("/secret/index.html", uaGPTBot, host)
	if r.StatusCode != 403 {
		t.Errorf("/secret/index.html for a bot: %d, want 403 (canonical /secret/ is disallowed)", r.StatusCode)
	}
	r = do("/secret/other.html", uaGPTBot, host)
	if r.StatusCode != 200 {
		t.Errorf("/secret/other.html: %d", r.StatusCode)
	}
}
