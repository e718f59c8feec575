package redisstore

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/enforce/redisstore/redistest"
)

// memKey is a client of the fleet-memory tests.
func memKey(ip string) enforce.Key {
	p := netip.MustParsePrefix(ip + "/32")
	return enforce.Key{Prefix: p, Net: enforce.Network(p, 24, 48), Token: "roguebot",
		Crawler: enforce.Crawler{Kind: enforce.CrawlerToken, ID: 0xbad, Name: "roguebot"}}
}

var (
	memTrap = enforce.Op{Block: true, CheckCrawler: true, Cooldown: time.Hour, MaxCooldown: 24 * time.Hour, Why: enforce.WhyTrap}
	memPeek = enforce.Op{Peek: true, CheckAddr: true, CheckCrawler: true}
)

// lostReport is what Hooks.Lost reported.
type lostReport struct {
	mu                  sync.Mutex
	calls, held, missed int
}

func (l *lostReport) hook(r Report) {
	if !r.Warn || !strings.Contains(r.Msg, "lost its state") {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	l.held, l.missed = r.Counts[0].N, r.Counts[1].N
}

func (l *lostReport) get() (int, int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls, l.held, l.missed
}

// TestQueueReplay (issue 38, 2a): what an instance decides while Redis is
// down (a trap hit, strikes) is queued and written to Redis when it comes
// back, before the instance uses it again: another instance refuses the
// trapped client at once, and the strikes count there.
func TestQueueReplay(t *testing.T) {
	a, srv := newTestStore(t, Options{Timeout: 300 * time.Millisecond, Retry: 20 * time.Millisecond, Watch: 50 * time.Millisecond})
	b := storeOn(t, srv, Options{Watch: 50 * time.Millisecond})
	var replayed, dropped int
	var mu sync.Mutex
	a.SetHooks(Hooks{Memory: func(r Report) { mu.Lock(); replayed, dropped = r.Counts[0].N, r.Counts[1].N; mu.Unlock() }})
	now := time.Now()
	trapped, struck := memKey("203.0.113.5"), memKey("198.51.100.5")
	srv.Kill()
	if out := a.Apply(enforce.AddrKey(trapped), now, memTrap); !out.NewlyBlocked || a.Up() {
		t.Fatalf("the trap without Redis: %+v, up %v", out, a.Up())
	}
	strike := enforce.Op{Strike: true, Blockable: true, CheckAddr: true, CheckCrawler: true, Strikes: 3, AddrStrikes: 6, CrawlerStrikes: 6,
		Window: time.Hour, Cooldown: time.Hour, MaxCooldown: time.Hour, Why: enforce.WhyDisallowed}
	for i := range 2 {
		a.Apply(struck, now.Add(time.Duration(i)*time.Millisecond), strike)
	}
	if n := a.Queued(); n != 3 {
		t.Fatalf("%d decisions queued, want the trap and two strikes", n)
	}
	srv.Restart()
	waitFor(t, "A writes its decisions and uses Redis again", a.Up)
	if a.Queued() != 0 {
		t.Errorf("%d decisions still queued", a.Queued())
	}
	mu.Lock()
	if replayed != 3 || dropped != 0 {
		t.Errorf("Replayed reported %d written, %d dropped", replayed, dropped)
	}
	mu.Unlock()
	later := now.Add(time.Second)
	if out := b.Apply(trapped, later, memPeek); !out.Blocked || !out.AddrBlocked {
		t.Errorf("B after Redis came back: the client trapped on A is not refused: %+v", out)
	}
	// The third strike, on B, blocks: the two from the outage count.
	if out := b.Apply(struck, later, strike); !out.NewlyBlocked || out.State.Strikes != 3 {
		t.Errorf("the strike after the outage: %+v", out)
	}
}

// TestQueueBound: the queue keeps at most Options.Queue decisions, and a
// block takes a strike's place when it is full.
func TestQueueBound(t *testing.T) {
	s := &Store{}
	s.mem.max = 3
	strike := enforce.Op{Strike: true}
	for i := range 5 {
		s.enqueue(memKey(fmt.Sprintf("192.0.2.%d", i)), int64(i), strike, enforce.Outcome{})
	}
	s.enqueue(memKey("192.0.2.9"), 9, memTrap, enforce.Outcome{})
	s.enqueue(memKey("192.0.2.10"), 10, enforce.Op{Peek: true}, enforce.Outcome{})
	s.enqueue(memKey("192.0.2.11"), 11, enforce.Op{Interval: time.Second}, enforce.Outcome{Took: true})
	s.enqueue(memKey("192.0.2.12"), 12, enforce.Op{Interval: time.Second}, enforce.Outcome{Struck: true})
	if len(s.mem.queue) != 3 || s.mem.dropped != 4 {
		t.Fatalf("queue %d, dropped %d", len(s.mem.queue), s.mem.dropped)
	}
	blocks := 0
	for _, q := range s.mem.queue {
		if q.op.Block {
			blocks++
		}
		if q.op.Interval != 0 {
			t.Errorf("a rate Op queued with its bucket: %+v", q.op)
		}
	}
	if blocks != 1 {
		t.Errorf("the block was not kept: %+v", s.mem.queue)
	}
}

// TestLostState (issue 38, 2b): Redis restarted empty (no persistence):
// both instances find it within a second or so, write back every block
// they hold (one learnt from the other instance, one decided without
// Redis) and report it once; every client blocked before is
// refused again, from Redis.
func TestLostState(t *testing.T) {
	watch := 100 * time.Millisecond
	a, srv := newTestStore(t, Options{Timeout: 300 * time.Millisecond, Retry: 20 * time.Millisecond, Watch: watch})
	b := storeOn(t, srv, Options{Timeout: 300 * time.Millisecond, Retry: 20 * time.Millisecond, Watch: watch})
	var la, lb lostReport
	a.SetHooks(Hooks{Memory: la.hook})
	b.SetHooks(Hooks{Memory: lb.hook})
	waitSubscribed(t, srv, 2)
	now := time.Now()
	one, two := memKey("203.0.113.1"), memKey("198.51.100.1")
	a.Apply(enforce.AddrKey(one), now, memTrap)
	waitFor(t, "B learns A's block", func() bool { return b.cache.len() >= 1 })
	// Both have read the marker.
	waitFor(t, "the marker", func() bool { return a.epochRead() && b.epochRead() })
	srv.Kill()
	b.Apply(enforce.AddrKey(two), now, memTrap) // B alone, without Redis
	srv.Restart()
	waitFor(t, "both write back", func() bool {
		ca, _, _ := la.get()
		cb, _, _ := lb.get()
		return ca == 1 && cb == 1
	})
	ca, heldA, missA := la.get()
	cb, heldB, missB := lb.get()
	t.Logf("A held %d blocks, %d missing; B held %d, %d missing", heldA, missA, heldB, missB)
	if heldA < 1 || heldB < 2 || missA+missB < 1 {
		t.Errorf("written back: A %d (%d missing), B %d (%d missing)", heldA, missA, heldB, missB)
	}
	time.Sleep(3 * watch)
	if c, _, _ := la.get(); c != ca {
		t.Errorf("A reported the loss %d times", c)
	}
	if c, _, _ := lb.get(); c != cb {
		t.Errorf("B reported the loss %d times", c)
	}
	// From Redis itself (a third store, no cache): every block is back.
	c := storeOn(t, srv, Options{NoCache: true})
	later := now.Add(time.Minute)
	for _, k := range []enforce.Key{one, two} {
		if out := c.Apply(k, later, memPeek); !out.Blocked {
			t.Errorf("%v is not blocked in Redis after the write-back: %+v", k.Prefix, out)
		}
	}
	list, err := c.Blocked(later)
	if err != nil || len(list) != 2 {
		t.Errorf("the fleet's list after the write-back: %v %v", list, err)
	}
}

// epochRead reports whether the store has read the marker.
func (s *Store) epochRead() bool {
	s.mem.mu.Lock()
	defer s.mem.mu.Unlock()
	return s.mem.epoch != ""
}

// TestEvictedBlock: a reply shows that Redis lost one record a block of
// which this instance holds (evicted, deleted): the instance writes it
// back at once, though the marker is there.
func TestEvictedBlock(t *testing.T) {
	s, srv := newTestStore(t, Options{Watch: time.Hour})
	now := time.Now()
	k := memKey("203.0.113.50")
	s.Apply(enforce.AddrKey(k), now, memTrap)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	if err := c.Del(context.Background(), s.base+addrRef(k).String()).Err(); err != nil {
		t.Fatal(err)
	}
	// Past the cache's re-check: the next request asks Redis, which has
	// nothing; the instance writes the block back.
	later := now.Add(revalidate + time.Second)
	s.Apply(k, later, memPeek)
	waitFor(t, "the block is written back", func() bool {
		return c.Exists(context.Background(), s.base+addrRef(k).String()).Val() == 1
	})
	if out := s.Apply(k, later.Add(time.Second), memPeek); !out.Blocked {
		t.Errorf("after the write-back: %+v", out)
	}
}

// TestMigrate: a block stored under an ID of before issue 38
// ("{203.0.113.7/32}") is moved to its new ID when a store first reaches
// Redis, and listed there.
func TestMigrate(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	ctx := context.Background()
	now := time.Now()
	until := now.Add(time.Hour).UnixNano()
	st := enforce.State{BlockedUntil: until, Remember: until + int64(time.Hour), Offenses: 1, Why: enforce.WhyTrap}
	old := "robots_guard:default:{203.0.113.7/32}"
	c.HSet(ctx, old, "s", fmt.Sprint(now.UnixNano()), "v", "3", "a", encodeState(st), "n", "0")
	c.PExpire(ctx, old, 2*time.Hour)
	c.ZAdd(ctx, "robots_guard:default:blocks", redis.Z{Score: float64(until / 1e6), Member: "{203.0.113.7/32}"})
	var moved int
	var mu sync.Mutex
	s := storeOn(t, srv, Options{Watch: 50 * time.Millisecond})
	s.SetHooks(Hooks{Memory: func(r Report) { mu.Lock(); moved = r.Counts[0].N; mu.Unlock() }})
	waitFor(t, "the block is moved", func() bool { return c.Exists(ctx, old).Val() == 0 })
	k := memKey("203.0.113.7")
	if out := s.Apply(k, now, memPeek); !out.Blocked || !out.AddrBlocked {
		t.Errorf("the moved block: %+v", out)
	}
	list, err := s.Blocked(now)
	if err != nil || len(list) != 1 || list[0].IP != "203.0.113.7" || list[0].Reason != enforce.WhyTrap {
		t.Errorf("the list: %v, %v", list, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if moved != 1 {
		t.Errorf("Moved reported %d", moved)
	}
}

// TestClusterLostState: on a three-node cluster, one primary loses its
// data (FLUSHALL there, as a failover to an empty replica would): the
// marker of its slots is gone, the store finds it within its watch and
// writes back the blocks it holds there.
func TestClusterLostState(t *testing.T) {
	nodes, url := redistest.StartCluster(t, 3)
	c, err := Open(url, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Client: c, Timeout: 2 * time.Second, Watch: 100 * time.Millisecond})
	t.Cleanup(func() { s.Close(); c.Close() })
	var lost lostReport
	s.SetHooks(Hooks{Memory: lost.hook})
	now := time.Now()
	var keys []enforce.Key
	for i := range 30 {
		k := memKey(fmt.Sprintf("10.%d.0.1", i))
		keys = append(keys, k)
		if out := s.Apply(enforce.AddrKey(k), now, memTrap); !out.NewlyBlocked {
			t.Fatalf("trap %d: %+v", i, out)
		}
	}
	waitFor(t, "the markers", s.epochRead)
	var flushed *redistest.Server
	for _, n := range nodes {
		if reply, _ := n.Do("DBSIZE"); reply != ":0" && flushed == nil {
			flushed = n
		}
	}
	if reply, err := flushed.Do("FLUSHALL"); err != nil || reply != "+OK" {
		t.Fatalf("FLUSHALL: %q %v", reply, err)
	}
	waitFor(t, "the store finds the lost state", func() bool { n, _, _ := lost.get(); return n == 1 })
	_, held, restored := lost.get()
	t.Logf("one primary flushed: %d blocks held, %d written back", held, restored)
	if held != 30 || restored == 0 {
		t.Errorf("held %d, restored %d", held, restored)
	}
	check := New(Options{Client: c, NoCache: true})
	defer check.Close()
	for _, k := range keys {
		if out := check.Apply(k, now.Add(time.Minute), memPeek); !out.Blocked {
			t.Errorf("%v is not blocked after the write-back", k.Prefix)
		}
	}
}
