package caddymodule

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// provisionHandler provisions a handler outside a running Caddy.
func provisionHandler(t *testing.T, h *Handler) {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(func() {
		_ = h.Cleanup()
		cancel()
	})
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
}

// serve runs one request through the handler with a client IP set the way
// Caddy's server sets it.
func serve(h *Handler, ip, ua, target string) int {
	r := httptest.NewRequest("GET", target, nil)
	r.Header.Set("User-Agent", ua)
	ctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer())
	ctx = context.WithValue(ctx, caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: ip})
	r = r.WithContext(ctx)
	w := httptest.NewRecorder()
	err := h.ServeHTTP(w, r, caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(200)
		return nil
	}))
	if he, ok := err.(caddyhttp.HandlerError); ok {
		return he.StatusCode
	}
	return w.Code
}

// TestFlood: a million distinct client IPs (IPv6), bots and browsers, stay
// within the configured cap of per-client state; the test reports the peak
// RSS of the process.
func TestFlood(t *testing.T) {
	n := 1_000_000
	if raceEnabled || testing.Short() {
		n = 100_000
	}
	const maxClients = 50_000
	dir := t.TempDir()
	robots := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &Handler{Robots: robots, MaxClients: maxClients, Zone: "flood", Verify: &VerifyConfig{Disabled: true}, Traps: []string{"/trap/"}}
	provisionHandler(t, h)
	uas := []string{
		"Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
		"curl/8.5.0",
		"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
	}
	targets := []string{"/", "/page?id=7", "/private/x", "/trap/"}
	statuses := map[int]int{}
	// One request per target, reused: only the client IP and User-Agent
	// change, as Caddy's server would set them.
	vars := map[string]any{}
	reqs := map[string]*http.Request{}
	for _, target := range append(targets, "/about") {
		r := httptest.NewRequest("GET", target, nil)
		ctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer())
		reqs[target] = r.WithContext(context.WithValue(ctx, caddyhttp.VarsCtxKey, vars))
	}
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error { return nil })
	w := httptest.NewRecorder()
	var b [16]byte
	b[0], b[1] = 0x20, 0x01
	clients, blocks := h.shared.store.Bounds()
	for i := 0; i < n; i++ {
		// Distinct /64s: clients are tracked by IPv6 prefix.
		for k := 0; k < 6; k++ {
			b[7-k] = byte(i >> (8 * k))
		}
		vars[caddyhttp.ClientIPVarKey] = netip.AddrFrom16(b).String()
		target := targets[i%4]
		if i%1000 != 3 && target == "/trap/" {
			target = "/about"
		}
		r := reqs[target]
		r.Header.Set("User-Agent", uas[i%len(uas)])
		status := 200
		if err := h.ServeHTTP(w, r, next); err != nil {
			status = err.(caddyhttp.HandlerError).StatusCode
		}
		statuses[status]++
		if i%100_000 == 0 && h.shared.store.Len() > clients+blocks {
			t.Fatalf("after %d clients: %d tracked, cap %d + %d blocked", i, h.shared.store.Len(), clients, blocks)
		}
	}
	tracked := h.shared.store.Len()
	if tracked > clients+blocks {
		t.Fatalf("%d clients tracked, cap %d + %d blocked", tracked, clients, blocks)
	}
	if statuses[403] == 0 || statuses[200] == 0 {
		t.Errorf("statuses %v", statuses)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d distinct IPv6 clients: %d tracked (cap %d), statuses %v, heap in use %d MiB, peak RSS %s",
		n, tracked, maxClients, statuses, ms.HeapInuse>>20, peakRSS())
}

// peakRSS reads the process's peak resident set size from /proc.
func peakRSS() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			if kb, err := strconv.Atoi(f[1]); err == nil {
				return strconv.Itoa(kb>>10) + " MiB"
			}
		}
	}
	return "unknown"
}

// TestServeHTTPClientIP: the client IP comes from Caddy's client_ip
// variable, never from request headers.
func TestServeHTTPClientIP(t *testing.T) {
	h := &Handler{Zone: "client-ip", Verify: &VerifyConfig{Disabled: true}, Traps: []string{"/trap/"}}
	provisionHandler(t, h)
	const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	r := httptest.NewRequest("GET", "/trap/", nil)
	r.Header.Set("X-Forwarded-For", "198.51.100.99")
	r.Header.Set("X-Real-IP", "198.51.100.99")
	r.Header.Set("User-Agent", firefox)
	ctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer())
	ctx = context.WithValue(ctx, caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: "192.0.2.10"})
	w := httptest.NewRecorder()
	err := h.ServeHTTP(w, r.WithContext(ctx), caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil }))
	// A browser-class client refused by a block gets the page a person
	// can read, written by the handler; others get the error.
	status := w.Code
	if he, ok := err.(caddyhttp.HandlerError); ok {
		status = he.StatusCode
	} else if err != nil {
		t.Fatalf("trap: %v", err)
	}
	if status != 403 {
		t.Fatalf("trap: %d %v", status, err)
	}
	if code := serve(h, "192.0.2.10", firefox, "/"); code != 403 {
		t.Errorf("the trapped client IP: %d", code)
	}
	if code := serve(h, "198.51.100.99", firefox, "/"); code != 200 {
		t.Errorf("the address in the headers was blocked: %d", code)
	}
	// Without the variable (no Caddy server), the connection's address.
	r = httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "192.0.2.10:5555"
	if ip := clientIP(r); ip.String() != "192.0.2.10" {
		t.Errorf("clientIP from RemoteAddr = %s", ip)
	}
}

// clientIP is clientIPIn with the request's own variables, for the tests.
func clientIP(r *http.Request) netip.Addr { return clientIPIn(r, varsOf(r)) }
