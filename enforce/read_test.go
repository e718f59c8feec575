package enforce

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// readReq reads a request for target, with headers h (its User-Agent
// among them), through Reader.Read as the handler does: from ip, over a
// connection whose TLS stack is tls and whose fingerprint is ja4, to host,
// as seen from origin o.
func readReq(t *testing.T, e *Engine, ip, host, target, method string, h http.Header, tls evidence.TLS, o evidence.Origin, ja4 string) *Request {
	t.Helper()
	rd := Reader{Classifier: classifier, Engine: e}
	var out Reading
	r := &http.Request{Method: method, Header: h, Host: host}
	if err := rd.Read(r, &Facts{ClientIP: netip.MustParseAddr(ip), URI: target, Scheme: "https", Origin: o, JA4: ja4, TLS: tls}, nil, &out); err != nil {
		t.Fatal(err)
	}
	return &out.Request
}

// TestReadOnce (issue 36): Read writes the Request from its steps alone,
// whatever out held before; a poser's class, its lost tokens and browser
// allowance, and its cross-site mark follow from the evidence; a fragment
// is refused; the canonical URL's target joins the spellings checked.
func TestReadOnce(t *testing.T) {
	e := newEngine(t, Config{}, newClock())
	rd := Reader{Classifier: classifier, Engine: e, Canonical: true}
	p := policy.Compile(policy.Parse([]byte("User-agent: *\nDisallow: /private/\nQueryParam: -ref\n")))
	cases := []struct {
		name, ua, target, secFetchSite string
		origin                         evidence.Origin
		class                          uaclass.Class
		crossSite, browserLike         bool
		variants                       int
	}{
		{"browser, cross-site", chromeUA, "/a", "cross-site", evidence.Secure, uaclass.Browser, true, true, 0},
		{"poser, cross-site claimed", chromeUA, "/a", "", evidence.Secure, uaclass.Poser, false, false, 0},
		{"bot, query dropped", "ExampleBot/1.0", "/a?ref=x", "", evidence.Secure, uaclass.OtherBot, false, false, 1},
	}
	for _, c := range cases {
		h := http.Header{"User-Agent": {c.ua}}
		if c.secFetchSite != "" {
			h.Set("Sec-Fetch-Site", c.secFetchSite)
			h.Set("Sec-Fetch-Mode", "no-cors")
			h.Set("Sec-Fetch-Dest", "image")
		} else if c.class == uaclass.Poser {
			h.Set("Referer", "https://elsewhere.example/")
		}
		out := Reading{Request: Request{CrossSite: true, BrowserLike: true, Invalid: true, Signed: true}, Canonical: "stale"}
		r := &http.Request{Method: "GET", Header: h, Host: "example.com"}
		if err := rd.Read(r, &Facts{ClientIP: netip.MustParseAddr("192.0.2.9"), URI: c.target, Scheme: "https", Origin: c.origin}, p, &out); err != nil {
			t.Fatal(err)
		}
		req := &out.Request
		if req.UA.Class != c.class || req.CrossSite != c.crossSite || req.BrowserLike != c.browserLike || req.Invalid || req.Signed ||
			len(req.Target.Variants) < c.variants || out.UserAgent != c.ua || out.URI != c.target {
			t.Errorf("%s: class %v cross-site %v browser-like %v invalid %v signed %v variants %q, user agent %q uri %q",
				c.name, req.UA.Class, req.CrossSite, req.BrowserLike, req.Invalid, req.Signed, req.Target.Variants, out.UserAgent, out.URI)
		}
		if c.class == uaclass.Poser && (len(req.UA.Tokens) != 0 || !req.Evidence.Decisive()) {
			t.Errorf("%s: tokens %q, evidence %v", c.name, req.UA.Tokens, req.Evidence)
		}
		if c.variants > 0 && (out.Canonical != "/a" || !out.NonCanonical) {
			t.Errorf("%s: canonical %q, non-canonical %v", c.name, out.Canonical, out.NonCanonical)
		}
		if c.variants == 0 && out.Canonical != "/a" {
			t.Errorf("%s: canonical %q", c.name, out.Canonical)
		}
	}
	var out Reading
	r := &http.Request{Method: "GET", Header: http.Header{"User-Agent": {"ExampleBot/1.0"}}, Host: "example.com"}
	if err := rd.Read(r, &Facts{URI: "/#/../private/x"}, p, &out); err != policy.ErrFragment {
		t.Errorf("a fragment: %v, want policy.ErrFragment", err)
	}
}

