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
	if len(raw) < 56 || (len(raw)-56)%8 != 0 {
		t.Fatalf("a summary of %d bytes", len(raw))
	}
	u32 := func(i int) uint32 { return binary.BigEndian.Uint32(raw[i:]) }
	u16 := func(i int) uint16 { return binary.BigEndian.Uint16(raw[i:]) }
	tm := func(i int) int64 { return int64(u32(i))*1e9 + int64(u32(i+4)) }
	s := behaviour.Summary{Last: tm(0), Epoch: tm(8), HeldUntil: tm(16), LastSelf: tm(24), BurstLast: tm(32),
		Navs: [2]uint16{u16(40), u16(42)}, Self: [2]uint16{u16(44), u16(46)},
		SeenPages: raw[48], SeenDisallowed: raw[49], SeenNavs: u16(50), Gestures: raw[52] == 1, BurstN: raw[53]}
	used, pos := u16(54), 56
	for i := range behaviour.Slots {
		if used&(1<<i) == 0 {
			continue
		}
		hd, ms := binary.BigEndian.Uint32(raw[pos:]), binary.BigEndian.Uint32(raw[pos+4:])
		pos += 8
		s.Targets[i] = uint64(hd>>2)<<35 | uint64(hd>>1&1)<<34 | 1<<33 | uint64(hd&1)<<32 | uint64(ms)
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
// groups, with random thresholds and gaps (within behaviour.BurstGap,
// within a window, across one, across two, past the hold), then a script
// of bursts (one longer than behaviour.Slots, one at the hold's end to the
// nanosecond), through behave.lua and through
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
	fired, held, counted, groupHeld, bursting, long, burstFired := 0, 0, 0, 0, 0, 0, 0
	for seed := range uint64(seeds + 1) {
		r := rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15+1))
		cfg := behaviour.Config{Window: time.Duration(100+r.IntN(20_000)) * time.Millisecond, Pages: 1 + r.IntN(behaviour.Slots), Hold: time.Duration(1+r.IntN(3600)) * time.Second}
		cfg.Disallowed = 1 + r.IntN(cfg.Pages)
		scripted := seed == uint64(seeds)
		if scripted {
			cfg = behaviour.Config{Window: 10 * time.Second, Pages: behaviour.Slots, Disallowed: 4, Hold: 5 * time.Second}
		}
		group, member := cfg.Group()
		targets := make([]uint32, 24)
		for i := range targets {
			targets[i] = r.Uint32()
			if i%6 == 5 {
				targets[i] = targets[i-1] ^ uint32(1+r.IntN(7)) // the same top 29 bits: one target to a summary
			}
		}
		ref := map[string]*behaviour.Summary{}
		if err := c.FlushDB(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		now := time.Unix(1_800_000_000, int64(r.IntN(1e9))).UnixNano()
		dry := seed%5 == 4
		var p netip.Prefix
		var print uint64
		steps := 400
		if scripted {
			steps = len(burstScript)
		}
		var burstLast int64 // the client's Summary.BurstLast
		for i := range steps {
			w := int64(cfg.Window)
			g := r.IntN(28)
			switch {
			case scripted:
			case g < 6:
				// Bursts: within behaviour.BurstGap of the last
				// navigation, or just past it.
				now += r.Int64N(int64(2*behaviour.BurstGap) + 1)
			case g < 8:
				// A burst's spread: within behaviour.BurstStall, or just
				// past it.
				now += r.Int64N(int64(2*behaviour.BurstStall) + 1)
			case g < 16:
				now += r.Int64N(w/8 + 1)
			case g < 20:
				now += r.Int64N(w + 1)
			case g < 24:
				now += w + r.Int64N(w+1)
			case g < 27:
				now += r.Int64N(3*w + 1)
			default:
				now += int64(cfg.Hold) + r.Int64N(int64(cfg.Hold))
			}
			if i == 0 || !scripted && r.IntN(2) == 0 && (g >= 8 || r.IntN(4) == 0) { // else the same client again: in a burst, mostly
				p, print = prefixes[r.IntN(len(prefixes))], prints[r.IntN(len(prints))]
			}
			b := behaviour.Request{Mode: "navigate", Dest: "document", Site: sites[r.IntN(len(sites))], User: users[r.IntN(len(users))],
				Conditional: r.IntN(8) == 0, Gestures: r.IntN(2) == 0, Target: targets[r.IntN(len(targets))], Disallowed: r.IntN(3) == 0}
			if g < 8 && r.IntN(2) == 0 {
				b.Site, b.User, b.Conditional = "none", "?1", false // mostly pages opened at once
			}
			if scripted {
				st := burstScript[i]
				switch {
				case st.gap < 0: // a millisecond before the hold's end after the free burst
					now = burstLast + int64(cfg.Hold) - int64(time.Millisecond)
				default:
					now += int64(st.gap)
				}
				b = behaviour.Request{Mode: "navigate", Dest: "document", Site: "none", User: "?1", Gestures: true,
					Target: uint32(st.target) << 3, Disallowed: st.target%2 == 0}
			}
			bits := 48
			if p.Addr().Is4() {
				bits = 24
			}
			gnet, _ := p.Addr().Prefix(bits)
			k := enforce.AddrKey(enforce.Key{Prefix: p, Net: enforce.Network(p, 24, 48), DryRun: dry})
			n := &enforce.Navigation{Request: b, Print: print, Prefix: p, Group: gnet, DryRun: dry,
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
			if cs := ref[ck]; cs != nil {
				burstLast = cs.BurstLast
				if cs.BurstLast == now {
					bursting++ // the client's free burst grew
					if cs.BurstN >= 3 {
						long++
					}
				}
				if want.Fired && cs.BurstLast != 0 && now-cs.BurstLast < int64(cfg.Window) {
					burstFired++ // a hold made with a burst in the window
				}
			}
		}
	}
	t.Logf("%d seeds of 400 navigations: %d counted, %d verdicts held, %d holds made or renewed, %d under a held group's thresholds; "+
		"%d navigations in a client's free burst (%d its 3rd or later), %d holds made with a burst in the window",
		seeds, counted, held, fired, groupHeld, bursting, long, burstFired)
	if fired == 0 || held == 0 || groupHeld == 0 || bursting == 0 || long == 0 || burstFired == 0 {
		t.Error("no hold was made, or no burst: the test tests nothing")
	}
}

