package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/record"
	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/review"
)

// TestIntegrationReview: after real requests the admin API's statistics
// show each bot with the counts the requests produced, the rule it broke
// linked to the robots.txt version that was in force (also after the file
// changed), and serve that version's text; the review page is served with
// its CSP; unknown versions are a clear 404.
func TestIntegrationReview(t *testing.T) {
	s := newSite(t, siteRobots)
	tester := caddytest.NewTester(t)
	tester.InitServer(s.config("", "burst 100\n\t\tstrikes 100\n\t\tverify off"), "caddyfile")

	get(t, tester, "GET", "/robots.txt", uaGPTBot)
	for range 2 {
		resp, body := get(t, tester, "GET", "/private/report.html", uaGPTBot)
		expectStatus(t, "GPTBot on /private/", resp, body, 403)
	}
	get(t, tester, "GET", "/about.html", uaGPTBot)
	get(t, tester, "GET", "/", uaFirefox)
	get(t, tester, "GET", "/", uaRoguebot)
	v1 := report.VersionID([]byte(siteRobots))

	// A new robots.txt: the next violation is judged against it.
	robots2 := "User-agent: *\n\n# moved down a line\nDisallow: /private/\n"
	if err := os.WriteFile(s.robots, []byte(robots2), 0o644); err != nil {
		t.Fatal(err)
	}
	v2 := report.VersionID([]byte(robots2))
	deadline := time.Now().Add(10 * time.Second)
	before := 0 // refusals judged against the first version while it reloads
	for {
		resp, _ := get(t, tester, "GET", "/private/x", uaGPTBot)
		if resp.Header.Get("X-Robots-Guard-Rule") == "robots.txt line 4: Disallow: /private/" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the new robots.txt was not loaded")
		}
		before++
		time.Sleep(50 * time.Millisecond)
	}

	var view review.View
	adminJSON(t, "GET", "/robots_guard/stats?zone="+s.zone, "", http.StatusOK, &view)
	if len(view.Zones) != 1 || view.Zones[0].Zone != s.zone || view.Source != "live" {
		t.Fatalf("zones: %+v", view.Zones)
	}
	z := view.Zones[0]
	rows := map[string]review.BotView{}
	for _, b := range z.Bots {
		rows[b.Key] = b
	}
	g := rows["gptbot"]
	// robots.txt and /about.html allowed, two refusals before the reload;
	// after it, at least one refusal under the new version.
	if g.Class != "ai" || g.Operator != "OpenAI" || g.Allowed != 2 || g.Refused != uint64(3+before) || g.RobotsReads != 1 || g.ReadIgnored != g.Refused {
		t.Errorf("gptbot row: %+v", g)
	}
	// The rule broken under both versions is one rule broken: at its line
	// in the latest version, naming the first.
	if len(g.Rules) != 1 || g.Rules[0].Version != v2 || g.Rules[0].Line != 4 || g.Rules[0].Rule != "Disallow: /private/" ||
		g.Rules[0].Count != uint64(3+before) || len(g.Rules[0].Older) != 1 || g.Rules[0].Older[0] != v1 {
		t.Errorf("rules: %+v", g.Rules)
	}
	if b := rows["(browser)"]; b.Allowed != 1 {
		t.Errorf("browser row: %+v", b)
	}
	if r := rows["roguebot"]; r.Refused != 1 || len(r.Rules) != 1 || r.Rules[0].Line != 2 {
		t.Errorf("roguebot row: %+v", r)
	}
	if z.Series.Classes["ai"]["refused"] == nil {
		t.Errorf("no ai refusals in the series: %+v", z.Series.Classes)
	}

	// Each version's text is served.
	for id, want := range map[string]string{v1: siteRobots, v2: robots2} {
		resp, err := http.Get("http://localhost:2999/robots_guard/robots?zone=" + s.zone + "&version=" + id)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != want {
			t.Errorf("version %s: %d %q", id, resp.StatusCode, body)
		}
	}
	var apiErr struct{ Error string }
	adminJSON(t, "GET", "/robots_guard/robots?zone="+s.zone+"&version=nope", "", http.StatusNotFound, &apiErr)
	if !strings.Contains(apiErr.Error, `has no robots.txt version "nope"`) {
		t.Errorf("unknown version: %q", apiErr.Error)
	}

	// The page.
	resp, err := http.Get("http://localhost:2999/robots_guard/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != review.CSP || !strings.Contains(string(page), "<title>robots_guard review</title>") {
		t.Errorf("page: %d %q", resp.StatusCode, resp.Header)
	}
}

