package enforce

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// TestStateApply pins the state transitions that every store shares.
func TestStateApply(t *testing.T) {
	const sec = int64(time.Second)
	esc := Op{Strikes: 2, Window: time.Minute, Cooldown: time.Minute, MaxCooldown: time.Hour, Blockable: true}
	var s State
	if out := s.Apply(10*sec, Op{Peek: true}); out.Blocked || s.LastSeen != 0 {
		t.Fatalf("peek changed the state: %+v", s)
	}
	take := esc
	take.Interval, take.Burst, take.StrikeOnEmpty = 2*time.Second, 1, true
	if out := s.Apply(10*sec, take); !out.Took || out.State.Strikes != 0 {
		t.Fatalf("first take: %+v", out)
	}
	out := s.Apply(11*sec, take)
	if out.Took || out.Wait != time.Second || out.State.Strikes != 1 {
		t.Fatalf("early take: %+v", out)
	}
	out = s.Apply(11*sec, take)
	if !out.NewlyBlocked || out.State.BlockedUntil != 71*sec {
		t.Fatalf("second strike should block for 1m: %+v", out)
	}
	if out := s.Apply(20*sec, Op{MarkRobots: true}); !out.Blocked || s.RobotsAt != 20*sec {
		t.Fatalf("robots.txt mark while blocked: %+v", out)
	}
	if out := s.Apply(30*sec, take); !out.Blocked || out.Took {
		t.Fatalf("op applied while blocked: %+v", out)
	}
	if s.Remember != 71*sec+int64(time.Hour) {
		t.Errorf("Remember = %d", s.Remember)
	}
	blk := esc
	blk.Block = true
	out = s.Apply(100*sec, blk)
	if out.State.BlockedUntil != 100*sec+int64(2*time.Minute) || out.State.Offenses != 2 {
		t.Errorf("second block: %+v", out.State)
	}
}

// TestMemoryStoreBounded: the store never tracks more than its cap, prefers
// evicting clients that are not blocked, and forgets idle ones.
func TestMemoryStoreBounded(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := NewMemoryStore(640, time.Minute)
	blockOp := Op{Block: true, Cooldown: time.Hour, MaxCooldown: time.Hour}
	blocked := Key{IP: netip.MustParseAddr("203.0.113.1"), Token: "rogue"}
	s.Apply(blocked, now, blockOp)
	for i := 0; i < 100_000; i++ {
		s.Apply(Key{IP: addr6(uint64(i)), Token: "x"}, now, Op{})
	}
	if n := s.Len(); n > 640 {
		t.Errorf("store tracks %d clients, cap 640", n)
	}
	if out := s.Apply(blocked, now, Op{Peek: true}); !out.Found || !out.Blocked {
		t.Error("a flood of new clients evicted a blocked one")
	}
	// Idle clients are forgotten after the TTL; blocked ones are kept.
	later := now.Add(2 * time.Minute)
	removed, blockedNow := s.Sweep(later)
	if removed == 0 || s.Len() != 1 || blockedNow != 1 {
		t.Errorf("Sweep removed %d and counted %d blocked, %d left, want all but the one blocked client", removed, blockedNow, s.Len())
	}
	if out := s.Apply(Key{IP: addr6(99_999), Token: "x"}, later, Op{Peek: true}); out.Found {
		t.Error("an expired client was found")
	}
}

// TestFlood: a million distinct clients (IPv6) through the engine stay
// within the configured cap; the test reports the bytes per tracked client.
func TestFlood(t *testing.T) {
	n := 1_000_000
	if raceEnabled || testing.Short() {
		n = 100_000
	}
	const limit = 50_000
	store := NewMemoryStore(limit, time.Hour)
	e, err := New(Config{}, store)
	if err != nil {
		t.Fatal(err)
	}
	p := compile("User-agent: *\nCrawl-delay: 1\nDisallow: /private\n")
	ua := classifier.Classify(uaExample)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	r := Request{UA: ua, Target: policy.Target{Normal: "/page"}}
	for i := 0; i < n; i++ {
		r.IP = addr6(uint64(i))
		if i%7 == 0 {
			r.Target = policy.Target{Normal: "/private"}
		} else {
			r.Target = policy.Target{Normal: "/page"}
		}
		e.Decide(&r, p)
		if i%100_000 == 0 && store.Len() > limit {
			t.Fatalf("after %d clients the store tracks %d, cap %d", i, store.Len(), limit)
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	tracked := store.Len()
	if tracked > limit {
		t.Fatalf("store tracks %d clients, cap %d", tracked, limit)
	}
	perClient := float64(after.HeapAlloc-before.HeapAlloc) / float64(tracked)
	t.Logf("%d distinct clients: %d tracked (cap %d), %.0f bytes per tracked client, heap %d MiB",
		n, tracked, limit, perClient, after.HeapAlloc>>20)
	if perClient > 1024 {
		t.Errorf("%.0f bytes per tracked client", perClient)
	}
}

func addr6(i uint64) netip.Addr {
	var b [16]byte
	b[0], b[1] = 0x20, 0x01
	for k := 0; k < 8; k++ {
		b[15-k] = byte(i >> (8 * k))
	}
	return netip.AddrFrom16(b)
}

// TestConcurrentDecide runs many goroutines over many clients under the race
// detector, and checks that no client gets more than its share.
func TestConcurrentDecide(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Burst: 2, Grace: -1, Strikes: 1000, Traps: []string{"/trap"}}, clock)
	p := compile("User-agent: *\nCrawl-delay: 10\nDisallow: /private\n")
	uas := []uaclass.Result{classifier.Classify(uaExample), classifier.Classify(uaGPTBot), classifier.Classify(uaBrowser)}
	const clients, workers, perWorker = 50, 8, 2000
	var mu sync.Mutex
	allowed := map[string]int{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			local := map[string]int{}
			for i := 0; i < perWorker; i++ {
				c := rng.IntN(clients)
				r := Request{IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(c)}), UA: uas[c%2], Target: policy.Target{Normal: "/page"}}
				if i%50 == 0 {
					r.Target = policy.Target{Normal: "/private"}
				}
				d := e.Decide(&r, p)
				if d.Action == Allow && r.Target.Normal == "/page" {
					local[fmt.Sprint(c)]++
				}
				if i%500 == 0 {
					e.Decide(&Request{IP: netip.AddrFrom4([4]byte{198, 51, 100, byte(w)}), UA: uas[2], Target: policy.Target{Normal: "/"}}, p)
				}
			}
			mu.Lock()
			for k, v := range local {
				allowed[k] += v
			}
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	// The clock did not move: each client may have had at most its burst.
	for c, n := range allowed {
		if n > 2 {
			t.Errorf("client %s was allowed %d requests with a burst of 2", c, n)
		}
	}
}
