package record

import (
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// decisions reads and decides a run of requests with a real engine:
// robots.txt itself, allowed paths within and beyond the rate (slips,
// throttles), a disallowed path, a departure, a preference refused in log
// mode, an allowlisted address, a trap and what follows it, browsers and a
// poser.
func decisions(t *testing.T) []Record {
	t.Helper()
	now := time.Unix(1_800_000_000, 0)
	e, err := enforce.New(enforce.Config{Traps: []string{"/trap/"}, ContentUsage: enforce.UsageLog, Burst: 2, Grace: 1,
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}, Now: func() time.Time { return now }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := uaclass.New(uaclass.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rd := enforce.Reader{Classifier: c, Engine: e}
	p := policy.Compile(policy.Parse([]byte("User-agent: *\nCrawl-delay: 10\nDisallow: /private/\nDisallow: /*.pdf$\nDisallow: /trap/\nContent-Usage: train-ai=n\n")))
	const gptbot = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	const chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	var out []Record
	for _, q := range []struct{ ip, ua, target string }{
		{"192.0.2.1", "ExampleBot/1.0", "/robots.txt"},
		{"192.0.2.1", "ExampleBot/1.0", "/a"}, {"192.0.2.1", "ExampleBot/1.0", "/b"}, {"192.0.2.1", "ExampleBot/1.0", "/c"},
		{"192.0.2.1", "ExampleBot/1.0", "/d"}, {"192.0.2.1", "ExampleBot/1.0", "/e"},
		{"192.0.2.2", "ExampleBot/1.0", "/private/x"}, {"192.0.2.3", "ExampleBot/1.0", "/x.pdf?y=1"},
		{"192.0.2.4", gptbot, "/a"}, {"203.0.113.5", "ExampleBot/1.0", "/private/x"},
		{"192.0.2.6", "ExampleBot/1.0", "/trap/"}, {"192.0.2.6", "ExampleBot/1.0", "/a"},
		{"192.0.2.7", chrome, "/private/x"}, {"192.0.2.8", chrome, "/"},
	} {
		h := http.Header{"User-Agent": {q.ua}}
		var r enforce.Reading
		o := evidence.Insecure
		if q.ip == "192.0.2.8" {
			o = evidence.Secure // no Fetch Metadata over HTTPS: a poser
		}
		if err := rd.Read(&http.Request{Method: "GET", Header: h, Host: "example.com"}, &enforce.Facts{ClientIP: netip.MustParseAddr(q.ip), URI: q.target, Scheme: "https", Origin: o}, p, &r); err != nil {
			t.Fatal(err)
		}
		d := e.Decide(&r.Request, p)
		rec := New(&r, &d, "default", "0123456789ab", nil)
		if rec.Violation() != (d.Violation || d.Action != enforce.Allow) {
			t.Errorf("%s for %s: the rule says violation %v, the engine %v (%v %v)", q.target, q.ua, rec.Violation(), d.Violation, d.Action, d.Reason)
		}
		if rec.Noteworthy != d.Noteworthy() || rec.Path != r.Request.Target.Normal || rec.URI != q.target || rec.UserAgent != q.ua {
			t.Errorf("%s for %s: %+v", q.target, q.ua, rec)
		}
		out = append(out, rec)
	}
	return out
}

// TestViolationIsTheEngines: the rule by which the pages and the report
// read a violation from a decision's action and reason (Violation) is
// what the engine marks, over every kind of decision.
func TestViolationIsTheEngines(t *testing.T) {
	seen := map[enforce.Reason]bool{}
	for _, r := range decisions(t) {
		seen[r.Reason] = true
	}
	for _, want := range []enforce.Reason{enforce.ReasonRobotsTxt, enforce.ReasonNone, enforce.ReasonCrawlDelay, enforce.ReasonDisallowed,
		enforce.ReasonDeparture, enforce.ReasonContentUsage, enforce.ReasonAllowlisted, enforce.ReasonTrap, enforce.ReasonBlockedClient} {
		if !seen[want] {
			t.Errorf("no decision with reason %q: the run does not test it", want)
		}
	}
}

// TestNewNoAllocations: the record of a decision costs no allocation.
func TestNewNoAllocations(t *testing.T) {
	rs := decisions(t)
	rd := enforce.Reading{Request: enforce.Request{IP: rs[1].ClientIP, UA: uaclass.Result{Class: uaclass.OtherBot, Tokens: rs[1].Tokens}}, UserAgent: rs[1].UserAgent, URI: "/a"}
	d := enforce.Decision{Action: enforce.Throttle, Reason: enforce.ReasonCrawlDelay, RetryAfter: time.Second}
	if n := testing.AllocsPerRun(100, func() { _ = New(&rd, &d, "default", "0123456789ab", nil) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// TestPlaceholders: the placeholders are the record's, the JA4, the QUIC
// and the framing fingerprint included, "" when it has none.
func TestPlaceholders(t *testing.T) {
	var p Placeholders
	p.Set(&Record{Action: enforce.Deny, Reason: enforce.ReasonDisallowed, Class: uaclass.Poser,
		JA4: "q13d0313h3_55b375c5d22e_f902b76752af", QUIC: "q1_g.5.6.7.4.8.9.1.3.b.e.f", Framing: "h3:1:65536;6:262144;7:100;33"})
	for key, want := range map[string]any{"action": "deny", "reason": "disallowed", "class": "poser", "rule": "", "token": "",
		"ja4": "q13d0313h3_55b375c5d22e_f902b76752af", "quic": "q1_g.5.6.7.4.8.9.1.3.b.e.f", "framing": "h3:1:65536;6:262144;7:100;33"} {
		if got, ok := p.Lookup("http.robots_guard." + key); !ok || got != want {
			t.Errorf("%s: %v (%v), want %v", key, got, ok, want)
		}
	}
	p.Set(&Record{})
	if got, ok := p.Lookup("http.robots_guard.quic"); !ok || got != "" {
		t.Errorf("no QUIC fingerprint: %v (%v)", got, ok)
	}
	if got, ok := p.Lookup("http.robots_guard.framing"); !ok || got != "" {
		t.Errorf("no framing fingerprint: %v (%v)", got, ok)
	}
	if _, ok := p.Lookup("http.robots_guard.nope"); ok {
		t.Error("an unknown placeholder is known")
	}
}

// TestNewFraming: the record of a request read with a framing fingerprint
// carries it and its stack's family, and the evidence it made.
func TestNewFraming(t *testing.T) {
	e, err := enforce.New(enforce.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := uaclass.New(uaclass.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const print = "h2:2:0;4:4194304;5:16384;6:10485760|1073741824|0|a,m,p,s|0"
	f := &enforce.Facts{ClientIP: netip.MustParseAddr("192.0.2.40"), URI: "/a", Scheme: "https", Origin: evidence.Insecure,
		Framing: print, TLS: evidence.TLS{Framing: evidence.Framing{Known: true, Family: "go"}}}
	h := http.Header{"User-Agent": {"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"}}
	var r enforce.Reading
	if err := (&enforce.Reader{Classifier: c, Engine: e}).Read(&http.Request{Method: "GET", Header: h, Host: "example.com"}, f, nil, &r); err != nil {
		t.Fatal(err)
	}
	d := e.Decide(&r.Request, nil)
	rec := New(&r, &d, "default", "0123456789ab", nil)
	if rec.Framing != print || rec.FramingStack != "go" || rec.Evidence.Evidence != evidence.FramingStack || rec.Class != uaclass.Poser {
		t.Errorf("framing %q stack %q evidence %v class %v", rec.Framing, rec.FramingStack, rec.Evidence.Evidence, rec.Class)
	}
}
