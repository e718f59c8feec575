package redisstore

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/enforce/redisstore/redistest"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// benchPolicy is a served robots.txt: the trap is in it, as the handler adds
// it (a trap the served file does not disallow blocks nobody).
var benchPolicy = policy.Compile(policy.Parse([]byte("User-agent: *\nCrawl-delay: 0.5\nDisallow: /private/\nDisallow: /trap/\n")))

// benchEngines returns an engine on the in-process store and one on a
// Redis store, with clocks that advance step per call.
func benchEngines(b *testing.B, step time.Duration) (mem, red *enforce.Engine) {
	var ns atomic.Int64
	ns.Store(time.Unix(1_800_000_000, 0).UnixNano())
	clock := func() time.Time { return time.Unix(0, ns.Add(int64(step))) }
	cfg := enforce.Config{Now: clock, Traps: []string{"/trap/"}}
	mem, err := enforce.New(cfg, enforce.NewMemoryStore(0, 0, 0))
	if err != nil {
		b.Fatal(err)
	}
	s, _ := newTestStore(b, Options{Now: clock})
	red, err = enforce.New(cfg, s)
	if err != nil {
		b.Fatal(err)
	}
	return mem, red
}

func benchRequest(ip, path string) *enforce.Request {
	c, _ := uaclass.New(uaclass.Options{})
	t, _ := policy.ParseTarget(path)
	return &enforce.Request{IP: netip.MustParseAddr(ip), UA: c.Classify("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://bot.example/)"), Target: t}
}

// BenchmarkDecideStore compares one decision on the in-process store and
// on Redis (a real redis-server on loopback: one round trip), for a hot
// client and for a blocked one (answered from the cache). Run with -count
// to interleave the variants.
func BenchmarkDecideStore(b *testing.B) {
	for _, kind := range []string{"hot", "blocked"} {
		step := time.Second // a hot client keeps to its rate
		if kind == "blocked" {
			step = time.Microsecond // and a blocked one stays blocked
		}
		mem, red := benchEngines(b, step)
		for _, v := range []struct {
			name string
			e    *enforce.Engine
		}{{"memory", mem}, {"redis", red}} {
			b.Run(kind+"/"+v.name, func(b *testing.B) {
				r := benchRequest("192.0.2.1", "/articles/x")
				if kind == "blocked" {
					trap := benchRequest("192.0.2.1", "/trap/x")
					v.e.Decide(trap, benchPolicy)
				}
				v.e.Decide(r, benchPolicy)
				b.ReportAllocs()
				for b.Loop() {
					d := v.e.Decide(r, benchPolicy)
					if kind == "blocked" && d.Reason != enforce.ReasonBlockedClient {
						b.Fatal(d.Reason)
					}
				}
			})
		}
	}
}

// TestMemoryPerClient measures the bytes Redis holds per tracked client
// (MEMORY USAGE of the records, and used_memory over 2,000 clients): one
// token, then four.
func TestMemoryPerClient(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	ctx := context.Background()
	for _, tokens := range []int{1, 4} {
		if err := c.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		s := storeOn(t, srv, Options{NoCache: true})
		before := usedMemory(t, c)
		const n = 2000
		now := time.Now()
		op := enforce.Op{Interval: time.Second, Burst: 3, AddrInterval: time.Second / 4, AddrBurst: 12, CheckAddr: true,
			Blockable: true, Strikes: 5, AddrStrikes: 10, Window: 10 * time.Minute, Cooldown: 15 * time.Minute, MaxCooldown: 24 * time.Hour}
		for i := range n {
			p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 32)
			for j := range tokens {
				// Each token is a crawler of its /24 too (issue 38): its
				// record is shared by the network's 256 addresses.
				tok := fmt.Sprintf("bot%d", j)
				op.CheckCrawler, op.CrawlerInterval, op.CrawlerBurst, op.CrawlerStrikes = true, time.Second/3, 9, 10
				s.Apply(enforce.Key{Prefix: p, Net: enforce.Network(p, 24, 48), Token: tok, Crawler: enforce.Crawler{Kind: enforce.CrawlerToken, ID: uint64(j + 1), Name: tok}}, now, op)
			}
		}
		perClient := float64(usedMemory(t, c)-before) / n
		usage, err := c.MemoryUsage(ctx, "robots_guard:default:{10.0.0.0/24}10.0.0.7/32").Result()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d token(s): MEMORY USAGE of one record %d bytes; used_memory %.0f bytes per client", tokens, usage, perClient)
		if usage > 1024 || perClient > 2048 {
			t.Errorf("a client takes %d bytes (MEMORY USAGE), %.0f (used_memory)", usage, perClient)
		}
	}
}

func usedMemory(t *testing.T, c *redis.Client) int64 {
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	t.Fatal("no used_memory in INFO")
	return 0
}