// burstScript is the scripted seed of TestBehaveSameVerdicts: one client's
// self-started navigations (a target's number, even ones disallowed), each
// gap after the one before; gap -1: a millisecond before the hold's end
// after the free burst's last navigation, so that the next starts a burst
// at the hold's end to the nanosecond.
var burstScript = func() []struct {
	gap    time.Duration
	target int
} {
	type step = struct {
		gap    time.Duration
		target int
	}
	var out []step
	for i := range 20 { // a burst longer than Slots, a redirect's hop among it
		out = append(out, step{time.Millisecond, i})
		if i == 5 || i == 15 { // the 16th: the burst is full
			out = append(out, step{time.Millisecond, i})
		}
	}
	for i := range 4 { // then one page after another
		out = append(out, step{100 * time.Millisecond, 40 + i})
	}
	out = append(out, step{2 * time.Second, 50}, step{time.Millisecond, 52}, step{time.Millisecond, 54})                  // a second burst, within the hold
	out = append(out, step{-1, 60}, step{time.Millisecond, 62}, step{time.Millisecond, 64}, step{behaviour.BurstGap, 66}) // at the hold's end
	// It goes on after pauses (behaviour.BurstStall), just within it; then
	// a pause at it ends it, and the pair after is a second burst.
	out = append(out, step{100 * time.Millisecond, 68}, step{time.Millisecond, 70}, step{40 * time.Millisecond, 72},
		step{behaviour.BurstStall - time.Millisecond, 74}, step{time.Millisecond, 76},
		step{behaviour.BurstStall, 78}, step{time.Millisecond, 80})
	// A hold later, a burst of 15 that pauses: 16 goes on, 17 does not.
	out = append(out, step{-1, 100})
	for i := range 14 {
		out = append(out, step{time.Millisecond, 101 + i})
	}
	out = append(out, step{100 * time.Millisecond, 120}, step{time.Millisecond, 122}, step{time.Millisecond, 124})
	// A hold later, 2 pages at once go on within BurstStall, and not at it;
	// a hold later, 2 pages BurstGap apart are no burst.
	out = append(out, step{-1, 130}, step{time.Millisecond, 132},
		step{behaviour.BurstStall - time.Millisecond, 136}, step{behaviour.BurstStall - time.Millisecond, 138}, step{behaviour.BurstStall, 140},
		step{time.Millisecond, 142}, step{time.Millisecond, 144})
	out = append(out, step{-1, 150}, step{behaviour.BurstGap, 152}, step{100 * time.Millisecond, 154}, step{100 * time.Millisecond, 156},
		step{100 * time.Millisecond, 158}, step{100 * time.Millisecond, 160})
	return out
}()

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
		clock.Add(int64(50 * time.Millisecond)) // one page after another, not a burst (behaviour.BurstGap)
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

