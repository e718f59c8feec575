package caddymodule

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/robotsguard/robotsguard/source"
	"github.com/robotsguard/robotsguard/upstream/upstreamtest"
)

// eventually waits for cond, polling, within a generous limit; it returns
// how long it took.
func eventually(t *testing.T, what string, limit time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUpstreamSlowStart: an application that does not answer holds up
// Provision for source.FirstFetchWait at most; no rules apply until it answers.
func TestUpstreamSlowStart(t *testing.T) {
	app := upstreamtest.New(t, "User-agent: *\nDisallow: /private/\n")
	app.SetDelay(4 * time.Second)
	start := time.Now()
	h := provisionUpstream(t, `{"robots": "`+app.URL()+`", "verify": {"disabled": true}}`)
	took := time.Since(start)
	t.Logf("Provision returned after %v", took)
	if took < source.FirstFetchWait || took > source.FirstFetchWait+5*time.Second {
		t.Errorf("Provision took %v, want about %v", took, source.FirstFetchWait)
	}
	if !h.source.Snapshot().Missing {
		t.Error("rules before the first fetch answered")
	}
	eventually(t, "the slow first fetch", 10*time.Second, func() bool {
		return !h.source.Snapshot().Policy.Match([]string{"examplebot"}, "/private/x").Allowed
	})
}

// provisionUpstream provisions a handler from its JSON config and cleans it
// up at the end of the test.
func provisionUpstream(t *testing.T, js string) *Handler {
	t.Helper()
	var h Handler
	if err := caddy.StrictUnmarshalJSON([]byte(js), &h); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	if err := h.Provision(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.Cleanup()
		cancel()
	})
	return &h
}

// TestUpstreamHandler: the handler fetches its robots.txt at start with
// the configured Host and header fields, and serves the application's
// file plus its own additions.
func TestUpstreamHandler(t *testing.T) {
	app := upstreamtest.New(t, "User-agent: *\nDisallow: /private/\n")
	h := provisionUpstream(t, `{"robots": "`+app.URL()+`", "robots_host": "www.example.com", "robots_headers": {"x-forwarded-proto": "https"},
		"traps": ["/trap/"], "sitemaps": ["https://www.example.com/sitemap.xml"], "verify": {"disabled": true}}`)
	snap := h.source.Snapshot()
	if snap.Missing || snap.Policy.Match([]string{"examplebot"}, "/private/x").Allowed {
		t.Fatal("the rules were not fetched at start")
	}
	served := string(snap.Served)
	for _, want := range []string{"Disallow: /private/", "Disallow: /trap/", "Sitemap: https://www.example.com/sitemap.xml"} {
		if !strings.Contains(served, want) {
			t.Errorf("served robots.txt lacks %q:\n%s", want, served)
		}
	}
	hdr, host := app.LastRequest()
	if host != "www.example.com" || hdr.Get("X-Forwarded-Proto") != "https" || !strings.HasPrefix(hdr.Get("User-Agent"), "robotsguard") {
		t.Errorf("fetched with Host %q, headers %v", host, hdr)
	}
	if h.RobotsRefresh != caddy.Duration(source.DefaultRefresh) {
		t.Errorf("robots_refresh default %v", time.Duration(h.RobotsRefresh))
	}
}

// TestUpstreamCarriedAcrossReloads: a new config with the same URL starts
// from the rules the old one fetched, even when the application is down,
// and then fetches its own; a config with another Host does not share
// them; the carried file is released with the last handler.
func TestUpstreamCarriedAcrossReloads(t *testing.T) {
	app := upstreamtest.New(t, "User-agent: *\nDisallow: /private/\n")
	cfg := `{"robots": "` + app.URL() + `", "robots_refresh": "1s", "verify": {"disabled": true}}`
	old := provisionUpstream(t, cfg)
	if old.source.Snapshot().Policy.Match([]string{"examplebot"}, "/private/x").Allowed {
		t.Fatal("no rules at start")
	}
	app.Down()
	start := time.Now()
	next := provisionUpstream(t, `{"robots": "`+app.URL()+`", "robots_refresh": "1s", "strikes": 9, "verify": {"disabled": true}}`)
	took := time.Since(start)
	if next.source.Snapshot().Missing || next.source.Snapshot().Policy.Match([]string{"examplebot"}, "/private/x").Allowed {
		t.Fatal("the reload dropped the rules while the application was down")
	}
	t.Logf("the reload provisioned in %v with the carried rules", took)
	other := provisionUpstream(t, `{"robots": "`+app.URL()+`", "robots_host": "other.example", "verify": {"disabled": true}}`)
	if !other.source.Snapshot().Missing {
		t.Error("a config with another Host got the carried rules")
	}
	_ = old.Cleanup()
	// The new config fetches its own once the application is back.
	app.Set(200, "User-agent: *\nDisallow: /drafts/\n")
	app.Up()
	eventually(t, "the new config's refresh", 10*time.Second, func() bool {
		return !next.source.Snapshot().Policy.Match([]string{"examplebot"}, "/drafts/x").Allowed
	})
	key := source.Key(app.URL(), "", nil)
	if n, ok := carriedPool.References(key); !ok || n != 1 {
		t.Errorf("carried references %d %v, want 1", n, ok)
	}
	_ = next.Cleanup()
	_ = other.Cleanup()
	if _, ok := carriedPool.References(key); ok {
		t.Error("the carried robots.txt outlived its handlers")
	}
}

