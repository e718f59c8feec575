package caddymodule

import (
	"bufio"
	"crypto/tls"
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

	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/quic-go/quic-go/http3"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/tlsprint"
)

// ownJA4 returns the JA4 that a client's transport sends, as a plain Go
// TLS server of this test reads it: the reference the module must match.
func ownJA4(t *testing.T, c *http.Client) string {
	t.Helper()
	seen := make(chan string, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{GetConfigForClient: func(info *tls.ClientHelloInfo) (*tls.Config, error) {
		h := tlsprint.FromClientHello(info)
		h.Extensions = append([]uint16{0}, h.Extensions...) // Caddy's site is a name, this one an IP
		seen <- h.JA4()
		return nil, nil
	}}
	srv.StartTLS()
	defer srv.Close()
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return <-seen
}

// TestIntegrationJA4: real TLS clients over h1, h2 and h3 to a real Caddy
// with "tls internal" get their own JA4 in {http.robots_guard.ja4} and in
// the decision log; "ja4 off" turns it off; behind a trusted proxy the
// ja4_header is read, and not from anyone else.
func TestIntegrationJA4(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy")
	}
	s := newSite(t, siteRobots)
	decisions := filepath.Join(t.TempDir(), "decisions.log")
	config := func(globals, options string) string {
		return fmt.Sprintf(`{
	skip_install_trust
	admin localhost:2999
	http_port 9080
	https_port 9443
	grace_period 1ns
	%s
	log rg {
		output file %s
		format json
		include http.handlers.robots_guard
	}
}
https://localhost:9443 {
	tls internal
	header >X-JA4 "[{http.robots_guard.ja4}]"
	robots_guard {
		robots %s
		zone %s
		verify off
		posers off
		%s
	}
	reverse_proxy %s
}
`, globals, decisions, s.robots, s.zone, options, strings.TrimPrefix(s.backend.URL, "http://"))
	}
	tester := caddytest.NewTester(t)
	tester.InitServer(config("", ""), "caddyfile")
	insecure := &tls.Config{InsecureSkipVerify: true}
	h1 := &http.Client{Transport: &http.Transport{TLSClientConfig: insecure.Clone()}}
	h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: insecure.Clone(), ForceAttemptHTTP2: true}}
	h3 := &http.Client{Transport: &http3.Transport{TLSClientConfig: insecure.Clone()}}
	defer h3.Transport.(*http3.Transport).Close()
	fetch := func(c *http.Client, path, ua string, headers ...string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", "https://localhost:9443"+path, nil)
		req.Header.Set("User-Agent", ua)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := settled(c, req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Proto, strings.Trim(resp.Header.Get("X-JA4"), "[]")
	}
	for _, c := range []struct {
		name   string
		client *http.Client
		proto  string
	}{{"h1", h1, "HTTP/1.1"}, {"h2", h2, "HTTP/2.0"}, {"h3", h3, "HTTP/3.0"}} {
		code, proto, ja4 := fetch(c.client, "/", uaFirefox)
		if code != 200 || proto != c.proto {
			t.Fatalf("%s: %d over %s, want 200 over %s", c.name, code, proto, c.proto)
		}
		if c.name == "h3" {
			if !strings.HasPrefix(ja4, "q13d") || ja4[8:10] != "h3" || !tlsprint.Valid(ja4) {
				t.Errorf("h3: JA4 %q, want q13d…h3_…", ja4)
			}
		} else if want := ownJA4(t, c.client); ja4 != want {
			t.Errorf("%s: JA4 %q, want the client's own %q", c.name, ja4, want)
		}
		t.Logf("%s: %s", c.name, ja4)
		// A second request on the same connection has it too.
		if _, _, again := fetch(c.client, "/b", uaFirefox); again != ja4 {
			t.Errorf("%s: second request's JA4 %q, want %q", c.name, again, ja4)
		}
	}
	// A refusal's log line carries the JA4.
	code, _, ja4 := fetch(h2, "/private/x", uaGPTBot)
	if code != 403 {
		t.Fatalf("GPTBot on /private/x: %d, want 403", code)
	}
	if e := lastDecision(t, decisions); e.JA4 != ja4 || e.URI != "/private/x" {
		t.Errorf("decision log: uri %q ja4 %q, want /private/x with %q", e.URI, e.JA4, ja4)
	}

	tester.InitServer(config("", "ja4 off"), "caddyfile")
	h2.CloseIdleConnections()
	if _, _, ja4 := fetch(h2, "/", uaFirefox); ja4 != "" {
		t.Errorf("ja4 off: %q, want none", ja4)
	}

	const cf = "t13d1516h2_8daaf6152771_02713d6af862"
	tester.InitServer(config("servers {\n\t\ttrusted_proxies static 127.0.0.1/32\n\t}", "ja4_header cloudfront-viewer-ja4-fingerprint"), "caddyfile")
	h2.CloseIdleConnections()
	if _, _, ja4 := fetch(h2, "/", uaFirefox, "CloudFront-Viewer-JA4-Fingerprint", cf); ja4 != cf {
		t.Errorf("from a trusted proxy: %q, want the header's %q", ja4, cf)
	}
	if _, _, ja4 := fetch(h2, "/", uaFirefox, "CloudFront-Viewer-JA4-Fingerprint", "<script>"); ja4 != "" {
		t.Errorf("a header that is no JA4: %q, want none", ja4)
	}
	if _, _, ja4 := fetch(h2, "/", uaFirefox); ja4 != "" {
		t.Errorf("from a trusted proxy without the header: %q, want none (the handshake is the proxy's)", ja4)
	}
	tester.InitServer(config("", "ja4_header CloudFront-Viewer-JA4-Fingerprint"), "caddyfile")
	h2.CloseIdleConnections()
	if _, _, ja4 := fetch(h2, "/", uaFirefox, "CloudFront-Viewer-JA4-Fingerprint", cf); ja4 == cf || ja4 != ownJA4(t, h2) {
		t.Errorf("the header from an untrusted client: %q, want its own handshake's", ja4)
	}
}