// TestIntegrationPlaceholders: a handle_errors route and an access log read
// {http.robots_guard.action}, .reason, .rule, .class and .token.
func TestIntegrationPlaceholders(t *testing.T) {
	s := newSite(t, siteRobots)
	accessLog := filepath.Join(t.TempDir(), "access.log")
	tester := caddytest.NewTester(t)
	tester.InitServer(fmt.Sprintf(`{
	skip_install_trust
	admin localhost:2999
	http_port 9080
	https_port 9443
	grace_period 1ns
}
http://localhost:9080 {
	log {
		output file %s
		format json
	}
	log_append rg_action {http.robots_guard.action}
	log_append rg_reason {http.robots_guard.reason}
	log_append rg_class {http.robots_guard.class}
	log_append rg_token {http.robots_guard.token}
	robots_guard {
		robots %s
		zone %s
		verify off
	}
	reverse_proxy %s
	handle_errors {
		respond "{err.status_code} {http.robots_guard.action} {http.robots_guard.reason} [{http.robots_guard.rule}] {http.robots_guard.class} {http.robots_guard.token}"
	}
}
`, accessLog, s.robots, s.zone, strings.TrimPrefix(s.backend.URL, "http://")), "caddyfile")

	resp, body := get(t, tester, "GET", "/private/report.html", uaGPTBot)
	if resp.StatusCode != 403 || body != "403 deny disallowed [Disallow: /private/] ai gptbot" {
		t.Errorf("handle_errors for GPTBot: %d %q", resp.StatusCode, body)
	}
	resp, body = get(t, tester, "GET", "/", uaRoguebot)
	if resp.StatusCode != 403 || body != "403 deny disallowed [Disallow: /] bot roguebot" {
		t.Errorf("handle_errors for roguebot: %d %q", resp.StatusCode, body)
	}
	get(t, tester, "GET", "/about.html", uaFirefox)

	// The access log has the same values, "none" for an ordinary request.
	var entries []map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for len(entries) < 3 && time.Now().Before(deadline) {
		data, _ := os.ReadFile(accessLog)
		entries = nil
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil {
				entries = append(entries, e)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	got := map[string]string{}
	for _, e := range entries {
		req, _ := e["request"].(map[string]any)
		got[req["uri"].(string)] = fmt.Sprint(e["rg_action"], " ", e["rg_reason"], " ", e["rg_class"], " ", e["rg_token"])
	}
	want := map[string]string{"/private/report.html": "deny disallowed ai gptbot", "/": "deny disallowed bot roguebot", "/about.html": "allow none browser "}
	for uri, w := range want {
		if got[uri] != w {
			t.Errorf("access log for %s: %q, want %q (all: %v)", uri, got[uri], w, got)
		}
	}
}

// BenchmarkObserve measures the handler's one call after a decision (the
// statistics and the placeholders) on a fresh replacer and request vars,
// made as Caddy makes them for each request: "replacer only" is that cost
// alone, so the difference is observe's.
func BenchmarkObserve(b *testing.B) {
	dir := b.TempDir()
	robots := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /private/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	h := &Handler{Robots: robots, Zone: "bench-observe", Verify: &VerifyConfig{Disabled: true}, Rates: map[string]caddy.Duration{"ai": 0}}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := h.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	defer h.Cleanup()
	r := httptest.NewRequest("GET", "/articles/42", nil)
	ua := "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
	req := enforce.Request{IP: netip.MustParseAddr("192.0.2.1"), UA: h.classifier.Classify(ua), Method: "GET", Host: "example.com", Target: policy.Target{Normal: "/articles/42"}}
	snap := h.source.Snapshot()
	d := h.engine.Decide(&req, snap.Policy)
	rec := record.New(&enforce.Reading{Request: req, UserAgent: ua, URI: "/articles/42"}, &d, h.Zone, snap.Version, snap.Body)
	for _, withObserve := range []bool{false, true} {
		name := "replacer only"
		if withObserve {
			name = "replacer and observe"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				repl := caddy.NewReplacer()
				repl.Map(func(string) (any, bool) { return nil, false }) // as caddyhttp adds its provider
				ctx := context.WithValue(context.Background(), caddy.ReplacerCtxKey, repl)
				ctx = context.WithValue(ctx, caddyhttp.VarsCtxKey, map[string]any{caddyhttp.TrustedProxyVarKey: false, caddyhttp.ClientIPVarKey: "192.0.2.1"})
				rr := r.WithContext(ctx)
				if withObserve {
					h.observe(rr, varsOf(rr), &rec)
				}
			}
		})
	}
}

// TestAdminUnreachable: blocked and unblock ask whether Caddy runs with its
// admin API at the address when nothing answers there.
func TestAdminUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	for _, cmd := range []*cobra.Command{blockedCommand(), unblockCommand()} {
		args := []string{"--address", addr}
		if cmd.Name() == "unblock" {
			args = append([]string{"192.0.2.1"}, args...)
		}
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), "is Caddy running with its admin API at "+addr+"?") {
			t.Errorf("%s: %v", cmd.Name(), err)
		}
	}
}
