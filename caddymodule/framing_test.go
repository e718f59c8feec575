package caddymodule

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/quic-go/quic-go/http3"

	"github.com/robotsguard/robotsguard/cli"
)

// TestFramingAdapt: the robots_guard directive gives its server the
// listener wrapper; a servers block's listener_wrappers replace it (the
// wrapper named there, or none); the wrapper takes no options.
func TestFramingAdapt(t *testing.T) {
	site := "example.com {\n\trobots_guard\n\trespond ok\n}\nother.example {\n\trobots_guard\n\trespond ok\n}\n"
	for _, c := range []struct {
		name, global string
		want         string
	}{
		{"the directive's", "", `[{"wrapper":"robots_guard"},{"wrapper":"robots_guard"}]`},
		{"a servers block without it", "{\n\tservers {\n\t\tprotocols h1 h2\n\t}\n}\n", ""},
		{"a servers block with it", "{\n\tservers {\n\t\tlistener_wrappers {\n\t\t\trobots_guard\n\t\t}\n\t}\n}\n", `[{"wrapper":"robots_guard"}]`},
	} {
		out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(c.global+site), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var cfg struct {
			Apps struct {
				HTTP struct {
					Servers map[string]struct {
						ListenerWrappers json.RawMessage `json:"listener_wrappers"`
					} `json:"servers"`
				} `json:"http"`
			} `json:"apps"`
		}
		json.Unmarshal(out, &cfg)
		if got := string(cfg.Apps.HTTP.Servers["srv0"].ListenerWrappers); got != c.want {
			t.Errorf("%s: listener_wrappers %s, want %s", c.name, got, c.want)
		}
	}
	if _, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte("{\n\tservers {\n\t\tlistener_wrappers {\n\t\t\trobots_guard on\n\t\t}\n\t}\n}\n"+site), nil); err == nil {
		t.Error("robots_guard on: the wrapper took an option")
	}
	// Within a route or handle block, where only routes may come, the
	// directive adds no wrapper (and the block adapts).
	for _, nested := range []string{"route", "handle /x/*"} {
		out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte("example.com {\n\t"+nested+" {\n\t\trobots_guard\n\t\trespond ok\n\t}\n}\n"), nil)
		if err != nil || strings.Contains(string(out), "listener_wrappers") {
			t.Errorf("robots_guard in %s: %v, %s", nested, err, out)
		}
	}
}

// TestIntegrationFraming: real Go clients over real TLS to a real Caddy
// get their connection's framing fingerprint in
// {http.robots_guard.framing} and the decision log, over h1 and h2 through
// the listener wrapper and over h3 from quic-go's SETTINGS; with a Chrome
// User-Agent and Chrome's headers (posers decide), Go's HTTP/2 framing is
// named as evidence. A server without the wrapper says so once at
// start-up, and its HTTP/1.1 and HTTP/2 requests have no fingerprint.
func TestIntegrationFraming(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy")
	}
	s := newSite(t, siteRobots)
	dir := t.TempDir()
	decisions, ops := filepath.Join(dir, "decisions.log"), filepath.Join(dir, "ops.log")
	config := func(globals string) string {
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
	log ops {
		output file %s
		format json
		include robots_guard
	}
}
https://localhost:9443 {
	tls internal
	header >X-Framing "[{http.robots_guard.framing}]"
	robots_guard {
		robots %s
		zone %s
		verify off
		log_allowed 1
		log_repeats 0
	}
	reverse_proxy %s
}
`, globals, decisions, ops, s.robots, s.zone, strings.TrimPrefix(s.backend.URL, "http://"))
	}
	tester := caddytest.NewTester(t)
	tester.InitServer(config(""), "caddyfile")
	insecure := &tls.Config{InsecureSkipVerify: true}
	h1 := &http.Client{Transport: &http.Transport{TLSClientConfig: insecure.Clone()}}
	h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: insecure.Clone(), ForceAttemptHTTP2: true}}
	h3 := &http.Client{Transport: &http3.Transport{TLSClientConfig: insecure.Clone()}}
	defer h3.Transport.(*http3.Transport).Close()
	chrome := [][2]string{{"User-Agent", uaChrome}, {"Sec-Fetch-Site", "none"}, {"Sec-Fetch-Mode", "navigate"}, {"Sec-Fetch-Dest", "document"},
		{"Sec-Ch-Ua", `"Chromium";v="156", "Google Chrome";v="156"`}, {"Sec-Ch-Ua-Mobile", "?0"}, {"Sec-Ch-Ua-Platform", `"Windows"`},
		{"Accept", "text/html"}, {"Accept-Language", "en"}}
	fetch := func(c *http.Client, path string, h [][2]string) (int, string, string, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", "https://localhost:9443"+path, nil)
		for _, kv := range h {
			req.Header.Set(kv[0], kv[1])
		}
		resp, err := c.Do(req)
		for deadline := time.Now().Add(10 * time.Second); err != nil && time.Now().Before(deadline); { // the certificate tls internal has not issued yet
			time.Sleep(50 * time.Millisecond)
			resp, err = c.Do(req)
		}
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Proto, strings.Trim(resp.Header.Get("X-Framing"), "[]"), resp.Header.Get("X-Robots-Guard-Evidence")
	}
	firefox := [][2]string{{"User-Agent", "framing-test/1.0"}}
	for _, c := range []struct {
		name   string
		client *http.Client
		want   string
	}{
		{"h1", h1, "h1:1:Host,User-Agent,Accept-Encoding"},
		{"h2", h2, "h2:2:0;4:4194304;5:16384;6:10485760|1073741824|0|a,m,p,s|0"},
		{"h3", h3, "h3:"},
	} {
		for _, path := range []string{"/", "/b"} { // the connection's second request has it too
			if _, _, got, _ := fetch(c.client, path, firefox); got != c.want {
				t.Errorf("%s %s: framing %q, want %q", c.name, path, got, c.want)
			}
		}
	}
	// Go's HTTP/2 framing under Chrome's User-Agent and headers.
	code, _, print, ev := fetch(h2, "/private/x", chrome)
	if code != 403 || !strings.Contains(ev, "framing") {
		t.Errorf("Go's h2 with Chrome's headers: %d, evidence %q, want 403 naming framing", code, ev)
	}
	if e := lastDecision(t, decisions); e.Framing != print || e.URI != "/private/x" || !strings.Contains(e.EvidenceReason, "framing: its HTTP framing is go") {
		t.Errorf("decision log: uri %q framing %q reason %q, want /private/x with %q", e.URI, e.Framing, e.EvidenceReason, print)
	}
	if strings.Contains(readFile(t, ops), cli.FramingOff) {
		t.Error("a server with the wrapper says it reads no framing")
	}

	// A servers block without the wrapper: no fingerprint over h1 and h2,
	// said once at start-up; HTTP/3's is quic-go's and needs no wrapper.
	tester.InitServer(config("servers {\n\t\tprotocols h1 h2 h3\n\t}"), "caddyfile")
	h1.CloseIdleConnections()
	h2.CloseIdleConnections()
	for _, c := range []*http.Client{h1, h2} {
		if _, _, got, _ := fetch(c, "/", firefox); got != "" {
			t.Errorf("without the wrapper: framing %q, want none", got)
		}
	}
	if n := strings.Count(readFile(t, ops), cli.FramingOff); n != 1 {
		t.Errorf("without the wrapper, said %d times at start-up, want once", n)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}
