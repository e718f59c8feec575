package enforce

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// The escalation ladder punishes persistence, not concurrency (issue 19).
// These tests run the defaults (burst 3, grace 1, strikes 5, window 10m,
// cooldown 15m) against the demo site's Crawl-delay of 1s.

const uaScrapy = "Scrapy/2.8.0 (+https://scrapy.org)"

var demoPolicy = compile("User-agent: *\nCrawl-delay: 1\nDisallow: /private/\nAllow: /private/press/\n")

// TestLadderBurstIsOneStrike: requests over the rate that arrive in
// parallel, and their immediate retries, are throttled and count as one
// strike at most: Scrapy's defaults (8 at once, each 429 retried twice at
// once) are throttled, never blocked.
func TestLadderBurstIsOneStrike(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	decide := func(n int) map[Action]int {
		var mu sync.Mutex
		var wg sync.WaitGroup
		got := map[Action]int{}
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				d := e.Decide(req("192.0.2.1", uaScrapy, fmt.Sprintf("/page%d.html", i)), demoPolicy)
				mu.Lock()
				got[d.Action]++
				mu.Unlock()
				if d.Strikes > 1 {
					t.Errorf("request %d: %d strikes", i, d.Strikes)
				}
			}(i)
		}
		wg.Wait()
		return got
	}
	first := decide(8) // 8 in parallel: burst 3, a slip, then 429s
	if first[Deny] != 0 || first[Throttle] == 0 || first[Allow] != 4 {
		t.Fatalf("8 parallel requests: %v", first)
	}
	for retry := 1; retry <= 2; retry++ { // Scrapy's immediate retries
		clock.Advance(5 * time.Millisecond)
		if got := decide(first[Throttle]); got[Deny] != 0 || got[Throttle] != first[Throttle] {
			t.Fatalf("retry %d: %v", retry, got)
		}
	}
	// The links of the pages it got, 100 ms later: the same window.
	clock.Advance(100 * time.Millisecond)
	if got := decide(20); got[Deny] != 0 {
		t.Fatalf("second wave: %v", got)
	}
	d := e.Decide(req("192.0.2.1", uaScrapy, "/"), demoPolicy)
	if d.Action == Deny || d.Strikes > 1 {
		t.Errorf("after the crawl: %+v", d)
	}
}

// TestLadderWaitsOut: a client that waits out Retry-After after its 429s
// never reaches a block for its rate alone, however often it is
// throttled: one request at a time, or eight at once.
func TestLadderWaitsOut(t *testing.T) {
	for _, parallel := range []int{1, 8} {
		t.Run(fmt.Sprintf("%d at once", parallel), func(t *testing.T) {
			clock := newClock()
			e := newEngine(t, Config{}, clock)
			throttled, served := 0, 0
			for round := 0; round < 300; round++ {
				var wait time.Duration
				for i := 0; i < parallel; i++ {
					d := e.Decide(req("192.0.2.1", uaScrapy, "/"), demoPolicy)
					switch {
					case d.Action == Throttle:
						throttled++
						wait = max(wait, d.RetryAfter)
					case d.Action == Allow:
						served++
					default:
						t.Fatalf("round %d: %+v (served %d, throttled %d)", round, d, served, throttled)
					}
					if d.Strikes != 0 {
						t.Fatalf("round %d: %d strikes for a client that waits out Retry-After", round, d.Strikes)
					}
				}
				if wait == 0 {
					wait = 10 * time.Millisecond // full speed until told to wait
				}
				clock.Advance(wait)
			}
			if throttled < 100 {
				t.Errorf("throttled %d times; the scenario should exercise 429s", throttled)
			}
			t.Logf("%d at once, 300 rounds: %d served, %d throttled, 0 strikes", parallel, served, throttled)
		})
	}
}

