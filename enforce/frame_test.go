package enforce

import (
	"testing"
	"time"
)

// TestCrossSiteTrapFramesNobody (issue 29, item 1): a trap hit that a
// browser makes for another site (an <img> on an attacker's page) is
// refused, but blocks nobody and strikes nothing: the next visit from the
// address is served. A hit of the visitor's own (same-origin, typed,
// without the header fields) blocks as before; so does a bot's, unless it
// claims the fetch is cross-site: then it is refused the trap and held to
// everything else.
func TestCrossSiteTrapFramesNobody(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Traps: []string{"/trap/"}, Strikes: 2}, clock)
	p := compile("User-agent: *\nDisallow: /private/\nDisallow: /trap/\n")
	img := req("198.51.100.1", uaBrowser, "/trap/cat.png")
	img.CrossSite = true
	for i := 0; i < 20; i++ {
		d := e.Decide(img, p)
		expect(t, "cross-site trap hit", d, Deny, ReasonTrap)
		if !d.BlockedUntil.IsZero() || d.Strikes != 0 {
			t.Fatalf("cross-site trap hit blocked or struck: %+v", d)
		}
	}
	expect(t, "the visitor's next page", e.Decide(req("198.51.100.1", uaBrowser, "/"), p), Allow, ReasonNone)
	expect(t, "a bot of the address", e.Decide(req("198.51.100.1", uaExample, "/"), p), Allow, ReasonNone)

	// The visitor's own hit blocks, as before.
	expect(t, "own trap hit", e.Decide(req("198.51.100.2", uaBrowser, "/trap/cat.png"), p), Deny, ReasonTrap)
	expect(t, "after an own trap hit", e.Decide(req("198.51.100.2", uaBrowser, "/"), p), Deny, ReasonBlockedClient)

	// A bot claiming cross-site fetches: refused the trap, not blocked for
	// it, and held to the rest of the ladder.
	bot := req("198.51.100.3", uaExample, "/trap/x")
	bot.CrossSite = true
	expect(t, "bot, cross-site trap hit", e.Decide(bot, p), Deny, ReasonTrap)
	priv := req("198.51.100.3", uaExample, "/private/x")
	priv.CrossSite = true
	expect(t, "bot, disallowed 1", e.Decide(priv, p), Deny, ReasonDisallowed)
	d := e.Decide(priv, p)
	expect(t, "bot, disallowed 2", d, Deny, ReasonDisallowed)
	if d.BlockedUntil.IsZero() {
		t.Errorf("a cross-site claim lifted the ladder: %+v", d)
	}
	// An address blocked before stays refused on a cross-site hit.
	expect(t, "cross-site hit of a trapped address", e.Decide(&Request{IP: img.IP, UA: img.UA, Target: tgt("/trap/y"), CrossSite: true}, p), Deny, ReasonTrap)
	img.IP = req("198.51.100.2", uaBrowser, "/").IP
	if d := e.Decide(img, p); d.Reason != ReasonTrap || d.BlockedUntil.IsZero() {
		t.Errorf("cross-site hit from a blocked address: %+v", d)
	}
}

// TestCrossSite reads the header fields as the handler passes them.
func TestCrossSite(t *testing.T) {
	for _, c := range []struct {
		site, referer, host string
		want                bool
	}{
		{"cross-site", "", "victim.example", true},
		{"same-site", "https://blog.victim.example/", "victim.example", true},
		{"same-origin", "https://attacker.example/", "victim.example", false},
		{"none", "", "victim.example", false},
		{"", "", "victim.example", false},
		{"", "https://attacker.example/page.html", "victim.example", true},
		{"", "http://attacker.example", "victim.example", true},
		{"", "https://victim.example/page.html", "victim.example", false},
		{"", "HTTPS://Victim.Example?q", "victim.example", false},
		{"", "http://127.0.0.1:8080/x", "127.0.0.1:8080", false},
		{"", "http://localhost:8080/x", "127.0.0.1:8080", true},
		{"", "android-app://com.example/", "victim.example", false},
		{"", "garbage", "victim.example", false},
		{"Cross-Site", "", "victim.example", false}, // no browser spells it so
	} {
		if got := CrossSite(c.site, c.referer, c.host); got != c.want {
			t.Errorf("CrossSite(%q, %q, %q) = %v, want %v", c.site, c.referer, c.host, got, c.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { CrossSite("", "https://attacker.example/page.html", "victim.example") }); n != 0 {
		t.Errorf("CrossSite allocates %v times", n)
	}
}

// TestNoTarpitForPeople (issue 28): a blocked address holds its bots in
// the tarpit, but a browser from it is refused at once: it may be a
// person who shares the address.
func TestNoTarpitForPeople(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Traps: []string{"/trap/"}, Tarpit: 5 * time.Second}, clock)
	p := compile("User-agent: *\nDisallow: /trap/\n")
	expect(t, "trap", e.Decide(req("192.0.2.1", uaExample, "/trap/"), p), Deny, ReasonTrap)
	if d := e.Decide(req("192.0.2.1", uaExample, "/"), p); d.Action != Tarpit || d.Hold != 5*time.Second {
		t.Errorf("bot from the blocked address: %+v", d)
	}
	d := e.Decide(req("192.0.2.1", uaBrowser, "/"), p)
	expect(t, "browser from the blocked address", d, Deny, ReasonBlockedClient)
	if d.Hold != 0 {
		t.Errorf("a browser is held %v", d.Hold)
	}
}
