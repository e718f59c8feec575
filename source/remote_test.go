package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

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
	s := NewRemote(f, DefaultRefresh, nil, Options{Additions: func(*policy.Robots) {}, Logger: zap.New(core), Counters: c.counters()})
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
	app := newTestApp(t, "User-agent: *\nDisallow: /private/\n")
	s, logs := newTestRemote(t, upstream.Options{URL: app.url(), Timeout: 300 * time.Millisecond})
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
	if fetches(s, "unreachable") != 3 || counted(s, "unreachable") != 1 {
		t.Errorf("unreachable fetches %v, gauge %v", fetches(s, "unreachable"), counted(s, "unreachable"))
	}

	// Back, with a 404: the rules are cleared, with one warning, and the
	// missing gauge; a second 404 says nothing more; a 410 is a change.
	app.mu.Lock()
	app.delay = 0
	app.mu.Unlock()
	app.up()
	app.set(404, "not found")
	s.refresh(ctx)
	if !allowedBy(s, "/private/x") || !s.Snapshot().Missing {
		t.Error("a 404 kept the rules")
	}
	if logs.FilterMessageSnippet("can be fetched again").Len() != 1 || counted(s, "unreachable") != 0 {
		t.Error("the end of the failures was not logged, or the gauge not lowered")
	}
	s.refresh(ctx)
	app.set(410, "gone")
	s.refresh(ctx)
	warned := logs.FilterMessageSnippet("the application has none").All()
	if len(warned) != 2 || warned[0].Level != zap.WarnLevel || warned[0].ContextMap()["answer"] != "HTTP 404 Not Found" || warned[1].ContextMap()["answer"] != "HTTP 410 Gone" {
		t.Errorf("4xx warnings: %v", warned)
	}
	if fetches(s, "unavailable") != 3 || counted(s, "missing") != 1 {
		t.Errorf("unavailable fetches %v, missing gauge %v", fetches(s, "unavailable"), counted(s, "missing"))
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
	if counted(s, "missing") != 0 || logs.FilterMessageSnippet("serves one again").Len() != 1 {
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
	first := s.Snapshot()
	reloads := counted(s, "reload:ok")
	for range 3 {
		s.refresh(ctx)
	}
	if h, _ := app.lastRequest(); h.Get("If-None-Match") == "" {
		t.Error("the refresh was not conditional")
	}
	if app.notModified.Load() != 3 || fetches(s, "not_modified") != 3 || s.Snapshot() != first || counted(s, "reload:ok") != reloads {
		t.Errorf("304s %d, not_modified %v, snapshot replaced %v, reloads %v -> %v", app.notModified.Load(), fetches(s, "not_modified"), s.Snapshot() != first, reloads, counted(s, "reload:ok"))
	}
	// A change is fetched whole and installed.
	app.set(200, "User-agent: *\nDisallow: /drafts/\n")
	s.refresh(ctx)
	if allowedBy(s, "/drafts/x") || s.Snapshot() == first {
		t.Error("the changed file was not installed")
	}
	// Without validators, the same body is not parsed again either.
	app.mu.Lock()
	app.etag = false
	app.mu.Unlock()
	second := s.Snapshot()
	s.refresh(ctx)
	s.refresh(ctx)
	if h, _ := app.lastRequest(); h.Get("If-None-Match") != "" {
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
	if counted(s, "reload:invalid") != 1 || counted(s, "reload:incomplete") != 1 {
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
		if strings.Contains(fmt.Sprint(e.ContextMap()["error"]), ErrOwnFile.Error()) {
			refused++
		}
	}
	if !allowedBy(s, "/trap/x") || refused != 1 {
		t.Errorf("a served robots.txt was installed: %v", logs.All())
	}
	if _, _, err := Read(ctx, app.url(), "", nil); err == nil || !strings.Contains(err.Error(), "own served robots.txt") {
		t.Errorf("Read of a served robots.txt: %v", err)
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

// TestLoadRobots: the loader the commands use reads a file or fetches a
// URL once, as the handler does: nil for no rules, an error where a
// handler would keep the rules it had.
func TestLoadRobots(t *testing.T) {
	app := newTestApp(t, "User-agent: *\nDisallow: /private/\n")
	ctx := context.Background()
	data, from, err := Read(ctx, app.url(), "www.example.com", nil)
	if err != nil || string(data) != "User-agent: *\nDisallow: /private/\n" || !strings.Contains(from, "HTTP 200") {
		t.Errorf("URL: %q, %s, %v", data, from, err)
	}
	if _, host := app.lastRequest(); host != "www.example.com" {
		t.Errorf("fetched with Host %q", host)
	}
	app.set(404, "")
	if data, from, err := Read(ctx, app.url(), "", nil); err != nil || data != nil || !strings.HasSuffix(from, "(HTTP 404 Not Found): no rules") {
		t.Errorf("404: %q, %s, %v", data, from, err)
	}
	app.set(503, "")
	if _, _, err := Read(ctx, app.url(), "", nil); err == nil || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("503: %v", err)
	}
	app.down()
	if _, _, err := Read(ctx, app.url(), "", nil); err == nil || !strings.Contains(err.Error(), "connection refused") {
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
