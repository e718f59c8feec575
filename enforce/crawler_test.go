package enforce

import (
	"fmt"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// crawlPolicy is the robots.txt of issue 38's crawlers: Crawl-delay 1.
var crawlPolicy = compile("User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n")

// ja4Python is a library's JA4 (a poser's); ja4Other another stack's.
const (
	ja4Python = "t13d1812h1_85036bcba153_375ca2c5e164"
	ja4Other  = "t13d1516h2_8daaf6152771_e5627efa2ab1"
)

// crawl sends requests from the clients in turn, one every gap, for d,
// and returns how many of each client's were served (in order).
func crawl(e *Engine, clock *fakeClock, clients []*Request, gap, d time.Duration) []int {
	served := make([]int, len(clients))
	for i, end := 0, clock.Now().Add(d); clock.Now().Before(end); i++ {
		c := i % len(clients)
		if e.Decide(clients[c], crawlPolicy).Action == Allow {
			served[c]++
		}
		clock.Advance(gap)
	}
	return served
}

func sum(n []int) int {
	t := 0
	for _, v := range n {
		t += v
	}
	return t
}

// clientsAt returns a request of ua (with its verdict and JA4) from each
// address.
func clientsAt(addrs []string, ua uaclass.Result, verdict uaclass.Verdict, ja4 string) []*Request {
	var out []*Request
	for _, a := range addrs {
		out = append(out, &Request{IP: netip.MustParseAddr(a), UA: ua, Verdict: verdict, JA4: ja4, Method: "GET", Target: tgt("/page")})
	}
	return out
}

// spread returns n addresses: format with i from first on.
func spread(format string, first, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf(format, first+i))
	}
	return out
}

// TestCrawlerAcrossAddresses (issue 38): a crawler that ignores
// "Crawl-delay: 1", sending 100 requests a second for 3 s from one
// address, then spread over 50 addresses of an IPv4 /24, over 50 /64s of
// an IPv6 /48, or (verified) over 50 networks, gets at most 3 times (the
// crawler share) what one address gets; a declared token is one crawler
// within its network only, a poser is its fingerprint there.
func TestCrawlerAcrossAddresses(t *testing.T) {
	example := classifier.Classify(uaExample)
	gptbot := classifier.Classify(uaGPTBot)
	poser := uaclass.Result{Class: uaclass.Poser}
	const gap, span = 10 * time.Millisecond, 3 * time.Second
	run := func(clients []*Request) int {
		clock := newClock()
		e := newEngine(t, Config{}, clock)
		return sum(crawl(e, clock, clients, gap, span))
	}
	one := run(clientsAt([]string{"192.0.2.1"}, example, uaclass.NotClaimed, ""))
	t.Logf("one address: %d served in %v", one, span)
	if one < 5 || one > 8 {
		t.Fatalf("one address got %d, want about 6 (burst 3, 1 a second, a slip)", one)
	}
	for _, c := range []struct {
		name    string
		clients []*Request
		max     int // in units of one address's allowance
	}{
		{"token, 50 addresses of a /24", clientsAt(spread("192.0.2.%d", 1, 50), example, uaclass.NotClaimed, ""), 3},
		{"token, 50 /64s of a /48", clientsAt(spread("2001:db8:1:%x::1", 1, 50), example, uaclass.NotClaimed, ""), 3},
		{"verified, 50 networks", clientsAt(spread("20.%d.0.1", 1, 50), gptbot, uaclass.Verified, ""), 3},
		{"poser, one fingerprint, 50 addresses of a /24", clientsAt(spread("192.0.2.%d", 1, 50), poser, uaclass.NotClaimed, ja4Python), 3},
		{"undeclared, plain HTTP, 50 addresses of a /24", clientsAt(spread("192.0.2.%d", 1, 50), uaclass.Result{Class: uaclass.Unknown}, uaclass.NotClaimed, ""), 3},
	} {
		got := run(c.clients)
		t.Logf("%s: %d served (%.1f times one address)", c.name, got, float64(got)/float64(one))
		if got > c.max*one {
			t.Errorf("%s: %d served, more than %d times one address's %d", c.name, got, c.max, one)
		}
		if got < 2*one {
			t.Errorf("%s: %d served: the crawler share is 3, not 1", c.name, got)
		}
	}
	// A claim is one crawler within a network only: 50 networks are 50
	// crawlers (anyone can send a token, so its key holds where the sender
	// is).
	if got := run(clientsAt(spread("20.%d.0.1", 1, 50), gptbot, uaclass.NotClaimed, "")); got < 20*one {
		t.Errorf("an unverified claim over 50 networks: %d served, want each network's own", got)
	}
}

