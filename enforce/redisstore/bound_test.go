package redisstore

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
)

// TestMaxBlocks: the zone's blocks are bounded fleet-wide, as MaxBlocks
// says, by refusing new ones, never by lifting old ones: with MaxBlocks 3,
// two stores of one zone block 3 addresses; the next new blocks, on either
// store, are dropped (Outcome.BlockDropped, no block stored, nothing
// announced) while the 3 hold; a blocked address blocked again is no new
// entry and keeps its block; once an operator unblocks one, a new block is
// admitted again (the count is taken again at most once a second). The
// index of blocks has a TTL.
func TestMaxBlocks(t *testing.T) {
	a, srv := newTestStore(t, Options{Zone: "bound", MaxBlocks: 3, NoCache: true})
	b := storeOn(t, srv, Options{Zone: "bound", MaxBlocks: 3, NoCache: true})
	now := time.Now()
	trap := enforce.Op{Block: true, Cooldown: time.Hour, MaxCooldown: time.Hour}
	key := func(i int) enforce.Key {
		return enforce.AddrKey(enforce.Key{Prefix: netip.MustParsePrefix(fmt.Sprintf("203.0.113.%d/32", i))})
	}
	stores := []*Store{a, b}
	for i := 1; i <= 3; i++ {
		if out := stores[i%2].Apply(key(i), now, trap); !out.NewlyBlocked || out.BlockDropped {
			t.Fatalf("block %d: %+v", i, out)
		}
	}
	// b learns the count at its own next block: its first new one past
	// the bound may be listed (the overshoot of one per instance), no more.
	dropped := 0
	for i := 4; i <= 10; i++ {
		out := stores[i%2].Apply(key(i), now.Add(time.Duration(i)*time.Millisecond), trap)
		if out.BlockDropped {
			dropped++
			if out.NewlyBlocked || out.State.BlockedUntil != 0 {
				t.Errorf("dropped block %d still stored: %+v", i, out)
			}
		}
	}
	list, err := a.Blocked(now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("7 new blocks past the bound of 3: %d dropped, %d listed", dropped, len(list))
	if len(list) > 4 || dropped < 6 {
		t.Errorf("%d blocks listed, %d dropped; want at most 3 + 1 (one store's overshoot), at least 6 dropped", len(list), dropped)
	}
	for i := 1; i <= 3; i++ {
		if out := b.Apply(key(i), now.Add(time.Second), enforce.Op{Peek: true}); !out.Blocked {
			t.Errorf("early block %d lifted: %+v", i, out)
		}
		if out := a.Apply(key(i), now.Add(time.Second), trap); out.BlockDropped || !out.Blocked && !out.NewlyBlocked {
			t.Errorf("a blocked address trapped again: %+v", out)
		}
	}
	if ttl, err := a.client.PTTL(t.Context(), a.index).Result(); err != nil || ttl <= 0 {
		t.Errorf("the index of blocks has no TTL: %v %v", ttl, err)
	}
	// Unblock makes room; past a second, the next block is admitted.
	if _, err := a.Unblock(netip.MustParsePrefix("203.0.113.0/24"), now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	later := now.Add(3 * time.Second)
	a.Apply(key(20), later, trap) // counts again
	if out := a.Apply(key(21), later.Add(time.Millisecond), trap); !out.NewlyBlocked || out.BlockDropped {
		t.Errorf("a new block after the unblock: %+v", out)
	}
}
