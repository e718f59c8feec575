package redisstore

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/enforce/redisstore/redistest"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// TestCrawlerFloodRedis (issue 38): a flood of distinct addresses, each
// with a token of 1,000 (so every /24 holds 256 crawler keys), through an
// engine on Redis under the memory settings docs/fleet.md gives
// (maxmemory 64mb here, volatile-ttl), after 100 clients were trapped:
// Redis stays within its memory, the 100 blocks hold, and the instance's
// heap does not grow with the flood. 20,000 requests by default;
// ROBOTSGUARD_FLOOD=500000 runs the figure (a minute or so).
func TestCrawlerFloodRedis(t *testing.T) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("ROBOTSGUARD_FLOOD")); err == nil && v > 0 {
		n = v
	}
	if testing.Short() {
		n = 2_000
	}
	srv := redistest.Start(t)
	for _, kv := range [][2]string{{"maxmemory", "64mb"}, {"maxmemory-policy", "volatile-ttl"}} {
		if reply, err := srv.Do("CONFIG", "SET", kv[0], kv[1]); err != nil || reply != "+OK" {
			t.Fatalf("CONFIG SET %s: %q %v", kv[0], reply, err)
		}
	}
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Add(int64(time.Microsecond))) }
	s := storeOn(t, srv, Options{Now: now})
	e, err := enforce.New(enforce.Config{Now: now, Traps: []string{"/trap/"}}, s)
	if err != nil {
		t.Fatal(err)
	}
	p := policy.Compile(policy.Parse([]byte("User-agent: *\nCrawl-delay: 1\nDisallow: /trap/\n")))
	trap, _ := policy.ParseTarget("/trap/x")
	page, _ := policy.ParseTarget("/page")
	for i := range 100 {
		r := &enforce.Request{IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}), UA: uaclass.Result{Class: uaclass.OtherBot, Tokens: []string{"trappedbot"}}, Target: trap}
		if d := e.Decide(r, p); d.Reason != enforce.ReasonTrap {
			t.Fatalf("trap %d: %v", i, d.Reason)
		}
	}
	tokens := make([]uaclass.Result, 1000)
	for i := range tokens {
		tokens[i] = uaclass.Result{Class: uaclass.OtherBot, Tokens: []string{fmt.Sprintf("flood%dbot", i)}}
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				r := &enforce.Request{IP: netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), UA: tokens[i%1000], Target: page}
				e.Decide(r, p)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	info := c.Info(context.Background(), "memory", "stats", "keyspace").Val()
	field := func(name string) string {
		if m := regexp.MustCompile(`(?m)^` + name + `:(\S+)`).FindStringSubmatch(info); m != nil {
			return m[1]
		}
		return "?"
	}
	used, _ := strconv.ParseInt(field("used_memory"), 10, 64)
	t.Logf("%d distinct addresses and crawler keys in %v: Redis used_memory %s (maxmemory 64mb), evicted_keys %s, %s; the instance's heap %d KiB before, %d KiB after",
		n, elapsed.Round(time.Millisecond), field("used_memory_human"), field("evicted_keys"), field("db0"), before.HeapAlloc>>10, after.HeapAlloc>>10)
	if used > 64<<20 {
		t.Errorf("Redis uses %d bytes, above its maxmemory", used)
	}
	if after.HeapAlloc > before.HeapAlloc+16<<20 {
		t.Errorf("the instance's heap grew from %d to %d bytes", before.HeapAlloc, after.HeapAlloc)
	}
	held := 0
	for i := range 100 {
		k := enforce.Key{Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}), 32), Token: "trappedbot"}
		if out := s.Apply(k, now().Add(time.Minute), enforce.Op{Peek: true, CheckAddr: true}); out.Blocked {
			held++
		}
	}
	if held != 100 {
		t.Errorf("the flood lifted %d of 100 blocks", 100-held)
	}
}
