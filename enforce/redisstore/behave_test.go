package redisstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
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
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/evidence/behaviour"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// decodeSummary reads behave.lua's packing of a summary (see there).
func decodeSummary(t *testing.T, raw []byte) behaviour.Summary {
	t.Helper()
	if len(raw) < 39 || (len(raw)-39)%8 != 0 {
		t.Fatalf("a summary of %d bytes", len(raw))
	}
	u32 := func(i int) uint32 { return binary.BigEndian.Uint32(raw[i:]) }
	u16 := func(i int) uint16 { return binary.BigEndian.Uint16(raw[i:]) }
	tm := func(i int) int64 { return int64(u32(i))*1e9 + int64(u32(i+4)) }
	s := behaviour.Summary{Last: tm(0), Epoch: tm(8), HeldUntil: tm(16),
		Navs: [2]uint16{u16(24), u16(26)}, Self: [2]uint16{u16(28), u16(30)},
		SeenPages: raw[32], SeenDisallowed: raw[33], SeenNavs: u16(34), Gestures: raw[36] == 1}
	used, pos := u16(37), 39
	for i := range behaviour.Slots {
		if used&(1<<i) == 0 {
			continue
		}
		hd, ms := binary.BigEndian.Uint32(raw[pos:]), binary.BigEndian.Uint32(raw[pos+4:])
		pos += 8
		s.Targets[i] = uint64(hd>>1)<<34 | 1<<33 | uint64(hd&1)<<32 | uint64(ms)
	}
	if pos != len(raw) {
		t.Fatalf("a summary of %d bytes with %d read", len(raw), pos)
	}
	return s
}

// refObserve is enforce's behaviourTable.observe without its bound: the
// reference the script is compared with.
func refObserve(m map[string]*behaviour.Summary, key string, now int64, r *behaviour.Request, c *behaviour.Config) behaviour.Verdict {
	s, ok := m[key]
	if !ok {
		if !r.MayCount() {
			return behaviour.Verdict{}
		}
		s = &behaviour.Summary{}
		m[key] = s
	}
	return s.Observe(now, r, c)
}

