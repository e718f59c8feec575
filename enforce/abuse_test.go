package enforce

import (
	"fmt"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/uaclass"
)

// Abuse paths of issue 10 (items 5 to 8 and 12): the guard must not be
// dodged or turned against others.

// TestAllowTokenIsAClaim: an allowlisted token is a claim any client can
// make; it never lifts a trap, an address block, an impostor or a bad-agent
// refusal.
func TestAllowTokenIsAClaim(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{AllowTokens: []string{"examplebot", "googlebot"}, Traps: []string{"/trap/"}, Strikes: 3}, clock)
	p := compile("User-agent: *\nDisallow: /private\nDisallow: /trap/\nCrawl-delay: 60\n")

	// A trapped client that switches its User-Agent to the token.
	expect(t, "trap", e.Decide(req("192.0.2.1", uaBrowser, "/trap/"), p), Deny, ReasonTrap)
	expect(t, "trapped client as the token", e.Decide(req("192.0.2.1", uaExample, "/"), p), Deny, ReasonBlockedClient)
	expect(t, "trapped client as the token, disallowed path", e.Decide(req("192.0.2.1", uaExample, "/private"), p), Deny, ReasonBlockedClient)
	// The token on a trap path: trapped like anyone.
	expect(t, "the token on a trap", e.Decide(req("198.51.100.2", uaExample, "/trap/x"), p), Deny, ReasonTrap)
	// An impostor claiming an allowlisted, verifiable token.
	imp := req("192.0.2.3", uaGooglebot, "/")
	imp.Verdict = uaclass.Impostor
	expect(t, "impostor with the token", e.Decide(imp, p), Deny, ReasonImpostor)
	// A bad agent whose User-Agent also carries the token.
	bad := &Request{IP: netip.MustParseAddr("192.0.2.4"), UA: uaclass.Result{Class: uaclass.Bad, Tokens: []string{"examplebot"}}, Target: tgt("/")}
	expect(t, "bad agent with the token", e.Decide(bad, p), Deny, ReasonBadAgent)
	// An address blocked for its bad agents refuses the token too.
	for i := 0; i < 3; i++ {
		e.Decide(req("192.0.2.5", uaSiphon, "/"), p)
	}
	expect(t, "the token from a blocked address", e.Decide(req("192.0.2.5", uaExample, "/"), p), Deny, ReasonBlockedClient)
	// Elsewhere the token is exempt from rules and rates, as configured.
	for i := 0; i < 10; i++ {
		expect(t, "the token", e.Decide(req("203.0.113.6", uaExample, "/private"), p), Allow, ReasonAllowlisted)
	}
}

