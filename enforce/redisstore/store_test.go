package redisstore

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/enforce/redisstore/redistest"
)

// newTestStore starts a redis-server and returns a store on it with the
// given options (Client and Now filled in).
func newTestStore(t testing.TB, o Options) (*Store, *redistest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	return storeOn(t, srv, o), srv
}

// storeOn returns a store on a running server.
func storeOn(t testing.TB, srv *redistest.Server, o Options) *Store {
	t.Helper()
	c, err := Open(srv.URL, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	o.Client = c
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Second // a loaded machine
	}
	s := New(o)
	t.Cleanup(func() { s.Close(); c.Close() })
	return s
}

// opGen draws the Ops the engine makes, with random settings, on a few
// address prefixes with up to 6 tokens each (more than a record holds, so
// that tokens are replaced), in both modes.
type opGen struct {
	r        *rand.Rand
	prefixes []netip.Prefix
	tokens   []string
	crawlers []enforce.Crawler
	esc      enforce.Op
}

func newOpGen(seed uint64) *opGen {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := &opGen{r: r,
		prefixes: []netip.Prefix{
			netip.MustParsePrefix("203.0.113.7/32"), netip.MustParsePrefix("198.51.100.0/24"),
			netip.MustParsePrefix("2001:db8:1::/64"), {},
			// Two more of the networks above: one crawler's addresses.
			netip.MustParsePrefix("203.0.113.9/32"), netip.MustParsePrefix("2001:db8:1:5::/64"),
		},
		tokens: []string{"gptbot", "ccbot", "", "example-bot", "rogue|bot,x", "tok\x00en"},
		crawlers: []enforce.Crawler{{},
			{Kind: enforce.CrawlerToken, ID: 0x9f3a, Name: "examplebot"}, {Kind: enforce.CrawlerToken, ID: 0x77, Name: "ccbot"},
			{Kind: enforce.CrawlerPrint, ID: 0x5eed, Name: "t13d1516h2_8daaf6152771_e5627efa2ab1"}, {Kind: enforce.CrawlerPrint, ID: 0xcbf29ce484222325},
			{Kind: enforce.CrawlerVerified, ID: 0x1f2e, Name: "gptbot"},
		},
	}
	cd := time.Duration(1+r.IntN(60)) * time.Second
	g.esc = enforce.Op{Strikes: 1 + r.IntN(4), AddrStrikes: 2 + r.IntN(6), Window: time.Duration(1+r.IntN(600)) * time.Second,
		Cooldown: cd, MaxCooldown: cd * time.Duration(1+r.IntN(8)), Grace: r.IntN(3)}
	return g
}

// next returns a key and an Op.
func (g *opGen) next() (enforce.Key, enforce.Op) {
	r := g.r
	k := enforce.Key{Prefix: g.prefixes[r.IntN(len(g.prefixes))], Token: g.tokens[r.IntN(len(g.tokens))], DryRun: r.IntN(8) == 0}
	k.Net = enforce.Network(k.Prefix, 24, 48)
	k.Crawler = g.crawlers[r.IntN(len(g.crawlers))]
	crawl := r.IntN(3) != 0
	addr := enforce.AddrKey(k)
	esc := g.esc
	esc.Blockable = r.IntN(6) != 0
	esc.CrawlerStrikes = 2 + r.IntN(6)
	// The reason a block carries, from the key: no draw of its own, so the
	// sequences stay the ones the test has always run.
	esc.Why = enforce.BlockReason((len(k.Token) + k.Prefix.Bits()) % 8)
	switch n := r.IntN(100); {
	case n < 4:
		return addr, enforce.Op{MarkRobots: true}
	case n < 6:
		esc.Block, esc.CheckCrawler = true, crawl
		return addr, esc
	case n < 14:
		return addr, enforce.Op{Peek: true, CheckCrawler: crawl}
	case n < 18:
		esc.Strike, esc.CheckCrawler = true, crawl
		return addr, esc
	case n < 26:
		esc.Strike, esc.CheckAddr, esc.CheckCrawler = true, true, crawl
		return k, esc
	case n < 32:
		return k, enforce.Op{Peek: true, CheckAddr: r.IntN(4) != 0, CheckCrawler: crawl}
	default:
		iv := time.Duration(1+r.IntN(2000)) * time.Millisecond
		if r.IntN(5) == 0 {
			iv = time.Duration(1 + r.Int64N(int64(3*time.Second))) // any nanosecond count
		}
		burst := 1 + r.IntN(4)
		esc.Interval, esc.Burst, esc.AddrInterval, esc.AddrBurst = iv, burst, iv/enforce.AddressShare, burst*enforce.AddressShare
		esc.CheckAddr = r.IntN(10) != 0
		if crawl {
			share := 1 + r.IntN(3)
			esc.CheckCrawler, esc.CrawlerInterval, esc.CrawlerBurst = true, iv/time.Duration(share), burst*share
		}
		if r.IntN(10) == 0 {
			esc.Grace = 1 << 30 // a verified search crawler's
		}
		return k, esc
	}
}

