package enforce

import (
	"net/netip"
	"testing"
	"time"
)

// TestBlockedAndUnblock: the store lists the blocks in force, whole-IP and
// per-token, and Unblock lifts every block of one IP, with its strikes and
// offences, and no other.
func TestBlockedAndUnblock(t *testing.T) {
	clock := newClock()
	store := NewMemoryStore(1000, time.Hour)
	e, err := New(Config{Now: clock.Now, Strikes: 2, Cooldown: time.Minute, Traps: []string{"/trap/"}}, store)
	if err != nil {
		t.Fatal(err)
	}
	p := compile("User-agent: *\nDisallow: /private\n")
	e.Decide(req("192.0.2.1", uaExample, "/robots.txt"), p)
	e.Decide(req("192.0.2.1", uaExample, "/private"), p)
	e.Decide(req("192.0.2.1", uaExample, "/private"), p) // blocks examplebot at .1
	e.Decide(req("192.0.2.1", uaBrowser, "/trap/"), p)   // blocks all of .1
	e.Decide(req("2001:db8::7", uaBrowser, "/trap/"), p) // blocks all of 2001:db8::7
	e.Decide(req("192.0.2.9", uaExample, "/private"), p) // one strike: not blocked

	got := store.Blocked(clock.Now())
	want := []BlockedClient{
		{IP: netip.MustParseAddr("192.0.2.1"), Until: clock.Now().Add(time.Minute), Offenses: 1, ReadRobots: true},
		{IP: netip.MustParseAddr("192.0.2.1"), Token: "examplebot", Until: clock.Now().Add(time.Minute), Offenses: 1, ReadRobots: true},
		{IP: netip.MustParseAddr("2001:db8::7"), Until: clock.Now().Add(time.Minute), Offenses: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("Blocked = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Blocked[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}

	if n := store.Unblock(netip.MustParseAddr("192.0.2.1"), clock.Now()); n != 2 {
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
	if got := store.Blocked(clock.Now()); len(got) != 1 || got[0].IP != netip.MustParseAddr("2001:db8::7") {
		t.Errorf("after unblock: %+v", got)
	}
	if n := store.Unblock(netip.MustParseAddr("198.51.100.1"), clock.Now()); n != 0 {
		t.Errorf("unblocking an unknown IP lifted %d", n)
	}
	clock.Advance(2 * time.Minute)
	if got := store.Blocked(clock.Now()); len(got) != 0 {
		t.Errorf("expired blocks listed: %+v", got)
	}
}
