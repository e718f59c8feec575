package enforce

import (
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/uaclass"
)

// TestClaimWalk (issue 25, "visible even when served"): a request whose
// User-Agent claims a browser for a path the "*" group disallows is marked
// BrowserDisallowed with the rule named, whatever the action: a browser
// served as ever, a poser refused, a poser in log mode served, a blocked
// browser refused; a path the file allows, /robots.txt, a refusal only a
// departure makes and a declared bot are not marked.
func TestClaimWalk(t *testing.T) {
	clock := newClock()
	const robots = "User-agent: *\nDisallow: /private/\nAllow: /private/press/\nDisallow: /*.pdf$\n\nUser-agent: examplebot\nDisallow: /\n"
	p := compile(robots)
	nav := http.Header{"User-Agent": {chromeUA}, "Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"},
		"Sec-Ch-Ua": {`"Chromium";v="156", "Not-A.Brand";v="24", "Google Chrome";v="156"`}, "Sec-Ch-Ua-Mobile": {"?0"}, "Sec-Ch-Ua-Platform": {`"Windows"`}}
	for _, tc := range []struct {
		name, target string
		cfg          Config
		h            http.Header
		class        uaclass.Class
		act          Action
		marked       bool
		rule         string
	}{
		{"browser, disallowed", "/private/a.html", Config{}, nav, uaclass.Browser, Allow, true, "Disallow: /private/"},
		{"browser, allowed within", "/private/press/a.html", Config{}, nav, uaclass.Browser, Allow, false, ""},
		{"browser, allowed", "/index.html", Config{}, nav, uaclass.Browser, Allow, false, ""},
		{"browser, robots.txt", "/robots.txt", Config{}, nav, uaclass.Browser, Allow, false, ""},
		// MatchTarget refuses "/a.pdf?x" (a departure); the reference reading allows it.
		{"browser, departure only", "/a.pdf?x=1", Config{}, nav, uaclass.Browser, Allow, false, ""},
		{"browser, wildcard rule", "/a.pdf", Config{}, nav, uaclass.Browser, Allow, true, "Disallow: /*.pdf$"},
		{"poser, disallowed", "/private/a.html", Config{}, library(), uaclass.Poser, Deny, true, "Disallow: /private/"},
		{"poser, allowed", "/index.html", Config{}, library(), uaclass.Poser, Allow, false, ""},
		{"poser log mode, disallowed", "/private/a.html", Config{Posers: PosersLog}, library(), uaclass.Browser, Allow, true, "Disallow: /private/"},
		{"poser, class blocked", "/private/a.html", Config{BlockClasses: []uaclass.Class{uaclass.Poser}}, library(), uaclass.Poser, Deny, true, "Disallow: /private/"},
		{"browser, allowlisted address", "/private/a.html", Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}}, nav, uaclass.Browser, Allow, true, "Disallow: /private/"},
		{"bot, disallowed", "/private/a.html", Config{}, http.Header{"User-Agent": {uaExample}}, uaclass.OtherBot, Deny, false, "Disallow: /"},
	} {
		e := newEngine(t, tc.cfg, clock)
		r := readReq(t, e, "192.0.2.20", "example.com", tc.target, "GET", tc.h, evidence.TLS{}, evidence.Secure, "")
		d := e.Decide(r, p)
		rule := ""
		if d.Rule != nil {
			rule = d.Rule.String()
		}
		if r.UA.Class != tc.class || d.Action != tc.act || d.BrowserDisallowed != tc.marked || rule != tc.rule {
			t.Errorf("%s: class %v, %v %v, marked %v, rule %q; want %v, %v, marked %v, rule %q", tc.name, r.UA.Class, d.Action, d.Reason, d.BrowserDisallowed, rule, tc.class, tc.act, tc.marked, tc.rule)
		}
		if tc.marked && (d.Group != "*" || !d.Noteworthy()) {
			t.Errorf("%s: group %q, noteworthy %v; want \"*\", logged", tc.name, d.Group, d.Noteworthy())
		}
		if tc.marked && tc.class == uaclass.Browser && tc.cfg.Posers == PosersLog && d.Evidence&evidence.SecFetch == 0 {
			t.Errorf("%s: the served poser's decision lost its evidence: %q", tc.name, d.Evidence)
		}
	}
	if d := newEngine(t, Config{}, clock).Decide(req("192.0.2.21", chromeUA, "/private/a"), nil); d.BrowserDisallowed {
		t.Error("no robots.txt: a browser's request marked disallowed")
	}

	// A browser whose address a trap blocked: refused, and still counted
	// where it walks; its first request (the trap) too.
	e := newEngine(t, Config{Traps: []string{"/trap/"}}, clock)
	served := compile(robots + "\nUser-agent: *\nDisallow: /trap/\n")
	if d := e.Decide(req("192.0.2.22", chromeUA, "/trap/x"), served); d.Reason != ReasonTrap || !d.BrowserDisallowed || d.Rule.String() != "Disallow: /trap/" {
		t.Errorf("a browser's trap: %v %v marked %v rule %v", d.Action, d.Reason, d.BrowserDisallowed, d.Rule)
	}
	clock.Advance(time.Second)
	for target, marked := range map[string]bool{"/private/x": true, "/index.html": false} {
		if d := e.Decide(req("192.0.2.22", chromeUA, target), served); d.Action != Deny || d.Reason != ReasonBlockedClient || d.BrowserDisallowed != marked {
			t.Errorf("a blocked browser's %s: %v %v marked %v, want deny blocked_client marked %v", target, d.Action, d.Reason, d.BrowserDisallowed, marked)
		}
	}
}

// TestClaimWalkAllocs: marking a browser's request for a disallowed path
// allocates nothing.
func TestClaimWalkAllocs(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	r := req("192.0.2.23", uaBrowser, "/private/x")
	if d := e.Decide(r, benchPolicy); !d.BrowserDisallowed {
		t.Fatal("not marked")
	}
	if n := testing.AllocsPerRun(200, func() { clock.Advance(time.Second); e.Decide(r, benchPolicy) }); n != 0 {
		t.Errorf("Decide for a browser on a disallowed path allocates %v times", n)
	}
}
