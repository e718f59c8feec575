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
	esc := Op{Strikes: 2, AddrStrikes: 3, Window: time.Minute, Cooldown: time.Minute, MaxCooldown: time.Hour, Blockable: true}
	var s State
	if out := Apply(&s, nil, nil, 10*sec, Op{Peek: true}); out.Blocked || s.LastSeen != 0 {
		t.Fatalf("peek changed the state: %+v", s)
	}
	take := esc
	take.Interval, take.Burst = 2*time.Second, 1
	if out := Apply(&s, nil, nil, 10*sec, take); !out.Took || out.State.Strikes != 0 {
		t.Fatalf("first take: %+v", out)
	}
	// An early request opens a Retry-After window: a 429, no strike.
	out := Apply(&s, nil, nil, 11*sec, take)
	if out.Took || !out.Throttled || out.RetryAfter != time.Second || out.State.Strikes != 0 || s.ThrottleUntil != 12*sec {
		t.Fatalf("early take: %+v", out)
	}
	// In the window's first half: the same burst, no strike.
	if out = Apply(&s, nil, nil, 11*sec+sec/4, take); !out.Throttled || out.State.Strikes != 0 || out.RetryAfter != 3*time.Second/4 {
		t.Fatalf("in the first half: %+v", out)
	}
	// In its second half: the client ignores the 429, one strike, once.
	for i := 0; i < 3; i++ {
		if out = Apply(&s, nil, nil, 11*sec+sec*3/4, take); !out.Throttled || out.State.Strikes != 1 {
			t.Fatalf("in the second half, request %d: %+v", i, out)
		}
	}
	// After the window, the token is there.
	if out = Apply(&s, nil, nil, 12*sec, take); !out.Took {
		t.Fatalf("after the window: %+v", out)
	}
	// A second window (2s: the bucket's next token) with a late request:
	// the second strike blocks.
	Apply(&s, nil, nil, 12*sec+1, take)
	late := 13*sec + sec/2
	out = Apply(&s, nil, nil, late, take)
	if !out.NewlyBlocked || out.State.BlockedUntil != late+int64(time.Minute) {
		t.Fatalf("second strike should block for 1m: %+v", out)
	}
	if out := Apply(&s, nil, nil, 20*sec, Op{MarkRobots: true}); !out.Blocked || s.RobotsAt != 20*sec {
		t.Fatalf("robots.txt mark while blocked: %+v", out)
	}
	if out := Apply(&s, nil, nil, 30*sec, take); !out.Blocked || out.Took {
		t.Fatalf("op applied while blocked: %+v", out)
	}
	if s.Remember != late+int64(time.Minute)+int64(time.Hour) {
		t.Errorf("Remember = %d", s.Remember)
	}
	blk := esc
	blk.Block = true
	out = Apply(&s, nil, nil, 100*sec, blk)
	if out.State.BlockedUntil != 100*sec+int64(2*time.Minute) || out.State.Offenses != 2 {
		t.Errorf("second block: %+v", out.State)
	}

	// Grace: the first violation is a slip, allowed and logged.
	var g State
	gr := take
	gr.Grace = 1
	Apply(&g, nil, nil, 10*sec, gr)
	if out := Apply(&g, nil, nil, 10*sec, gr); !out.Slip || out.Throttled || out.Took {
		t.Fatalf("slip: %+v", out)
	}
	if out := Apply(&g, nil, nil, 10*sec, gr); !out.Throttled {
		t.Fatalf("after the slip: %+v", out)
	}

	// Strikes count on the address too; a blocked address refuses.
	var c1, c2, a State
	strike := esc
	strike.Strike, strike.CheckAddr = true, true
	Apply(&c1, &a, nil, 10*sec, strike)
	Apply(&c2, &a, nil, 10*sec, strike)
	if out := Apply(&State{}, &a, nil, 10*sec, strike); !out.AddrNewlyBlocked || !out.AddrBlocked || a.BlockedUntil != 10*sec+int64(time.Minute) {
		t.Fatalf("third strike on the address: %+v", out)
	}
	if out := Apply(&State{}, &a, nil, 11*sec, Op{Peek: true, CheckAddr: true}); !out.Blocked || !out.AddrBlocked {
		t.Fatalf("peek at a blocked address: %+v", out)
	}
	// Strikes that cannot block (verified search) do not count on the
	// address.
	var c3, b State
	gentle := strike
	gentle.Blockable = false
	for i := 0; i < 5; i++ {
		Apply(&c3, &b, nil, 10*sec, gentle)
	}
	if b.Strikes != 0 || b.BlockedUntil != 0 || c3.BlockedUntil != 0 {
		t.Errorf("gentle strikes: client %+v, address %+v", c3, b)
	}
}

