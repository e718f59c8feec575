package enforce

import (
	"testing"
	"time"
)

// TestAddressStrikes (issue 39, point 5): a decision says its address's
// strike count beside its client's: three clients of one address, each
// under its own strikes, add up, and the address is blocked whole at
// address_strikes; the decision that blocks it says both counts.
func TestAddressStrikes(t *testing.T) {
	clock := newClock()
	e, err := New(Config{Now: clock.Now, Strikes: 3, AddressStrikes: 6, Cooldown: time.Minute}, NewMemoryStore(1000, 0, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	p := compile("User-agent: *\nDisallow: /private\n")
	var last Decision
	n := 0
	for _, ua := range []string{"OneBot/1.0", "TwoBot/1.0", "ThreeBot/1.0"} {
		for range 2 {
			n++
			last = e.Decide(req("192.0.2.7", ua, "/private"), p)
			if last.Strikes > 2 || last.AddressStrikes != n {
				t.Fatalf("%s, address strike %d: strikes %d, address strikes %d", ua, n, last.Strikes, last.AddressStrikes)
			}
		}
	}
	if last.BlockedUntil.IsZero() || last.Strikes != 2 || last.AddressStrikes != 6 {
		t.Errorf("the sixth strike on the address: blocked until %v, strikes %d, address strikes %d", last.BlockedUntil, last.Strikes, last.AddressStrikes)
	}
	if d := e.Decide(req("192.0.2.7", "FourBot/1.0", "/"), p); d.Reason != ReasonBlockedClient {
		t.Errorf("another client of the blocked address: %v", d.Reason)
	}
}