// TestBehaveSameVerdicts: random navigations of a few clients in two
// groups, with random thresholds and gaps (within a window, across one,
// across two, past the hold), through behave.lua and through
// behaviour.Summary.Observe: every verdict and both summaries after every
// navigation are the same, bit for bit. The peek that rides with them
// answers as a peek alone does.
func TestBehaveSameVerdicts(t *testing.T) {
	s, _ := newTestStore(t, Options{NoCache: true})
	c := s.client
	ctx := context.Background()
	seeds := 24
	if testing.Short() {
		seeds = 4
	}
	prefixes := []netip.Prefix{netip.MustParsePrefix("203.0.113.1/32"), netip.MustParsePrefix("203.0.113.2/32"),
		netip.MustParsePrefix("203.0.113.3/32"), netip.MustParsePrefix("198.51.100.5/32"), netip.MustParsePrefix("2001:db8:1:2::/64")}
	prints := []uint64{0x9f3a5eed, 0xcbf29ce484222325}
	sites := []string{"none", "none", "none", "same-origin", "same-site", "cross-site", ""}
	users := []string{"?1", "?1", ""}
	fired, held, counted, groupHeld := 0, 0, 0, 0
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15+1))
		cfg := behaviour.Config{Window: time.Duration(100+r.IntN(20_000)) * time.Millisecond, Pages: 1 + r.IntN(behaviour.Slots), Hold: time.Duration(1+r.IntN(3600)) * time.Second}
		cfg.Disallowed = 1 + r.IntN(cfg.Pages)
		group, member := cfg.Group()
		targets := make([]uint32, 24)
		for i := range targets {
			targets[i] = r.Uint32()
			if i%6 == 5 {
				targets[i] = targets[i-1] ^ uint32(1+r.IntN(3)) // the same top 30 bits: one target to a summary
			}
		}
		ref := map[string]*behaviour.Summary{}
		if err := c.FlushDB(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		now := time.Unix(1_800_000_000, int64(r.IntN(1e9))).UnixNano()
		dry := seed%5 == 4
		for i := range 400 {
			w := int64(cfg.Window)
			switch g := r.IntN(20); {
			case g < 12:
				now += r.Int64N(w/8 + 1)
			case g < 16:
				now += r.Int64N(w + 1)
			case g < 18:
				now += w + r.Int64N(w+1)
			case g < 19:
				now += r.Int64N(3*w + 1)
			default:
				now += int64(cfg.Hold) + r.Int64N(int64(cfg.Hold))
			}
			p := prefixes[r.IntN(len(prefixes))]
			b := behaviour.Request{Mode: "navigate", Dest: "document", Site: sites[r.IntN(len(sites))], User: users[r.IntN(len(users))],
				Conditional: r.IntN(8) == 0, Gestures: r.IntN(2) == 0, Target: targets[r.IntN(len(targets))], Disallowed: r.IntN(3) == 0}
			bits := 48
			if p.Addr().Is4() {
				bits = 24
			}
			gnet, _ := p.Addr().Prefix(bits)
			k := enforce.AddrKey(enforce.Key{Prefix: p, Net: enforce.Network(p, 24, 48), DryRun: dry})
			n := &enforce.Navigation{Request: b, Print: prints[r.IntN(len(prints))], Prefix: p, Group: gnet, DryRun: dry,
				Client: cfg, GroupConfig: group, Member: member}
			gk, ck := s.behaviourKeys(k, n)

			cc := &cfg
			if refObserve(ref, gk, now, &b, &group).Held {
				cc = &member
				groupHeld++
			}
			want := refObserve(ref, ck, now, &b, cc)
			out, got, ok := s.Behave(k, time.Unix(0, now), enforce.Op{Peek: true}, n)
			if !ok {
				t.Fatalf("seed %d, navigation %d: Redis did not answer", seed, i)
			}
			if got != want {
				t.Fatalf("seed %d (%+v), navigation %d %+v of %s: verdict %+v, want %+v", seed, cfg, i, b, ck, got, want)
			}
			if out != (enforce.Outcome{}) {
				t.Fatalf("seed %d, navigation %d: the peek of an address without state says %+v", seed, i, out)
			}
			for _, key := range []string{gk, ck} {
				raw, err := c.Get(ctx, key).Bytes()
				w, known := ref[key]
				switch {
				case err == redis.Nil && !known:
					continue
				case err != nil:
					t.Fatalf("seed %d, navigation %d: GET %s: %v (the reference has it: %v)", seed, i, key, err, known)
				case !known:
					t.Fatalf("seed %d, navigation %d: Redis has %s, the reference has not", seed, i, key)
				}
				if g := decodeSummary(t, raw); g != *w {
					t.Fatalf("seed %d, navigation %d, %s:\n got  %+v\n want %+v", seed, i, key, g, *w)
				}
			}
			if want.Fired {
				fired++
			}
			if want.Held {
				held++
			}
			if want.Counted {
				counted++
			}
		}
	}
	t.Logf("%d seeds of 400 navigations: %d counted, %d verdicts held, %d holds made or renewed, %d under a held group's thresholds",
		seeds, counted, held, fired, groupHeld)
	if fired == 0 || held == 0 || groupHeld == 0 {
		t.Error("no hold was made: the test tests nothing")
	}
}

