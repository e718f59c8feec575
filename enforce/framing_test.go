package enforce

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/uaclass"
)

// chromeNav are a Chrome navigation's headers, as a copying client sends
// them.
func chromeNav() http.Header {
	return http.Header{"User-Agent": {chromeUA}, "Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-User": {"?1"},
		"Sec-Fetch-Dest": {"document"}, "Sec-Ch-Ua": {`"Chromium";v="156", "Not-A.Brand";v="24", "Google Chrome";v="156"`},
		"Sec-Ch-Ua-Mobile": {"?0"}, "Sec-Ch-Ua-Platform": {`"Windows"`}}
}

// uTLS's request: Chrome's hello (the table knows it as Chromium's),
// Chrome's headers, Go's HTTP/2 framing.
var (
	chromeTLS   = evidence.TLS{Known: true, Browser: true, Family: "chromium"}
	goFraming   = evidence.Framing{Known: true, Family: "go"}
	goH2Print   = "h2:2:0;4:4194304;5:16384;6:10485760|1073741824|0|a,m,p,s|0"
	chromePrint = "h2:1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p|1:0:256"
)

// readFramed reads a request for target with headers h, over a connection
// with Chrome's TLS family whose framing fingerprint is print and whose
// stack the table says is f, through Reader.Read as the handler does.
func readFramed(t *testing.T, e *Engine, ip, target string, h http.Header, f evidence.Framing, print string) *Request {
	t.Helper()
	tls := chromeTLS
	tls.Framing = f
	var out Reading
	facts := &Facts{ClientIP: netip.MustParseAddr(ip), URI: target, Scheme: "https", Origin: evidence.Secure, TLS: tls, Framing: print}
	if err := (&Reader{Classifier: classifier, Engine: e}).Read(&http.Request{Method: "GET", Header: h, Host: "example.com"}, facts, nil, &out); err != nil {
		t.Fatal(err)
	}
	return &out.Request
}

// TestFramingPoser: a client with Chrome's TLS hello and headers over a
// library's HTTP stack is a poser from its first request, refused the
// disallowed path with "framing" named and throttled under Crawl-delay;
// the same requests over Chrome's own framing, or an unknown one, are a
// person's. posers log serves it as the browser it claims, and an allowed
// framing fingerprint is not judged.
func TestFramingPoser(t *testing.T) {
	p := compile(poserRobots)
	run := func(e *Engine, ip, target string, f evidence.Framing, print string) (*Request, Decision) {
		r := readFramed(t, e, ip, target, chromeNav(), f, print)
		if r.Framing != print || r.FramingStack != f {
			t.Errorf("read framing %q %+v, want %q %+v", r.Framing, r.FramingStack, print, f)
		}
		return r, e.Decide(r, p)
	}
	e := newEngine(t, Config{}, newClock())
	r, d := run(e, "192.0.2.1", "/private/x", goFraming, goH2Print)
	if r.UA.Class != uaclass.Poser || d.Action != Deny || d.Reason != ReasonDisallowed || d.Evidence != evidence.FramingStack || evidenceHeader(d.Evidence) != "framing" {
		t.Errorf("uTLS, disallowed: class %v, %v %v evidence %q", r.UA.Class, d.Action, d.Reason, evidenceHeader(d.Evidence))
	}
	throttled := false
	for range 6 {
		if _, d := run(e, "192.0.2.1", "/page", goFraming, goH2Print); d.Action == Throttle {
			throttled = true
		}
	}
	if !throttled {
		t.Error("uTLS, 6 pages at once under Crawl-delay 5: none throttled")
	}
	for _, f := range []evidence.Framing{{Known: true, Browser: true, Family: "chromium"}, {}} {
		for i := range 8 {
			target := "/private/x"
			if i > 0 {
				target = "/page"
			}
			if r, d := run(e, "192.0.2.2", target, f, chromePrint); d.Action != Allow || r.UA.Class != uaclass.Browser || r.Evidence.Evidence != 0 {
				t.Errorf("Chrome's framing %+v, %s: %v %v, class %v evidence %v", f, target, d.Action, d.Reason, r.UA.Class, r.Evidence.Evidence)
			}
		}
	}
	logged := newEngine(t, Config{Posers: PosersLog}, newClock())
	if r, d := run(logged, "192.0.2.3", "/private/x", goFraming, goH2Print); d.Action != Allow || r.Evidence.Evidence != evidence.FramingStack {
		t.Errorf("posers log: %v %v, evidence %v", d.Action, d.Reason, r.Evidence.Evidence)
	}
	allowed := newEngine(t, Config{AllowFingerprints: []string{goH2Print}}, newClock())
	if r, d := run(allowed, "192.0.2.4", "/private/x", goFraming, goH2Print); d.Action != Allow || r.Evidence.Evidence != 0 {
		t.Errorf("an allowed framing fingerprint: %v %v, evidence %v", d.Action, d.Reason, r.Evidence.Evidence)
	}
	for _, f := range []string{goH2Print, "h1:1:Host,User-Agent", "h3:1:10000;7:64;21;33:1"} {
		if _, err := (Settings{AllowFingerprints: []string{f}}).Check(); err != nil {
			t.Errorf("allow_fingerprints %q: %v", f, err)
		}
	}
	for _, f := range []string{"h4:x", "h2:a b", "h2"} {
		if _, err := (Settings{AllowFingerprints: []string{f}}).Check(); err == nil {
			t.Errorf("allow_fingerprints %q accepted", f)
		}
	}
	ua, h := classifier.Classify(chromeUA), chromeNav()
	facts := &Facts{TLS: evidence.TLS{Known: true, Browser: true, Family: "chromium", Framing: goFraming}, Framing: goH2Print, Origin: evidence.Secure}
	if n := testing.AllocsPerRun(100, func() {
		who := ua
		e.Judge(&who, facts, "GET", h)
	}); n != 0 {
		t.Errorf("Judge with framing: %v allocations", n)
	}
}
