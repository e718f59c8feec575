package source

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/upstream"
	"github.com/robotsguard/robotsguard/upstream/upstreamtest"
)

// newTestRemote returns a source that reads url, seeded (nothing is
// carried between them) but not refreshing: the test calls refresh.
func newTestRemote(t *testing.T, o upstream.Options) (*Source, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	f, err := upstream.New(o)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCounters{}
	s := NewRemote(f, DefaultRefresh, nil, Options{Additions: func(*policy.Robots) policy.Added { return policy.Added{} }, Logger: zap.New(core), Counters: c.counters()})
	testCountersOf.Store(s, c)
	s.seed()
	t.Cleanup(s.Close)
	return s, logs
}

func fetches(s *Source, result string) float64 {
	return counted(s, "fetch:"+result)
}

// TestUpstreamStatusClasses: each answer of the application does what RFC
// 9309 section 2.3.1 says, read as an enforcer must: a 2xx installs the
// file; a 5xx, a timeout and a refused connection keep the last good rules
// and are retried sooner, with a growing wait; a 4xx clears them, warned
// once per change and counted; a 2xx after it is installed at once.
func TestUpstreamStatusClasses(t *testing.T) {
	app := upstreamtest.New(t, "User-agent: *\nDisallow: /private/\n")
	s, logs := newTestRemote(t, upstream.Options{URL: app.URL(), Timeout: 300 * time.Millisecond})
	ctx := context.Background()
	if !allowedBy(s, "/private/x") || !s.Snapshot().Missing {
		t.Fatal("rules before the first fetch")
	}
	if wait := s.refresh(ctx); wait != DefaultRefresh || allowedBy(s, "/private/x") {
		t.Fatalf("first fetch: rules not installed (next in %v)", wait)
	}

	// The application fails: 500, then a timeout, then a refused
	// connection. The rules stay; the waits grow from a second and stay
	// within the refresh interval; the failure is logged when it starts,
	// and again when its cause changes.
	app.Set(500, "<html>Internal Server Error</html>")
	w1 := s.refresh(ctx)
	app.SetDelay(time.Second)
	w2 := s.refresh(ctx)
	app.Down()
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
	if fetches(s, "unreachable") != 3 || counted(s, "unreachable") != 1 {
		t.Errorf("unreachable fetches %v, gauge %v", fetches(s, "unreachable"), counted(s, "unreachable"))
	}

	// Back, with a 404: the rules are cleared, with one warning, and the
	// missing gauge; a second 404 says nothing more; a 410 is a change.
	app.SetDelay(0)
	app.Up()
	app.Set(404, "not found")
	s.refresh(ctx)
	if !allowedBy(s, "/private/x") || !s.Snapshot().Missing {
		t.Error("a 404 kept the rules")
	}
	if logs.FilterMessageSnippet("can be fetched again").Len() != 1 || counted(s, "unreachable") != 0 {
		t.Error("the end of the failures was not logged, or the gauge not lowered")
	}
	s.refresh(ctx)
	app.Set(410, "gone")
	s.refresh(ctx)
	warned := logs.FilterMessageSnippet("the application has none").All()
	if len(warned) != 2 || warned[0].Level != zap.WarnLevel || warned[0].ContextMap()["answer"] != "HTTP 404 Not Found" || warned[1].ContextMap()["answer"] != "HTTP 410 Gone" {
		t.Errorf("4xx warnings: %v", warned)
	}
	if fetches(s, "unavailable") != 3 || counted(s, "missing") != 1 {
		t.Errorf("unavailable fetches %v, missing gauge %v", fetches(s, "unavailable"), counted(s, "missing"))
	}
	// A 403 gets a hint about the Host header.
	app.Set(403, "Blocked host")
	s.refresh(ctx)
	if e := logs.FilterMessageSnippet("the application has none").All(); len(e) != 3 || !strings.Contains(fmt.Sprint(e[2].ContextMap()["hint"]), "robots_host") {
		t.Errorf("403 warning: %v", e)
	}

	// A file again: installed at once, as no rules are in force.
	app.Set(200, "User-agent: *\nDisallow: /drafts/\n")
	s.refresh(ctx)
	if allowedBy(s, "/drafts/x") || !allowedBy(s, "/private/x") {
		t.Error("the file after a 404 was not installed")
	}
	if counted(s, "missing") != 0 || logs.FilterMessageSnippet("serves one again").Len() != 1 {
		t.Error("the end of the 404s was not logged, or the gauge not lowered")
	}

	// At start, an application that cannot be reached means no rules
	// until it answers: a warning at the first failure (the application
	// may start after Caddy; caddy validate stops there), an error at the
	// second.
	app.Down()
	s2, logs2 := newTestRemote(t, upstream.Options{URL: app.URL()})
	s2.refresh(ctx)
	if !allowedBy(s2, "/drafts/x") || logs2.FilterMessageSnippet("no rules are enforced until it is").FilterField(zap.String("error", "connection refused")).FilterLevelExact(zap.WarnLevel).Len() != 1 {
		t.Errorf("unreachable at start: %v", logs2.All())
	}
	s2.refresh(ctx)
	if logs2.FilterMessageSnippet("still cannot be fetched: no rules are enforced").FilterLevelExact(zap.ErrorLevel).Len() != 1 {
		t.Errorf("unreachable twice at start: %v", logs2.All())
	}
	app.Up()
	s2.refresh(ctx)
	if allowedBy(s2, "/drafts/x") {
		t.Error("the first good answer was not installed")
	}
}