// lastDecision returns the last line of a decision log.
func lastDecision(t *testing.T, path string) report.Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var e report.Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		e = report.Entry{}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("decision log line %q: %v", sc.Text(), err)
		}
	}
	return e
}

// TestRequestTLSAllocs: a request's fingerprint, recorded by its
// connection's handshake, costs no allocation.
func TestRequestTLSAllocs(t *testing.T) {
	h := &Handler{}
	r := httptest.NewRequest("GET", "https://example.test/", nil)
	r.RemoteAddr = "192.0.2.7:40000"
	handshakes.Record(&tls.ClientHelloInfo{Conn: fakeConn{"192.0.2.7:40000"}, SupportedVersions: []uint16{tls.VersionTLS13}, CipherSuites: []uint16{tls.TLS_AES_128_GCM_SHA256}})
	var f enforce.Facts
	if h.requestTLS(nil, r, &f); !tlsprint.Valid(f.JA4) {
		t.Fatalf("requestTLS: %q, want the recorded JA4", f.JA4)
	}
	if n := testing.AllocsPerRun(1000, func() { h.requestTLS(nil, r, &f) }); n != 0 {
		t.Errorf("requestTLS: %v allocations", n)
	}
	h.prints.NoJA4, f = true, enforce.Facts{}
	if h.requestTLS(nil, r, &f); f.JA4 != "" {
		t.Errorf("ja4 off: %q", f.JA4)
	}
}

// fakeConn is a connection from an address.
type fakeConn struct{ remote string }

func (c fakeConn) RemoteAddr() net.Addr {
	return net.TCPAddrFromAddrPort(netip.MustParseAddrPort(c.remote))
}
func (fakeConn) LocalAddr() net.Addr             { return &net.TCPAddr{} }
func (fakeConn) Read([]byte) (int, error)        { return 0, io.EOF }
func (fakeConn) Write(p []byte) (int, error)     { return len(p), nil }
func (fakeConn) Close() error                    { return nil }
func (fakeConn) SetDeadline(time.Time) error     { return nil }
func (fakeConn) SetReadDeadline(time.Time) error { return nil }
func (fakeConn) SetWriteDeadline(time.Time) error {
	return nil
}

// BenchmarkRequestTLS: the fingerprint a request adds, 0 allocations.
func BenchmarkRequestTLS(b *testing.B) {
	h := &Handler{}
	r := httptest.NewRequest("GET", "https://example.test/", nil)
	r.RemoteAddr = "192.0.2.8:40000"
	handshakes.Record(&tls.ClientHelloInfo{Conn: fakeConn{"192.0.2.8:40000"}, SupportedVersions: []uint16{tls.VersionTLS13}, CipherSuites: []uint16{tls.TLS_AES_128_GCM_SHA256}})
	var f enforce.Facts
	b.ReportAllocs()
	for b.Loop() {
		h.requestTLS(nil, r, &f)
	}
}

// requestTLS is requestTLSIn with the request's own variables, for the
// tests.
func (h *Handler) requestTLS(w http.ResponseWriter, r *http.Request, f *enforce.Facts) {
	h.requestTLSIn(w, r, varsOf(r), f)
}
