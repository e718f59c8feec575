package caddymodule

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddytest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/robotsguard/robotsguard/metrics"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/upstream"
)

// testApp is an application that serves robots.txt from its state, as
// WordPress or Discourse make theirs, and "app:<path>" for anything else.
// It can be taken down (connection refused) and brought up again on the
// same address.
type testApp struct {
	t    *testing.T
	addr string

	mu      sync.Mutex
	status  int
	body    string
	etag    bool          // send ETags and answer If-None-Match with 304
	delay   time.Duration // before answering robots.txt
	extra   http.Header   // more response header fields
	headers http.Header   // of the last robots.txt request
	host    string        // of the last robots.txt request
	srv     *http.Server

	requests    atomic.Int64 // robots.txt requests
	notModified atomic.Int64 // 304s sent
}

func newTestApp(t *testing.T, body string) *testApp {
	t.Helper()
	a := &testApp{t: t, status: 200, body: body, etag: true}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.addr = l.Addr().String()
	a.serve(l)
	t.Cleanup(a.down)
	return a
}

func (a *testApp) url() string { return "http://" + a.addr + "/robots.txt" }

func (a *testApp) serve(l net.Listener) {
	srv := &http.Server{Handler: a}
	a.mu.Lock()
	a.srv = srv
	a.mu.Unlock()
	go srv.Serve(l)
}