// TestCrawlerKeysApart (issue 38): whom a crawler's key paces: a second
// crawler in another network, the same token sent from another network,
// another fingerprint in the same network and browsers in the same /24 are
// not touched by a crawler that has used its share; nor is a verified
// crawler by claims of its token.
func TestCrawlerKeysApart(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	example := classifier.Classify(uaExample)
	gptbot := classifier.Classify(uaGPTBot)
	browser := classifier.Classify(uaBrowser)
	poser := uaclass.Result{Class: uaclass.Poser}
	rude := clientsAt(spread("192.0.2.%d", 1, 50), example, uaclass.NotClaimed, "")
	rude = append(rude, clientsAt(spread("192.0.2.%d", 101, 50), poser, uaclass.NotClaimed, ja4Python)...)
	rude = append(rude, clientsAt(spread("198.51.100.%d", 1, 50), gptbot, uaclass.NotClaimed, "")...) // claims GPTBot
	// The others, at Crawl-delay: one request a second each.
	type other struct {
		name string
		r    *Request
	}
	others := []other{
		{"ExampleBot in another network", clientsAt([]string{"203.0.113.5"}, example, uaclass.NotClaimed, "")[0]},
		{"the verified GPTBot", clientsAt([]string{"20.15.240.5"}, gptbot, uaclass.Verified, "")[0]},
		{"another fingerprint in the /24", clientsAt([]string{"192.0.2.200"}, poser, uaclass.NotClaimed, ja4Other)[0]},
		{"a browser in the /24", clientsAt([]string{"192.0.2.201"}, browser, uaclass.NotClaimed, ja4Other)[0]},
		{"a browser at a crawler's address", clientsAt([]string{"192.0.2.7"}, browser, uaclass.NotClaimed, ja4Other)[0]},
	}
	refused := map[string]int{}
	rudeServed := 0
	for i := range 1000 { // 10 s: the rude crawlers send 100 a second in all
		if e.Decide(rude[i%len(rude)], crawlPolicy).Action == Allow {
			rudeServed++
		}
		if i%100 == 0 {
			for _, o := range others {
				if d := e.Decide(o.r, crawlPolicy); d.Action != Allow {
					refused[o.name]++
					t.Logf("%s refused at %v: %v %s", o.name, time.Duration(i)*10*time.Millisecond, d.Action, d.Reason)
				}
			}
		}
		clock.Advance(10 * time.Millisecond)
	}
	t.Logf("the rude crawlers: %d served of 1000", rudeServed)
	// Each: 3 times one address's 3 + 10 + a slip.
	if rudeServed > 3*3*14 {
		t.Errorf("three rude crawlers got %d in 10 s", rudeServed)
	}
	for _, o := range others {
		if refused[o.name] > 0 {
			t.Errorf("%s was refused %d of 10 requests", o.name, refused[o.name])
		}
	}
}

// TestCrawlerStrikes (issue 38): strikes count on the crawler: a crawler
// that asks for disallowed paths from many addresses of its network is
// blocked there after AddressStrikes of them, every address of it; the
// block shows in the list with its crawler, another network is not
// touched, and unblocking one address lifts it.
func TestCrawlerStrikes(t *testing.T) {
	clock := newClock()
	store := NewMemoryStore(1000, 0, time.Hour)
	e, err := New(Config{Now: clock.Now}, store)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		r := req(fmt.Sprintf("192.0.2.%d", i+1), uaExample, "/private/x")
		d := e.Decide(r, crawlPolicy)
		expect(t, fmt.Sprintf("disallowed %d", i+1), d, Deny, ReasonDisallowed)
		if i == 9 && (d.BlockedUntil.IsZero() || !d.ByCrawler) {
			t.Errorf("the 10th strike did not block the crawler: %+v", d)
		}
	}
	d := e.Decide(req("192.0.2.77", uaExample, "/page"), crawlPolicy)
	expect(t, "the crawler at a new address of its network", d, Deny, ReasonBlockedClient)
	if d.BlockReason != WhyDisallowed {
		t.Errorf("block reason %v", d.BlockReason)
	}
	expect(t, "the same token from another network", e.Decide(req("198.51.100.1", uaExample, "/page"), crawlPolicy), Allow, ReasonNone)
	expect(t, "a browser in the network", e.Decide(req("192.0.2.77", uaBrowser, "/page"), crawlPolicy), Allow, ReasonNone)
	list := store.Blocked(clock.Now())
	found := false
	for _, b := range list {
		if b.Crawler == "token examplebot" && b.IP == "192.0.2.0/24" && b.Reason == WhyDisallowed {
			found = true
		}
	}
	if !found {
		t.Errorf("the crawler's block is not listed: %+v", list)
	}
	if n := store.Unblock(netip.MustParsePrefix("192.0.2.77/32"), clock.Now()); n != 1 {
		t.Errorf("unblocking an address of the network lifted %d blocks, want the crawler's", n)
	}
	expect(t, "after the unblock", e.Decide(req("192.0.2.77", uaExample, "/page"), crawlPolicy), Allow, ReasonNone)
}