// TestMemoryStoreBounded: the store never tracks more ordinary clients than
// their bound, keeps its blocks apart, and forgets idle clients.
func TestMemoryStoreBounded(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := NewMemoryStore(640, 0, time.Minute)
	blockOp := Op{Block: true, Cooldown: time.Hour, MaxCooldown: time.Hour}
	blocked := Key{Prefix: netip.MustParsePrefix("203.0.113.1/32"), Token: "rogue"}
	s.Apply(blocked, now, blockOp)
	for i := 0; i < 100_000; i++ {
		s.Apply(Key{Prefix: prefix6(uint64(i)), Token: "x"}, now, Op{CheckAddr: true})
	}
	clients, blocks := s.Bounds()
	if clients != 640 || blocks != 640 {
		t.Errorf("Bounds = %d, %d", clients, blocks)
	}
	if n := s.Len(); n > 641 {
		t.Errorf("store tracks %d states, bound 640 clients and 1 block", n)
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
	if out := s.Apply(Key{Prefix: prefix6(99_999), Token: "x"}, later, Op{Peek: true}); out.Found {
		t.Error("an expired client was found")
	}
}

// TestFlood: a million distinct clients (IPv6 /64s) through the engine stay
// within the configured bound; the test reports the bytes per state.
func TestFlood(t *testing.T) {
	n := 1_000_000
	if raceEnabled || testing.Short() {
		n = 100_000
	}
	const limit = 50_000
	store := NewMemoryStore(limit, 0, time.Hour)
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
		t.Fatalf("store tracks %d addresses, cap %d", tracked, limit)
	}
	perState := float64(after.HeapAlloc-before.HeapAlloc) / float64(tracked)
	t.Logf("%d distinct clients: %d addresses tracked (cap %d), %.0f bytes per address with its token, heap %d MiB",
		n, tracked, limit, perState, after.HeapAlloc>>20)
	if perState > 1024 {
		t.Errorf("%.0f bytes per address", perState)
	}
}

// addr6 returns the i-th address of a run of distinct IPv6 /64s.
func addr6(i uint64) netip.Addr {
	var b [16]byte
	b[0], b[1] = 0x20, 0x01
	for k := 0; k < 6; k++ {
		b[7-k] = byte(i >> (8 * k))
	}
	b[15] = 1
	return netip.AddrFrom16(b)
}

// prefix6 returns the /64 of addr6(i).
func prefix6(i uint64) netip.Prefix {
	return netip.PrefixFrom(addr6(i), 64).Masked()
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

// TestFloodTokens: addresses that each rotate many tokens stay within the
// bound of addresses, with at most 4 token states each; the test reports
// the bytes per address in this worst case.
func TestFloodTokens(t *testing.T) {
	n := 100_000
	if raceEnabled || testing.Short() {
		n = 20_000
	}
	const limit, tokens = 10_000, 10
	store := NewMemoryStore(limit, 0, time.Hour)
	now := time.Unix(1_800_000_000, 0)
	names := make([]string, tokens)
	for i := range names {
		names[i] = fmt.Sprintf("rot%dcrawler", i)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	op := Op{CheckAddr: true, Interval: time.Second, Burst: 3, AddrInterval: time.Second / 4, AddrBurst: 12}
	for i := 0; i < n; i++ {
		for _, name := range names {
			store.Apply(Key{Prefix: prefix6(uint64(i)), Token: name}, now, op)
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if l := store.Len(); l > limit {
		t.Fatalf("%d addresses tracked, cap %d", l, limit)
	}
	per := float64(after.HeapAlloc-before.HeapAlloc) / float64(store.Len())
	t.Logf("%d addresses with %d tokens each: %d tracked (cap %d), %.0f bytes per address with its 4 token states", n, tokens, store.Len(), limit, per)
	if per > 2048 {
		t.Errorf("%.0f bytes per address", per)
	}
}