// TestAddressPrefix: per-client state is kept per prefix (IPv6 /64 and
// IPv4 /32 by default): a client trapped at 2001:db8:1::1 stays blocked at
// ::2, and a bot moving within its /64 gets no fresh bucket.
func TestAddressPrefix(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Traps: []string{"/trap/"}}, clock)
	p := compile("User-agent: *\nCrawl-delay: 10\nDisallow: /trap/\n")
	expect(t, "trap", e.Decide(req("2001:db8:1::1", uaBrowser, "/trap/"), p), Deny, ReasonTrap)
	for _, ip := range []string{"2001:db8:1::1", "2001:db8:1::2", "2001:db8:1:0:ffff:ffff:ffff:ffff"} {
		expect(t, ip, e.Decide(req(ip, uaBrowser, "/"), p), Deny, ReasonBlockedClient)
	}
	expect(t, "the next /64", e.Decide(req("2001:db8:1:1::1", uaBrowser, "/"), p), Allow, ReasonNone)
	// IPv4: per address by default.
	expect(t, "IPv4 trap", e.Decide(req("192.0.2.1", uaBrowser, "/trap/"), p), Deny, ReasonTrap)
	expect(t, "IPv4 mapped", e.Decide(req("::ffff:192.0.2.1", uaBrowser, "/"), p), Deny, ReasonBlockedClient)
	expect(t, "IPv4 neighbour", e.Decide(req("192.0.2.2", uaBrowser, "/"), p), Allow, ReasonNone)
	// A bot that moves within its /64 keeps its bucket.
	for i := 1; i <= 3; i++ {
		expect(t, fmt.Sprintf("burst %d", i), e.Decide(req(fmt.Sprintf("2001:db8:5::%d", i), uaExample, "/"), p), Allow, ReasonNone)
	}
	e.Decide(req("2001:db8:5::4", uaExample, "/"), p) // the slip
	expect(t, "moved within the /64", e.Decide(req("2001:db8:5::5", uaExample, "/"), p), Throttle, ReasonCrawlDelay)

	// Other prefix lengths.
	e2 := newEngine(t, Config{Traps: []string{"/trap/"}, IPv4Prefix: 24, IPv6Prefix: 128}, clock)
	expect(t, "/24 trap", e2.Decide(req("198.51.100.1", uaBrowser, "/trap/"), p), Deny, ReasonTrap)
	expect(t, "same /24", e2.Decide(req("198.51.100.200", uaBrowser, "/"), p), Deny, ReasonBlockedClient)
	expect(t, "next /24", e2.Decide(req("198.51.101.1", uaBrowser, "/"), p), Allow, ReasonNone)
	expect(t, "/128 trap", e2.Decide(req("2001:db8:1::1", uaBrowser, "/trap/"), p), Deny, ReasonTrap)
	expect(t, "/128 neighbour", e2.Decide(req("2001:db8:1::2", uaBrowser, "/"), p), Allow, ReasonNone)
	for _, bad := range []Config{{IPv4Prefix: 33}, {IPv6Prefix: 129}, {IPv4Prefix: -1}} {
		if _, err := New(bad, nil); err == nil {
			t.Errorf("New(%+v) accepted a bad prefix length", bad)
		}
	}
}

// TestTokenRotation: strikes and a rate also count per address across
// tokens, so a client rotating its User-Agent ends with its address blocked.
func TestTokenRotation(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{}, clock) // strikes 5, address strikes 10
	p := compile("User-agent: *\nDisallow: /private/\nCrawl-delay: 1\n")
	for i := 1; i <= 40; i++ {
		d := e.Decide(req("192.0.2.1", fmt.Sprintf("Rot%dCrawler/1.0", i), "/private/x"), p)
		switch {
		case i < 10:
			expect(t, fmt.Sprintf("Rot%d", i), d, Deny, ReasonDisallowed)
		case i == 10:
			expect(t, "Rot10 blocks the address", d, Deny, ReasonDisallowed)
			if d.BlockedUntil != clock.Now().Add(15*time.Minute) {
				t.Errorf("Rot10: blocked until %v", d.BlockedUntil)
			}
		default:
			expect(t, fmt.Sprintf("Rot%d", i), d, Deny, ReasonBlockedClient)
		}
	}
	expect(t, "the address, as a browser", e.Decide(req("192.0.2.1", uaBrowser, "/"), p), Deny, ReasonBlockedClient)
	expect(t, "another address", e.Decide(req("192.0.2.2", "Rot1Crawler/1.0", "/"), p), Allow, ReasonNone)

	// The rate: each new token has a fresh bucket of its own, but the
	// address's bucket (four clients' worth) is shared.
	allowed, byAddr := 0, 0
	for i := 1; i <= 40; i++ {
		d := e.Decide(req("192.0.2.3", fmt.Sprintf("Rot%dCrawler/1.0", i), "/"), p)
		if d.Action == Allow && !d.Violation {
			allowed++
		}
		if d.Reason == ReasonAddressRate && d.Action == Throttle {
			byAddr++
		}
	}
	if allowed != 12 || byAddr == 0 {
		t.Errorf("40 tokens at once: %d served without violation (want the address's burst, 12), %d throttled for the address", allowed, byAddr)
	}
	// Rotating on, ignoring the 429s: the address is blocked.
	var d Decision
	for i := 0; d.Action != Deny; i++ {
		clock.Advance(100 * time.Millisecond)
		d = e.Decide(req("192.0.2.3", fmt.Sprintf("Rot%dCrawler/1.0", i%40+1), "/"), p)
		if i > 1000 {
			t.Fatal("a client rotating tokens was never blocked")
		}
	}
	expect(t, "rotation blocks the address", d, Deny, ReasonAddressRate)
	expect(t, "rotated out", e.Decide(req("192.0.2.3", "Rot99Crawler/1.0", "/"), p), Deny, ReasonBlockedClient)
}

