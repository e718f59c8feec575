package enforce

import (
	"net/netip"
	"testing"
	"time"
)

// TestNAT64 (issue 29, item 11): an address in the NAT64 well-known prefix
// 64:ff9b::/96 is an IPv4 client behind a translator: it is tracked by the
// IPv4 address it embeds, with the IPv4 prefix length, not as one /64 for
// every IPv4 client of the translator.
func TestNAT64(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Traps: []string{"/trap/"}, AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}}, clock)
	p := compile("User-agent: *\nDisallow: /trap/\n")
	expect(t, "trap", e.Decide(req("64:ff9b::c000:201", uaBrowser, "/trap/"), p), Deny, ReasonTrap)
	expect(t, "the same IPv4 client", e.Decide(req("64:ff9b::c000:201", uaBrowser, "/"), p), Deny, ReasonBlockedClient)
	expect(t, "the same client, direct", e.Decide(req("192.0.2.1", uaBrowser, "/"), p), Deny, ReasonBlockedClient)
	expect(t, "another IPv4 client of the translator", e.Decide(req("64:ff9b::c000:202", uaBrowser, "/"), p), Allow, ReasonNone)
	expect(t, "an allowlisted IPv4 client", e.Decide(req("64:ff9b::cb00:7101", uaExample, "/trap/"), p), Allow, ReasonAllowlisted)
	for ip, want := range map[string]string{
		"64:ff9b::c000:201":   "192.0.2.1/32",
		"64:ff9b::192.0.2.9":  "192.0.2.9/32",
		"::ffff:192.0.2.1":    "192.0.2.1/32",
		"64:ff9b:1::c000:201": "64:ff9b:1::/64", // local-use prefix: no fixed mapping
		"2001:db8::1":         "2001:db8::/64",
	} {
		if got := e.ClientPrefix(netip.MustParseAddr(ip)).String(); got != want {
			t.Errorf("ClientPrefix(%s) = %s, want %s", ip, got, want)
		}
	}
	e24 := newEngine(t, Config{IPv4Prefix: 24}, clock)
	if got := e24.ClientPrefix(netip.MustParseAddr("64:ff9b::c000:2ff")).String(); got != "192.0.2.0/24" {
		t.Errorf("with ipv4_prefix 24: %s", got)
	}
	_ = time.Second
}