func (a *testApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/robots.txt" {
		fmt.Fprintf(w, "app:%s", r.URL.Path)
		return
	}
	a.requests.Add(1)
	a.mu.Lock()
	status, body, etag, delay := a.status, a.body, a.etag, a.delay
	a.headers, a.host = r.Header.Clone(), r.Host
	for k, v := range a.extra {
		w.Header()[k] = v
	}
	a.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if status == 200 && etag {
		sum := sha256.Sum256([]byte(body))
		tag := `"` + hex.EncodeToString(sum[:6]) + `"`
		w.Header().Set("ETag", tag)
		if r.Header.Get("If-None-Match") == tag {
			a.notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// set changes what robots.txt answers.
func (a *testApp) set(status int, body string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status, a.body = status, body
}

func (a *testApp) lastRequest() (http.Header, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.headers, a.host
}

// down stops the application: connections are refused.
func (a *testApp) down() {
	a.mu.Lock()
	srv := a.srv
	a.srv = nil
	a.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// up starts it again on the same address.
func (a *testApp) up() {
	a.t.Helper()
	var l net.Listener
	var err error
	for range 50 {
		if l, err = net.Listen("tcp", a.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		a.t.Fatal(err)
	}
	a.serve(l)
}

// newTestRemote returns a source that reads url, seeded (from the carried
// pool) but not refreshing: the test calls refresh.
func newTestRemote(t *testing.T, o upstream.Options) (*source, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	m := metrics.New() // a new set keeps the test's counts apart
	f, err := upstream.New(o)
	if err != nil {
		t.Fatal(err)
	}
	key := fmt.Sprintf("%s\ntest %d", carriedKey(o.URL, o.Host, nil), testRemotes.Add(1)) // nothing carried between them
	s := newRemoteSource(f, key, DefaultRobotsRefresh, func(*policy.Robots) {}, zap.New(core), m)
	s.seed()
	t.Cleanup(s.close)
	return s, logs
}

var testRemotes atomic.Int64

func fetches(s *source, result string) float64 {
	return metricValue(s.metrics, "robots_fetches_total", "result", result)
}

// TestUpstreamStatusClasses: each answer of the application does what RFC
// 9309 section 2.3.1 says, read as an enforcer must: a 2xx installs the
// file; a 5xx, a timeout and a refused connection keep the last good rules
// and are retried sooner, with a growing wait; a 4xx clears them, warned
// once per change and counted; a 2xx after it is installed at once.
func TestUpstreamStatusClasses(t *testing.T) {
	app := newTestApp(t, "User-agent: *\nDisallow: /private/\n")
	s, logs := newTestRemote(t, upstream.Options{URL: app.url(), Timeout: 300 * time.Millisecond})
	ctx := context.Background()
	if !allowedBy(s, "/private/x") || !s.snapshot().missing {
		t.Fatal("rules before the first fetch")
	}
	if wait := s.refresh(ctx); wait != DefaultRobotsRefresh || allowedBy(s, "/private/x") {
		t.Fatalf("first fetch: rules not installed (next in %v)", wait)
	}

	// The application fails: 500, then a timeout, then a refused
	// connection. The rules stay; the waits grow from a second and stay
	// within the refresh interval; the failure is logged when it starts,
	// and again when its cause changes.
	app.set(500, "<html>Internal Server Error</html>")
	w1 := s.refresh(ctx)
	app.mu.Lock()
	app.delay = time.Second
	app.mu.Unlock()
	w2 := s.refresh(ctx)
	app.down()
	w3 := s.refresh(ctx)
	if allowedBy(s, "/private/x") {
		t.Fatal("a failing application dropped the rules")
	}
	if w1 > time.Second || w2 > 2*time.Second || w2 < 1600*time.Millisecond || w3 > 4*time.Second || w3 < 3200*time.Millisecond {
		t.Errorf("retry waits %v, %v, %v; want about 1s, 2s, 4s", w1, w2, w3)
	}
	if n := logs.FilterMessageSnippet("could not be fetched; keeping the last good rules").Len(); n != 1 {
		t.Errorf("start of the failures logged %d times", n)
	}
	causes := []string{}
	for _, e := range logs.FilterMessageSnippet("robots.txt").All() {
		if c, ok := e.ContextMap()["error"].(string); ok {
			causes = append(causes, c)
		}
	}
	if len(causes) != 3 || causes[0] != "HTTP 500 Internal Server Error" || causes[1] != "timed out after 300ms" || causes[2] != "connection refused" {
		t.Errorf("causes logged: %q", causes)
	}
	if fetches(s, "unreachable") != 3 || metricValue(s.metrics, "robots_unreachable") != 1 {
		t.Errorf("unreachable fetches %v, gauge %v", fetches(s, "unreachable"), metricValue(s.metrics, "robots_unreachable"))
	}

	// Back, with a 404: the rules are cleared, with one warning, and the
	// missing gauge; a second 404 says nothing more; a 410 is a change.
	app.mu.Lock()
	app.delay = 0
	app.mu.Unlock()
	app.up()
	app.set(404, "not found")
	s.refresh(ctx)
	if !allowedBy(s, "/private/x") || !s.snapshot().missing {
		t.Error("a 404 kept the rules")
	}
	if logs.FilterMessageSnippet("can be fetched again").Len() != 1 || metricValue(s.metrics, "robots_unreachable") != 0 {
		t.Error("the end of the failures was not logged, or the gauge not lowered")
	}
	s.refresh(ctx)
	app.set(410, "gone")
	s.refresh(ctx)
	warned := logs.FilterMessageSnippet("the application has none").All()
	if len(warned) != 2 || warned[0].Level != zap.WarnLevel || warned[0].ContextMap()["answer"] != "HTTP 404 Not Found" || warned[1].ContextMap()["answer"] != "HTTP 410 Gone" {
		t.Errorf("4xx warnings: %v", warned)
	}
	if fetches(s, "unavailable") != 3 || metricValue(s.metrics, "robots_missing") != 1 {
		t.Errorf("unavailable fetches %v, missing gauge %v", fetches(s, "unavailable"), metricValue(s.metrics, "robots_missing"))
	}
	// A 403 gets a hint about the Host header.
	app.set(403, "Blocked host")
	s.refresh(ctx)
	if e := logs.FilterMessageSnippet("the application has none").All(); len(e) != 3 || !strings.Contains(fmt.Sprint(e[2].ContextMap()["hint"]), "robots_host") {
		t.Errorf("403 warning: %v", e)
	}

	// A file again: installed at once, as no rules are in force.
	app.set(200, "User-agent: *\nDisallow: /drafts/\n")
	s.refresh(ctx)
	if allowedBy(s, "/drafts/x") || !allowedBy(s, "/private/x") {
		t.Error("the file after a 404 was not installed")
	}
	if metricValue(s.metrics, "robots_missing") != 0 || logs.FilterMessageSnippet("serves one again").Len() != 1 {
		t.Error("the end of the 404s was not logged, or the gauge not lowered")
	}

	// At start, an application that cannot be reached means no rules
	// until it answers, logged as an error.
	app.down()
	s2, logs2 := newTestRemote(t, upstream.Options{URL: app.url()})
	s2.refresh(ctx)
	if !allowedBy(s2, "/drafts/x") || logs2.FilterMessageSnippet("no rules are enforced until it is").FilterField(zap.String("error", "connection refused")).Len() != 1 {
		t.Errorf("unreachable at start: %v", logs2.All())
	}
	app.up()
	s2.refresh(ctx)
	if allowedBy(s2, "/drafts/x") {
		t.Error("the first good answer was not installed")
	}
}

// TestUpstreamNotModified: a 304 keeps the rules without parsing them
// again (the very same snapshot stays), and so does the same file from an
// application that sends no validators.
func TestUpstreamNotModified(t *testing.T) {
	app := newTestApp(t, "User-agent: *\nDisallow: /private/\n")
	s, _ := newTestRemote(t, upstream.Options{URL: app.url()})
	ctx := context.Background()
	s.refresh(ctx)
	first := s.snapshot()
	reloads := metricValue(s.metrics, "policy_reloads_total", "result", "ok")
	for range 3 {
		s.refresh(ctx)
	}
	if h, _ := app.lastRequest(); h.Get("If-None-Match") == "" {
		t.Error("the refresh was not conditional")
	}
	if app.notModified.Load() != 3 || fetches(s, "not_modified") != 3 || s.snapshot() != first || metricValue(s.metrics, "policy_reloads_total", "result", "ok") != reloads {
		t.Errorf("304s %d, not_modified %v, snapshot replaced %v, reloads %v -> %v", app.notModified.Load(), fetches(s, "not_modified"), s.snapshot() != first, reloads, metricValue(s.metrics, "policy_reloads_total", "result", "ok"))
	}
	// A change is fetched whole and installed.
	app.set(200, "User-agent: *\nDisallow: /drafts/\n")
	s.refresh(ctx)
	if allowedBy(s, "/drafts/x") || s.snapshot() == first {
		t.Error("the changed file was not installed")
	}
	// Without validators, the same body is not parsed again either.
	app.mu.Lock()
	app.etag = false
	app.mu.Unlock()
	second := s.snapshot()
	s.refresh(ctx)
	s.refresh(ctx)
	if h, _ := app.lastRequest(); h.Get("If-None-Match") != "" {
		t.Errorf("validators sent to an application that gives none: %v", h)
	}
	if s.snapshot() != second || fetches(s, "ok") != 4 {
		t.Errorf("the same body replaced the snapshot (ok fetches %v)", fetches(s, "ok"))
	}
}

// TestUpstreamKeepsLastGood: a 2xx that is not a robots.txt (an HTML error
// page with status 200) or that ends in the middle of a line, where the
// rules in force ended with a line end, keeps the last good rules, and is
// reported once however often it is fetched; so does a robots_guard
// handler's own served robots.txt.
func TestUpstreamKeepsLastGood(t *testing.T) {
	app := newTestApp(t, "User-agent: *\nDisallow: /private/\n")
	s, logs := newTestRemote(t, upstream.Options{URL: app.url()})
	ctx := context.Background()
	s.refresh(ctx)
	app.set(200, "<!DOCTYPE html><html><body>Maintenance</body></html>")
	s.refresh(ctx)
	s.refresh(ctx)
	app.set(200, "User-agent: *\nDisallow: /drafts/\nDisallow: /pri")
	s.refresh(ctx)
	s.refresh(ctx)
	if allowedBy(s, "/private/x") || !allowedBy(s, "/drafts/x") {
		t.Error("a bad answer replaced the rules")
	}
	if logs.FilterMessageSnippet("robots.txt is invalid").Len() != 1 || logs.FilterMessageSnippet("it looks cut short").Len() != 1 {
		t.Errorf("refusals logged: %v", logs.All())
	}
	if metricValue(s.metrics, "policy_reloads_total", "result", "invalid") != 1 || metricValue(s.metrics, "policy_reloads_total", "result", "incomplete") != 1 {
		t.Error("refusals not counted once each")
	}
	// A robots_guard handler's own served file (the URL leads back to
	// the site) is refused too.
	app.mu.Lock()
	app.extra = http.Header{"X-Robots-Guard-Served": {"generated"}}
	app.mu.Unlock()
	app.set(200, "User-agent: *\nDisallow: /drafts/\nDisallow: /private/\nDisallow: /trap/\n")
	s.refresh(ctx)
	refused := 0
	for _, e := range logs.FilterMessageSnippet("could not be fetched").All() {
		if strings.Contains(fmt.Sprint(e.ContextMap()["error"]), errOwnFile.Error()) {
			refused++
		}
	}
	if !allowedBy(s, "/trap/x") || refused != 1 {
		t.Errorf("a served robots.txt was installed: %v", logs.All())
	}
	if _, _, err := loadRobots(ctx, &Handler{Robots: app.url()}); err == nil || !strings.Contains(err.Error(), "own served robots.txt") {
		t.Errorf("loadRobots of a served robots.txt: %v", err)
	}
	app.mu.Lock()
	app.extra = nil
	app.mu.Unlock()
	// Ended with a line end, it is installed.
	app.set(200, "User-agent: *\nDisallow: /drafts/\nDisallow: /private/\n")
	s.refresh(ctx)
	if allowedBy(s, "/drafts/x") || allowedBy(s, "/private/x") {
		t.Error("the whole file was not installed")
	}
}

// TestUpstreamLarge: a robots.txt larger than 500 KiB is read up to 500
// KiB, its rules there enforced, and the rest reported.
func TestUpstreamLarge(t *testing.T) {
	body := "User-agent: *\nDisallow: /private/\n" + strings.Repeat("Disallow: /filler/\n", 40000) + "Disallow: /beyond/\n"
	app := newTestApp(t, body)
	s, logs := newTestRemote(t, upstream.Options{URL: app.url()})
	s.refresh(context.Background())
	if allowedBy(s, "/private/x") || !allowedBy(s, "/beyond/x") {
		t.Error("the first 500 KiB were not enforced, or the rest was")
	}
	found := false
	for _, e := range logs.FilterMessage("robots.txt lint").All() {
		if m, _ := e.ContextMap()["message"].(string); strings.HasPrefix(m, "file is larger than 512000 bytes") {
			found = true
			t.Logf("lint: %s", m)
		}
	}
	if !found {
		t.Errorf("no lint warning for the size: %v", logs.All())
	}
	// The same file changed beyond 500 KiB and cut in the middle of its
	// last line: the change is not seen in the rules, but the cut is.
	app.set(200, body+"Disallow: /more/\nDisallow: /cu")
	s.refresh(context.Background())
	if logs.FilterMessageSnippet("it looks cut short").Len() != 1 {
		t.Errorf("a large file cut short was not refused: %v", logs.All())
	}
}

// TestUpstreamSlowStart: an application that does not answer holds up
// Provision for firstFetchWait at most; no rules apply until it answers.
func TestUpstreamSlowStart(t *testing.T) {
	app := newTestApp(t, "User-agent: *\nDisallow: /private/\n")
	app.mu.Lock()
	app.delay = 4 * time.Second
	app.mu.Unlock()
	start := time.Now()
	h := provisionUpstream(t, `{"robots": "`+app.url()+`", "verify": {"disabled": true}}`)
	took := time.Since(start)
	t.Logf("Provision returned after %v", took)
	if took < firstFetchWait || took > firstFetchWait+5*time.Second {
		t.Errorf("Provision took %v, want about %v", took, firstFetchWait)
	}
	if !h.source.snapshot().missing {
		t.Error("rules before the first fetch answered")
	}
	eventually(t, "the slow first fetch", 10*time.Second, func() bool {
		return !h.source.snapshot().policy.Match([]string{"examplebot"}, "/private/x").Allowed
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
	app := newTestApp(t, "User-agent: *\nDisallow: /private/\n")
	h := provisionUpstream(t, `{"robots": "`+app.url()+`", "robots_host": "www.example.com", "robots_headers": {"x-forwarded-proto": "https"},
		"traps": ["/trap/"], "sitemaps": ["https://www.example.com/sitemap.xml"], "verify": {"disabled": true}}`)
	snap := h.source.snapshot()
	if snap.missing || snap.policy.Match([]string{"examplebot"}, "/private/x").Allowed {
		t.Fatal("the rules were not fetched at start")
	}
	served := string(snap.served)
	for _, want := range []string{"Disallow: /private/", "Disallow: /trap/", "Sitemap: https://www.example.com/sitemap.xml"} {
		if !strings.Contains(served, want) {
			t.Errorf("served robots.txt lacks %q:\n%s", want, served)
		}
	}
	hdr, host := app.lastRequest()
	if host != "www.example.com" || hdr.Get("X-Forwarded-Proto") != "https" || !strings.HasPrefix(hdr.Get("User-Agent"), "robotsguard") {
		t.Errorf("fetched with Host %q, headers %v", host, hdr)
	}
	if h.RobotsRefresh != caddy.Duration(DefaultRobotsRefresh) {
		t.Errorf("robots_refresh default %v", time.Duration(h.RobotsRefresh))
	}
}

// TestUpstreamCarriedAcrossReloads: a new config with the same URL starts
// from the rules the old one fetched, even when the application is down,
// and then fetches its own; a config with another Host does not share
// them; the carried file is released with the last handler.
func TestUpstreamCarriedAcrossReloads(t *testing.T) {
	app := newTestApp(t, "User-agent: *\nDisallow: /private/\n")
	cfg := `{"robots": "` + app.url() + `", "robots_refresh": "1s", "verify": {"disabled": true}}`
	old := provisionUpstream(t, cfg)
	if old.source.snapshot().policy.Match([]string{"examplebot"}, "/private/x").Allowed {
		t.Fatal("no rules at start")
	}
	app.down()
	start := time.Now()
	next := provisionUpstream(t, `{"robots": "`+app.url()+`", "robots_refresh": "1s", "strikes": 9, "verify": {"disabled": true}}`)
	took := time.Since(start)
	if next.source.snapshot().missing || next.source.snapshot().policy.Match([]string{"examplebot"}, "/private/x").Allowed {
		t.Fatal("the reload dropped the rules while the application was down")
	}
	t.Logf("the reload provisioned in %v with the carried rules", took)
	other := provisionUpstream(t, `{"robots": "`+app.url()+`", "robots_host": "other.example", "verify": {"disabled": true}}`)
	if !other.source.snapshot().missing {
		t.Error("a config with another Host got the carried rules")
	}
	_ = old.Cleanup()
	// The new config fetches its own once the application is back.
	app.set(200, "User-agent: *\nDisallow: /drafts/\n")
	app.up()
	eventually(t, "the new config's refresh", 10*time.Second, func() bool {
		return !next.source.snapshot().policy.Match([]string{"examplebot"}, "/drafts/x").Allowed
	})
	key := carriedKey(app.url(), "", nil)
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
	app := newTestApp(t, "User-agent: *\nDisallow: /private/\n")
	settle := func() int {
		time.Sleep(200 * time.Millisecond)
		runtime.GC()
		return runtime.NumGoroutine()
	}
	provisionUpstream(t, `{"robots": "`+app.url()+`", "verify": {"disabled": true}}`) // warm up
	g0 := settle()
	for i := range 20 {
		var h Handler
		js := `{"robots": "` + app.url() + `", "robots_refresh": "1s", "verify": {"disabled": true}, "burst": ` + fmt.Sprint(i+1) + `}`
		if err := caddy.StrictUnmarshalJSON([]byte(js), &h); err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 1:
			app.mu.Lock()
			app.delay = 5 * time.Second // a fetch in flight at cleanup
			app.mu.Unlock()
		case 2:
			app.down()
		}
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		if err := h.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		_ = h.Cleanup()
		cancel()
		if i%3 == 2 {
			app.up()
		}
		app.mu.Lock()
		app.delay = 0
		app.mu.Unlock()
	}
	g1 := settle()
	t.Logf("20 handlers: goroutines %d -> %d", g0, g1)
	if g1 > g0+5 {
		t.Errorf("goroutines grew from %d to %d", g0, g1)
	}
}

// TestLoadRobots: the loader the commands use reads a file or fetches a
// URL once, as the handler does: nil for no rules, an error where a
// handler would keep the rules it had.
func TestLoadRobots(t *testing.T) {
	app := newTestApp(t, "User-agent: *\nDisallow: /private/\n")
	ctx := context.Background()
	data, from, err := loadRobots(ctx, &Handler{Robots: app.url(), RobotsHost: "www.example.com"})
	if err != nil || string(data) != "User-agent: *\nDisallow: /private/\n" || !strings.Contains(from, "HTTP 200") {
		t.Errorf("URL: %q, %s, %v", data, from, err)
	}
	if _, host := app.lastRequest(); host != "www.example.com" {
		t.Errorf("fetched with Host %q", host)
	}
	app.set(404, "")
	if data, from, err := loadRobots(ctx, &Handler{Robots: app.url()}); err != nil || data != nil || !strings.HasSuffix(from, "(HTTP 404 Not Found): no rules") {
		t.Errorf("404: %q, %s, %v", data, from, err)
	}
	app.set(503, "")
	if _, _, err := loadRobots(ctx, &Handler{Robots: app.url()}); err == nil || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("503: %v", err)
	}
	app.down()
	if _, _, err := loadRobots(ctx, &Handler{Robots: app.url()}); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("down: %v", err)
	}
	path := t.TempDir() + "/robots.txt"
	writeFile(t, path, "User-agent: *\nDisallow: /x\n")
	if data, from, err := loadRobots(ctx, &Handler{Robots: path}); err != nil || string(data) != "User-agent: *\nDisallow: /x\n" || from != path {
		t.Errorf("file: %q, %s, %v", data, from, err)
	}
	if _, _, err := loadRobots(ctx, &Handler{Robots: path + ".missing"}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	if data, _, err := loadRobots(ctx, &Handler{}); data != nil || err != nil {
		t.Errorf("no robots option: %q, %v", data, err)
	}
	if _, _, err := loadRobots(ctx, &Handler{Robots: "http://127.0.0.1:3000/robots.txt", RobotsHeaders: map[string]string{"Host": "x"}}); err == nil {
		t.Error("a bad header was accepted")
	}
}

// TestIntegrationUpstream: a real Caddy with robots_guard reading the
// application's robots.txt: the rules apply at start, follow a change
// within a refresh, and stay while the application is down (a bot gets
// 403 on a disallowed path, not 502) and across a config reload made
// while it is down; a 404 clears them.
func TestIntegrationUpstream(t *testing.T) {
	app := newTestApp(t, "User-agent: *\nDisallow: /private/\n")
	s := newSite(t, "")
	s.robots = app.url()
	s.backend.Close()
	s.backend.URL = "http://" + app.addr // the application serves the pages too
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
	app.set(200, "User-agent: *\nDisallow: /drafts/\n")
	took := waitFor(t, tester, "/drafts/x", bot, 403, 10*time.Second)
	t.Logf("a change in the application took effect in %v (refresh 1s)", took)

	app.down()
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

	app.up()
	app.set(404, "")
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
	app := newTestApp(t, "User-agent: *\nDisallow: /private/\n")
	cfg := tempFile(t, "Caddyfile", `shop.example.com {
	robots_guard {
		robots `+app.url()+`
		robots_host shop.example.com
		trap /private-archive/
	}
	respond "ok"
}
`)
	out := checkOut(t, "", "--config", cfg, "-A", "ExampleBot/1.0", "https://shop.example.com/private/x", "https://shop.example.com/about", "https://shop.example.com/private-archive/x")
	if want := "disallowed\thttps://shop.example.com/private/x\t(group *; line 2: Disallow: /private/)\nallowed\thttps://shop.example.com/about\t(group *; no rule matches)\nrefused\thttps://shop.example.com/private-archive/x\t(trap)\n"; out != want {
		t.Errorf("check --config:\n got %q\nwant %q", out, want)
	}
	if _, host := app.lastRequest(); host != "shop.example.com" {
		t.Errorf("fetched with Host %q", host)
	}
	app.set(404, "")
	out = checkOut(t, "", "--config", cfg, "-A", "ExampleBot/1.0", "https://shop.example.com/private/x")
	if !strings.HasPrefix(out, "allowed\thttps://shop.example.com/private/x") {
		t.Errorf("check --config after a 404: %q", out)
	}
	app.down()
	cmd := checkCommand()
	cmd.SetArgs([]string{"--config", cfg, "-A", "ExampleBot/1.0", "https://shop.example.com/private/x"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "could not be fetched: connection refused") {
		t.Errorf("check --config with the application down: %v", err)
	}

	// audit --root with the application's robots.txt.
	app.up()
	app.set(200, "User-agent: *\nDisallow: /private/\n")
	root := t.TempDir()
	writeFile(t, root+"/index.html", `<html><body><a href="/private/plan.html">plan</a></body></html>`)
	if err := os.MkdirAll(root+"/private", 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root+"/private/plan.html", `<html><body>plan</body></html>`)
	ac := auditCommand()
	var buf bytes.Buffer
	ac.SetArgs([]string{"--root", root, "--robots", app.url(), "--json", "--quiet"})
	ac.SetOut(&buf)
	ac.SetErr(io.Discard)
	if err := ac.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"kind": "disallowed_linked"`) || !strings.Contains(buf.String(), `"path": "/private/plan.html"`) {
		t.Errorf("audit with the application's robots.txt:\n%s", buf.String())
	}
}
