package evidence

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// fixture is one file of testdata/captures, as evidence/internal/capture
// writes it: the requests one real client sent (see testdata/README.md).
type fixture struct {
	Client    string `json:"client"`
	Kind      string `json:"kind"`
	Software  string `json:"software"`
	Config    string `json:"config"`
	UAChanged bool   `json:"ua_changed"`
	Copies    string `json:"copies"`
	Requests  []struct {
		Run    string      `json:"run"`
		Case   string      `json:"case"`
		Origin string      `json:"origin"`
		Proto  string      `json:"proto"`
		Method string      `json:"method"`
		URL    string      `json:"url"`
		Header http.Header `json:"header"`
	} `json:"requests"`
}

func loadCaptures(t testing.TB) []fixture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "captures", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in testdata/captures: %v", err)
	}
	var out []fixture
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fx fixture
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(fx.Requests) == 0 {
			t.Fatalf("%s: no requests", f)
		}
		out = append(out, fx)
	}
	return out
}

func originOf(kind string) Origin {
	switch kind {
	case "secure":
		return Secure
	case "loopback":
		return Loopback
	}
	return Insecure
}

// TestCapturedBrowsers: no request a real browser sent, of any kind, over
// any origin, is decisive evidence, whatever its handshake looks like to
// the table (unknown, or its own engine's); and a browser whose
// User-Agent is its own shows no evidence at all. A browser whose
// User-Agent was changed (a switcher, DevTools) may show a mismatch, which
// is what it is.
func TestCapturedBrowsers(t *testing.T) {
	n := 0
	for _, fx := range loadCaptures(t) {
		if fx.Kind != "browser" {
			continue
		}
		claimed := 0
		for _, r := range fx.Requests {
			ua := first(r.Header["User-Agent"])
			c := ParseClaim(ua)
			if c.Judged() {
				claimed++
			}
			for _, tls := range []TLS{{}, {Known: true, Browser: true, Family: fx.family()}} {
				if originOf(r.Origin) != Secure && tls.Known {
					continue // no handshake over plain HTTP
				}
				v := Judge(c, r.Method, r.Header, tls, originOf(r.Origin))
				n++
				switch {
				case v.Decisive():
					t.Errorf("%s %s %s %s %s (TLS %+v): decisive evidence against a real browser: %s\n%v", fx.Client, r.Origin, r.Case, r.Method, r.URL, tls, v.Reason(), r.Header)
				case !v.None() && !fx.UAChanged:
					t.Errorf("%s %s %s %s %s (TLS %+v): evidence against a real browser with its own User-Agent: %s\n%v", fx.Client, r.Origin, r.Case, r.Method, r.URL, tls, v.Reason(), r.Header)
				}
			}
		}
		if claimed == 0 && fx.Client != "chromium-headless-ua" {
			t.Errorf("%s: no request made a judged claim; the test would prove nothing", fx.Client)
		}
	}
	t.Logf("%d judgements of real browsers' requests", n)
}

// family is the engine a browser fixture's TLS stack belongs to.
func (fx fixture) family() string {
	if strings.HasPrefix(fx.Client, "firefox") {
		return "firefox"
	}
	return "chromium"
}

// TestCapturedBrowsersChangedUA: a real browser whose User-Agent was
// changed shows the mismatch that says so, and nothing decisive.
func TestCapturedBrowsersChangedUA(t *testing.T) {
	want := map[string]Evidence{
		// Chromium that claims Windows from Linux: its hints say Linux.
		"chromium-windows-ua": SecCHUAPlatform,
		// Chromium that claims Firefox: Firefox sends no client hints.
		"chromium-firefox-ua": SecCHUABrand,
		// DevTools' override drops the client hints.
		"chromium-devtools-ua": SecCHUA,
		// Firefox that claims Chrome sends no client hints.
		"firefox-chrome-ua": SecCHUA,
	}
	seen := map[string]Evidence{}
	for _, fx := range loadCaptures(t) {
		if !fx.UAChanged {
			continue
		}
		for _, r := range fx.Requests {
			seen[fx.Client] |= Judge(ParseClaim(first(r.Header["User-Agent"])), r.Method, r.Header, TLS{}, originOf(r.Origin)).Evidence
		}
	}
	for client, e := range want {
		if seen[client]&e == 0 {
			t.Errorf("%s: want %s among its evidence, got %q", client, e, seen[client])
		}
	}
	// Firefox with a Chrome User-Agent, as the table sees its handshake.
	c := ParseClaim(chromeUA)
	if v := Judge(c, "GET", http.Header{"Sec-Fetch-Site": {"none"}}, TLS{Known: true, Browser: true, Family: "firefox"}, Secure); v.Evidence != TLSFamily {
		t.Errorf("NSS under a Chrome User-Agent: %v, want tls-family alone", v.Evidence)
	}
}

const (
	chromeUA  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
	firefoxUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:153.0) Gecko/20100101 Firefox/153.0"
)

// TestCapturedLibraries: every HTTP library and tool that poses with a
// browser's User-Agent over HTTPS is caught by its headers alone, unless
// it copied the browser's headers; with its TLS stack known to the table,
// every one is caught, those that copied headers included. The catch rates
// per client, over HTTP and HTTPS, go to the log (go test -v).
func TestCapturedLibraries(t *testing.T) {
	type rate struct{ headers, tls, mismatch, n int }
	rates := map[string]*[2]rate{} // [0] plain HTTP, [1] HTTPS
	var order []string
	for _, fx := range loadCaptures(t) {
		if fx.Kind != "library" {
			continue
		}
		for _, r := range fx.Requests {
			c := ParseClaim(first(r.Header["User-Agent"]))
			if !c.Judged() {
				t.Fatalf("%s: %q claims nothing judged", r.Run, first(r.Header["User-Agent"]))
			}
			o := originOf(r.Origin)
			alone := Judge(c, r.Method, r.Header, TLS{}, o)
			i := 0
			withTLS := alone
			if o == Secure {
				i = 1
				withTLS = Judge(c, r.Method, r.Header, TLS{Known: true, Family: "openssl"}, o)
			}
			if rates[r.Run] == nil {
				rates[r.Run] = &[2]rate{}
				order = append(order, r.Run)
			}
			rt := &rates[r.Run][i]
			rt.n++
			if alone.Decisive() {
				rt.headers++
			} else if !alone.None() {
				rt.mismatch++
			}
			if withTLS.Decisive() {
				rt.tls++
			}
			switch {
			case o == Secure && fx.Copies == "" && !alone.Decisive():
				t.Errorf("%s over HTTPS: not caught by its headers: %s\n%v", r.Run, alone.Evidence, r.Header)
			case o == Secure && !withTLS.Decisive():
				t.Errorf("%s over HTTPS: not caught with its TLS stack known: %s", r.Run, withTLS.Evidence)
			case o == Secure && withTLS.Evidence&TLSStack == 0:
				t.Errorf("%s over HTTPS: no tls evidence with a library's stack: %s", r.Run, withTLS.Evidence)
			}
		}
	}
	sort.Strings(order)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-34s %-22s %-34s\n", "client (User-Agent)", "plain HTTP: headers", "HTTPS: headers / with TLS known")
	for _, run := range order {
		r := rates[run]
		fmt.Fprintf(&b, "%-34s %d/%d (+%d mismatch)%6s %d/%d (+%d mismatch) / %d/%d\n", run,
			r[0].headers, r[0].n, r[0].mismatch, "", r[1].headers, r[1].n, r[1].mismatch, r[1].tls, r[1].n)
	}
	t.Log(b.String())
}
