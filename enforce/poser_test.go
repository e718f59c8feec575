package enforce

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/uaclass"
)

// capture is one file of evidence/testdata/captures: the requests one real
// client sent, recorded on this machine (evidence/internal/capture).
type capture struct {
	Client   string `json:"client"`
	Kind     string `json:"kind"`
	Copies   string `json:"copies"`
	Requests []struct {
		Run    string      `json:"run"`
		Case   string      `json:"case"`
		Origin string      `json:"origin"`
		Method string      `json:"method"`
		URL    string      `json:"url"`
		Header http.Header `json:"header"`
	} `json:"requests"`
}

func loadCaptures(t *testing.T) []capture {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "evidence", "testdata", "captures", "*.json"))
	if len(files) == 0 {
		t.Fatal("no captures in evidence/testdata/captures")
	}
	var out []capture
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c capture
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, c)
	}
	return out
}

var captureOrigins = map[string]evidence.Origin{"secure": evidence.Secure, "loopback": evidence.Loopback, "insecure": evidence.Insecure}

const poserRobots = "User-agent: *\nCrawl-delay: 5\nDisallow: /private/\nDisallow: /trap/\n"

// judged classifies, judges and decides one request for target on a
// fresh engine, as the handler does.
func judged(t *testing.T, e *Engine, ip, target, method string, h http.Header, tls evidence.TLS, o evidence.Origin) (*Request, Decision) {
	t.Helper()
	r := readReq(t, e, ip, "a.test", target, method, h, tls, o, "")
	return r, e.Decide(r, compile(poserRobots))
}

// TestPosersCaptured: every request the real browsers sent (Chromium and
// Firefox, headless, over HTTPS, plain HTTP and loopback, with their own
// User-Agents and with changed ones) is served as a person's, the
// disallowed path and a burst far above Crawl-delay included; every HTTP
// library that posed with a browser's User-Agent over HTTPS, and did not
// copy a browser's headers, is a poser from its first request: refused
// the disallowed path with the rule and the evidence named, and throttled
// under Crawl-delay.
func TestPosersCaptured(t *testing.T) {
	clock := newClock()
	browsers, libraries := 0, 0
	for _, c := range loadCaptures(t) {
		for i, rq := range c.Requests {
			h := rq.Header
			o := captureOrigins[rq.Origin]
			u, err := url.Parse(rq.URL)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.Kind == "browser" && classifier.Classify(h.Get("User-Agent")).Class == uaclass.Browser:
				// (The honest HeadlessChrome of a DevTools run is a script.)
				// One captured request replayed to 8 targets at once is,
				// for a typed navigation, what a crawler loading URLs
				// does: the headers are judged here, behaviour in
				// behaviour_test.go.
				e := newEngine(t, Config{BehaviourOff: true}, clock)
				browsers++
				// The path as sent, then a disallowed one, then a burst.
				for n, target := range []string{u.RequestURI(), "/private/x", "/private/y", "/a", "/b", "/c", "/d", "/e"} {
					r, d := judged(t, e, "192.0.2.1", target, rq.Method, h, evidence.TLS{}, o)
					if d.Action != Allow || r.UA.Class == uaclass.Poser {
						t.Fatalf("%s request %d (%s %s, %s) %d: %v %v for %q, evidence %s\n%v", c.Client, i, rq.Case, rq.URL, rq.Origin, n, d.Action, d.Reason, target, r.Evidence.Evidence, h)
					}
					if d.BrowserDisallowed != (n == 1 || n == 2) {
						t.Fatalf("%s request %d: %q marked disallowed %v", c.Client, i, target, d.BrowserDisallowed)
					}
				}
			case c.Kind == "library" && o == evidence.Secure && c.Copies == "":
				e := newEngine(t, Config{}, clock)
				libraries++
				r, d := judged(t, e, "192.0.2.2", "/private/report.html", rq.Method, h, evidence.TLS{}, o)
				if r.UA.Class != uaclass.Poser || d.Action != Deny || d.Reason != ReasonDisallowed || d.Group != "*" || d.Evidence&evidence.SecFetch == 0 || !d.BrowserDisallowed {
					t.Fatalf("%s: first request for a disallowed path: class %v, %v %v group %q evidence %q", rq.Run, r.UA.Class, d.Action, d.Reason, d.Group, d.Evidence)
				}
				hdr := http.Header{}
				NewRefusals(RefusalOptions{DenyStatus: 403, ThrottleStatus: 429}).Refuse(hdr, &d, compile(poserRobots))
				if hdr.Get("X-Robots-Guard") != "disallowed" || hdr.Get("X-Robots-Guard-Evidence") != "sec-fetch" ||
					!strings.Contains(hdr.Get("X-Robots-Guard-Rule"), "Disallow: /private/") {
					t.Errorf("%s: refusal headers %v", rq.Run, hdr)
				}
				throttled := false
				for range 6 {
					if _, d := judged(t, e, "192.0.2.2", "/page", rq.Method, h, evidence.TLS{}, o); d.Action == Throttle && d.Reason == ReasonCrawlDelay {
						throttled = true
					}
				}
				if !throttled {
					t.Errorf("%s: 6 rapid requests under Crawl-delay: 5, none throttled", rq.Run)
				}
			}
		}
	}
	if browsers < 300 || libraries < 18 {
		t.Fatalf("only %d browser and %d library requests judged", browsers, libraries)
	}
	t.Logf("%d browser requests served, %d library requests caught", browsers, libraries)
}

const chromeUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"

// library is what python-requests sends with Chrome's User-Agent.
func library() http.Header {
	return http.Header{"User-Agent": {chromeUA}, "Accept": {"*/*"}, "Accept-Encoding": {"gzip, deflate"}}
}

// TestPoserModes: "log" keeps a poser's evidence and serves it as the
// browser it claims; "off" judges nothing; an allowed JA4 is not judged;
// a mismatch alone leaves a browser a browser; a library's TLS stack is
// decisive over plain HTTP too, where headers prove nothing.
func TestPoserModes(t *testing.T) {
	clock := newClock()
	const fp = "t13d1516h2_8daaf6152771_e5627efa2ab1"
	for _, tc := range []struct {
		name  string
		cfg   Config
		h     http.Header
		tls   evidence.TLS
		o     evidence.Origin
		ja4   string
		class uaclass.Class
		ev    evidence.Evidence
		act   Action
	}{
		{"enforce", Config{}, library(), evidence.TLS{}, evidence.Secure, "", uaclass.Poser, evidence.SecFetch, Deny},
		{"log", Config{Posers: PosersLog}, library(), evidence.TLS{}, evidence.Secure, "", uaclass.Browser, evidence.SecFetch, Allow},
		{"off", Config{Posers: PosersOff}, library(), evidence.TLS{}, evidence.Secure, "", uaclass.Browser, 0, Allow},
		{"allowed ja4", Config{AllowFingerprints: []string{fp}}, library(), evidence.TLS{}, evidence.Secure, fp, uaclass.Browser, 0, Allow},
		{"other ja4", Config{AllowFingerprints: []string{fp}}, library(), evidence.TLS{}, evidence.Secure, "t13d1715h2_5b57614c22b0_3d5424432f57", uaclass.Poser, evidence.SecFetch, Deny},
		{"plain http", Config{}, library(), evidence.TLS{}, evidence.Insecure, "", uaclass.Browser, 0, Allow},
		{"library stack", Config{}, library(), evidence.TLS{Known: true, Family: "openssl"}, evidence.Secure, "", uaclass.Poser, evidence.TLSStack | evidence.SecFetch, Deny},
		{"another engine's stack", Config{}, http.Header{"User-Agent": {chromeUA}, "Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}},
			evidence.TLS{Known: true, Browser: true, Family: "firefox"}, evidence.Secure, "", uaclass.Browser, evidence.TLSFamily | evidence.SecCHUA, Allow},
		{"no client hints", Config{}, http.Header{"User-Agent": {chromeUA}, "Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}},
			evidence.TLS{}, evidence.Secure, "", uaclass.Browser, evidence.SecCHUA, Allow},
	} {
		e := newEngine(t, tc.cfg, clock)
		r := readReq(t, e, "192.0.2.3", "example.com", "/private/x", "GET", tc.h, tc.tls, tc.o, tc.ja4)
		d := e.Decide(r, compile(poserRobots))
		if r.UA.Class != tc.class || r.Evidence.Evidence != tc.ev || d.Action != tc.act {
			t.Errorf("%s: class %v evidence %q action %v, want %v %q %v", tc.name, r.UA.Class, r.Evidence.Evidence, d.Action, tc.class, tc.ev, tc.act)
		}
		want := tc.ev
		if tc.ev&evidence.Decisive == 0 {
			want = 0 // a mismatch alone is not the decision's
		}
		if d.Evidence != want {
			t.Errorf("%s: the decision carries evidence %q, want %q", tc.name, d.Evidence, tc.ev)
		}
	}
}

// TestPoserLadder: a poser that keeps asking for disallowed paths collects
// strikes and is blocked, as an undeclared bot is; a trap blocks it even
// when it sends a Referer of another site, which spares a real browser's
// cross-site fetch.
func TestPoserLadder(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Strikes: 3, Traps: []string{"/trap/"}}, clock)
	var d Decision
	n := 0
	for ; n < 6 && d.Reason != ReasonBlockedClient; n++ {
		_, d = judged(t, e, "192.0.2.4", "/private/x", "GET", library(), evidence.TLS{}, evidence.Secure)
		clock.Advance(10 * time.Second)
	}
	if d.Reason != ReasonBlockedClient || n > 4 {
		t.Fatalf("after %d disallowed requests: %v %v, want deny blocked_client by the fourth", n, d.Action, d.Reason)
	}
	if _, d = judged(t, e, "192.0.2.4", "/page", "GET", library(), evidence.TLS{}, evidence.Secure); d.Reason != ReasonBlockedClient {
		t.Fatalf("a blocked poser's allowed page: %v %v", d.Action, d.Reason)
	}
	h := library()
	h.Set("Referer", "https://elsewhere.example/")
	_, d = judged(t, e, "192.0.2.5", "/trap/x", "GET", h, evidence.TLS{}, evidence.Secure)
	if d.Reason != ReasonTrap || d.BlockedUntil.IsZero() {
		t.Fatalf("a poser's trap with a foreign Referer: %v %v blocked until %v, want a block", d.Action, d.Reason, d.BlockedUntil)
	}
}