// TestUpstreamNoLeaks: handlers that read a URL leave no goroutines or
// connections behind when they are cleaned up, whether the application
// answers, hangs or is down.
func TestUpstreamNoLeaks(t *testing.T) {
	app := upstreamtest.New(t, "User-agent: *\nDisallow: /private/\n")
	settle := func() int {
		time.Sleep(200 * time.Millisecond)
		runtime.GC()
		return runtime.NumGoroutine()
	}
	provisionUpstream(t, `{"robots": "`+app.URL()+`", "verify": {"disabled": true}}`) // warm up
	g0 := settle()
	for i := range 20 {
		var h Handler
		js := `{"robots": "` + app.URL() + `", "robots_refresh": "1s", "verify": {"disabled": true}, "burst": ` + fmt.Sprint(i+1) + `}`
		if err := caddy.StrictUnmarshalJSON([]byte(js), &h); err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 1:
			app.SetDelay(5 * time.Second) // a fetch in flight at cleanup
		case 2:
			app.Down()
		}
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		if err := h.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		_ = h.Cleanup()
		cancel()
		if i%3 == 2 {
			app.Up()
		}
		app.SetDelay(0)
	}
	g1 := settle()
	t.Logf("20 handlers: goroutines %d -> %d", g0, g1)
	if g1 > g0+5 {
		t.Errorf("goroutines grew from %d to %d", g0, g1)
	}
}

