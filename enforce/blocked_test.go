package enforce

import (
	"net/netip"
	"testing"
	"time"
)

// TestBlockedAndUnblock: the store lists the blocks in force, whole-address
// (by prefix) and per-token, and Unblock lifts every block of one address,
// with its strikes and offences, and no other. Each block carries its
// reason.
func TestBlockedAndUnblock(t *testing.T) {
	clock := newClock()
	store := NewMemoryStore(1000, 0, time.Hour)
	e, err := New(Config{Now: clock.Now, Strikes: 2, AddressStrikes: 10, Cooldown: time.Minute, Traps: []string{"/trap/"}}, store)
	if err != nil {
		t.Fatal(err)
	}
	p := compile("User-agent: *\nDisallow: /private\nDisallow: /trap\n")
	e.Decide(req("192.0.2.1", uaExample, "/robots.txt"), p)
	e.Decide(req("192.0.2.1", uaExample, "/private"), p)
	e.Decide(req("192.0.2.1", uaExample, "/private"), p)     // blocks examplebot at .1
	e.Decide(req("192.0.2.1", uaBrowser, "/trap/"), p)       // blocks all of .1
	e.Decide(req("2001:db8::7", uaBrowser, "/trap/"), p)     // blocks all of 2001:db8::/64
	e.Decide(req("192.0.2.9", uaExample, "/private"), p)     // one strike: not blocked
	e.Decide(req("2001:db8::8", uaBrowser, "/trap/x"), p)    // already blocked: no new entry
	e.Decide(req("2001:db8:1::8", uaBrowser, "/about"), p)   // not blocked
	e.Decide(req("::ffff:192.0.2.1", uaBrowser, "/trap"), p) // the same IPv4 address

	got := store.Blocked(clock.Now())
	v4, v6 := netip.MustParsePrefix("192.0.2.1/32"), netip.MustParsePrefix("2001:db8::/64")
	want := []BlockedClient{
		{Prefix: v4, IP: "192.0.2.1", Until: clock.Now().Add(time.Minute), Offenses: 1, Reason: WhyTrap, ReadRobots: true},
		{Prefix: v4, IP: "192.0.2.1", Token: "examplebot", Until: clock.Now().Add(time.Minute), Offenses: 1, Reason: WhyDisallowed, ReadRobots: true},
		{Prefix: v6, IP: "2001:db8::/64", Until: clock.Now().Add(time.Minute), Offenses: 1, Reason: WhyTrap},
	}
	if len(got) != len(want) {
		t.Fatalf("Blocked = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Blocked[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}

	if n := store.Unblock(netip.PrefixFrom(netip.MustParseAddr("192.0.2.1"), 32), clock.Now()); n != 2 {
		t.Errorf("Unblock lifted %d blocks, want 2", n)
	}
	expect(t, "unblocked browser", e.Decide(req("192.0.2.1", uaBrowser, "/"), p), Allow, ReasonNone)
	expect(t, "unblocked bot", e.Decide(req("192.0.2.1", uaExample, "/"), p), Allow, ReasonNone)
	// Strikes were forgotten too: one more violation does not block again.
	d := e.Decide(req("192.0.2.1", uaExample, "/private"), p)
	expect(t, "first strike after unblock", d, Deny, ReasonDisallowed)
	if d.Strikes != 1 || !d.BlockedUntil.IsZero() {
		t.Errorf("after unblock: strikes %d, blocked until %v", d.Strikes, d.BlockedUntil)
	}
	if got := store.Blocked(clock.Now()); len(got) != 1 || got[0].Prefix != v6 {
		t.Errorf("after unblock: %+v", got)
	}
	if n := store.Unblock(netip.PrefixFrom(netip.MustParseAddr("198.51.100.1"), 32), clock.Now()); n != 0 {
		t.Errorf("unblocking an unknown IP lifted %d", n)
	}
	// One address of a blocked /64 lifts the block of the /64.
	if n := store.Unblock(netip.PrefixFrom(netip.MustParseAddr("2001:db8::1234"), 128), clock.Now()); n != 1 {
		t.Errorf("unblocking an address in the blocked /64 lifted %d", n)
	}
	expect(t, "unblocked /64", e.Decide(req("2001:db8::7", uaBrowser, "/"), p), Allow, ReasonNone)

	e.Decide(req("192.0.2.50", uaBrowser, "/trap/"), p)
	clock.Advance(2 * time.Minute)
	if got := store.Blocked(clock.Now()); len(got) != 0 {
		t.Errorf("expired blocks listed: %+v", got)
	}
}

// TestPrefixString: full-length prefixes read as addresses.
func TestPrefixString(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1/32":    "192.0.2.1",
		"192.0.2.0/24":    "192.0.2.0/24",
		"2001:db8::/64":   "2001:db8::/64",
		"2001:db8::1/128": "2001:db8::1",
	} {
		if got := PrefixString(netip.MustParsePrefix(in)); got != want {
			t.Errorf("PrefixString(%s) = %s, want %s", in, got, want)
		}
	}
	if got := PrefixString(netip.Prefix{}); got != "(no address)" {
		t.Errorf("PrefixString of the zero Prefix = %s", got)
	}
	// A client without an address (a Unix socket listener) is tracked
	// and listed all the same.
	clock := newClock()
	store := NewMemoryStore(100, 0, time.Hour)
	e, err := New(Config{Now: clock.Now, Traps: []string{"/trap/"}}, store)
	if err != nil {
		t.Fatal(err)
	}
	e.Decide(&Request{UA: classifier.Classify(uaBrowser), Target: tgt("/trap/")}, nil)
	if got := store.Blocked(clock.Now()); len(got) != 1 || got[0].IP != "(no address)" {
		t.Errorf("Blocked = %+v", got)
	}
	expect(t, "no address, blocked", e.Decide(&Request{UA: classifier.Classify(uaBrowser), Target: tgt("/")}, nil), Deny, ReasonBlockedClient)
}

// FuzzParseUnblock: any argument of `caddy robots unblock` and of the
// admin API's unblock is refused or read as a valid, masked prefix that
// contains the address given.
func FuzzParseUnblock(f *testing.F) {
	for _, s := range []string{"192.0.2.1", "2001:db8::1", "::ffff:10.0.0.1", "fe80::1%eth0", "2001:db8::/48", "10.1.2.3/8", "x", "", "1.2.3.4/33"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseUnblock(s)
		if err != nil {
			return
		}
		if !p.IsValid() || p != p.Masked() {
			t.Fatalf("ParseUnblock(%q) = %v, not a valid masked prefix", s, p)
		}
		if a, err := netip.ParseAddr(s); err == nil && !p.Contains(a.WithZone("").Unmap()) {
			t.Fatalf("ParseUnblock(%q) = %v does not contain the address", s, p)
		}
	})
}