// TestPoserRates: a poser gets bot's rate where robots.txt sets no
// Crawl-delay, and its own class rate when one is configured.
func TestPoserRates(t *testing.T) {
	for _, tc := range []struct {
		rates map[uaclass.Class]time.Duration
		want  time.Duration
	}{
		{nil, DefaultClassRates[uaclass.OtherBot]},
		{map[uaclass.Class]time.Duration{uaclass.OtherBot: 7 * time.Second}, 7 * time.Second},
		{map[uaclass.Class]time.Duration{uaclass.OtherBot: 7 * time.Second, uaclass.Poser: 3 * time.Second}, 3 * time.Second},
	} {
		e := newEngine(t, Config{ClassRates: tc.rates}, newClock())
		if got := e.classRates[uaclass.Poser]; got != tc.want {
			t.Errorf("rates %v: poser's %v, want %v", tc.rates, got, tc.want)
		}
	}
}

// TestPoserSettings: the options' bad values are named.
func TestPoserSettings(t *testing.T) {
	for _, tc := range []struct {
		s    Settings
		want string
	}{
		{Settings{Posers: "strict"}, `posers: unknown mode "strict" (want enforce, log or off)`},
		{Settings{AllowFingerprints: []string{"t13d1516h2_8daaf6152771_e5627efa2ab1", "abc"}}, `allow_fingerprints[1]: "abc" is not a JA4 fingerprint`},
		{Settings{AllowFingerprints: []string{"t13d1516h2_8DAAF6152771_e5627efa2ab1"}}, `allow_fingerprints[0]`},
	} {
		_, err := tc.s.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.s, err, tc.want)
		}
	}
	cfg, err := Settings{Posers: "log", AllowFingerprints: []string{"q13d0312h3_55b375c5d22e_06cda9e17597"}}.Check()
	if err != nil || cfg.Posers != PosersLog || len(cfg.AllowFingerprints) != 1 {
		t.Errorf("good settings: %+v, %v", cfg, err)
	}
}

// TestJudgeNoAllocations: judging a browser's request, and a poser's,
// allocates nothing.
func TestJudgeNoAllocations(t *testing.T) {
	e := newEngine(t, Config{}, newClock())
	nav := http.Header{"User-Agent": {chromeUA}, "Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"},
		"Sec-Ch-Ua": {`"Chromium";v="156", "Not-A.Brand";v="24", "Google Chrome";v="156"`}, "Sec-Ch-Ua-Mobile": {"?0"}, "Sec-Ch-Ua-Platform": {`"Windows"`}}
	for name, h := range map[string]http.Header{"browser": nav, "poser": library()} {
		r := req("192.0.2.6", chromeUA, "/")
		base := *r
		if n := testing.AllocsPerRun(100, func() {
			*r = base
			r.Evidence, _ = e.Judge(&r.UA, &Facts{Origin: evidence.Secure}, "GET", h)
		}); n != 0 {
			t.Errorf("%s: %v allocations", name, n)
		}
	}
}

// TestEvidenceHeaders: the X-Robots-Guard-Evidence value of every set of
// findings (every code evidence knows, tls to behaviour) is its codes,
// made once: the second of a kind allocates nothing.
func TestEvidenceHeaders(t *testing.T) {
	n := 0
	for f := range evidence.AllEvidence() {
		if got := evidenceHeader(f); got == "" || got != f.Code() {
			t.Errorf("%v: header %q, want %q", uint16(f), got, f.Code())
		}
		n++
	}
	if n != 13 || evidence.All != 1<<n-1 {
		t.Errorf("%d findings, All %b", n, evidence.All)
	}
	for e := range evidence.All + 1 {
		if got := evidenceHeader(e); got != e.String() {
			t.Errorf("%b: %q, want %q", uint16(e), got, e.String())
		}
	}
	if got := evidenceHeader(evidence.All); !strings.Contains(got, "quic-family") || !strings.HasSuffix(got, ",framing,framing-family,behaviour") {
		t.Errorf("all findings: %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { evidenceHeader(evidence.TLSStack | evidence.FramingStack) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
