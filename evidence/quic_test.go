package evidence

import (
	"net/http"
	"strings"
	"testing"
)

// TestJudgeQUIC: over HTTP/3 the QUIC stack is judged as the TLS stack
// is: a library's is decisive against a browser claim, whatever the TLS
// hello (a browser's hello copied over a library's QUIC), another browser
// engine's is a mismatch, the claimed engine's and an unknown one are
// nothing, and a claim that is not judged is not.
func TestJudgeQUIC(t *testing.T) {
	chrome := http.Header{"Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"},
		"Sec-Ch-Ua": {`"Chromium";v="156", "Google Chrome";v="156", "Not-A.Brand";v="99"`}, "Sec-Ch-Ua-Mobile": {"?0"}, "Sec-Ch-Ua-Platform": {`"Windows"`}}
	quicGo := QUIC{Known: true, Family: "quic-go"}
	for _, tc := range []struct {
		name string
		ua   string
		tls  TLS
		want Evidence
	}{
		{"quic-go, an unknown hello", chromeUA, TLS{QUIC: quicGo}, QUICStack},
		{"quic-go under Chromium's hello", chromeUA, TLS{Known: true, Browser: true, Family: "chromium", QUIC: quicGo}, QUICStack},
		{"quic-go under Go's hello", chromeUA, TLS{Known: true, Family: "go", QUIC: quicGo}, TLSStack | QUICStack},
		{"Chromium's own", chromeUA, TLS{QUIC: QUIC{Known: true, Browser: true, Family: "chromium"}}, 0},
		{"Firefox's under a Chrome User-Agent", chromeUA, TLS{QUIC: QUIC{Known: true, Browser: true, Family: "firefox"}}, QUICFamily},
		{"unknown", chromeUA, TLS{QUIC: QUIC{}}, 0},
		{"a robot", "ExampleBot/1.0", TLS{QUIC: quicGo}, 0},
	} {
		v := Judge(ParseClaim(tc.ua), "GET", chrome, tc.tls, Secure)
		if v.Evidence != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, v.Evidence, tc.want)
		}
		if tc.want&QUICStack != 0 && (!v.Decisive() || !strings.Contains(v.Reason(), "quic: its QUIC transport parameters are quic-go's, which no browser uses")) {
			t.Errorf("%s: decisive %v, reason %q", tc.name, v.Decisive(), v.Reason())
		}
	}
	if c := QUICStack.Code(); c != "quic" || QUICFamily.Code() != "quic-family" || Decisive&QUICStack == 0 || Mismatch&QUICFamily == 0 {
		t.Errorf("codes %q %q", c, QUICFamily.Code())
	}
}
