package caddymodule

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
)

// chromeNavigation is the header of a typed navigation of Chrome 156 on
// Windows, as a poser copies it.
func chromeNavigation() http.Header {
	return http.Header{"User-Agent": {uaChrome}, "Accept": {"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"},
		"Accept-Language": {"en-US,en;q=0.9"}, "Upgrade-Insecure-Requests": {"1"},
		"Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-User": {"?1"}, "Sec-Fetch-Dest": {"document"},
		"Sec-Ch-Ua": {`"Chromium";v="156", "Google Chrome";v="156", "Not-A.Brand";v="99"`}, "Sec-Ch-Ua-Mobile": {"?0"}, "Sec-Ch-Ua-Platform": {`"Windows"`}}
}

// selfSigned returns a certificate for 127.0.0.1.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestRequestQUIC: over HTTP/3 through the QUIC wrapper, quic-go's client
// gets its connection's fingerprint, known as quic-go's, and the JA4 and
// TLS family (Go's) of that connection's own hello; with a Chrome
// navigation's headers both are decisive evidence against its Chrome
// claim, and so is its HTTP/3 SETTINGS' framing ("tls,quic,framing");
// with quic off, the hello's family and the framing still are
// ("tls,framing"). Reading them costs no allocation.
func TestRequestQUIC(t *testing.T) {
	cert := selfSigned(t)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		facts  enforce.Facts
		v      evidence.Verdict
		allocs float64
	}
	got := make(chan seen, 4)
	on, off := &Handler{}, &Handler{prints: enforce.Fingerprints{NoQUIC: true}}
	srv := &http3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := on
		if r.URL.Path == "/off" {
			h = off
		}
		var s seen
		h.requestTLS(w, r, &s.facts)
		s.v = evidence.Judge(evidence.ParseClaim(r.UserAgent()), r.Method, r.Header, s.facts.TLS, evidence.Secure)
		var f enforce.Facts
		s.allocs = testing.AllocsPerRun(100, func() { h.requestTLS(w, r, &f) })
		got <- s
	}), TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}})}
	go srv.Serve((&QUICWrapper{}).WrapPacketConn(udp))
	defer srv.Close()
	rt := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, QUICConfig: &quic.Config{}}
	defer rt.Close()
	for i := range 2 {
		req, _ := http.NewRequest("GET", fmt.Sprintf("https://127.0.0.1:%d/p%d", udp.LocalAddr().(*net.UDPAddr).Port, i), nil)
		req.Header = chromeNavigation()
		resp, err := (&http.Client{Transport: rt, Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		s := <-got
		if f := s.facts; f.QUIC != "q1_g.5.6.7.4.8.9.1.3.b.e.f" || f.TLS.QUIC.Family != "quic-go" || f.TLS.QUIC.Browser || !strings.HasPrefix(f.JA4, "q13") ||
			f.TLS.Family != "go" || f.TLS.Browser || !f.TLS.Known {
			t.Errorf("request %d: QUIC %q, stack %+v, JA4 %q", i, f.QUIC, f.TLS, f.JA4)
		}
		if s.v.Evidence != evidence.QUICStack|evidence.TLSStack|evidence.FramingStack || !strings.Contains(s.v.Reason(), "quic: its QUIC transport parameters are quic-go's") ||
			!strings.Contains(s.v.Reason(), "framing: its HTTP framing is quic-go's") || !strings.HasPrefix(s.facts.Framing, "h3:") {
			t.Errorf("request %d: verdict %v (%s), framing %q; want tls,quic,framing", i, s.v.Evidence, s.v.Reason(), s.facts.Framing)
		}
		if s.allocs != 0 {
			t.Errorf("request %d: requestTLS over HTTP/3, %v allocations", i, s.allocs)
		}
	}
	req, _ := http.NewRequest("GET", fmt.Sprintf("https://127.0.0.1:%d/off", udp.LocalAddr().(*net.UDPAddr).Port), nil)
	req.Header = chromeNavigation()
	if resp, err := (&http.Client{Transport: rt, Timeout: 10 * time.Second}).Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	if s := <-got; s.facts.QUIC != "" || s.facts.TLS.QUIC.Known || s.facts.TLS.Family != "go" || s.v.Evidence != evidence.TLSStack|evidence.FramingStack {
		t.Errorf("quic off: QUIC %q, stack %+v, evidence %v; want no QUIC, Go's TLS, tls,framing", s.facts.QUIC, s.facts.TLS, s.v.Evidence)
	}
}

// TestCaddyfileQUICWrapper: a robots_guard directive of a site block adds
// the QUIC wrapper to its server's packet_conn_wrappers; "quic off" does
// not, nor a robots_guard inside a route (which takes routes only), and a
// servers block of the global options replaces it with its own (Caddy
// 2.11.9's serveroptions.go): the start-up warning says so. The global
// option adds it by hand.
func TestCaddyfileQUICWrapper(t *testing.T) {
	adapt := func(cfg string) string {
		t.Helper()
		out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cfg), nil)
		if err != nil {
			t.Fatalf("%v\n%s", err, cfg)
		}
		var c struct {
			Apps struct {
				HTTP struct {
					Servers map[string]struct {
						Wrappers []json.RawMessage `json:"packet_conn_wrappers"`
					}
				}
			}
		}
		if err := json.Unmarshal(out, &c); err != nil {
			t.Fatal(err)
		}
		var ws []string
		for _, s := range c.Apps.HTTP.Servers {
			for _, w := range s.Wrappers {
				ws = append(ws, string(w))
			}
		}
		return strings.Join(ws, " ")
	}
	const one = `{"wrapper":"robots_guard_quic"}`
	for _, tc := range []struct{ name, cfg, want string }{
		{"site block", "example.test {\n\trobots_guard\n\trespond ok\n}\n", one},
		{"two site blocks", "a.test {\n\trobots_guard\n}\nb.test {\n\trobots_guard {\n\t\tzone b\n\t}\n}\n", one + " " + one},
		{"quic off", "example.test {\n\trobots_guard {\n\t\tquic off\n\t}\n}\n", ""},
		{"in a route", "example.test {\n\troute {\n\t\trobots_guard\n\t}\n}\n", ""},
		{"global option", "{\n\tservers {\n\t\tpacket_conn_wrappers {\n\t\t\trobots_guard_quic\n\t\t}\n\t}\n}\nexample.test {\n\troute {\n\t\trobots_guard\n\t}\n}\n", one},
		{"a servers block replaces it", "{\n\tservers {\n\t\tprotocols h1 h2 h3\n\t}\n}\nexample.test {\n\trobots_guard\n}\n", ""},
		{"a servers block that lists it", "{\n\tservers {\n\t\tprotocols h1 h2 h3\n\t\tpacket_conn_wrappers {\n\t\t\trobots_guard_quic\n\t\t}\n\t}\n}\nexample.test {\n\trobots_guard\n}\n", one},
	} {
		if got := adapt(tc.cfg); got != tc.want {
			t.Errorf("%s: packet_conn_wrappers %s, want %s", tc.name, got, tc.want)
		}
	}
	var w QUICWrapper
	if err := w.UnmarshalCaddyfile(caddyfile.NewTestDispenser("robots_guard_quic extra")); err == nil {
		t.Error("robots_guard_quic with an argument: no error")
	}
}