// step advances the clock: mostly by little, sometimes past a window, a
// cooldown or the TTL.
func (g *opGen) step() time.Duration {
	switch n := g.r.IntN(100); {
	case n < 30:
		return 0
	case n < 80:
		return time.Duration(g.r.Int64N(int64(time.Second)))
	case n < 95:
		return time.Duration(g.r.Int64N(int64(2 * time.Minute)))
	default:
		return time.Duration(g.r.Int64N(int64(3 * time.Hour)))
	}
}

// TestSameOutcomes is the differential test: the same random Op sequences
// through enforce.MemoryStore and the Redis script give the same Outcome,
// every field, every time; unblocks lift the same blocks, and the fleet-wide
// list of blocks is the in-process store's.
func TestSameOutcomes(t *testing.T) {
	srv := redistest.Start(t)
	t.Logf("server: %s", srv.Version())
	seeds, ops := 24, 1500
	if testing.Short() {
		seeds, ops = 4, 500
	}
	differential(t, seeds, ops, func(o Options) *Store { return storeOn(t, srv, o) })
}

// differential runs the differential test on stores that open makes.
func differential(t *testing.T, seeds, ops int, open func(Options) *Store) {
	total := map[string]int{}
	for seed := range seeds {
		const ttl = 30 * time.Minute
		mem := enforce.NewMemoryStore(1<<20, 1<<20, ttl)
		red := open(Options{Zone: fmt.Sprintf("diff%d", seed), TTL: ttl, NoCache: true})
		g := newOpGen(uint64(seed))
		now := time.Unix(1_800_000_000, 123_456_789)
		for i := range ops {
			now = now.Add(g.step())
			if g.r.IntN(300) == 0 {
				p := g.prefixes[g.r.IntN(len(g.prefixes))]
				want := mem.Unblock(p, now)
				got, err := red.Unblock(p, now)
				if err != nil || got != want {
					t.Fatalf("seed %d op %d: Unblock(%v) = %d, %v; MemoryStore lifted %d", seed, i, p, got, err, want)
				}
				total["unblock"]++
				continue
			}
			k, op := g.next()
			want := mem.Apply(k, now, op)
			got := red.Apply(k, now, op)
			if got != want {
				t.Fatalf("seed %d op %d: %+v at %d, Op %+v:\n redis  %+v\n memory %+v", seed, i, k, now.UnixNano(), op, got, want)
			}
			if got.CrawlerNewlyBlocked {
				total["crawler's new block"]++
			}
			if got.ByCrawler {
				total["by the crawler's bucket"]++
			}
			if got.CrawlerBlocked && !got.CrawlerNewlyBlocked {
				total["crawler blocked"]++
			}
			switch {
			case got.NewlyBlocked || got.AddrNewlyBlocked:
				total["new block"]++
			case got.Blocked:
				total["blocked"]++
			case got.Throttled:
				total["throttled"]++
			case got.Slip:
				total["slip"]++
			case got.Took:
				total["took"]++
			default:
				total["other"]++
			}
			if i%100 == 99 {
				wantB := mem.Blocked(now)
				gotB, err := red.Blocked(now)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(gotB) != fmt.Sprint(wantB) {
					t.Fatalf("seed %d op %d: Blocked:\n redis  %v\n memory %v", seed, i, gotB, wantB)
				}
				if len(wantB) > 0 {
					total["listings with blocks"]++
				}
			}
		}
	}
	t.Logf("outcomes compared: %v", total)
	for _, kind := range []string{"new block", "blocked", "throttled", "slip", "took", "unblock", "listings with blocks",
		"crawler's new block", "by the crawler's bucket", "crawler blocked"} {
		if total[kind] == 0 {
			t.Errorf("no %s in the sequences: the test does not cover it", kind)
		}
	}
}