// TestUpstreamNotModified: a 304 keeps the rules without parsing them
// again (the very same snapshot stays), and so does the same file from an
// application that sends no validators.
func TestUpstreamNotModified(t *testing.T) {
	app := upstreamtest.New(t, "User-agent: *\nDisallow: /private/\n")
	s, _ := newTestRemote(t, upstream.Options{URL: app.URL()})
	ctx := context.Background()
	s.refresh(ctx)
	first := s.Snapshot()
	reloads := counted(s, "reload:ok")
	for range 3 {
		s.refresh(ctx)
	}
	if h, _ := app.LastRequest(); h.Get("If-None-Match") == "" {
		t.Error("the refresh was not conditional")
	}
	if app.NotModified.Load() != 3 || fetches(s, "not_modified") != 3 || s.Snapshot() != first || counted(s, "reload:ok") != reloads {
		t.Errorf("304s %d, not_modified %v, snapshot replaced %v, reloads %v -> %v", app.NotModified.Load(), fetches(s, "not_modified"), s.Snapshot() != first, reloads, counted(s, "reload:ok"))
	}
	// A change is fetched whole and installed.
	app.Set(200, "User-agent: *\nDisallow: /drafts/\n")
	s.refresh(ctx)
	if allowedBy(s, "/drafts/x") || s.Snapshot() == first {
		t.Error("the changed file was not installed")
	}
	// Without validators, the same body is not parsed again either.
	app.SetETag(false)
	second := s.Snapshot()
	s.refresh(ctx)
	s.refresh(ctx)
	if h, _ := app.LastRequest(); h.Get("If-None-Match") != "" {
		t.Errorf("validators sent to an application that gives none: %v", h)
	}
	if s.Snapshot() != second || fetches(s, "ok") != 4 {
		t.Errorf("the same body replaced the snapshot (ok fetches %v)", fetches(s, "ok"))
	}
}

// TestUpstreamKeepsLastGood: a 2xx that is not a robots.txt (an HTML error
// page with status 200) or that ends in the middle of a line, where the
// rules in force ended with a line end, keeps the last good rules, and is
// reported once however often it is fetched; so does a robots_guard
// handler's own served robots.txt.
func TestUpstreamKeepsLastGood(t *testing.T) {
	app := upstreamtest.New(t, "User-agent: *\nDisallow: /private/\n")
	s, logs := newTestRemote(t, upstream.Options{URL: app.URL()})
	ctx := context.Background()
	s.refresh(ctx)
	app.Set(200, "<!DOCTYPE html><html><body>Maintenance</body></html>")
	s.refresh(ctx)
	s.refresh(ctx)
	app.Set(200, "User-agent: *\nDisallow: /drafts/\nDisallow: /pri")
	s.refresh(ctx)
	s.refresh(ctx)
	if allowedBy(s, "/private/x") || !allowedBy(s, "/drafts/x") {
		t.Error("a bad answer replaced the rules")
	}
	if logs.FilterMessageSnippet("robots.txt is invalid").Len() != 1 || logs.FilterMessageSnippet("it looks cut short").Len() != 1 {
		t.Errorf("refusals logged: %v", logs.All())
	}
	if counted(s, "reload:invalid") != 1 || counted(s, "reload:incomplete") != 1 {
		t.Error("refusals not counted once each")
	}
	// A robots_guard handler's own served file (the URL leads back to
	// the site) is refused too.
	app.SetHeader(http.Header{"X-Robots-Guard-Served": {"generated"}})
	app.Set(200, "User-agent: *\nDisallow: /drafts/\nDisallow: /private/\nDisallow: /trap/\n")
	s.refresh(ctx)
	refused := 0
	for _, e := range logs.FilterMessageSnippet("could not be fetched").All() {
		if strings.Contains(fmt.Sprint(e.ContextMap()["error"]), ErrOwnFile.Error()) {
			refused++
		}
	}
	if !allowedBy(s, "/trap/x") || refused != 1 {
		t.Errorf("a served robots.txt was installed: %v", logs.All())
	}
	if _, _, err := Read(ctx, app.URL(), "", nil); err == nil || !strings.Contains(err.Error(), "own served robots.txt") {
		t.Errorf("Read of a served robots.txt: %v", err)
	}
	app.SetHeader(nil)
	// Ended with a line end, it is installed.
	app.Set(200, "User-agent: *\nDisallow: /drafts/\nDisallow: /private/\n")
	s.refresh(ctx)
	if allowedBy(s, "/drafts/x") || allowedBy(s, "/private/x") {
		t.Error("the whole file was not installed")
	}
}