// TestIntegrationUpstream: a real Caddy with robots_guard reading the
// application's robots.txt: the rules apply at start, follow a change
// within a refresh, and stay while the application is down (a bot gets
// 403 on a disallowed path, not 502) and across a config reload made
// while it is down; a 404 clears them.
func TestIntegrationUpstream(t *testing.T) {
	app := upstreamtest.New(t, "User-agent: *\nDisallow: /private/\n")
	s := newSite(t, "")
	s.robots = app.URL()
	s.backend.Close()
	s.backend.URL = "http://" + app.Addr() // the application serves the pages too
	options := "verify off\n\t\tstrikes 1000\n\t\tcrawl_delay 1ms\n\t\trobots_refresh 1s"
	tester := caddytest.NewTester(t)
	tester.InitServer(s.config("", options), "caddyfile")
	bot := uaGPTBot
	resp, body := get(t, tester, "GET", "/private/x", bot)
	expectStatus(t, "disallowed at start", resp, body, 403)
	resp, body = get(t, tester, "GET", "/drafts/x", bot)
	expectStatus(t, "allowed at start", resp, body, 200)
	if body != "app:/drafts/x" {
		t.Errorf("allowed page body %q", body)
	}
	app.Set(200, "User-agent: *\nDisallow: /drafts/\n")
	took := waitFor(t, tester, "/drafts/x", bot, 403, 10*time.Second)
	t.Logf("a change in the application took effect in %v (refresh 1s)", took)

	app.Down()
	time.Sleep(1500 * time.Millisecond) // at least one failed refresh
	resp, body = get(t, tester, "GET", "/drafts/x", bot)
	expectStatus(t, "disallowed while the application is down", resp, body, 403)
	resp, body = get(t, tester, "GET", "/other", bot)
	expectStatus(t, "allowed while the application is down", resp, body, 502)

	// A reload while the application is down keeps the rules.
	tester.InitServer(s.config("", options+"\n\t\tburst 5"), "caddyfile")
	resp, body = get(t, tester, "GET", "/drafts/x", bot)
	expectStatus(t, "disallowed after a reload while the application is down", resp, body, 403)
	resp, body = get(t, tester, "GET", "/robots.txt", bot)
	expectStatus(t, "served robots.txt after the reload", resp, body, 200)
	if !strings.Contains(body, "Disallow: /drafts/") {
		t.Errorf("served robots.txt after the reload:\n%s", body)
	}

	app.Up()
	app.Set(404, "")
	took = waitFor(t, tester, "/drafts/x", bot, 200, 10*time.Second)
	t.Logf("a 404 cleared the rules in %v", took)
	metrics := adminMetrics(t)
	for _, want := range []string{
		// The reloaded config's: carried, failed while the
		// application was down, then the 404.
		`caddy_robots_guard_robots_fetches_total{result="unreachable"} `,
		`caddy_robots_guard_robots_fetches_total{result="unavailable"} `,
		`caddy_robots_guard_robots_missing 1`,
		`caddy_robots_guard_robots_unreachable 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestIntegrationUpstreamSelf: a robots URL that leads back to the site
// itself (its public address instead of the application's) gets the
// handler's own served robots.txt, which is refused: the served file does
// not feed on itself.
func TestIntegrationUpstreamSelf(t *testing.T) {
	s := newSite(t, "")
	s.robots = "http://localhost:9080/robots.txt"
	tester := caddytest.NewTester(t)
	tester.InitServer(s.config("", "verify off\n\t\ttrap /trap/\n\t\tblock_class ai\n\t\trobots_refresh 1s"), "caddyfile")
	resp, first := get(t, tester, "GET", "/robots.txt", uaFirefox)
	expectStatus(t, "served robots.txt", resp, first, 200)
	time.Sleep(2500 * time.Millisecond) // refreshes
	resp, body := get(t, tester, "GET", "/robots.txt", uaFirefox)
	expectStatus(t, "served robots.txt", resp, body, 200)
	if body != first || strings.Count(body, "User-agent: gptbot") != 1 {
		t.Errorf("the served robots.txt changed from\n%s\nto\n%s", first, body)
	}
	metrics := adminMetrics(t)
	if !strings.Contains(metrics, "caddy_robots_guard_robots_unreachable 1") {
		t.Error("the refused own file does not show as unreachable")
	}
}

// TestCommandsReadApplication: "caddy robots check --config" and "caddy
// robots audit --robots <url>" read the robots.txt the application serves,
// as the handler does: its rules decide; a 404 means no rules; an
// application that cannot be reached is an error, not "no rules".
func TestCommandsReadApplication(t *testing.T) {
	app := upstreamtest.New(t, "User-agent: *\nDisallow: /private/\n")
	cfg := tempFile(t, "Caddyfile", `shop.example.com {
	robots_guard {
		robots `+app.URL()+`
		robots_host shop.example.com
		trap /private-archive/
	}
	respond "ok"
}
`)
	out := checkOut(t, "", "--config", cfg, "-A", "ExampleBot/1.0", "https://shop.example.com/private/x", "https://shop.example.com/about", "https://shop.example.com/private-archive/x")
	if want := "disallowed\thttps://shop.example.com/private/x\t(group *; line 2: Disallow: /private/)\nallowed\thttps://shop.example.com/about\t(group *; no rule matches)\nrefused\thttps://shop.example.com/private-archive/x\t(trap: the served robots.txt disallows it to every client; a request for it blocks the client's whole address (a browser's fetch for another site, such as an image embedded elsewhere, is refused without a block); group *; added to the served robots.txt: Disallow: /private-archive/)\n"; out != want {
		t.Errorf("check --config:\n got %q\nwant %q", out, want)
	}
	if _, host := app.LastRequest(); host != "shop.example.com" {
		t.Errorf("fetched with Host %q", host)
	}
	app.Set(404, "")
	out = checkOut(t, "", "--config", cfg, "-A", "ExampleBot/1.0", "https://shop.example.com/private/x")
	if !strings.HasPrefix(out, "allowed\thttps://shop.example.com/private/x") {
		t.Errorf("check --config after a 404: %q", out)
	}
	app.Down()
	cmd := checkCommand()
	cmd.SetArgs([]string{"--config", cfg, "-A", "ExampleBot/1.0", "https://shop.example.com/private/x"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "could not be fetched: connection refused") {
		t.Errorf("check --config with the application down: %v", err)
	}

	// audit --root with the application's robots.txt.
	app.Up()
	app.Set(200, "User-agent: *\nDisallow: /private/\n")
	root := t.TempDir()
	writeFile(t, root+"/index.html", `<html><body><a href="/private/plan.html">plan</a></body></html>`)
	if err := os.MkdirAll(root+"/private", 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root+"/private/plan.html", `<html><body>plan</body></html>`)
	ac := auditCommand()
	var buf bytes.Buffer
	ac.SetArgs([]string{"--root", root, "--robots", app.URL(), "--json", "--quiet"})
	ac.SetOut(&buf)
	ac.SetErr(io.Discard)
	if err := ac.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"kind": "disallowed_linked"`) || !strings.Contains(buf.String(), `"path": "/private/plan.html"`) {
		t.Errorf("audit with the application's robots.txt:\n%s", buf.String())
	}
}
