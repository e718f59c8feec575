package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// metricValue returns the value of the series that starts with prefix
// (name and labels, as Prometheus writes them) in a /metrics page, and
// whether the page has it.
func metricValue(page, prefix string) (float64, bool) {
	for _, line := range strings.Split(page, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// sumMetric adds up every series of a metric whose line matches re.
func sumMetric(page string, re *regexp.Regexp) float64 {
	var sum float64
	for _, line := range strings.Split(page, "\n") {
		if re.MatchString(line) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}

// TestReloadKeepsCounters: "caddy reload" (the real command, through the
// admin API) to a changed config keeps robots_guard's counters counting:
// decisions_total goes on from where it was, and the reload itself is
// counted among the robots.txt loads. Caddy makes a new metrics registry
// for every config; the test logs what Caddy's own HTTP request counter
// did across the same reload.
func TestReloadKeepsCounters(t *testing.T) {
	need(t, "curl")
	dir := t.TempDir()
	copyDir(t, "../site", filepath.Join(dir, "site"))
	admin, front := freePort(t), freePort(t)
	for front == admin {
		front = freePort(t)
	}
	cfgPath := filepath.Join(dir, "Caddyfile")
	writeCfg := func(burst int) {
		cfg := fmt.Sprintf(`{
	admin localhost:%d
	auto_https off
	metrics
}
:%d {
	bind 127.0.0.1
	robots_guard {
		robots %s
		verify off
		burst %d
	}
	root * %s
	file_server
}
`, admin, front, filepath.Join(dir, "site", "robots.txt"), burst, filepath.Join(dir, "site"))
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeCfg(3)
	out := &syncBuffer{}
	cmd := exec.Command(caddyBin, "run", "--config", cfgPath)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	startProcess(t, cmd, "caddy", out, 5*time.Second)
	base := fmt.Sprintf("http://127.0.0.1:%d", front)
	metricsURL := fmt.Sprintf("http://localhost:%d/metrics", admin)
	scrape := func() string {
		t.Helper()
		resp, err := http.Get(metricsURL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	// Ready when both the admin endpoint and the site answer: the admin
	// endpoint starts first, and a request would count a decision, so the
	// site's port is only dialled.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(metricsURL); err == nil {
			resp.Body.Close()
			if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", front)); err == nil {
				c.Close()
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("caddy did not start:\n%s", out.String())
		}
	}

	const gptbot = "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	const denied = `caddy_robots_guard_decisions_total{action="deny",class="ai",reason="disallowed"}`
	const served = `caddy_robots_guard_decisions_total{action="allow",class="browser",reason="none"}`
	const okLoads = `caddy_robots_guard_policy_reloads_total{result="ok"}`
	httpRequests := regexp.MustCompile(`^caddy_http_requests_total\{`)
	for i := 0; i < 2; i++ {
		if code, _, _ := curl(t, base, "/private/", gptbot); code != 403 {
			t.Fatalf("GPTBot on /private/: %d", code)
		}
	}
	if code, _, body := curl(t, base, "/about.html", firefox); code != 200 || !strings.Contains(body, "<h1>About</h1>") {
		t.Fatalf("browser on /about.html: %d %q", code, body)
	}
	page := scrape()
	before, _ := metricValue(page, denied)
	beforeServed, _ := metricValue(page, served)
	beforeLoads, _ := metricValue(page, okLoads)
	beforeHTTP := sumMetric(page, httpRequests)
	if before != 2 || beforeServed != 1 || beforeLoads != 1 {
		t.Fatalf("before the reload: denied %v, served %v, loads %v; want 2, 1, 1", before, beforeServed, beforeLoads)
	}

	writeCfg(4)
	reload := exec.Command(caddyBin, "reload", "--config", cfgPath, "--address", fmt.Sprintf("localhost:%d", admin))
	if msg, err := reload.CombinedOutput(); err != nil {
		t.Fatalf("caddy reload: %v\n%s", err, msg)
	}
	page = scrape()
	after, found := metricValue(page, denied)
	afterLoads, _ := metricValue(page, okLoads)
	afterHTTP := sumMetric(page, httpRequests)
	if after != before || !found {
		t.Errorf("after the reload: %s %v (found %v), want %v", denied, after, found, before)
	}
	if afterLoads != beforeLoads+1 {
		t.Errorf("robots.txt loads after the reload: %v, want %v", afterLoads, beforeLoads+1)
	}
	if code, _, _ := curl(t, base, "/private/", gptbot); code != 403 {
		t.Fatalf("GPTBot on /private/ after the reload: %d", code)
	}
	if code, _, _ := curl(t, base, "/about.html", firefox); code != 200 {
		t.Fatalf("browser after the reload: %d", code)
	}
	page = scrape()
	if got, _ := metricValue(page, denied); got != before+1 {
		t.Errorf("%s = %v after one more refusal, want %v", denied, got, before+1)
	}
	if got, _ := metricValue(page, served); got != beforeServed+1 {
		t.Errorf("%s = %v after one more page, want %v", served, got, beforeServed+1)
	}
	// The reload really took the new config.
	if !strings.Contains(scrapeConfig(t, admin), `"burst":4`) {
		t.Error("the reload did not load the changed config")
	}
	t.Logf("robots_guard decisions (deny/disallowed/ai): %v before the reload, %v after it, %v after one more refusal; Caddy's caddy_http_requests_total: %v before, %v after",
		before, after, before+1, beforeHTTP, afterHTTP)
}

// scrapeConfig returns the running config from the admin API.
func scrapeConfig(t *testing.T, admin int) string {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://localhost:%d/config/", admin))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
