package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Abuse paths of issue 10 (items 5 to 8 and 12) against the real binary:
// the guard must not be dodged, or turned against others. These tests run
// Caddy with its admin API on (for caddy reload, caddy robots blocked and
// /metrics) and X-Forwarded-For believed from loopback, so that one test
// can speak from many client addresses.

// adminServer is a running Caddy with the admin API on, robots_guard in
// front of file_server with the demo site.
type adminServer struct {
	front, admin, cfgPath, moduleLog, site string
	adminPort, frontPort                   int
	pid                                    int
	output                                 *bytes.Buffer
}

// config returns the Caddyfile with the given extra robots_guard options.
func (s *adminServer) config(guard string) string {
	return fmt.Sprintf(`{
	admin 127.0.0.1:%d
	auto_https off
	log robots_guard {
		output file %s
		format json
		include http.handlers.robots_guard
	}
	servers {
		trusted_proxies static 127.0.0.1/32
	}
}
:%d {
	bind 127.0.0.1
	robots_guard {
		robots %s
		trap /private-archive/
		verify off
		%s
	}
	root * %s
	file_server
}
`, s.adminPort, s.moduleLog, s.frontPort, filepath.Join(s.site, "robots.txt"), guard, s.site)
}

func startAdmin(t *testing.T, guard string) *adminServer {
	t.Helper()
	dir := t.TempDir()
	copyDir(t, "../site", filepath.Join(dir, "site"))
	s := &adminServer{site: filepath.Join(dir, "site"), moduleLog: filepath.Join(dir, "robots_guard.log"),
		cfgPath: filepath.Join(dir, "Caddyfile"), adminPort: freePort(t), frontPort: freePort(t), output: &bytes.Buffer{}}
	s.front, s.admin = fmt.Sprintf("http://127.0.0.1:%d", s.frontPort), fmt.Sprintf("127.0.0.1:%d", s.adminPort)
	if err := os.WriteFile(s.cfgPath, []byte(s.config(guard)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(caddyBin, "run", "--config", s.cfgPath, "--adapter", "caddyfile")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = s.output, s.output
	startProcess(t, cmd, "caddy", s.output, 5*time.Second)
	s.pid = cmd.Process.Pid
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(s.front + "/robots.txt")
		if err == nil {
			resp.Body.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("caddy did not start: %v\n%s", err, s.output.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// get makes one request from the client address from (X-Forwarded-For)
// and returns the status and the X-Robots-Guard header.
func (s *adminServer) get(t *testing.T, path, ua, from string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", s.front+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("X-Forwarded-For", from)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s from %s: %v", path, from, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Robots-Guard")
}

// expectGet checks one request's status and X-Robots-Guard reason.
func (s *adminServer) expectGet(t *testing.T, what, path, ua, from string, status int, reason string) {
	t.Helper()
	if code, guard := s.get(t, path, ua, from); code != status || guard != reason {
		t.Errorf("%s: %d %q, want %d %q", what, code, guard, status, reason)
	}
}

// caddy runs the binary's CLI against this server's admin API.
func (s *adminServer) caddy(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(caddyBin, append(args, "--address", s.admin)...).CombinedOutput()
	if err != nil {
		t.Fatalf("caddy %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// reload loads the config with other robots_guard options through
// `caddy reload`.
func (s *adminServer) reload(t *testing.T, guard string) {
	t.Helper()
	if err := os.WriteFile(s.cfgPath, []byte(s.config(guard)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.caddy(t, "reload", "--config", s.cfgPath, "--adapter", "caddyfile")
}

// metric returns the value of one series on the admin API's /metrics.
func (s *adminServer) metric(t *testing.T, series string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + s.admin + "/metrics")
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

// rss returns the Caddy process's resident and peak resident set sizes.
func (s *adminServer) rss() string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		return "unknown"
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") || strings.HasPrefix(line, "VmHWM:") {
			out = append(out, strings.Join(strings.Fields(line), " "))
		}
	}
	return strings.Join(out, ", ")
}

const (
	abuseFirefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	abuseSiphon  = "EmailSiphon"
)

// TestAbuseAllowTokenIsAClaim (issue 10, item 5): a trapped client that
// switches its User-Agent to the allowlisted token is still refused; so is
// an address blocked for its bad agents. The token is exempt from the
// rules elsewhere.
func TestAbuseAllowTokenIsAClaim(t *testing.T) {
	need(t)
	s := startAdmin(t, "allow_token partnerbot")
	const partner = "PartnerBot/1.0 (+https://partner.example/bot)"
	s.expectGet(t, "trap", "/private-archive/", abuseFirefox, "198.51.100.7", 403, "blocked_client")
	s.expectGet(t, "the trapped address as the token", "/", partner, "198.51.100.7", 403, "blocked_client")
	s.expectGet(t, "the trapped address as the token, disallowed page", "/private/report.html", partner, "198.51.100.7", 403, "blocked_client")
	s.expectGet(t, "the token on the trap", "/private-archive/old.html", partner, "198.51.100.8", 403, "blocked_client")
	for i := 0; i < 5; i++ {
		s.get(t, "/", abuseSiphon, "198.51.100.9")
	}
	s.expectGet(t, "the token from an address blocked for bad agents", "/", partner, "198.51.100.9", 403, "blocked_client")
	s.expectGet(t, "the token elsewhere, disallowed page", "/private/report.html", partner, "198.51.100.10", 200, "")
}

// TestAbuseIPv6Prefix (issue 10, item 6): a client trapped at
// 2001:db8:1::1 stays blocked at ::2 (state is kept per /64), and caddy
// robots blocked shows the /64.
func TestAbuseIPv6Prefix(t *testing.T) {
	need(t)
	s := startAdmin(t, "")
	s.expectGet(t, "trap", "/private-archive/", abuseFirefox, "2001:db8:1::1", 403, "blocked_client")
	s.expectGet(t, "same address", "/", abuseFirefox, "2001:db8:1::1", 403, "blocked_client")
	s.expectGet(t, "next address in the /64", "/", abuseFirefox, "2001:db8:1::2", 403, "blocked_client")
	s.expectGet(t, "far end of the /64", "/", abuseFirefox, "2001:db8:1:0:ffff:ffff:ffff:fffe", 403, "blocked_client")
	s.expectGet(t, "next /64", "/", abuseFirefox, "2001:db8:1:1::1", 200, "")
	out := s.caddy(t, "robots", "blocked")
	if !strings.Contains(out, "2001:db8:1::/64  (whole IP)") {
		t.Errorf("caddy robots blocked:\n%s", out)
	}
	if out := s.caddy(t, "robots", "unblock", "2001:db8:1::1234"); !strings.Contains(out, "2001:db8:1::1234: 1 block lifted") {
		t.Errorf("caddy robots unblock: %s", out)
	}
	s.expectGet(t, "after unblock", "/", abuseFirefox, "2001:db8:1::2", 200, "")
}

// TestAbuseTokenRotation (issue 10, item 7): 40 disallowed requests from
// one address as Rot1Crawler ... Rot40Crawler end in a block of the
// address.
func TestAbuseTokenRotation(t *testing.T) {
	need(t)
	s := startAdmin(t, "")
	reasons := map[string]int{}
	for i := 1; i <= 40; i++ {
		code, reason := s.get(t, "/private/report.html", fmt.Sprintf("Rot%dCrawler/1.0", i), "203.0.113.9")
		if code != 403 {
			t.Errorf("Rot%dCrawler on a disallowed page: %d", i, code)
		}
		reasons[reason]++
	}
	// Ten strikes on the address (twice strikes) block it.
	if reasons["disallowed"] != 10 || reasons["blocked_client"] != 30 {
		t.Errorf("reasons %v, want 10 disallowed then 30 blocked_client", reasons)
	}
	s.expectGet(t, "the address, a new token, an allowed page", "/about.html", "Rot41Crawler/1.0", "203.0.113.9", 403, "blocked_client")
	s.expectGet(t, "the address, as a browser", "/", abuseFirefox, "203.0.113.9", 403, "blocked_client")
	s.expectGet(t, "another address", "/about.html", "Rot1Crawler/1.0", "203.0.113.10", 200, "")
	if out := s.caddy(t, "robots", "blocked"); !strings.Contains(out, "203.0.113.9  (whole IP)") {
		t.Errorf("caddy robots blocked:\n%s", out)
	}
}

// TestAbuseEvictionFlood (issue 10, item 8): a flood of trap hits from
// distinct forwarded addresses does not flush the blocks already in force:
// blocks have their own bound, the newest are dropped and counted in
// caddy_robots_guard_blocks_dropped_total.
func TestAbuseEvictionFlood(t *testing.T) {
	need(t)
	s := startAdmin(t, "max_clients 6400\n\t\tmax_blocks 640")
	const early, flood = 100, 30_000
	for i := 0; i < early; i++ {
		s.expectGet(t, "early trap", "/private-archive/", abuseFirefox, fmt.Sprintf("192.0.2.%d", i), 403, "blocked_client")
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	start := time.Now()
	for i := 0; i < flood; i++ {
		req, _ := http.NewRequest("GET", s.front+"/private-archive/", nil)
		req.Header.Set("User-Agent", abuseFirefox)
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Fatalf("flood request %d: %d", i, resp.StatusCode)
		}
	}
	took := time.Since(start)
	for i := 0; i < early; i++ {
		s.expectGet(t, "early block after the flood", "/", abuseFirefox, fmt.Sprintf("192.0.2.%d", i), 403, "blocked_client")
	}
	out := s.caddy(t, "robots", "blocked", "--json")
	blocked := strings.Count(out, `"until"`)
	dropped := s.metric(t, `caddy_robots_guard_blocks_dropped_total{zone=":`+strconv.Itoa(s.frontPort)+`"}`) // the site's zone
	if blocked > 640 || blocked < early || int(dropped) != early+flood-blocked {
		t.Errorf("%d blocks listed (bound 640), %v dropped; want %d in all", blocked, dropped, early+flood)
	}
	t.Logf("flood of %d trap hits in %v after %d blocks: all %d early blocks kept, %d blocks in force (max_blocks 640), caddy_robots_guard_blocks_dropped_total %v; %s",
		flood, took.Round(time.Millisecond), early, early, blocked, dropped, s.rss())
}

// TestAbuseDryRunReload (issue 10, item 12): dry run records what it would
// do without enforceable state: after `caddy reload` from dry_run to
// enforce, nobody is refused for a dry-run "block", and caddy robots
// blocked marks dry-run entries.
func TestAbuseDryRunReload(t *testing.T) {
	need(t)
	s := startAdmin(t, "mode dry_run")
	s.expectGet(t, "dry-run trap", "/private-archive/", abuseFirefox, "192.0.2.44", 200, "")
	s.expectGet(t, "dry-run trapped browser", "/", abuseFirefox, "192.0.2.44", 200, "")
	for i := 0; i < 6; i++ {
		s.get(t, "/private/report.html", "DryBot/1.0 (+https://example.com/drybot)", "192.0.2.45")
	}
	out := s.caddy(t, "robots", "blocked")
	if !strings.Contains(out, "192.0.2.44  (whole IP)") || !strings.Contains(out, "(dry run: not enforced)") ||
		!strings.Contains(out, "0 blocked, 2 more in dry run (not enforced)") {
		t.Errorf("caddy robots blocked in dry run:\n%s", out)
	}
	s.reload(t, "")
	s.expectGet(t, "the dry-run trapped browser after the switch to enforce", "/", abuseFirefox, "192.0.2.44", 200, "")
	s.expectGet(t, "the dry-run blocked bot after the switch", "/about.html", "DryBot/1.0 (+https://example.com/drybot)", "192.0.2.45", 200, "")
	s.expectGet(t, "an enforced trap", "/private-archive/", abuseFirefox, "192.0.2.46", 403, "blocked_client")
	out = s.caddy(t, "robots", "blocked")
	if !strings.Contains(out, "1 blocked, 2 more in dry run (not enforced)") {
		t.Errorf("caddy robots blocked after the switch:\n%s", out)
	}
}
