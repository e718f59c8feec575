package caddymodule

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
)

const uaChrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"

// tlsConfig returns a Caddyfile that serves the site behind robots_guard
// over HTTPS (tls internal) and plain HTTP.
func (s *site) tlsConfig(options string) string {
	return fmt.Sprintf(`{
	skip_install_trust
	admin localhost:2999
	http_port 9080
	https_port 9443
	grace_period 1ns
}
https://localhost:9443, http://localhost:9080 {
	tls internal
	robots_guard {
		robots %s
		zone %s
		verify off
		%s
	}
	reverse_proxy %s
}
`, s.robots, s.zone, options, strings.TrimPrefix(s.backend.URL, "http://"))
}

// fetch requests base+path with the User-Agent and headers h.
func fetch(t *testing.T, tester *caddytest.Tester, base, path string, h http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	resp, err := settled(tester.Client, req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// settled does req with c, again for up to 10 s while the server that
// answers is the old config's, going away (see get), or has no
// certificate yet (tls internal issues it after the config loads).
func settled(c *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := c.Do(req)
	deadline := time.Now().Add(10 * time.Second)
	for err != nil && time.Now().Before(deadline) && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || strings.Contains(err.Error(), "tls: internal error")) {
		time.Sleep(50 * time.Millisecond)
		resp, err = c.Do(req)
	}
	return resp, err
}

// certified waits up to 10 s for addr to complete a TLS handshake (tls
// internal issues the certificate after the config loads), without an
// HTTP request that the handler would record: for clients that settled
// cannot retry, such as curl.
func certified(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no TLS handshake with %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestIntegrationPosers: over HTTPS, a Go client with Chrome's User-Agent
// and no Sec-Fetch-* is a poser from its first request: refused the
// disallowed path with the rule and the evidence (its TLS stack, headers
// and HTTP/2 framing: the directive adds the listener wrapper) named, and
// throttled under Crawl-delay; with a browser's Fetch Metadata and client
// hints too, it is refused for its TLS stack and framing alone.
// Over plain HTTP, where browsers send no Fetch Metadata and there is no
// handshake, neither is caught: the disallowed path and a burst are served.
// The metrics count the poser's decisions under class poser. With posers
// log, the poser is served.
func TestIntegrationPosers(t *testing.T) {
	s := newSite(t, siteRobots)
	tester := caddytest.NewTester(t)
	tester.InitServer(s.tlsConfig(""), "caddyfile")
	before := adminMetrics(t)
	const https, plain = "https://localhost:9443", "http://localhost:9080"

	library := http.Header{"User-Agent": {uaChrome}} // what Go's client adds is all
	resp, body := fetch(t, tester, https, "/private/report.html", library)
	expectStatus(t, "a poser's first request, for a disallowed path", resp, body, 403)
	if got := resp.Header.Get("X-Robots-Guard"); got != "disallowed" {
		t.Errorf("X-Robots-Guard %q, want disallowed", got)
	}
	if got := resp.Header.Get("X-Robots-Guard-Evidence"); got != "tls,sec-fetch,framing" {
		t.Errorf("X-Robots-Guard-Evidence %q, want tls,sec-fetch,framing", got)
	}
	if got := resp.Header.Get("X-Robots-Guard-Rule"); got != "robots.txt line 6: Disallow: /private/" {
		t.Errorf("X-Robots-Guard-Rule %q", got)
	}
	throttled := 0
	for range 6 {
		if resp, _ := fetch(t, tester, https, "/about.html", library); resp.StatusCode == 429 {
			throttled++
			if resp.Header.Get("Retry-After") == "" || resp.Header.Get("X-Robots-Guard-Evidence") != "tls,sec-fetch,framing" {
				t.Errorf("a poser's 429: Retry-After %q, evidence %q", resp.Header.Get("Retry-After"), resp.Header.Get("X-Robots-Guard-Evidence"))
			}
		}
	}
	if throttled == 0 {
		t.Error("6 rapid requests of a poser under Crawl-delay: 5: none throttled")
	}
	resp, body = fetch(t, tester, plain, "/private/report.html", library)
	expectStatus(t, "the poser over plain HTTP", resp, body, 200)

	browser := http.Header{"User-Agent": {uaChrome}, "Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"},
		"Sec-Ch-Ua": {`"Chromium";v="156", "Google Chrome";v="156", "Not-A.Brand";v="99"`}, "Sec-Ch-Ua-Mobile": {"?0"}, "Sec-Ch-Ua-Platform": {`"Windows"`}}
	// Go's TLS stack gives it away, whatever headers it copies.
	resp, body = fetch(t, tester, https, "/private/report.html", browser)
	expectStatus(t, "a Go client with a browser's headers", resp, body, 403)
	if got := resp.Header.Get("X-Robots-Guard-Evidence"); got != "tls,framing" {
		t.Errorf("a Go client with a browser's headers: X-Robots-Guard-Evidence %q, want tls,framing", got)
	}
	// Over plain HTTP nothing shows: the headers are a browser's.
	for _, path := range []string{"/private/report.html", "/a", "/b", "/c", "/d", "/e", "/f"} {
		resp, body := fetch(t, tester, plain, path, browser)
		expectStatus(t, "a browser's "+path, resp, body, 200)
		if body != "backend:"+path {
			t.Errorf("a browser's %s: body %q", path, body)
		}
	}
	after := adminMetrics(t)
	checkCounted(t, before, after, map[string]float64{
		`caddy_robots_guard_decisions_total{action="deny",class="poser",reason="disallowed"}`: 2,
	})
	if !strings.Contains(after, `caddy_robots_guard_decisions_total{action="throttle",class="poser",reason="crawl_delay"}`) {
		t.Error("metrics count no throttle of class poser")
	}

	// posers log: served, as the browser it claims.
	s2 := newSite(t, siteRobots)
	tester.InitServer(s2.tlsConfig("posers log"), "caddyfile")
	resp, body = fetch(t, tester, https, "/private/report.html", library)
	expectStatus(t, "a poser with posers log", resp, body, 200)
}
