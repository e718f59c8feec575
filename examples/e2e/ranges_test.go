package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The end-to-end tests of issue 30: a crawler's published IP ranges read
// from a URL, refreshed, and kept when the URL fails.

// rangesServer is the publisher of a ranges list on loopback: a real HTTP
// server whose answer a test switches (a list, garbage, 50 MB, a 503), and
// that can go down and come back on the same address.
type rangesServer struct {
	addr string
	mu   sync.Mutex
	body string
	code int
	srv  *http.Server
	gets atomic.Int64
	// sizes of the answers sent, for the report
	sent []int
}

func newRangesServer(t *testing.T) *rangesServer {
	t.Helper()
	r := &rangesServer{code: 200}
	r.up(t, "127.0.0.1:0")
	t.Cleanup(r.down)
	return r
}

func (r *rangesServer) up(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r.addr = l.Addr().String()
	r.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.gets.Add(1)
		r.mu.Lock()
		body, code := r.body, r.code
		r.sent = append(r.sent, len(body))
		r.mu.Unlock()
		etag := fmt.Sprintf(`"%d-%d"`, len(body), code)
		if code == 200 && req.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	})}
	go func() { _ = r.srv.Serve(l) }()
}

func (r *rangesServer) down() { _ = r.srv.Close() }

func (r *rangesServer) serve(code int, body string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.code, r.body = code, body
}

func (r *rangesServer) url() string { return "http://" + r.addr + "/chatgpt-user.json" }

// rangesList is a list in OpenAI's format.
func rangesList(prefixes ...string) string {
	var entries []string
	for _, p := range prefixes {
		entries = append(entries, fmt.Sprintf(`{"ipv4Prefix": %q}`, p))
	}
	return `{"creationTime": "2026-11-30T10:00:00.000000", "prefixes": [` + strings.Join(entries, ", ") + `]}`
}

// claim asks for /about.html as ChatGPT-User from the address from
// (X-Forwarded-For, believed from loopback) and returns the status and the
// X-Robots-Guard header: under "Disallow: /", a verified ChatGPT-User (a
// user-triggered fetcher) is served, an impostor refused as one, an
// unverified claim refused as disallowed.
func claim(t *testing.T, s *server, from string) (int, string) {
	t.Helper()
	r := curlDo(t, s.front+"/about.html", uaChatGPTUser, "-H", "X-Forwarded-For: "+from)
	if r.status == 200 && !strings.Contains(r.body, "<h1>About</h1>") {
		t.Errorf("from %s: 200 without the page: %q", from, r.body)
	}
	return r.status, r.header.Get("X-Robots-Guard")
}

// addrs hands out a new address of a /24 for each claim, so that no
// address collects strikes from the claims before.
type addrs struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *addrs) next(net24 string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == nil {
		a.n = map[string]int{}
	}
	a.n[net24]++
	return fmt.Sprintf("%s.%d", net24, a.n[net24])
}

func startRanges(t *testing.T, url, storage, admin string) *server {
	t.Helper()
	return start(t, options{robots: "User-agent: *\nDisallow: /\n", trustProxy: true, admin: admin,
		global:  "storage file_system " + storage,
		verify:  "verify {\n\t\t\tranges chatgpt-user " + url + "\n\t\t\tranges_refresh 1s\n\t\t}",
		backend: "file_server"})
}