// TestIntegrationQUIC: a real Caddy serving HTTP/3 with robots_guard in
// its site block (the wrapper added by the directive): quic-go's HTTP/3
// client with a desktop Chrome User-Agent and Chrome's navigation
// headers is refused the disallowed page from its first request with the
// evidence "tls,quic,framing" (its hello is Go's family, its transport
// parameters and HTTP/3 SETTINGS quic-go's), and the decision log and {http.robots_guard.quic} show its
// fingerprint; a robots_guard inside a route, on a server without the
// wrapper, says so once at start-up, and there the connection's own hello
// (the matcher's JA4 and family) and its SETTINGS, which need no wrapper,
// still refuse it with "tls,framing".
func TestIntegrationQUIC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy")
	}
	s := newSite(t, siteRobots)
	dir := t.TempDir()
	decisions, caddyLog := filepath.Join(dir, "decisions.log"), filepath.Join(dir, "caddy.log")
	config := func(port int, site string) string {
		return fmt.Sprintf(`{
	skip_install_trust
	admin localhost:2999
	http_port 9680
	https_port %d
	grace_period 1ns
	log {
		output file %s
		format json
	}
	log rg {
		output file %s
		format json
		include http.handlers.robots_guard
	}
}
https://localhost:%d {
	tls internal
	header >X-QUIC "[{http.robots_guard.quic}]"
	header >X-JA4 "[{http.robots_guard.ja4}]"
	%s
	reverse_proxy %s
}
`, port, caddyLog, decisions, port, site, strings.TrimPrefix(s.backend.URL, "http://"))
	}
	guard := fmt.Sprintf("robots_guard {\n\t\trobots %s\n\t\tzone %s\n\t\tverify off\n\t}", s.robots, s.zone)
	tester := caddytest.NewTester(t)
	tester.InitServer(config(9643, guard), "caddyfile")
	rt := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer rt.Close()
	get := func(port int, path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", fmt.Sprintf("https://localhost:%d%s", port, path), nil)
		req.Header = chromeNavigation()
		resp, err := (&http.Client{Transport: rt, Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := get(9643, "/private/report.html")
	if resp.StatusCode != 403 || resp.Proto != "HTTP/3.0" || resp.Header.Get("X-Robots-Guard") != "disallowed" || resp.Header.Get("X-Robots-Guard-Evidence") != "tls,quic,framing" ||
		resp.Header.Get("X-QUIC") != "[q1_g.5.6.7.4.8.9.1.3.b.e.f]" {
		t.Errorf("quic-go as Chrome over HTTP/3: %d over %s, X-Robots-Guard %q, evidence %q, X-QUIC %q; want 403 disallowed, evidence tls,quic,framing",
			resp.StatusCode, resp.Proto, resp.Header.Get("X-Robots-Guard"), resp.Header.Get("X-Robots-Guard-Evidence"), resp.Header.Get("X-QUIC"))
	}
	if e := lastDecision(t, decisions); e.QUIC != "q1_g.5.6.7.4.8.9.1.3.b.e.f" || e.Class != "poser" || e.Evidence != "tls,quic,framing" || !strings.HasPrefix(e.JA4, "q13") ||
		!strings.Contains(e.EvidenceReason, "quic-go") {
		t.Errorf("decision: quic %q class %q evidence %q (%s) ja4 %q", e.QUIC, e.Class, e.Evidence, e.EvidenceReason, e.JA4)
	}

	// A server of its own (another port), robots_guard inside a route:
	// no wrapper, and a warning.
	tester.InitServer(config(9644, "route {\n\t\t"+guard+"\n\t}"), "caddyfile")
	data, err := os.ReadFile(caddyLog)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "without the robots_guard_quic packet conn wrapper"); n != 1 {
		t.Errorf("%d warnings of the missing wrapper in Caddy's log, want 1:\n%s", n, data)
	}
	// Its JA4 and TLS family are still the connection's own, which the
	// matcher read.
	if resp := get(9644, "/p.html"); resp.StatusCode != 200 || resp.Header.Get("X-QUIC") != "[]" || !strings.HasPrefix(resp.Header.Get("X-JA4"), "[q13d") {
		t.Errorf("without the wrapper: %d, X-QUIC %q, X-JA4 %q; want 200, no QUIC fingerprint, a QUIC JA4", resp.StatusCode, resp.Header.Get("X-QUIC"), resp.Header.Get("X-JA4"))
	}
	if resp := get(9644, "/private/report.html"); resp.StatusCode != 403 || resp.Header.Get("X-Robots-Guard-Evidence") != "tls,framing" || resp.Header.Get("X-QUIC") != "[]" {
		t.Errorf("without the wrapper, the disallowed page: %d, evidence %q, X-QUIC %q; want 403, tls,framing (Go's hello, quic-go's SETTINGS), no QUIC fingerprint",
			resp.StatusCode, resp.Header.Get("X-Robots-Guard-Evidence"), resp.Header.Get("X-QUIC"))
	}
}
