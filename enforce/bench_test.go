package enforce

import (
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/policy"
)

// benchEngine returns an engine with a realistic policy and a clock that
// advances step per call: a second keeps a hot client under its rate.
func benchEngine(b *testing.B, step time.Duration) (*Engine, *Request) {
	var ns atomic.Int64
	ns.Store(time.Unix(1_800_000_000, 0).UnixNano())
	clock := func() time.Time { return time.Unix(0, ns.Add(int64(step))) }
	e, err := New(Config{Now: clock, Traps: []string{"/trap/"}}, NewMemoryStore(1_000_000, 0, time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	r := req("192.0.2.1", uaExample, "/articles/robots-exclusion?page=2")
	return e, r
}

// benchServedPolicy is benchPolicy as the handler serves it, with the
// trap.
var benchServedPolicy = compile("User-agent: *\nCrawl-delay: 0.5\nDisallow: /private/\nDisallow: /*.bak$\nAllow: /private/press/\nDisallow: /trap/\n\nUser-agent: roguebot\nDisallow: /\nDisallow: /trap/\n")

var benchPolicy = compile("User-agent: *\nCrawl-delay: 0.5\nDisallow: /private/\nDisallow: /*.bak$\nAllow: /private/press/\n\nUser-agent: roguebot\nDisallow: /\n")

// BenchmarkDecide measures one decision for a hot client (seen before), a
// new client (first request: allocates its state), a blocked client and a
// browser.
func BenchmarkDecide(b *testing.B) {
	b.Run("hot", func(b *testing.B) {
		e, r := benchEngine(b, time.Second)
		e.Decide(r, benchPolicy)
		b.ReportAllocs()
		for b.Loop() {
			e.Decide(r, benchPolicy)
		}
	})
	b.Run("new", func(b *testing.B) {
		e, r := benchEngine(b, time.Second)
		b.ReportAllocs()
		i := uint64(0)
		for b.Loop() {
			r.IP = addr6(i)
			i++
			e.Decide(r, benchPolicy)
		}
	})
	b.Run("blocked", func(b *testing.B) {
		e, r := benchEngine(b, 0)
		r.Target = policy.Target{Normal: "/trap/x"}
		e.Decide(r, benchServedPolicy)
		r.Target = policy.Target{Normal: "/page"}
		b.ReportAllocs()
		for b.Loop() {
			if d := e.Decide(r, benchPolicy); d.Reason != ReasonBlockedClient {
				b.Fatal(d.Reason)
			}
		}
	})
	b.Run("browser", func(b *testing.B) {
		e, _ := benchEngine(b, time.Second)
		r := req("192.0.2.9", uaBrowser, "/private/x")
		b.ReportAllocs()
		for b.Loop() {
			e.Decide(r, benchPolicy)
		}
	})
	// A hot GPTBot under a file with AI usage preferences: served under
	// /ai-ok/, refused (content_usage) elsewhere.
	for _, c := range []struct{ name, target string }{{"usage-served", "/ai-ok/page"}, {"usage-refused", "/articles/x"}} {
		b.Run(c.name, func(b *testing.B) {
			e, _ := benchEngine(b, time.Second)
			r := req("192.0.2.9", uaGPTBot, c.target)
			e.Decide(r, benchUsagePolicy)
			b.ReportAllocs()
			for b.Loop() {
				e.Decide(r, benchUsagePolicy)
			}
		})
	}
}

var benchUsagePolicy = compile("User-agent: *\nCrawl-delay: 0.5\nDisallow: /private/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\nContent-Signal: search=yes, ai-train=no, ai-input=yes\n")

// BenchmarkDecideParallel measures hot clients decided in parallel (run with
// -cpu 1,2,4), each goroutine with its own client.
func BenchmarkDecideParallel(b *testing.B) {
	e, r0 := benchEngine(b, time.Second)
	var next atomic.Uint32
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := *r0
		n := next.Add(1)
		r.IP = netip.AddrFrom4([4]byte{192, 0, 2, byte(n)})
		for pb.Next() {
			e.Decide(&r, benchPolicy)
		}
	})
}

// TestDecideHotAllocs: deciding for a hot client allocates nothing.
func TestDecideHotAllocs(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	r := req("192.0.2.1", uaExample, "/articles/x?page=2")
	e.Decide(r, benchPolicy)
	if n := testing.AllocsPerRun(200, func() { clock.Advance(time.Second); e.Decide(r, benchPolicy) }); n != 0 {
		t.Errorf("Decide for a hot client allocates %v times", n)
	}
}
