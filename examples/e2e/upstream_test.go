package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The site's robots.txt read from the application that makes it (robots
// <url>), against the real binary: an application in the test process
// serves robots.txt from its state, and the site's pages, behind
// reverse_proxy, and can fail, be taken down and brought back.

// robotsApp is a small application in the manner of WordPress or
// Discourse: robots.txt comes from its settings, not from a file.
type robotsApp struct {
	t    *testing.T
	addr string

	mu       sync.Mutex
	status   int
	body     string
	redirect string         // where robots.txt redirects to, if set
	hosts    map[string]int // Host headers of the robots.txt requests
	srv      *http.Server

	requests    atomic.Int64
	notModified atomic.Int64
}

func newRobotsApp(t *testing.T, body string) *robotsApp {
	t.Helper()
	a := &robotsApp{t: t, status: 200, body: body, hosts: map[string]int{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.addr = l.Addr().String()
	a.serve(l)
	t.Cleanup(a.down)
	return a
}

func (a *robotsApp) url() string { return "http://" + a.addr + "/robots.txt" }

func (a *robotsApp) serve(l net.Listener) {
	srv := &http.Server{Handler: a}
	a.mu.Lock()
	a.srv = srv
	a.mu.Unlock()
	go srv.Serve(l)
}

func (a *robotsApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/robots.txt" {
		if r.URL.Path == "/private/report.html" {
			io.WriteString(w, "<h1>Confidential figures</h1>")
			return
		}
		fmt.Fprintf(w, "<p>page %s</p>", r.URL.Path)
		return
	}
	a.requests.Add(1)
	a.mu.Lock()
	status, body, redirect := a.status, a.body, a.redirect
	a.hosts[r.Host]++
	a.mu.Unlock()
	if redirect != "" {
		http.Redirect(w, r, redirect, http.StatusFound)
		return
	}
	if status == 200 {
		sum := sha256.Sum256([]byte(body))
		etag := `"` + hex.EncodeToString(sum[:6]) + `"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			a.notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (a *robotsApp) set(status int, body string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status, a.body = status, body
}

// down stops the application: connections to it are refused.
func (a *robotsApp) down() {
	a.mu.Lock()
	srv := a.srv
	a.srv = nil
	a.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// up starts it again on the same address.
func (a *robotsApp) up() {
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

const appRobots = "User-agent: *\nDisallow: /private/\n"

const appBot = "AppBot/1.0 (+https://example.com/appbot)"

// appGuard reads the application's robots.txt every second, with the
// site's name, and lets the bot make as many requests as it likes: only
// the rules decide.
const appGuard = "robots_refresh 1s\n\t\trobots_host www.example.com\n\t\trate bot 0s\n\t\tstrikes 1000000"

// upstreamWait polls path as ua until it answers want, within limit, and
// returns how long it took.
func upstreamWait(t *testing.T, s *server, path, ua string, want int, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		code, _, _ := curl(t, s.front, path, ua)
		if code == want {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("%s: %d after %v, want %d", path, code, limit, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// upstreamLogEntry finds the first entry of Caddy's main log whose message
// contains msg.
func upstreamLogEntry(s *server, msg string) map[string]any {
	for _, line := range strings.Split(s.output.String(), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil && strings.Contains(fmt.Sprint(e["msg"]), msg) {
			return e
		}
	}
	return nil
}

// TestUpstreamApplication: the rules of the application's robots.txt
// apply from the start (fetched with the site's Host header), a change in
// the application applies within one refresh, a 500 and an application
// that is down (connection refused) keep the last good rules (a bot gets
// 403 on a disallowed path, not 502), and a 404 clears the rules with a
// warning. The served robots.txt is the application's plus robotsguard's
// additions, and the refreshes are conditional requests.
func TestUpstreamApplication(t *testing.T) {
	need(t, "curl")
	app := newRobotsApp(t, appRobots)
	s := start(t, options{robotsPath: app.url(), proxyTo: app.addr, guard: appGuard})

	// At start.
	code, guard, body := curl(t, s.front, "/private/report.html", appBot)
	if code != 403 || guard != "disallowed" || strings.Contains(body, "Confidential") {
		t.Fatalf("disallowed page at start: %d %q %q", code, guard, body)
	}
	if code, _, body := curl(t, s.front, "/docs/", appBot); code != 200 || body != "<p>page /docs/</p>" {
		t.Fatalf("allowed page at start: %d %q", code, body)
	}
	code, _, served := curl(t, s.front, "/robots.txt", appBot)
	if code != 200 || !strings.Contains(served, "Disallow: /private/") || !strings.Contains(served, "Disallow: /private-archive/") {
		t.Errorf("served robots.txt (the application's plus the trap):\n%s", served)
	}
	app.mu.Lock()
	hosts := fmt.Sprint(app.hosts)
	app.mu.Unlock()
	if !strings.HasPrefix(hosts, "map[www.example.com:") || strings.Count(hosts, ":") != 1 {
		t.Errorf("robots.txt fetched with Host headers %s", hosts)
	}

	// A change in the application, within one refresh.
	app.set(200, appRobots+"Disallow: /drafts/\n")
	took := upstreamWait(t, s, "/drafts/plan.html", appBot, 403, 10*time.Second)
	t.Logf("a change in the application's robots.txt took effect in %v (robots_refresh 1s)", took)
	time.Sleep(2500 * time.Millisecond) // refreshes of an unchanged file
	if app.notModified.Load() == 0 {
		t.Errorf("no conditional refresh was answered 304 (%d robots.txt requests)", app.requests.Load())
	}
	t.Logf("%d robots.txt requests so far, %d answered 304", app.requests.Load(), app.notModified.Load())

	// A 500: the last good rules stay.
	app.set(500, "<html><body>Internal Server Error</body></html>")
	waitLogged(t, s, "HTTP 500 Internal Server Error")
	for _, p := range []string{"/private/report.html", "/drafts/plan.html"} {
		if code, guard, body := curl(t, s.front, p, appBot); code != 403 || guard != "disallowed" || strings.Contains(body, "Confidential") {
			t.Errorf("%s while the application answers 500: %d %q", p, code, guard)
		}
	}

	// Down: connection refused. Still 403 on the disallowed paths; an
	// allowed page is a 502, as the application is down.
	app.down()
	waitLogged(t, s, "connection refused")
	if code, guard, _ := curl(t, s.front, "/private/report.html", appBot); code != 403 || guard != "disallowed" {
		t.Errorf("disallowed page while the application is down: %d %q, want 403", code, guard)
	}
	if code, _, _ := curl(t, s.front, "/docs/", appBot); code != 502 {
		t.Errorf("allowed page while the application is down: %d, want 502", code)
	}
	if code, _, served := curl(t, s.front, "/robots.txt", appBot); code != 200 || !strings.Contains(served, "Disallow: /drafts/") {
		t.Errorf("served robots.txt while the application is down: %d\n%s", code, served)
	}
	if e := upstreamLogEntry(s, "could not be fetched; keeping the last good rules"); e == nil || e["level"] != "warn" || e["logger"] != "robots_guard" {
		t.Errorf("the failure in Caddy's main log: %v", e)
	}

	// Back, without a robots.txt: the rules are cleared, with a warning.
	app.set(404, "not found")
	app.up()
	took = upstreamWait(t, s, "/private/report.html", appBot, 200, 15*time.Second)
	t.Logf("a 404 after the application came back cleared the rules in %v", took)
	if _, _, body := curl(t, s.front, "/private/report.html", appBot); !strings.Contains(body, "Confidential figures") {
		t.Errorf("page after the 404: %q", body)
	}
	e := upstreamLogEntry(s, "the application has none any more")
	if e == nil || e["level"] != "warn" || e["answer"] != "HTTP 404 Not Found" || e["host"] != "www.example.com" {
		t.Errorf("the 404 warning: %v", e)
	}
	time.Sleep(2500 * time.Millisecond) // more 404s: warned once
	if n := strings.Count(s.output.String(), "the application has none"); n != 1 {
		t.Errorf("the 404 was warned %d times", n)
	}
	// The trap, robotsguard's own addition, stays in force.
	if code, _, _ := curl(t, s.front, "/private-archive/", appBot); code != 403 {
		t.Errorf("the trap after the 404: %d", code)
	}
}

// TestUpstreamRedirectElsewhere: an application that redirects
// robots.txt to another host is not followed there: the last good rules
// stay, and the log says why and what to set.
func TestUpstreamRedirectElsewhere(t *testing.T) {
	need(t, "curl")
	other := newRobotsApp(t, "User-agent: *\nAllow: /\n")
	app := newRobotsApp(t, appRobots)
	s := start(t, options{robotsPath: app.url(), proxyTo: app.addr, guard: appGuard})
	app.mu.Lock()
	app.redirect = other.url()
	app.mu.Unlock()
	waitLogged(t, s, "redirect not followed")
	if code, guard, _ := curl(t, s.front, "/private/report.html", appBot); code != 403 || guard != "disallowed" {
		t.Errorf("disallowed page after a redirect elsewhere: %d %q", code, guard)
	}
	if other.requests.Load() != 0 {
		t.Errorf("the other host was asked %d times", other.requests.Load())
	}
	if e := upstreamLogEntry(s, "could not be fetched"); e == nil || !strings.Contains(fmt.Sprint(e["hint"]), "robots_host") {
		t.Errorf("no hint in the log: %v", e)
	}
}

// TestUpstreamReload: "caddy reload" while the application is down keeps
// the rules the running config fetched; the new config fetches its own
// once the application is back.
func TestUpstreamReload(t *testing.T) {
	need(t, "curl")
	app := newRobotsApp(t, appRobots)
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := start(t, options{robotsPath: app.url(), proxyTo: app.addr, guard: appGuard, admin: admin})
	if code, guard, _ := curl(t, s.front, "/private/report.html", appBot); code != 403 || guard != "disallowed" {
		t.Fatalf("disallowed page at start: %d %q", code, guard)
	}

	app.down()
	waitLogged(t, s, "connection refused")
	// Another config: one more option.
	cfgPath := filepath.Join(s.dir, "Caddyfile")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	next := strings.Replace(string(cfg), "verify off", "verify off\n\t\tburst 5", 1)
	if next == string(cfg) {
		t.Fatal("the config did not change")
	}
	if err := os.WriteFile(cfgPath, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	reload := exec.Command(caddyBin, "reload", "--config", cfgPath, "--adapter", "caddyfile", "--address", admin)
	if msg, err := reload.CombinedOutput(); err != nil {
		t.Fatalf("caddy reload: %v\n%s", err, msg)
	}
	if !strings.Contains(s.output.String(), "carried over from the previous configuration") {
		t.Error("the reload did not start from the carried rules")
	}
	if code, guard, _ := curl(t, s.front, "/private/report.html", appBot); code != 403 || guard != "disallowed" {
		t.Errorf("disallowed page after a reload while the application is down: %d %q", code, guard)
	}
	app.set(200, appRobots+"Disallow: /drafts/\n")
	app.up()
	took := upstreamWait(t, s, "/drafts/plan.html", appBot, 403, 15*time.Second)
	t.Logf("the reloaded config fetched the application's new file %v after it came back", took)
}
