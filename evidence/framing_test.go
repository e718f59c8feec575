package evidence

import (
	"net/http"
	"strings"
	"testing"
)

// TestJudgeFraming: a library's HTTP stack under a browser's claim is
// decisive whatever the TLS handshake (a copied hello and full copied
// headers included); another engine's is a mismatch; the claimed
// engine's, an unknown stack, and claims not held to their engine's stack
// (web views, robots) are nothing.
func TestJudgeFraming(t *testing.T) {
	const (
		chrome  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
		firefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:153.0) Gecko/20100101 Firefox/153.0"
		webview = "Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/125.0.6422.165 Mobile Safari/537.36"
		bot     = "Mozilla/5.0 (compatible; ExampleBot/1.0)"
	)
	nav := http.Header{"Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"},
		"Sec-Ch-Ua": {`"Chromium";v="156", "Google Chrome";v="156"`}, "Sec-Ch-Ua-Mobile": {"?0"}, "Sec-Ch-Ua-Platform": {`"Windows"`}}
	ffNav := http.Header{"Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}, "Sec-Fetch-User": {"?1"}}
	boring := TLS{Known: true, Browser: true, Family: "chromium"}
	goH2 := Framing{Known: true, Family: "go"}
	for _, c := range []struct {
		name   string
		ua     string
		tls    TLS
		f      Framing
		want   Evidence
		reason string
	}{
		{"uTLS over Go's http2, Chrome's headers", chrome, boring, goH2, FramingStack, "its HTTP framing is go's, which no browser uses"},
		{"Python h2 with a Chrome UA, unknown TLS", chrome, TLS{}, Framing{Known: true, Family: "python-h2"}, FramingStack, "python-h2's"},
		{"Firefox's framing under Chrome's UA", chrome, boring, Framing{Known: true, Browser: true, Family: "firefox"}, FramingFamily, "another browser engine's"},
		{"Chrome as it is", chrome, boring, Framing{Known: true, Browser: true, Family: "chromium"}, 0, ""},
		{"Firefox as it is", firefox, TLS{Known: true, Browser: true, Family: "firefox"}, Framing{Known: true, Browser: true, Family: "firefox"}, 0, ""},
		{"unknown framing", chrome, boring, Framing{}, 0, ""},
		{"a web view's app fetch", webview, TLS{}, goH2, 0, ""},
		{"a robot", bot, TLS{}, goH2, 0, ""},
	} {
		c0 := ParseClaim(c.ua)
		t2, h := c.tls, nav
		t2.Framing = c.f
		if c.ua == firefox {
			h = ffNav // headers are judged whatever the stacks
		}
		v := Judge(c0, "GET", h, t2, Secure)
		if v.Evidence != c.want {
			t.Errorf("%s: %v, want %v", c.name, v.Evidence, c.want)
		}
		if c.want != 0 && (v.Claim != c0 || !strings.Contains(v.Reason(), c.reason)) {
			t.Errorf("%s: reason %q, want %q in it", c.name, v.Reason(), c.reason)
		}
		if c.want == FramingStack && !v.Decisive() {
			t.Errorf("%s: not decisive", c.name)
		}
	}
	// Added to what the TLS and headers found.
	c0 := ParseClaim(chrome)
	v := Judge(c0, "GET", http.Header{}, TLS{Known: true, Family: "go", Framing: goH2}, Secure)
	if v.Evidence != TLSStack|SecFetch|FramingStack || !strings.Contains(v.Reason(), "TLS handshake is go's") {
		t.Errorf("go all the way: %v, %q", v.Evidence, v.Reason())
	}
	if n := testing.AllocsPerRun(100, func() { Judge(c0, "GET", nav, TLS{Framing: goH2}, Secure) }); n != 0 {
		t.Errorf("Judge with a framing allocates %v times", n)
	}
	// Over HTTP/3, a library's QUIC stack and its HTTP/3 framing are both
	// found.
	v = Judge(c0, "GET", nav, TLS{QUIC: QUIC{Known: true, Family: "quic-go"}, Framing: Framing{Known: true, Family: "quic-go"}}, Secure)
	if v.Evidence != QUICStack|FramingStack || !strings.Contains(v.Reason(), "framing: its HTTP framing is quic-go's") || !strings.Contains(v.Reason(), "quic: its QUIC transport parameters are quic-go's") {
		t.Errorf("quic-go over h3: %v, %q", v.Evidence, v.Reason())
	}
}