// TestCrawlerTrapVerified (issue 38): a trap hit blocks the crawler of a
// network (every address of a token there), but a verified crawler only at
// its address: its identity is kept apart from the other clients of the
// address, whose trap hits do not block it.
func TestCrawlerTrapVerified(t *testing.T) {
	clock := newClock()
	store := NewMemoryStore(1000, 0, time.Hour)
	e, err := New(Config{Now: clock.Now, Traps: []string{"/trap/"}}, store)
	if err != nil {
		t.Fatal(err)
	}
	served := compile("User-agent: *\nCrawl-delay: 1\nDisallow: /private/\nDisallow: /trap/\n")
	gpt := func(ip, target string) *Request {
		r := req(ip, uaGPTBot, target)
		r.Verdict = uaclass.Verified
		return r
	}
	expect(t, "a browser at the verified crawler's address hits the trap", e.Decide(req("20.15.240.5", uaBrowser, "/trap/"), served), Deny, ReasonTrap)
	expect(t, "the verified crawler there", e.Decide(gpt("20.15.240.5", "/page"), served), Allow, ReasonNone)
	expect(t, "the verified crawler hits the trap", e.Decide(gpt("20.15.240.6", "/trap/"), served), Deny, ReasonTrap)
	expect(t, "at that address", e.Decide(gpt("20.15.240.6", "/page"), served), Deny, ReasonBlockedClient)
	expect(t, "at another", e.Decide(gpt("20.15.240.7", "/page"), served), Allow, ReasonNone)
	list := store.Blocked(clock.Now())
	if len(list) != 2 || list[1].Crawler != "verified gptbot" || list[1].IP != "20.15.240.6" {
		t.Errorf("blocks: %+v", list)
	}
}

// TestCrawlerOff: CrawlerShare -1 keys every address apart, as before
// issue 38.
func TestCrawlerOff(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{CrawlerShare: -1}, clock)
	got := sum(crawl(e, clock, clientsAt(spread("192.0.2.%d", 1, 50), classifier.Classify(uaExample), uaclass.NotClaimed, ""), 10*time.Millisecond, 3*time.Second))
	if got < 150 {
		t.Errorf("crawler keys off: 50 addresses got %d, want each its own", got)
	}
}

// TestCrawlerNoAlloc: a crawler's hot decision allocates nothing.
func TestCrawlerNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	r := req("192.0.2.1", uaExample, "/page")
	p := &Request{IP: netip.MustParseAddr("192.0.2.2"), UA: uaclass.Result{Class: uaclass.Poser}, JA4: ja4Python, Method: "GET", Target: tgt("/page")}
	e.Decide(r, crawlPolicy)
	e.Decide(p, crawlPolicy)
	if n := testing.AllocsPerRun(1000, func() {
		clock.Advance(time.Second)
		e.Decide(r, crawlPolicy)
		e.Decide(p, crawlPolicy)
	}); n != 0 {
		t.Errorf("%v allocations per decision", n)
	}
}

// TestCrawlerFlood (issue 38): 500,000 distinct addresses, each with a
// token of its own (every request a new crawler key too), stay within the
// store's bound; the test reports the heap before and after.
func TestCrawlerFlood(t *testing.T) {
	n := 500_000
	if raceEnabled || testing.Short() {
		n = 50_000
	}
	const limit = 50_000
	store := NewMemoryStore(limit, 0, time.Hour)
	e, err := New(Config{}, store)
	if err != nil {
		t.Fatal(err)
	}
	tokens := make([]uaclass.Result, 1000)
	for i := range tokens {
		tokens[i] = uaclass.Result{Class: uaclass.OtherBot, Tokens: []string{fmt.Sprintf("flood%dbot", i)}}
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	r := Request{Target: policy.Target{Normal: "/page"}}
	for i := range n {
		// IPv4 addresses, 256 a /24, and a token of 1,000: every /24 sees
		// 256 crawler keys.
		r.IP = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		r.UA = tokens[i%len(tokens)]
		e.Decide(&r, crawlPolicy)
		if i%100_000 == 0 && store.Len() > limit {
			t.Fatalf("after %d clients the store tracks %d, cap %d", i, store.Len(), limit)
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if l := store.Len(); l > limit {
		t.Fatalf("%d records, cap %d", l, limit)
	}
	t.Logf("%d distinct addresses and crawler keys: %d records (cap %d), heap %d MiB before, %d MiB after (%.0f bytes a record)",
		n, store.Len(), limit, before.HeapAlloc>>20, after.HeapAlloc>>20, float64(after.HeapAlloc-before.HeapAlloc)/float64(store.Len()))
}

// TestCrawlerIDsStable: a crawler's ID names its record in Redis, on every
// instance of a fleet and across versions: the hash must not change (a
// change would drop the crawlers' state on upgrade).
func TestCrawlerIDsStable(t *testing.T) {
	for s, want := range map[string]uint64{"gptbot": 0x60e993d2dd9a6b48, "": 0xf9cea99ed3efabfa, ja4Other: 0x8fa8c3fa8cba00ed} {
		if got := hashString(s); got != want {
			t.Errorf("hashString(%q) = %#x, want %#x", s, got, want)
		}
	}
	var sink uint64
	if n := testing.AllocsPerRun(100, func() { sink ^= hashString(ja4Python) }); n != 0 || sink == 1 {
		t.Errorf("%v allocations", n)
	}
}