// TestUpstreamLarge: a robots.txt larger than 500 KiB is read up to 500
// KiB, its rules there enforced, and the rest reported.
func TestUpstreamLarge(t *testing.T) {
	body := "User-agent: *\nDisallow: /private/\n" + strings.Repeat("Disallow: /filler/\n", 40000) + "Disallow: /beyond/\n"
	app := upstreamtest.New(t, body)
	s, logs := newTestRemote(t, upstream.Options{URL: app.URL()})
	s.refresh(context.Background())
	if allowedBy(s, "/private/x") || !allowedBy(s, "/beyond/x") {
		t.Error("the first 500 KiB were not enforced, or the rest was")
	}
	found := false
	for _, e := range logs.FilterMessageSnippet("robots.txt is larger than 500 KiB").All() { // loss.go
		if m, _ := e.ContextMap()["message"].(string); strings.HasPrefix(m, "file is larger than 512000 bytes") && strings.Contains(m, "(the rest was not read)") {
			found = true
			t.Logf("lint: %s", m)
		}
	}
	if !found {
		t.Errorf("no lint warning for the size: %v", logs.All())
	}
	// The same file changed beyond 500 KiB and cut in the middle of its
	// last line: the change is not seen in the rules, but the cut is.
	app.Set(200, body+"Disallow: /more/\nDisallow: /cu")
	s.refresh(context.Background())
	if logs.FilterMessageSnippet("it looks cut short").Len() != 1 {
		t.Errorf("a large file cut short was not refused: %v", logs.All())
	}
}

// TestLoadRobots: the loader the commands use reads a file or fetches a
// URL once, as the handler does: nil for no rules, an error where a
// handler would keep the rules it had.
func TestLoadRobots(t *testing.T) {
	app := upstreamtest.New(t, "User-agent: *\nDisallow: /private/\n")
	ctx := context.Background()
	data, from, err := Read(ctx, app.URL(), "www.example.com", nil)
	if err != nil || string(data) != "User-agent: *\nDisallow: /private/\n" || !strings.Contains(from, "HTTP 200") {
		t.Errorf("URL: %q, %s, %v", data, from, err)
	}
	if _, host := app.LastRequest(); host != "www.example.com" {
		t.Errorf("fetched with Host %q", host)
	}
	app.Set(404, "")
	if data, from, err := Read(ctx, app.URL(), "", nil); err != nil || data != nil || !strings.HasSuffix(from, "(HTTP 404 Not Found): no rules") {
		t.Errorf("404: %q, %s, %v", data, from, err)
	}
	app.Set(503, "")
	if _, _, err := Read(ctx, app.URL(), "", nil); err == nil || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("503: %v", err)
	}
	app.Down()
	if _, _, err := Read(ctx, app.URL(), "", nil); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("down: %v", err)
	}
	path := t.TempDir() + "/robots.txt"
	writeFile(t, path, "User-agent: *\nDisallow: /x\n")
	if data, from, err := Read(ctx, path, "", nil); err != nil || string(data) != "User-agent: *\nDisallow: /x\n" || from != path {
		t.Errorf("file: %q, %s, %v", data, from, err)
	}
	if _, _, err := Read(ctx, path+".missing", "", nil); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	if data, _, err := Read(ctx, "", "", nil); data != nil || err != nil {
		t.Errorf("no robots option: %q, %v", data, err)
	}
	if _, _, err := Read(ctx, "http://127.0.0.1:3000/robots.txt", "", map[string]string{"Host": "x"}); err == nil {
		t.Error("a bad header was accepted")
	}
}