// TestBlocksSurviveFlood: a flood of trap hits from a million new addresses
// does not flush the blocks already in force; blocks have their own bound,
// the newest are dropped, and every drop is reported.
func TestBlocksSurviveFlood(t *testing.T) {
	n := 1_000_000
	if raceEnabled || testing.Short() {
		n = 100_000
	}
	const early, maxClients, maxBlocks = 10_000, 50_000, 20_000
	clock := newClock()
	store := NewMemoryStore(maxClients, maxBlocks, time.Hour)
	e, err := New(Config{Now: clock.Now, Traps: []string{"/trap/"}}, store)
	if err != nil {
		t.Fatal(err)
	}
	p := compile("User-agent: *\nDisallow: /private/\nDisallow: /trap/\n")
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) }
	browser := classifier.Classify(uaBrowser)
	r := Request{UA: browser, Target: tgt("/trap/")}
	for i := 0; i < early; i++ {
		r.IP = v4(i)
		if d := e.Decide(&r, p); d.Reason != ReasonTrap || d.BlockDropped {
			t.Fatalf("early block %d: %+v", i, d)
		}
	}
	dropped := 0
	for i := 0; i < n; i++ {
		r.IP = addr6(uint64(i))
		if d := e.Decide(&r, p); d.BlockDropped {
			dropped++
		} else if d.BlockedUntil.IsZero() {
			t.Fatalf("flood %d: neither blocked nor dropped: %+v", i, d)
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	r.Target = tgt("/")
	for i := 0; i < early; i++ {
		r.IP = v4(i)
		if d := e.Decide(&r, p); d.Reason != ReasonBlockedClient {
			t.Fatalf("early block %d was flushed by the flood: %+v", i, d)
		}
	}
	blocked := store.Blocked(clock.Now())
	clients, blocks := store.Bounds()
	if len(blocked) > blocks {
		t.Errorf("%d blocks, bound %d", len(blocked), blocks)
	}
	if kept := len(blocked) - early; kept+dropped != n {
		t.Errorf("%d flood blocks kept + %d dropped != %d", kept, dropped, n)
	}
	if l := store.Len(); l > clients+blocks {
		t.Errorf("%d addresses, bound %d", l, clients+blocks)
	}
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("flood of %d trap hits from new addresses after %d blocks: all %d early blocks kept; %d blocks in force (bound %d), %d dropped; %d addresses tracked (bound %d + %d); heap growth %d MiB (%.0f bytes per address)",
		n, early, early, len(blocked), blocks, dropped, store.Len(), clients, blocks, heap>>20, float64(heap)/float64(store.Len()))
}

// TestDryRunLeavesNoEnforceableState: dry-run records what it would do,
// apart from enforced state, so that after the switch to enforcement
// (a config reload: a new engine on the same store) nobody is refused for a
// dry-run block; the blocked list marks dry-run entries.
func TestDryRunLeavesNoEnforceableState(t *testing.T) {
	clock := newClock()
	store := NewMemoryStore(1000, 0, time.Hour)
	cfg := Config{Now: clock.Now, Traps: []string{"/trap/"}, Strikes: 2}
	dryCfg := cfg
	dryCfg.DryRun = true
	dry, err := New(dryCfg, store)
	if err != nil {
		t.Fatal(err)
	}
	p := compile("User-agent: *\nDisallow: /private\nDisallow: /trap/\n")
	d := dry.Decide(req("192.0.2.1", uaBrowser, "/trap/"), p)
	expect(t, "dry-run trap", d, Deny, ReasonTrap)
	if d.Enforced() {
		t.Errorf("dry-run trap enforced: %+v", d)
	}
	expect(t, "dry-run trapped", dry.Decide(req("192.0.2.1", uaBrowser, "/"), p), Deny, ReasonBlockedClient)
	dry.Decide(req("192.0.2.2", uaExample, "/private"), p)
	expect(t, "dry-run strikes block", dry.Decide(req("192.0.2.2", uaExample, "/private"), p), Deny, ReasonDisallowed)
	expect(t, "dry-run blocked bot", dry.Decide(req("192.0.2.2", uaExample, "/"), p), Deny, ReasonBlockedClient)

	list := store.Blocked(clock.Now())
	if len(list) != 2 || !list[0].DryRun || !list[1].DryRun || list[0].IP != "192.0.2.1" || list[1].Token != "examplebot" {
		t.Fatalf("Blocked after dry run: %+v", list)
	}
	if _, blocked := store.Sweep(clock.Now()); blocked != 0 {
		t.Errorf("Sweep counts %d dry-run blocks as blocks in force", blocked)
	}

	// The reload: an enforcing engine on the same store.
	enf, err := New(cfg, store)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "browser after the switch", enf.Decide(req("192.0.2.1", uaBrowser, "/"), p), Allow, ReasonNone)
	expect(t, "bot after the switch", enf.Decide(req("192.0.2.2", uaExample, "/"), p), Allow, ReasonNone)
	d = enf.Decide(req("192.0.2.2", uaExample, "/private"), p)
	expect(t, "first enforced strike", d, Deny, ReasonDisallowed)
	if d.Strikes != 1 || !d.BlockedUntil.IsZero() {
		t.Errorf("dry-run strikes carried over: %+v", d)
	}
	enf.Decide(req("192.0.2.3", uaBrowser, "/trap/"), p)
	list = store.Blocked(clock.Now())
	if len(list) != 3 || list[2].IP != "192.0.2.3" || list[2].DryRun {
		t.Errorf("Blocked after the switch: %+v", list)
	}
}