// TestBehaveFleet: a crawler driving Chromium (every page a typed
// address) whose navigations alternate between two instances on one
// Redis is held after as many pages as on one instance alone; on two
// instances that do not share (in-process summaries) it would read twice
// as many. Each navigation is one round trip, as the peek of a browser's
// request was before; the one that is held makes a second, its decision as
// a bot's.
func TestBehaveFleet(t *testing.T) {
	srv := redistest.Start(t)
	classifier, err := uaclass.New(uaclass.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := policy.Compile(policy.Parse([]byte("User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n")))
	// The stores' own goroutines (the fleet-memory watch) read the clock
	// too: it is atomic.
	var clock atomic.Int64
	clock.Store(time.Unix(1_800_000_000, 0).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	h := http.Header{"User-Agent": {"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"},
		"Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}, "Sec-Fetch-User": {"?1"}}
	// pagesBefore returns how many pages the crawler from ip reads before
	// it is held, its navigations going round the engines.
	pagesBefore := func(ip string, engines ...*enforce.Engine) int {
		t.Helper()
		for i := range 40 {
			e := engines[i%len(engines)]
			clock.Add(int64(300 * time.Millisecond))
			rd := enforce.Reader{Classifier: classifier, Engine: e}
			var out enforce.Reading
			f := &enforce.Facts{ClientIP: netip.MustParseAddr(ip), URI: fmt.Sprintf("/page%d", i), Scheme: "https", Origin: evidence.Secure,
				JA4: "t13d1516h2_8daaf6152771_d8a2da3f94cd", TLS: evidence.TLS{Known: true, Browser: true, Family: "chromium"}}
			if err := rd.Read(&http.Request{Method: "GET", Header: h, Host: "example.com"}, f, p, &out); err != nil {
				t.Fatal(err)
			}
			e.Decide(&out.Request, p)
			if out.Request.UA.Class == uaclass.Poser {
				return i
			}
		}
		return -1
	}
	engine := func(st enforce.Store) *enforce.Engine {
		e, err := enforce.New(enforce.Config{Now: now}, st)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	alone := pagesBefore("192.0.2.1", engine(nil))
	a, b := storeOn(t, srv, Options{Now: now}), storeOn(t, srv, Options{Now: now})
	redisAlone := pagesBefore("192.0.2.2", engine(a))
	before := a.RoundTrips() + b.RoundTrips()
	fleet := pagesBefore("192.0.2.3", engine(a), engine(b))
	trips := a.RoundTrips() + b.RoundTrips() - before
	apart := pagesBefore("192.0.2.4", engine(nil), engine(nil))
	t.Logf("pages read before held: %d on one instance, %d on one on Redis, %d alternating over two on Redis (%d round trips for %d navigations), %d over two that do not share",
		alone, redisAlone, fleet, trips, fleet+1, apart)
	if alone < 1 || redisAlone != alone || fleet != alone {
		t.Errorf("held after %d pages on two instances on Redis (%d on one on Redis), want %d as on one instance", fleet, redisAlone, alone)
	}
	if trips != int64(fleet+2) {
		t.Errorf("%d round trips for %d navigations, want one each and one for the held one's decision as a bot", trips, fleet+1)
	}
	if apart <= alone {
		t.Errorf("two instances apart held the crawler after %d pages, one after %d: the test cannot tell sharing", apart, alone)
	}
}

// TestBehaviourFloodRedis: distinct clients (one address each, 256 to a
// group) each navigating through engines on Redis under the memory
// settings docs/fleet.md gives (maxmemory 64mb here, volatile-ttl), after
// a crawler was held: Redis stays within its memory, the crawler is held
// after the flood, and the instance's heap does not grow with it. It logs
// what a summary takes in Redis. 20,000 clients by default;
// ROBOTSGUARD_FLOOD=500000 runs the figure.
func TestBehaviourFloodRedis(t *testing.T) {
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
	clock.Store(time.Unix(1_800_000_000, 0).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Add(int64(time.Microsecond))) }
	s := storeOn(t, srv, Options{Now: now})
	e, err := enforce.New(enforce.Config{Now: now}, s)
	if err != nil {
		t.Fatal(err)
	}
	classifier, err := uaclass.New(uaclass.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := policy.Compile(policy.Parse([]byte("User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n")))
	h := http.Header{"User-Agent": {"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"},
		"Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}, "Sec-Fetch-User": {"?1"}}
	const ja4 = "t13d1516h2_8daaf6152771_d8a2da3f94cd"
	nav := func(ip netip.Addr, target string) *enforce.Request {
		rd := enforce.Reader{Classifier: classifier, Engine: e}
		var out enforce.Reading
		f := &enforce.Facts{ClientIP: ip, URI: target, Scheme: "https", Origin: evidence.Secure, JA4: ja4,
			TLS: evidence.TLS{Known: true, Browser: true, Family: "chromium"}}
		if err := rd.Read(&http.Request{Method: "GET", Header: h, Host: "example.com"}, f, p, &out); err != nil {
			t.Error(err)
		}
		e.Decide(&out.Request, p)
		return &out.Request
	}
	crawler := netip.MustParseAddr("203.0.113.1")
	for i := range 8 {
		nav(crawler, fmt.Sprintf("/p%d", i))
	}
	if r := nav(crawler, "/p8"); r.UA.Class != uaclass.Poser {
		t.Fatal("the crawler is not held before the flood")
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	ctx := context.Background()
	nav(netip.MustParseAddr("198.51.100.7"), "/one")
	sizes := map[string]int64{}
	for _, key := range c.Keys(ctx, "*b{*").Val() {
		sizes[key] = c.MemoryUsage(ctx, key).Val()
		t.Logf("%s: %d bytes (MEMORY USAGE), value %d bytes", key, sizes[key], c.StrLen(ctx, key).Val())
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
				nav(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), "/x")
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	info := c.Info(ctx, "memory", "stats", "keyspace").Val()
	field := func(name string) string {
		if m := regexp.MustCompile(`(?m)^` + name + `:(\S+)`).FindStringSubmatch(info); m != nil {
			return m[1]
		}
		return "?"
	}
	used, _ := strconv.ParseInt(field("used_memory"), 10, 64)
	t.Logf("%d distinct clients' navigations in %v (%d round trips): Redis used_memory %s (maxmemory 64mb), evicted_keys %s, %s; the instance's heap %d KiB before, %d KiB after",
		n, elapsed.Round(time.Millisecond), s.RoundTrips(), field("used_memory_human"), field("evicted_keys"), field("db0"), before.HeapAlloc>>10, after.HeapAlloc>>10)
	if used > 64<<20 {
		t.Errorf("Redis uses %d bytes, above its maxmemory", used)
	}
	if after.HeapAlloc > before.HeapAlloc+16<<20 {
		t.Errorf("the instance's heap grew from %d to %d bytes", before.HeapAlloc, after.HeapAlloc)
	}
	if r := nav(crawler, "/p9"); r.UA.Class != uaclass.Poser {
		t.Error("the flood lifted the crawler's hold")
	}
}

// TestBehaveCluster: on a Redis Cluster, a navigation's summaries and its
// address's record are one script's keys (one hash slot) in every
// network, and a crawler's 8th distinct page holds it.
func TestBehaveCluster(t *testing.T) {
	_, url := redistest.StartCluster(t, 3)
	c, err := Open(url, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Client: c, Timeout: 2 * time.Second})
	t.Cleanup(func() { s.Close(); c.Close() })
	cfg := behaviour.Default
	group, member := cfg.Group()
	now := time.Unix(1_800_000_000, 0)
	for i := range 30 {
		ip := netip.AddrFrom4([4]byte{10, byte(i), 0, 1})
		p := netip.PrefixFrom(ip, 32)
		gnet, _ := ip.Prefix(24)
		k := enforce.AddrKey(enforce.Key{Prefix: p, Net: gnet})
		for j := range 8 {
			now = now.Add(100 * time.Millisecond)
			n := &enforce.Navigation{Request: behaviour.Request{Mode: "navigate", Dest: "document", Site: "none", User: "?1", Gestures: true,
				Target: behaviour.Hash(fmt.Sprintf("/p%d", j))}, Print: 0x9f3a, Prefix: p, Group: gnet, Client: cfg, GroupConfig: group, Member: member}
			_, v, ok := s.Behave(k, now, enforce.Op{Peek: true}, n)
			if !ok {
				t.Fatalf("network %d: Redis did not answer", i)
			}
			if v.Held != (j == 7) {
				t.Fatalf("network %d, page %d: %+v", i, j, v)
			}
		}
	}
}