// TestReadNoAllocations: reading an ordinary request allocates nothing.
func TestReadNoAllocations(t *testing.T) {
	e := newEngine(t, Config{}, newClock())
	rd := Reader{Classifier: classifier, Engine: e, Canonical: true}
	p := policy.Compile(policy.Parse([]byte("User-agent: *\nDisallow: /private/\n")))
	for name, h := range map[string]http.Header{"browser": library(), "bot": {"User-Agent": {"ExampleBot/1.0"}}} {
		r := &http.Request{Method: "GET", Header: h, Host: "example.com"}
		f := &Facts{ClientIP: netip.MustParseAddr("192.0.2.9"), URI: "/a/b.html", Scheme: "https", Origin: evidence.Secure}
		var out Reading
		if n := testing.AllocsPerRun(100, func() { _ = rd.Read(r, f, p, &out) }); n != 0 {
			t.Errorf("%s: %v allocations", name, n)
		}
	}
}

// TestReadQUIC: an HTTP/3 request's QUIC fingerprint is read once, from
// the facts, into the Request and its evidence: quic-go's transport
// parameters make a poser of a Chrome navigation whose headers are
// Chrome's own, even under Chromium's TLS family ("quic"); Firefox's
// are a mismatch that changes nothing ("quic-family"); Chromium's own
// and an unknown stack are no evidence; the fingerprint is kept in all.
func TestReadQUIC(t *testing.T) {
	e := newEngine(t, Config{}, newClock())
	h := http.Header{"User-Agent": {chromeUA}, "Accept": {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
		"Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-User": {"?1"}, "Sec-Fetch-Dest": {"document"},
		"Sec-Ch-Ua": {`"Chromium";v="156", "Not-A.Brand";v="24", "Google Chrome";v="156"`}, "Sec-Ch-Ua-Mobile": {"?0"}, "Sec-Ch-Ua-Platform": {`"Windows"`}}
	chromium := evidence.TLS{Known: true, Browser: true, Family: "chromium"}
	for _, tc := range []struct {
		name  string
		quic  evidence.QUIC
		class uaclass.Class
		want  evidence.Evidence
	}{
		{"quic-go", evidence.QUIC{Known: true, Family: "quic-go"}, uaclass.Poser, evidence.QUICStack},
		{"firefox", evidence.QUIC{Known: true, Browser: true, Family: "firefox"}, uaclass.Browser, evidence.QUICFamily},
		{"chromium", evidence.QUIC{Known: true, Browser: true, Family: "chromium"}, uaclass.Browser, 0},
		{"unknown", evidence.QUIC{}, uaclass.Browser, 0},
	} {
		tls := chromium
		tls.QUIC = tc.quic
		rd := Reader{Classifier: classifier, Engine: e}
		var out Reading
		f := &Facts{ClientIP: netip.MustParseAddr("192.0.2.30"), URI: "/a", Scheme: "https", Origin: evidence.Secure,
			JA4: "q13d0312h3_55b375c5d22e_178839b6cec1", TLS: tls, QUIC: "q1_" + tc.name}
		if err := rd.Read(&http.Request{Method: "GET", Header: h, Host: "example.com"}, f, nil, &out); err != nil {
			t.Fatal(err)
		}
		if req := &out.Request; req.QUIC != f.QUIC || req.JA4 != f.JA4 || req.UA.Class != tc.class || req.Evidence.Evidence != tc.want {
			t.Errorf("%s: quic %q ja4 %q class %v evidence %v (%s), want class %v evidence %v",
				tc.name, req.QUIC, req.JA4, req.UA.Class, req.Evidence.Evidence, req.Evidence.Reason(), tc.class, tc.want)
		}
	}
}
