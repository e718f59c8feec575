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
