package e2e

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/robotsguard/robotsguard/internal/tlsclients"
	"github.com/robotsguard/robotsguard/tlsprint"
)

// TestJA4Clients: every real client of the fingerprint table (curl, wget,
// gnutls-cli, Python's urllib, requests, httpx and aiohttp, Scrapy, Node,
// Java, Go, Chromium and Firefox ESR) fetches pages from the real binary
// over real TLS, and the JA4 that robots_guard logs for its requests is
// known by the table as its own stack: each library as its library, the
// browsers as browser engines, over HTTP/2 and, for Chromium, HTTP/3.
func TestJA4Clients(t *testing.T) {
	need(t)
	ca, err := tlsclients.NewCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	url, decisions := startTLS(t, ca, "burst 1000")
	type run struct {
		c  *tlsclients.Client
		h3 bool
		ua string
	}
	var runs []run
	for _, c := range tlsclients.Clients {
		if !c.Available() {
			t.Logf("%s is not installed: not tried", c.Name)
			continue
		}
		runs = append(runs, run{c, false, "ja4-e2e/" + c.Name})
		if c.H3 {
			runs = append(runs, run{c, true, "ja4-e2e/" + c.Name + "-h3"})
		}
	}
	for _, r := range runs {
		if err := r.c.Run(context.Background(), ca, t.TempDir(), url, r.ua, r.h3); err != nil {
			t.Errorf("%s: %v", r.ua, err)
		}
	}
	logged := map[string]map[string]string{} // User-Agent -> JA4 -> protocol
	data, err := os.ReadFile(decisions)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var e struct {
			UA  string `json:"user_agent"`
			JA4 string `json:"ja4"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && strings.HasPrefix(e.UA, "ja4-e2e/") {
			if logged[e.UA] == nil {
				logged[e.UA] = map[string]string{}
			}
			logged[e.UA][e.JA4] = ""
		}
	}
	caught, browsers := 0, 0
	for _, r := range runs {
		seen := logged[r.ua]
		if len(seen) == 0 {
			t.Errorf("%s: no request logged", r.ua)
			continue
		}
		for ja4 := range seen {
			s := tlsprint.Lookup(ja4)
			switch {
			case ja4 == "":
				t.Errorf("%s: a request without a JA4", r.ua)
			case r.h3 && ja4[0] != 'q':
				t.Errorf("%s: JA4 %s, want a QUIC one (q…)", r.ua, ja4)
			case !s.Known && r.h3 && r.c.Browser && !observedQUIC(t, r.c):
				// QUIC offers TLS 1.3's three ciphers, everybody's, so a
				// browser's QUIC hello is known by its exact extensions
				// only, as observed; a build the table has not seen is
				// unknown, and unknown is no evidence (TestPosers checks
				// that it is served).
				t.Logf("%s: JA4 %s unknown: %s's QUIC hello is not in observed.tsv (run go run ./tlsprint/internal/collect -observe)", r.ua, ja4, r.c.Version(context.Background()))
			case !s.Known || s.Family != r.c.Family || s.Browser != r.c.Browser:
				t.Errorf("%s: JA4 %s is %+v, want %s (browser %v)", r.ua, ja4, s, r.c.Family, r.c.Browser)
			default:
				t.Logf("%s: %s, %s", r.ua, ja4, s.Family)
				continue
			}
		}
		if r.c.Browser {
			browsers++
		} else {
			caught++
		}
	}
	t.Logf("%d library runs recognised as their library, %d browser runs as their engine", caught, browsers)
}

// observedQUIC reports whether tlsprint's observed.tsv holds a QUIC hello
// of c's installed version.
func observedQUIC(t *testing.T, c *tlsclients.Client) bool {
	data, err := os.ReadFile("../../tlsprint/internal/collect/testdata/observed.tsv")
	if err != nil {
		t.Fatal(err)
	}
	v := c.Version(context.Background())
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, "\t"); len(f) == 5 && f[0] == c.Name && f[1] == v && f[2] == "quic" {
			return true
		}
	}
	return false
}