// TestRangesFromURL: with "ranges chatgpt-user <url>" and a refresh of 1s,
// the real binary fetches the list from a real HTTP server on loopback: a
// claim from an address in the list is verified and served, one outside
// is refused as an impostor; the list changes and within the refresh the
// verdicts follow; garbage, an empty list and a 50 MB answer are refused
// and the last good list is kept, as it is while the server is down; each
// failure is logged at warn with the URL and reason and counted in
// caddy_robots_guard_ranges_fetches_total.
func TestRangesFromURL(t *testing.T) {
	need(t, "curl")
	pub := newRangesServer(t)
	pub.serve(200, rangesList("198.51.100.0/24"))
	storage := t.TempDir()
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := startRanges(t, pub.url(), storage, admin)
	var a addrs
	expect := func(what, from string, wantStatus int, wantGuard string) {
		t.Helper()
		if status, guard := claim(t, s, from); status != wantStatus || guard != wantGuard {
			t.Errorf("%s, from %s: %d %q, want %d %q", what, from, status, guard, wantStatus, wantGuard)
		}
	}
	expect("in the list", a.next("198.51.100"), 200, "")
	expect("outside the list", a.next("203.0.113"), 403, "impostor")

	// The list changes: the verdicts follow within the refresh.
	pub.serve(200, rangesList("203.0.113.0/24"))
	changed := time.Now()
	var followed time.Duration
	for deadline := changed.Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if status, _ := claim(t, s, a.next("203.0.113")); status == 200 {
			followed = time.Since(changed)
			break
		}
	}
	if followed == 0 {
		t.Fatal("the changed list was not in force after 15s")
	}
	t.Logf("the verdicts followed the changed list after %v (ranges_refresh 1s)", followed.Round(10*time.Millisecond))
	expect("the new list", a.next("203.0.113"), 200, "")
	expect("the old list", a.next("198.51.100"), 403, "impostor")

	// Bad answers: each refused, the last good list kept.
	big := rangesList("10.0.0.0/8") + strings.Repeat(" ", 50<<20)
	for _, bad := range []struct {
		name string
		code int
		body string
	}{
		{"garbage", 200, "\x00\x01\x02 not a list \xff"},
		{"an HTML error page", 200, "<html><body>Bad gateway</body></html>"},
		{"an empty list", 200, `{"prefixes": []}`},
		{"50 MB", 200, big},
		{"a 503", 503, "down for maintenance"},
	} {
		before := pub.gets.Load()
		pub.serve(bad.code, bad.body)
		waitFor(t, bad.name+" fetched twice", func() bool { return pub.gets.Load() >= before+2 })
		expect("after "+bad.name, a.next("203.0.113"), 200, "")
		expect("after "+bad.name+", outside", a.next("10.1.2"), 403, "impostor")
	}
	// Down: the last good list holds.
	pub.down()
	time.Sleep(3 * time.Second)
	expect("server down", a.next("203.0.113"), 200, "")
	expect("server down, outside", a.next("198.51.100"), 403, "impostor")

	logs := s.output.String()
	for _, reason := range []string{"the answer is no list of IP ranges", "no prefixes", "the list is larger than 4194304 bytes", "HTTP 503 Service Unavailable", "connection refused"} {
		if !strings.Contains(logs, reason) {
			t.Errorf("no warning says %q", reason)
		}
	}
	if !strings.Contains(logs, `"msg":"ranges: fetch failed; keeping the last good list","url":"`+pub.url()+`"`) {
		t.Errorf("no warning with the URL:\n%s", lastLines(logs, 20))
	}
	m := scrape(t, "http://"+admin+"/metrics")
	for _, result := range []string{"ok", "refused", "unreachable"} {
		series := `caddy_robots_guard_ranges_fetches_total{result="` + result + `",url="` + pub.url() + `"}`
		if !strings.Contains(m, series) {
			t.Errorf("metrics lack %s", series)
		}
	}
	if !strings.Contains(m, `caddy_robots_guard_ranges_fetched_timestamp_seconds{url="`+pub.url()+`"}`) {
		t.Error("metrics lack the time of the last good fetch")
	}
	pub.mu.Lock()
	t.Logf("%d fetches; answers sent (bytes): %v", pub.gets.Load(), compact(pub.sent))
	pub.mu.Unlock()
	copies, _ := filepath.Glob(filepath.Join(storage, "robots_guard", "ranges", "*.json"))
	if len(copies) != 1 {
		t.Fatalf("last good copies in storage: %v", copies)
	}
	data, _ := os.ReadFile(copies[0])
	if !strings.Contains(string(data), "203.0.113.0/24") {
		t.Errorf("the stored copy is not the last good list: %.200s", data)
	}
}

// TestRangesStartDown: an instance that starts while the ranges URL is
// down starts all the same: with the last good copy an earlier run left in
// Caddy's storage, its crawler is verified by it at once; without one it
// is unverified (refused as any unverified bot under Disallow: /, not as
// an impostor) and a warning says so; once the URL answers, the list is
// fetched and the crawler verified.
func TestRangesStartDown(t *testing.T) {
	need(t, "curl")
	pub := newRangesServer(t)
	pub.serve(200, rangesList("198.51.100.0/24"))
	storage := t.TempDir()
	var a addrs
	first := startRanges(t, pub.url(), storage, "")
	if status, _ := claim(t, first, a.next("198.51.100")); status != 200 {
		t.Fatalf("first run, URL up: %d", status)
	}
	addr := pub.addr
	pub.down()

	t.Run("with a copy in storage", func(t *testing.T) {
		begin := time.Now()
		s := startRanges(t, pub.url(), storage, "")
		t.Logf("started in %v with the URL down", time.Since(begin).Round(time.Millisecond))
		if status, guard := claim(t, s, a.next("198.51.100")); status != 200 {
			t.Errorf("in the cached list: %d %q, want served", status, guard)
		}
		if status, guard := claim(t, s, a.next("203.0.113")); status != 403 || guard != "impostor" {
			t.Errorf("outside the cached list: %d %q", status, guard)
		}
		if logs := s.output.String(); !strings.Contains(logs, "ranges: starting from the last good copy in storage until the list is fetched") ||
			!strings.Contains(logs, "ranges: fetch failed; keeping the last good list") {
			t.Errorf("logs:\n%s", lastLines(logs, 20))
		}
	})
	t.Run("without a copy", func(t *testing.T) {
		begin := time.Now()
		s := startRanges(t, pub.url(), t.TempDir(), "")
		t.Logf("started in %v with the URL down and no copy", time.Since(begin).Round(time.Millisecond))
		if status, guard := claim(t, s, a.next("198.51.100")); status != 403 || guard != "disallowed" {
			t.Errorf("no list: %d %q, want 403 disallowed (unverified)", status, guard)
		}
		if logs := s.output.String(); !strings.Contains(logs, "ranges: fetch failed and no list is known; its crawlers are unverified until one is fetched") ||
			!strings.Contains(logs, pub.url()) {
			t.Errorf("logs:\n%s", lastLines(logs, 20))
		}
		// The URL comes back: the list is fetched (retries back off from 1s).
		pub.up(t, addr)
		waitFor(t, "the list fetched once the URL is back", func() bool {
			status, _ := claim(t, s, a.next("198.51.100"))
			return status == 200
		})
	})
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// compact writes runs of equal sizes as size×count.
func compact(sizes []int) string {
	var b strings.Builder
	for i := 0; i < len(sizes); {
		j := i
		for j < len(sizes) && sizes[j] == sizes[i] {
			j++
		}
		fmt.Fprintf(&b, "%d×%d ", sizes[i], j-i)
		i = j
	}
	return strings.TrimSpace(b.String())
}