// TestCluster: the store on a real three-node Redis Cluster: the
// differential test, the fleet-wide list and unblock (a SCAN on every
// primary), and blocks published across the cluster to another instance's
// cache. The clients' records are spread over the nodes.
func TestCluster(t *testing.T) {
	nodes, url := redistest.StartCluster(t, 3)
	open := func(o Options) *Store {
		c, err := Open(url, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		o.Client = c
		o.Timeout = 2 * time.Second
		s := New(o)
		t.Cleanup(func() { s.Close(); c.Close() })
		return s
	}
	differential(t, 4, 600, open)
	spread := 0
	for _, n := range nodes {
		if reply, _ := n.Do("DBSIZE"); reply != ":0" {
			spread++
		}
	}
	if spread < 2 {
		t.Errorf("the records are on %d of 3 nodes", spread)
	}
	a, b := open(Options{Zone: "cluster"}), open(Options{Zone: "cluster"})
	now := time.Now()
	k := enforce.Key{Prefix: netip.MustParsePrefix("203.0.113.50/32"), Token: "x"}
	waitFor(t, "both stores subscribed", func() bool {
		n := 0
		for _, node := range nodes {
			n += subscribers(t, node)
		}
		return n >= 2
	})
	a.Apply(enforce.AddrKey(k), now, enforce.Op{Block: true, Cooldown: time.Hour, MaxCooldown: time.Hour})
	waitFor(t, "b's cache learns the block across the cluster", func() bool { return b.cache.len() == 1 })
	list, err := b.Blocked(now)
	if err != nil || len(list) != 1 || list[0].IP != "203.0.113.50" {
		t.Fatalf("Blocked on the cluster: %v, %v", list, err)
	}
	if n, err := b.Unblock(netip.MustParsePrefix("203.0.113.0/24"), now); err != nil || n != 1 {
		t.Fatalf("Unblock on the cluster: %d, %v", n, err)
	}
	waitFor(t, "a's cache drops the block", func() bool { return a.cache.len() == 0 })
}

// TestCacheSameOutcomes: with the cache of blocked clients on, a single
// instance's Outcomes are still the in-process store's, and the cache
// answers a blocked client's requests without round trips.
func TestCacheSameOutcomes(t *testing.T) {
	srv := redistest.Start(t)
	seeds, ops := 16, 1500
	if testing.Short() {
		seeds, ops = 3, 500
	}
	hits := 0
	for seed := range seeds {
		const ttl = 30 * time.Minute
		mem := enforce.NewMemoryStore(1<<20, 1<<20, ttl)
		var clock atomic.Int64 // the store's watcher reads it too
		red := storeOn(t, srv, Options{Zone: fmt.Sprintf("cache%d", seed), TTL: ttl, Now: func() time.Time { return time.Unix(0, clock.Load()) }})
		g := newOpGen(uint64(seed) + 1000)
		now := time.Unix(1_800_000_000, 0)
		for i := range ops {
			now = now.Add(g.step() / 4) // more requests within a block
			clock.Store(now.UnixNano())
			k, op := g.next()
			before := red.RoundTrips()
			want := mem.Apply(k, now, op)
			got := red.Apply(k, now, op)
			// A cached answer does not write the state's LastSeen back to
			// Redis (the one thing Apply changes on a blocked state): it
			// only decides when an idle record is forgotten.
			got.State.LastSeen, want.State.LastSeen = 0, 0
			if got != want {
				t.Fatalf("seed %d op %d: %+v, Op %+v:\n redis+cache %+v\n memory      %+v", seed, i, k, op, got, want)
			}
			if red.RoundTrips() == before {
				hits++
			}
		}
	}
	t.Logf("answered from the cache: %d of %d", hits, seeds*ops)
	if hits == 0 {
		t.Error("the cache answered nothing")
	}
}

// TestBlockedFloodNoRoundTrip: once a client is blocked, its further
// requests cost no round trip (after one for a token the record does not
// hold yet), on this instance and on another one that learnt the block from
// the channel; an unblock on one instance clears both caches.
func TestBlockedFloodNoRoundTrip(t *testing.T) {
	a, srv := newTestStore(t, Options{})
	b := storeOn(t, srv, Options{})
	waitSubscribed(t, srv, 2)
	now := time.Now()
	k := enforce.Key{Prefix: netip.MustParsePrefix("203.0.113.9/32"), Token: "roguebot"}
	trap := enforce.Op{Block: true, Cooldown: time.Hour, MaxCooldown: time.Hour}
	if out := a.Apply(enforce.AddrKey(k), now, trap); !out.NewlyBlocked {
		t.Fatalf("trap: %+v", out)
	}
	rate := enforce.Op{Interval: time.Second, Burst: 3, AddrInterval: time.Second / 4, AddrBurst: 12, CheckAddr: true, Blockable: true, Strikes: 5, AddrStrikes: 10, Window: time.Minute, Cooldown: time.Hour, MaxCooldown: time.Hour}
	// b learns the block from the channel: its first request is already
	// answered from the cache.
	waitFor(t, "b's cache learns the block", func() bool { return b.cache.len() == 1 })
	for name, s := range map[string]*Store{"a": a, "b": b} {
		before := s.RoundTrips()
		for i := 0; i < 1000; i++ {
			if out := s.Apply(k, now.Add(time.Duration(i)*time.Millisecond), rate); !out.Blocked || !out.AddrBlocked {
				t.Fatalf("%s: request %d not blocked: %+v", name, i, out)
			}
		}
		// The first request with a token the record does not hold is one
		// round trip (Redis records the token, as MemoryStore does); the
		// rest are answered from the cache.
		if n := s.RoundTrips() - before; n > 1 {
			t.Errorf("%s: a blocked client's 1000 requests cost %d round trips, want at most 1", name, n)
		}
	}
	// A Redis that lost the record (flushed) still blocks from the caches;
	// an unblock on b clears a's cache too.
	if n, err := b.Unblock(netip.MustParsePrefix("203.0.113.9/32"), now); err != nil || n != 1 {
		t.Fatalf("Unblock = %d, %v", n, err)
	}
	waitFor(t, "a's cache drops the block", func() bool { return a.cache.len() == 0 })
	if out := a.Apply(k, now.Add(2*time.Second), rate); out.Blocked || !out.Took {
		t.Errorf("after the unblock: %+v", out)
	}
}

// waitSubscribed waits until n clients listen on the events channel.
func waitSubscribed(t *testing.T, srv *redistest.Server, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d subscribers", n), func() bool { return subscribers(t, srv) >= n })
}

// subscribers returns the clients subscribed to the events channel on one
// server.
func subscribers(t *testing.T, srv *redistest.Server) int {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	m, err := c.PubSubNumSub(t.Context(), DefaultKeyPrefix+"events").Result()
	if err != nil {
		return 0
	}
	return int(m[DefaultKeyPrefix+"events"])
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