// TestBehaveEarlierPacking: a summary of the packing before bursts (39
// bytes and 8 a target), left by an earlier version of the fleet, is no
// summary: the script starts a new one instead of misreading it.
func TestBehaveEarlierPacking(t *testing.T) {
	s, _ := newTestStore(t, Options{NoCache: true})
	ctx := context.Background()
	p := netip.MustParsePrefix("203.0.113.1/32")
	cfg := behaviour.Default
	group, member := cfg.Group()
	k := enforce.AddrKey(enforce.Key{Prefix: p, Net: enforce.Network(p, 24, 48)})
	n := &enforce.Navigation{Request: behaviour.Request{Mode: "navigate", Dest: "document", Site: "none", User: "?1", Gestures: true, Target: 8},
		Print: 1, Prefix: p, Group: netip.MustParsePrefix("203.0.113.0/24"), Client: cfg, GroupConfig: group, Member: member}
	gk, ck := s.behaviourKeys(k, n)
	for _, key := range []string{gk, ck} {
		if err := s.client.Set(ctx, key, make([]byte, 39+8), time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Unix(1_800_000_000, 0)
	_, v, ok := s.Behave(k, now, enforce.Op{Peek: true}, n)
	if !ok || v.Held || !v.Counted {
		t.Fatalf("verdict %+v, ok %v", v, ok)
	}
	want := behaviour.Summary{}
	want.Observe(now.UnixNano(), &n.Request, &cfg)
	raw, err := s.client.Get(ctx, ck).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeSummary(t, raw); got != want {
		t.Errorf("summary\n got  %+v\n want %+v", got, want)
	}
}

// TestBehaveBurstRemembered: a client's summary lives a hold and a minute
// after its free burst (so that the burst is free once a hold across the
// fleet), and two windows and a minute without one.
func TestBehaveBurstRemembered(t *testing.T) {
	s, _ := newTestStore(t, Options{NoCache: true})
	ctx := context.Background()
	cfg := behaviour.Default
	group, member := cfg.Group()
	now := time.Unix(1_800_000_000, 0)
	for i, gap := range []time.Duration{time.Millisecond, 50 * time.Millisecond} {
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{203, 0, 113, byte(1 + i)}), 32)
		k := enforce.AddrKey(enforce.Key{Prefix: p, Net: enforce.Network(p, 24, 48)})
		var ck string
		for j := range 2 {
			n := &enforce.Navigation{Request: behaviour.Request{Mode: "navigate", Dest: "document", Site: "none", User: "?1", Gestures: true,
				Target: uint32(8 * (j + 1))}, Print: uint64(i), Prefix: p, Group: netip.MustParsePrefix("203.0.113.0/24"),
				Client: cfg, GroupConfig: group, Member: member}
			_, ck = s.behaviourKeys(k, n)
			if _, _, ok := s.Behave(k, now.Add(time.Duration(j)*gap), enforce.Op{Peek: true}, n); !ok {
				t.Fatal("Redis did not answer")
			}
		}
		ttl := s.client.PTTL(ctx, ck).Val()
		want := 2*cfg.Window + time.Minute
		if gap < behaviour.BurstGap {
			want = cfg.Hold + time.Minute
		}
		if ttl < want-time.Second || ttl > want {
			t.Errorf("two pages %s apart: the summary lives %s, want %s", gap, ttl, want)
		}
	}
}