// TestBrowserLike: an unrecognised client that looks like a browser gets a
// browser's allowance (a page load is dozens of requests), not the
// Crawl-delay or a script's rate; it stays bound by the rules.
func TestBrowserLike(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	p := compile("User-agent: *\nCrawl-delay: 10\nDisallow: /private/\n")
	page := func(ip string, browserLike bool, n int) (served int, last Decision) {
		for i := 0; i < n; i++ {
			r := &Request{IP: netip.MustParseAddr(ip), UA: uaclass.Result{Class: uaclass.Unknown}, Target: tgt(fmt.Sprintf("/asset%d.css", i)), BrowserLike: browserLike}
			last = e.Decide(r, p)
			if last.Action == Allow && !last.Violation {
				served++
			}
		}
		return served, last
	}
	if served, _ := page("192.0.2.1", true, 60); served != 60 {
		t.Errorf("a browser-like page load of 60 requests: %d served", served)
	}
	clock.Advance(3 * time.Second) // 30 more at 100ms
	if served, last := page("192.0.2.1", true, 40); served != 30 || last.Action != Throttle || last.Reason != ReasonRate {
		t.Errorf("the next page, 3s later: %d served, last %+v", served, last)
	}
	if served, _ := page("192.0.2.2", false, 60); served != 3 {
		t.Errorf("an unknown client that does not look like a browser: %d served, want the burst of 3", served)
	}
	r := &Request{IP: netip.MustParseAddr("192.0.2.3"), UA: uaclass.Result{Class: uaclass.Unknown}, Target: tgt("/private/x"), BrowserLike: true}
	expect(t, "browser-like on a disallowed path", e.Decide(r, p), Deny, ReasonDisallowed)
}
