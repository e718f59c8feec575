package caddymodule

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/uaclass"
)

const uaFirefoxState = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"

// TestZoneDryRunThenEnforce: a dry-run handler's "blocks" are recorded
// apart; when an enforcing handler takes over the zone (a config reload),
// nobody is refused for them, and the blocked list marks them.
func TestZoneDryRunThenEnforce(t *testing.T) {
	const zone = "dry-switch"
	dry := &Handler{Mode: "dry_run", Zone: zone, Verify: &VerifyConfig{Disabled: true}, Traps: []string{"/trap/"}}
	provisionHandler(t, dry)
	if code := serve(dry, "192.0.2.10", uaFirefoxState, "/trap/"); code != 200 {
		t.Fatalf("dry-run trap: %d", code)
	}
	if code := serve(dry, "192.0.2.10", uaFirefoxState, "/"); code != 200 {
		t.Fatalf("dry-run trapped client: %d", code)
	}
	zones, _ := admin.Blocked(zone, time.Now())
	list := zones[zone]
	if len(list) != 1 || !list[0].DryRun || list[0].IP != "192.0.2.10" {
		t.Fatalf("blocked after dry run: %+v", list)
	}
	// cli's TestBlockedText shows such a list as "caddy robots blocked" does.

	// The reload: the enforcing handler is provisioned while the dry-run
	// one still holds the zone.
	enf := &Handler{Zone: zone, Verify: &VerifyConfig{Disabled: true}, Traps: []string{"/trap/"}}
	provisionHandler(t, enf)
	if code := serve(enf, "192.0.2.10", uaFirefoxState, "/"); code != 200 {
		t.Errorf("after the switch to enforce, the dry-run trapped client got %d", code)
	}
	if code := serve(enf, "192.0.2.11", uaFirefoxState, "/trap/"); code != 403 {
		t.Errorf("enforced trap: %d", code)
	}
	if code := serve(enf, "192.0.2.11", uaFirefoxState, "/"); code != 403 {
		t.Errorf("enforced trapped client: %d", code)
	}
}

// TestZonePrefixAndDroppedBlocks: clients are tracked by IPv6 /64 (or the
// configured prefix), unblock takes an address or a range, and blocks the
// zone has no room for are counted in
// caddy_robots_guard_blocks_dropped_total.
func TestZonePrefixAndDroppedBlocks(t *testing.T) {
	const zone = "prefix-flood"
	h := &Handler{Zone: zone, Verify: &VerifyConfig{Disabled: true}, Traps: []string{"/trap/"}, MaxBlocks: 64}
	provisionHandler(t, h)
	if code := serve(h, "2001:db8:1::1", uaFirefoxState, "/trap/"); code != 403 {
		t.Fatalf("trap: %d", code)
	}
	if code := serve(h, "2001:db8:1::2", uaFirefoxState, "/"); code != 403 {
		t.Errorf("same /64: %d", code)
	}
	if code := serve(h, "2001:db8:2::1", uaFirefoxState, "/"); code != 200 {
		t.Errorf("another /64: %d", code)
	}
	if list := zoneList(zone); len(list) != 1 || list[0].IP != "2001:db8:1::/64" {
		t.Errorf("blocked: %+v", list)
	}
	p, err := enforce.ParseUnblock("2001:db8:1::99")
	if err != nil {
		t.Fatal(err)
	}
	if lifted, _, _ := admin.Unblock(p, zone, time.Now()); lifted != 1 {
		t.Errorf("unblock of an address in the /64 lifted %d", lifted)
	}
	// A flood into the trap from 2,000 /64s: 64 blocks fit (one per shard,
	// less where shards fill unevenly); the rest are dropped and counted.
	for i := 0; i < 2000; i++ {
		serve(h, fmt.Sprintf("2001:db8:%x:%x::1", 0x100+i/0x10000, i%0x10000), uaFirefoxState, "/trap/")
	}
	blocked := len(zoneList(zone))
	dropped := metricValue(h.metrics, "blocks_dropped_total", "zone", zone)
	if blocked > 64 || int(dropped)+blocked != 2000 {
		t.Errorf("%d blocked (bound 64), %v dropped, want 2000 in all", blocked, dropped)
	}
	for _, bad := range []string{"not-an-ip", "2001:db8::/129"} {
		if _, err := enforce.ParseUnblock(bad); err == nil {
			t.Errorf("enforce.ParseUnblock(%q) accepted", bad)
		}
	}
	if p, _ := enforce.ParseUnblock("::ffff:192.0.2.1"); p != netip.MustParsePrefix("192.0.2.1/32") {
		t.Errorf("mapped address: %v", p)
	}
}

// TestEngineConfigOptions: the per-address options reach the engine (their
// bad values are rows of TestConfigErrors).
func TestEngineConfigOptions(t *testing.T) {
	h := &Handler{Strikes: 4, AddressStrikes: 9, IPv4Prefix: 24, IPv6Prefix: 48, MaxBlocks: 7}
	set, err := h.checkConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg := set.engine; cfg.Strikes != 4 || cfg.AddressStrikes != 9 || cfg.IPv4Prefix != 24 || cfg.IPv6Prefix != 48 {
		t.Errorf("engine config = %+v", cfg)
	}
}

// TestBrowserLikeLimits: an unrecognised client that looks like a browser
// (the classifier's BrowserLike) gets a browser's allowance, a page load of
// dozens of requests, not the Crawl-delay; a bare "Mozilla/5.0" does not.
func TestBrowserLikeLimits(t *testing.T) {
	robots := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nCrawl-delay: 10\nDisallow: /private/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &Handler{Robots: robots, Zone: "browser-like", Verify: &VerifyConfig{Disabled: true}}
	provisionHandler(t, h)
	const novel = "Mozilla/5.0 Gecko/20100101 Foo/1.0"
	if r := h.classifier.Classify(novel); r.Class != uaclass.Unknown || !r.BrowserLike {
		t.Fatalf("%q classifies as %v, BrowserLike %v: the test needs an unrecognised, browser-like client", novel, r.Class, r.BrowserLike)
	}
	for i := 0; i < 50; i++ {
		if code := serve(h, "192.0.2.20", novel, fmt.Sprintf("/assets/%d.css", i)); code != 200 {
			t.Fatalf("browser-like page load, request %d: %d", i, code)
		}
	}
	if code := serve(h, "192.0.2.20", novel, "/private/x"); code != 403 {
		t.Errorf("browser-like on a disallowed path: %d", code)
	}
	codes := map[int]int{}
	for i := 0; i < 10; i++ {
		codes[serve(h, "192.0.2.21", "Mozilla/5.0", fmt.Sprintf("/assets/%d.css", i))]++
	}
	if codes[200] != 4 || codes[429] != 6 {
		t.Errorf("a bare Mozilla/5.0, 10 requests: %v, want the burst of 3 and a slip served, then 429s", codes)
	}
}

// zoneList lists the blocks of one zone.
func zoneList(zone string) []enforce.BlockedClient {
	zones, _ := admin.Blocked(zone, time.Now())
	return zones[zone]
}