// TestLadderHammering: a client that keeps sending through its Retry-After
// windows collects one strike per window and is blocked after Strikes of
// them; disallowed paths, traps and bad agents keep their own, faster
// rules.
func TestLadderHammering(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Traps: []string{"/trap/"}}, clock)
	start := clock.Now()
	var d Decision
	requests := 0
	for d.Action != Deny {
		d = e.Decide(req("192.0.2.1", uaScrapy, "/"), demoPolicy)
		requests++
		clock.Advance(100 * time.Millisecond) // ignores every 429
		if requests > 1000 {
			t.Fatal("never blocked")
		}
	}
	took := clock.Now().Sub(start)
	if d.Reason != ReasonCrawlDelay || d.Strikes != 5 || d.BlockedUntil.IsZero() {
		t.Errorf("the blocking decision: %+v", d)
	}
	// Five windows of one second each: blocked after about five seconds.
	if took < 4*time.Second || took > 7*time.Second {
		t.Errorf("blocked after %v of hammering, want about five 1s windows", took)
	}
	expect(t, "blocked", e.Decide(req("192.0.2.1", uaScrapy, "/"), demoPolicy), Deny, ReasonBlockedClient)
	t.Logf("hammering every 100ms: blocked after %d requests, %v", requests, took)

	// Disallowed paths: five requests at once block.
	for i := 1; i <= 5; i++ {
		d = e.Decide(req("192.0.2.2", uaScrapy, "/private/x"), demoPolicy)
		expect(t, fmt.Sprintf("disallowed %d", i), d, Deny, ReasonDisallowed)
	}
	if d.BlockedUntil.IsZero() {
		t.Error("five disallowed requests did not block")
	}
	// A trap: at once.
	served := compile("User-agent: *\nCrawl-delay: 1\nDisallow: /private/\nAllow: /private/press/\nDisallow: /trap/\n")
	expect(t, "trap", e.Decide(req("192.0.2.3", uaScrapy, "/trap/"), served), Deny, ReasonTrap)
	expect(t, "trapped", e.Decide(req("192.0.2.3", uaBrowser, "/"), demoPolicy), Deny, ReasonBlockedClient)
	// A bad agent: five requests.
	for i := 0; i < 5; i++ {
		e.Decide(req("192.0.2.4", uaSiphon, "/"), demoPolicy)
	}
	expect(t, "bad agent's address", e.Decide(req("192.0.2.4", uaBrowser, "/"), demoPolicy), Deny, ReasonBlockedClient)
}

// TestLadderTimeline replays the crawl of issue 19 (Scrapy's defaults
// against the demo site): the requests that were blocked ~110 ms after the
// first 429 are now throttled, with one strike at most. It logs the
// timeline the README shows.
func TestLadderTimeline(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	steps := []struct {
		at     time.Duration
		target string
	}{
		{0, "/robots.txt"}, {20 * time.Millisecond, "/"},
		{75 * time.Millisecond, "/docs/"}, {76 * time.Millisecond, "/private/press/release.html"},
		{100 * time.Millisecond, "/about.html"},
		{209 * time.Millisecond, "/docs/rules.html"}, {209 * time.Millisecond, "/docs/getting-started.html"},
		{210 * time.Millisecond, "/"}, {211 * time.Millisecond, "/docs/rules.html"}, // Scrapy's retries
		{212 * time.Millisecond, "/docs/getting-started.html"},
		{1300 * time.Millisecond, "/docs/rules.html"}, // a later retry, after Retry-After
	}
	start := clock.Now()
	var lines []string
	for _, s := range steps {
		clock.Advance(start.Add(s.at).Sub(clock.Now()))
		d := e.Decide(req("192.0.2.1", uaScrapy, s.target), demoPolicy)
		what := d.Action.String()
		if d.Violation && d.Action == Allow {
			what += " (violation logged)"
		}
		if d.Action == Throttle {
			what = fmt.Sprintf("429, Retry-After %v", d.RetryAfter)
		}
		lines = append(lines, fmt.Sprintf("| +%d ms | %s | %s | %d |", s.at.Milliseconds(), s.target, what, d.Strikes))
		if d.Action == Deny || d.Strikes > 1 {
			t.Errorf("+%v %s: %+v", s.at, s.target, d)
		}
	}
	t.Logf("timeline:\n%s", strings.Join(lines, "\n"))
}
