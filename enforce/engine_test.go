package enforce

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// fakeClock is an injectable clock that tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var classifier = func() *uaclass.Classifier {
	c, err := uaclass.New(uaclass.Options{})
	if err != nil {
		panic(err)
	}
	return c
}()

const (
	uaBrowser   = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	uaGooglebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	uaGPTBot    = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	uaChatGPT   = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
	uaExample   = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"
	uaSiphon    = "EmailSiphon"
)

func req(ip, ua, target string) *Request {
	return &Request{IP: netip.MustParseAddr(ip), UA: classifier.Classify(ua), Method: "GET", Host: "example.com", Target: tgt(target)}
}

// tgt reads a request target as the handler does.
func tgt(raw string) policy.Target {
	t, err := policy.ParseTarget(raw)
	if err != nil {
		panic(err)
	}
	return t
}

func compile(robots string) *policy.Policy {
	return policy.Compile(policy.Parse([]byte(robots)))
}

func newEngine(t *testing.T, cfg Config, clock *fakeClock) *Engine {
	t.Helper()
	cfg.Now = clock.Now
	e, err := New(cfg, NewMemoryStore(1000, 0, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// expect checks a decision's action and reason.
func expect(t *testing.T, step string, d Decision, action Action, reason Reason) {
	t.Helper()
	if d.Action != action || d.Reason != reason {
		t.Fatalf("%s: got %v/%q (strikes %d), want %v/%q", step, d.Action, d.Reason, d.Strikes, action, reason)
	}
}

// TestCrawlDelay: a Crawl-delay of 2s allows one request per 2s per client
// and reports the right Retry-After.
func TestCrawlDelay(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Burst: 1, Grace: -1, Strikes: 100}, clock)
	p := compile("User-agent: *\nCrawl-delay: 2\nDisallow: /private\n")
	bot := req("192.0.2.1", uaExample, "/page")

	expect(t, "first", e.Decide(bot, p), Allow, ReasonNone)
	d := e.Decide(bot, p)
	expect(t, "immediately after", d, Throttle, ReasonCrawlDelay)
	if d.RetryAfter != 2*time.Second || d.Group != "*" {
		t.Errorf("RetryAfter = %v, group %q, want 2s and *", d.RetryAfter, d.Group)
	}
	clock.Advance(time.Second)
	d = e.Decide(bot, p)
	expect(t, "after 1s", d, Throttle, ReasonCrawlDelay)
	if d.RetryAfter != time.Second {
		t.Errorf("RetryAfter after 1s = %v, want 1s", d.RetryAfter)
	}
	clock.Advance(time.Second)
	expect(t, "after 2s", e.Decide(bot, p), Allow, ReasonNone)
	// A steady pace of one request per 2s is always allowed.
	for i := 0; i < 10; i++ {
		clock.Advance(2 * time.Second)
		expect(t, fmt.Sprintf("steady %d", i), e.Decide(bot, p), Allow, ReasonNone)
	}
	// The bucket is per client: another IP, or another bot on the same IP,
	// has its own.
	expect(t, "other IP", e.Decide(req("192.0.2.2", uaExample, "/page"), p), Allow, ReasonNone)
	expect(t, "other bot", e.Decide(req("192.0.2.1", uaGPTBot, "/page"), p), Allow, ReasonNone)
	// Decimals are honoured (a client in another network: this one's
	// crawler has used its share).
	p2 := compile("User-agent: *\nCrawl-delay: 0.5\n")
	b2 := req("198.51.100.3", uaExample, "/")
	expect(t, "0.5s first", e.Decide(b2, p2), Allow, ReasonNone)
	// Retry-After goes out in whole seconds: the Retry-After window is
	// what the client was told.
	d = e.Decide(b2, p2)
	if d.Action != Throttle || d.RetryAfter != time.Second {
		t.Errorf("0.5s: %v RetryAfter %v", d.Action, d.RetryAfter)
	}
}

// TestBurst: Burst requests may come at once, then the interval applies.
func TestBurst(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Burst: 3, Grace: -1, Strikes: 100}, clock)
	p := compile("User-agent: *\nCrawl-delay: 10\n")
	bot := req("192.0.2.1", uaExample, "/")
	for i := 0; i < 3; i++ {
		expect(t, fmt.Sprintf("burst %d", i), e.Decide(bot, p), Allow, ReasonNone)
	}
	expect(t, "past burst", e.Decide(bot, p), Throttle, ReasonCrawlDelay)
}

// TestGraceLadder: the first violation in a window is only logged, the next
// opens a Retry-After window with a 429, and a client that keeps sending
// through Strikes such windows is blocked (log -> 429 -> 403).
func TestGraceLadder(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Burst: 1, Grace: 1, Strikes: 4, Cooldown: time.Minute}, clock)
	p := compile("User-agent: *\nCrawl-delay: 5\n")
	bot := req("192.0.2.1", uaExample, "/")
	expect(t, "first", e.Decide(bot, p), Allow, ReasonNone)
	d := e.Decide(bot, p)
	expect(t, "slip", d, Allow, ReasonCrawlDelay)
	if !d.Violation || !d.Noteworthy() || d.Enforced() || d.Strikes != 0 {
		t.Errorf("slip: %+v", d)
	}
	d = e.Decide(bot, p)
	expect(t, "second violation opens a window", d, Throttle, ReasonCrawlDelay)
	if d.RetryAfter != 5*time.Second || d.Strikes != 0 {
		t.Errorf("window opened: %+v", d)
	}
	for w := 1; w <= 4; w++ {
		if w > 1 {
			expect(t, fmt.Sprintf("window %d: the token after the wait", w), e.Decide(bot, p), Allow, ReasonNone)
			expect(t, fmt.Sprintf("window %d opens", w), e.Decide(bot, p), Throttle, ReasonCrawlDelay)
		}
		clock.Advance(time.Second)
		d = e.Decide(bot, p)
		if w < 4 {
			expect(t, fmt.Sprintf("window %d: the client ignores its 429", w), d, Throttle, ReasonCrawlDelay)
		} else {
			expect(t, "the fourth window blocks", d, Deny, ReasonCrawlDelay)
			if d.BlockedUntil != clock.Now().Add(time.Minute) {
				t.Errorf("BlockedUntil = %v", d.BlockedUntil)
			}
			break
		}
		if d.Strikes != w || d.RetryAfter != 4*time.Second {
			t.Errorf("window %d: strikes %d, Retry-After %v", w, d.Strikes, d.RetryAfter)
		}
		// More requests in the same window add no strike.
		for i := 0; i < 10; i++ {
			if d = e.Decide(bot, p); d.Strikes != w {
				t.Fatalf("window %d, request %d: strikes %d", w, i, d.Strikes)
			}
		}
		clock.Advance(4 * time.Second)
	}
	clock.Advance(10 * time.Second)
	expect(t, "blocked", e.Decide(bot, p), Deny, ReasonBlockedClient)
}

// TestStrikesBlockAndCooldown: N disallowed requests block the client on
// every path but robots.txt; the block expires after the cooldown, and a
// repeat offence doubles it.
func TestStrikesBlockAndCooldown(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Strikes: 3, Window: time.Minute, Cooldown: 10 * time.Minute}, clock)
	p := compile("User-agent: *\nDisallow: /private\n")
	bad := req("192.0.2.1", uaExample, "/private/x")
	good := req("192.0.2.1", uaExample, "/public")
	robots := req("192.0.2.1", uaExample, "/robots.txt")

	for i := 1; i <= 2; i++ {
		d := e.Decide(bad, p)
		expect(t, fmt.Sprintf("strike %d", i), d, Deny, ReasonDisallowed)
		if d.Strikes != i || d.Rule == nil || d.Rule.Line != 2 || d.Rule.Pattern != "/private" {
			t.Fatalf("strike %d: %+v", i, d)
		}
	}
	expect(t, "allowed path between strikes", e.Decide(good, p), Allow, ReasonNone)
	d := e.Decide(bad, p)
	expect(t, "strike 3", d, Deny, ReasonDisallowed)
	if d.BlockedUntil != clock.Now().Add(10*time.Minute) {
		t.Errorf("BlockedUntil = %v, want now+10m", d.BlockedUntil)
	}
	expect(t, "blocked on an allowed path", e.Decide(good, p), Deny, ReasonBlockedClient)
	expect(t, "robots.txt while blocked", e.Decide(robots, p), Allow, ReasonRobotsTxt)
	expect(t, "another client on the same IP", e.Decide(req("192.0.2.1", uaGPTBot, "/public"), p), Allow, ReasonNone)

	clock.Advance(10*time.Minute + time.Second)
	expect(t, "after cooldown", e.Decide(good, p), Allow, ReasonNone)
	// Repeat offence: the window restarted, three more strikes block for
	// twice as long.
	for i := 0; i < 3; i++ {
		d = e.Decide(bad, p)
	}
	if d.BlockedUntil != clock.Now().Add(20*time.Minute) {
		t.Errorf("second block until %v, want now+20m", d.BlockedUntil)
	}
	clock.Advance(15 * time.Minute)
	expect(t, "still blocked", e.Decide(good, p), Deny, ReasonBlockedClient)
	clock.Advance(6 * time.Minute)
	expect(t, "second cooldown over", e.Decide(good, p), Allow, ReasonNone)
}

// TestTarpit: with a tarpit, the ladder's last rung holds a blocked client's
// further requests; the request that causes the block, robots.txt, other
// clients and dry-run enforcement are unaffected.
func TestTarpit(t *testing.T) {
	p := compile("User-agent: *\nDisallow: /private\nDisallow: /trap/\n")
	for _, dry := range []bool{false, true} {
		clock := newClock()
		e := newEngine(t, Config{Strikes: 2, Cooldown: time.Minute, Tarpit: 3 * time.Second, Traps: []string{"/trap/"}, DryRun: dry}, clock)
		bad := req("192.0.2.1", uaExample, "/private")
		expect(t, "strike 1", e.Decide(bad, p), Deny, ReasonDisallowed)
		d := e.Decide(bad, p)
		expect(t, "strike 2 blocks at once", d, Deny, ReasonDisallowed)
		if d.Hold != 0 {
			t.Errorf("the blocking request is held for %v", d.Hold)
		}
		d = e.Decide(req("192.0.2.1", uaExample, "/public"), p)
		expect(t, "blocked client", d, Tarpit, ReasonBlockedClient)
		if d.Hold != 3*time.Second || d.Enforced() == dry {
			t.Errorf("blocked client: hold %v, enforced %v (dry run %v)", d.Hold, d.Enforced(), dry)
		}
		expect(t, "robots.txt while blocked", e.Decide(req("192.0.2.1", uaExample, "/robots.txt"), p), Allow, ReasonRobotsTxt)
		expect(t, "another bot", e.Decide(req("192.0.2.2", uaExample, "/public"), p), Allow, ReasonNone)

		// A trap blocks with a plain 403, then holds a bot UA from the
		// address; a browser UA is refused at once, never held: it may be
		// a person behind the same address (issue 28).
		expect(t, "trap", e.Decide(req("198.51.100.7", uaBrowser, "/trap/x"), p), Deny, ReasonTrap)
		expect(t, "trapped address, bot UA", e.Decide(req("198.51.100.7", uaExample, "/"), p), Tarpit, ReasonBlockedClient)
		d = e.Decide(req("198.51.100.7", uaBrowser, "/"), p)
		expect(t, "trapped address, browser UA", d, Deny, ReasonBlockedClient)
		if d.Hold != 0 || d.BlockedUntil.IsZero() || d.Enforced() == dry {
			t.Errorf("trapped address, browser UA: hold %v, until %v, enforced %v", d.Hold, d.BlockedUntil, d.Enforced())
		}

		clock.Advance(time.Minute + time.Second)
		expect(t, "after cooldown", e.Decide(req("192.0.2.1", uaExample, "/public"), p), Allow, ReasonNone)
	}
	// Without a tarpit the ladder ends at 403.
	e := newEngine(t, Config{Strikes: 1}, newClock())
	e.Decide(req("192.0.2.1", uaExample, "/private"), p)
	expect(t, "no tarpit", e.Decide(req("192.0.2.1", uaExample, "/public"), p), Deny, ReasonBlockedClient)
}

// TestStrikeWindow: strikes older than the window do not count.
func TestStrikeWindow(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Strikes: 3, Window: time.Minute}, clock)
	p := compile("User-agent: *\nDisallow: /private\n")
	bad := req("192.0.2.1", uaExample, "/private")
	for i := 0; i < 10; i++ {
		d := e.Decide(bad, p)
		expect(t, fmt.Sprintf("spaced strike %d", i), d, Deny, ReasonDisallowed)
		if !d.BlockedUntil.IsZero() {
			t.Fatalf("spaced strikes blocked the client: %+v", d)
		}
		clock.Advance(31 * time.Second) // two strikes per window at most
	}
}

// TestCooldownCapped: the doubling cooldown stops at MaxCooldown.
func TestCooldownCapped(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Strikes: 1, Cooldown: time.Hour, MaxCooldown: 3 * time.Hour}, clock)
	p := compile("User-agent: *\nDisallow: /\n")
	bad := req("192.0.2.1", uaExample, "/x")
	for _, want := range []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 3 * time.Hour} {
		d := e.Decide(bad, p)
		if got := d.BlockedUntil.Sub(clock.Now()); got != want {
			t.Fatalf("block of %v, want %v", got, want)
		}
		clock.Advance(want + time.Second)
	}
}

// TestTrap: a trap catches any client, a browser User-Agent too, and blocks
// its IP for every path.
func TestTrap(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Traps: []string{"/secret-archive/", "/*.bak$"}, Cooldown: time.Hour}, clock)
	// As served: the site's file with the traps for every agent.
	p := compile("User-agent: *\nDisallow: /private\nDisallow: /secret-archive/\nDisallow: /*.bak$\n")
	d := e.Decide(req("198.51.100.7", uaBrowser, "/secret-archive/index.html"), p)
	expect(t, "browser on trap", d, Deny, ReasonTrap)
	if d.BlockedUntil != clock.Now().Add(time.Hour) {
		t.Errorf("trap BlockedUntil = %v", d.BlockedUntil)
	}
	expect(t, "same IP, home page", e.Decide(req("198.51.100.7", uaBrowser, "/"), p), Deny, ReasonBlockedClient)
	expect(t, "same IP, other UA", e.Decide(req("198.51.100.7", uaGooglebot, "/"), p), Deny, ReasonBlockedClient)
	expect(t, "same IP, robots.txt", e.Decide(req("198.51.100.7", uaBrowser, "/robots.txt"), p), Allow, ReasonRobotsTxt)
	expect(t, "other IP", e.Decide(req("198.51.100.8", uaBrowser, "/"), p), Allow, ReasonNone)
	expect(t, "wildcard trap", e.Decide(req("198.51.100.9", uaExample, "/db.bak"), p), Deny, ReasonTrap)
	expect(t, "encoded trap", e.Decide(req("198.51.100.10", uaBrowser, "/%73ecret-archive/"), p), Deny, ReasonTrap)
	expect(t, "not a trap", e.Decide(req("198.51.100.12", uaBrowser, "/db.bak.txt"), p), Allow, ReasonNone)
	// The served file, as a polite crawler reads it, allows "/db.bak?v=2"
	// (the '$' anchors the whole target): no trap, for nobody. A bot is
	// refused it all the same, since the backend serves the same file, by
	// the query departure: no strike (issue 27).
	expect(t, "anchored trap with a query, browser", e.Decide(req("198.51.100.11", uaBrowser, "/db.bak?v=2"), p), Allow, ReasonNone)
	expect(t, "anchored trap with a query, bot", e.Decide(req("203.0.113.13", uaExample, "/db.bak?v=2"), p), Deny, ReasonDeparture)
	expect(t, "after it", e.Decide(req("203.0.113.13", uaExample, "/"), p), Allow, ReasonNone)
	// A trap hit is a strike on ExampleBot's crawler in its network
	// (198.51.100.0/24, issue 38): its other addresses there are served
	// until trap hits from ten of them (AddressStrikes) block it.
	expect(t, "the trapped crawler at another address of its network", e.Decide(req("198.51.100.14", uaExample, "/"), p), Allow, ReasonNone)
	for i := range 9 {
		expect(t, "another trap hit", e.Decide(req(fmt.Sprintf("198.51.100.%d", 20+i), uaExample, "/db.bak"), p), Deny, ReasonTrap)
	}
	d = e.Decide(req("198.51.100.14", uaExample, "/"), p)
	expect(t, "the crawler after ten trap hits", d, Deny, ReasonBlockedClient)
	if !d.ByCrawler || d.Crawler.Label() != "token examplebot" || d.BlockReason != WhyTrap {
		t.Errorf("the crawler's block: %+v", d)
	}
	expect(t, "a browser in that network", e.Decide(req("198.51.100.14", uaBrowser, "/"), p), Allow, ReasonNone)
}

// TestDryRun: dry-run never enforces but reports the same decisions.
func TestDryRun(t *testing.T) {
	steps := []struct {
		ua, target string
		advance    time.Duration
	}{
		{uaExample, "/", 0}, {uaExample, "/", 0}, {uaExample, "/", 0}, {uaExample, "/private", 0},
		{uaExample, "/private", 0}, {uaExample, "/private", 0}, {uaExample, "/", time.Second},
		{uaSiphon, "/", 0}, {uaBrowser, "/trap/", 0}, {uaBrowser, "/", 0}, {uaBrowser, "/robots.txt", 0},
	}
	run := func(dry bool) []Decision {
		clock := newClock()
		e := newEngine(t, Config{DryRun: dry, Burst: 1, Strikes: 4, Traps: []string{"/trap/"}}, clock)
		p := compile("User-agent: *\nCrawl-delay: 3\nDisallow: /private\nDisallow: /trap/\n")
		var out []Decision
		for _, s := range steps {
			clock.Advance(s.advance)
			ip := "192.0.2.1"
			if s.ua == uaBrowser {
				ip = "192.0.2.9"
			}
			out = append(out, e.Decide(req(ip, s.ua, s.target), p))
		}
		return out
	}
	enforced, dry := run(false), run(true)
	refusals := 0
	for i := range enforced {
		a, b := enforced[i], dry[i]
		if !b.DryRun || b.Enforced() {
			t.Errorf("step %d: dry-run decision %+v is enforced", i, b)
		}
		b.DryRun = false
		if (a.Rule == nil) != (b.Rule == nil) || a.Rule != nil && *a.Rule != *b.Rule {
			t.Errorf("step %d: rules differ: %v vs %v", i, a.Rule, b.Rule)
		}
		a.Rule, b.Rule = nil, nil
		if a != b {
			t.Errorf("step %d: enforcing %+v, dry run %+v", i, a, b)
		}
		if a.Enforced() {
			refusals++
		}
	}
	if refusals < 5 {
		t.Errorf("the scenario refused only %d requests; it should exercise refusals", refusals)
	}
}

// TestAllowlist: allowlisted IP ranges win over everything; allowlisted
// tokens over the robots.txt rules and rates, but not over traps (see
// TestAllowTokenIsAClaim).
func TestAllowlist(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{
		AllowCIDRs:  []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")},
		AllowTokens: []string{"examplebot"},
		Traps:       []string{"/trap"},
	}, clock)
	p := compile("User-agent: *\nDisallow: /\nCrawl-delay: 60\n")
	for _, r := range []*Request{
		req("10.1.2.3", uaGPTBot, "/private"),
		req("::ffff:10.1.2.3", uaSiphon, "/"),
		req("2001:db8::1", uaGPTBot, "/trap"),
		req("192.0.2.1", uaExample, "/private"),
		req("192.0.2.1", uaExample, "/private"),
		req("192.0.2.1", uaExample, "/other"),
	} {
		expect(t, r.IP.String()+" "+r.Target.Normal, e.Decide(r, p), Allow, ReasonAllowlisted)
	}
	expect(t, "allowlisted token on a trap", e.Decide(req("192.0.2.1", uaExample, "/trap"), p), Deny, ReasonTrap)
	expect(t, "not allowlisted", e.Decide(req("192.0.2.2", uaGPTBot, "/x"), p), Deny, ReasonDisallowed)
}

// TestBrowsersNotBound: robots.txt is not addressed to people.
func TestBrowsersNotBound(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	p := compile("User-agent: *\nDisallow: /\nCrawl-delay: 60\n")
	for i := 0; i < 50; i++ {
		expect(t, "browser", e.Decide(req("192.0.2.1", uaBrowser, "/private"), p), Allow, ReasonNone)
	}
	expect(t, "bot", e.Decide(req("192.0.2.1", uaExample, "/private"), p), Deny, ReasonDisallowed)
	// Every bot class is bound: scripts, unknown clients too.
	for _, ua := range []string{"curl/8.0", "python-requests/2.31", "", "Mozilla/5.0", uaGooglebot, uaGPTBot} {
		expect(t, fmt.Sprintf("%q", ua), e.Decide(req("192.0.2.2", ua, "/private"), p), Deny, ReasonDisallowed)
	}
}

// TestBadAgentsAndImpostors: refused outright by default, strikes on the IP
// block every User-Agent from it.
func TestBadAgentsAndImpostors(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Strikes: 3}, clock)
	p := compile("User-agent: *\nDisallow: /private\n")
	expect(t, "bad", e.Decide(req("192.0.2.1", uaSiphon, "/"), p), Deny, ReasonBadAgent)
	imp := req("192.0.2.2", uaGooglebot, "/")
	imp.Verdict = uaclass.Impostor
	expect(t, "impostor", e.Decide(imp, p), Deny, ReasonImpostor)
	expect(t, "impostor again", e.Decide(imp, p), Deny, ReasonImpostor)
	expect(t, "impostor third", e.Decide(imp, p), Deny, ReasonImpostor)
	expect(t, "impostor's IP, browser UA", e.Decide(req("192.0.2.2", uaBrowser, "/"), p), Deny, ReasonBlockedClient)

	lenient := newEngine(t, Config{AllowBadAgents: true, AllowImpostors: true}, clock)
	expect(t, "bad, allowed", lenient.Decide(req("192.0.2.3", uaSiphon, "/"), p), Allow, ReasonNone)
	expect(t, "bad, allowed, disallowed path", lenient.Decide(req("192.0.2.3", uaSiphon, "/private"), p), Deny, ReasonDisallowed)
	imp2 := req("192.0.2.4", uaGooglebot, "/")
	imp2.Verdict = uaclass.Impostor
	expect(t, "impostor, allowed", lenient.Decide(imp2, p), Allow, ReasonNone)
}

// TestUserTriggered: a verified user-triggered fetcher is held only to
// the groups that name it; a claim is judged as any unverified bot, by the
// "*" group (issue 27: a claim may identify, never lift a limit).
func TestUserTriggered(t *testing.T) {
	clock := newClock()
	star := compile("User-agent: *\nDisallow: /\n")
	named := compile("User-agent: ChatGPT-User\nDisallow: /members/\n\nUser-agent: *\nDisallow: /\n")
	e := newEngine(t, Config{}, clock)
	claim := req("192.0.2.1", uaChatGPT, "/article")
	claim.Verdict = uaclass.Unverified // no ranges loaded
	expect(t, "a claim: * applies", e.Decide(claim, star), Deny, ReasonDisallowed)
	verified := func(target string) *Request {
		r := req("192.0.2.2", uaChatGPT, target)
		r.Verdict = uaclass.Verified
		return r
	}
	expect(t, "verified: * does not apply", e.Decide(verified("/article"), star), Allow, ReasonNone)
	expect(t, "verified: its own group applies", e.Decide(verified("/members/x"), named), Deny, ReasonDisallowed)
	expect(t, "verified: allowed by its group", e.Decide(verified("/article"), named), Allow, ReasonNone)
	// A signature with pinned keys is evidence (Signed, Verified); one with
	// the agent's own directory keys sets neither (signature.Identify), and
	// a claim left unverified is held to the * group.
	signed := verified("/article")
	signed.Signed = true
	expect(t, "signed, pinned key", e.Decide(signed, star), Allow, ReasonNone)
	unpinned := req("192.0.2.4", uaChatGPT, "/article")
	expect(t, "signed, unpinned key: * applies", e.Decide(unpinned, star), Deny, ReasonDisallowed)
	// A verified bulk crawler still gets the * group.
	gpt := req("192.0.2.3", uaGPTBot, "/article")
	gpt.Verdict = uaclass.Verified
	expect(t, "verified GPTBot", e.Decide(gpt, star), Deny, ReasonDisallowed)
}

// TestVerifiedSearchGentle: verified search crawlers are never throttled or
// blocked by default, but disallowed paths are still refused; unverified
// claims get no such care.
func TestVerifiedSearchGentle(t *testing.T) {
	clock := newClock()
	p := compile("User-agent: *\nCrawl-delay: 10\nDisallow: /private\n")
	e := newEngine(t, Config{Burst: 1, Strikes: 3}, clock)
	gb := req("66.249.66.1", uaGooglebot, "/page")
	gb.Verdict = uaclass.Verified
	for i := 0; i < 20; i++ {
		d := e.Decide(gb, p)
		if d.Action != Allow {
			t.Fatalf("verified Googlebot request %d: %+v", i, d)
		}
		if i > 0 && (d.Reason != ReasonCrawlDelay || !d.Violation) {
			t.Fatalf("verified Googlebot request %d: violation not reported: %+v", i, d)
		}
	}
	gbp := *gb
	gbp.Target = tgt("/private")
	for i := 0; i < 10; i++ {
		expect(t, "verified on disallowed path", e.Decide(&gbp, p), Deny, ReasonDisallowed)
	}
	expect(t, "verified, never blocked", e.Decide(gb, p), Allow, ReasonCrawlDelay)

	// Not verified (verification off): treated like any bot.
	un := req("66.249.66.2", uaGooglebot, "/page")
	e.Decide(un, p)
	e.Decide(un, p)
	expect(t, "unverified googlebot", e.Decide(un, p), Throttle, ReasonCrawlDelay)

	strict := newEngine(t, Config{Burst: 1, EscalateVerifiedSearch: true}, clock)
	strict.Decide(gb, p)
	strict.Decide(gb, p)
	expect(t, "escalate verified", strict.Decide(gb, p), Throttle, ReasonCrawlDelay)
}

// TestReadRobots: a client that fetched robots.txt and then violated it is
// recorded as such, with the time of the fetch.
func TestReadRobots(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Traps: []string{"/trap"}}, clock)
	p := compile("User-agent: *\nDisallow: /private\nDisallow: /trap\n")
	d := e.Decide(req("192.0.2.1", uaExample, "/private"), p)
	if d.ReadRobots || !d.RobotsAt.IsZero() {
		t.Error("ReadRobots before any robots.txt fetch")
	}
	read := clock.Now()
	e.Decide(req("192.0.2.1", uaExample, "/robots.txt"), p)
	clock.Advance(time.Minute)
	d = e.Decide(req("192.0.2.1", uaExample, "/private"), p)
	if !d.ReadRobots || d.Action != Deny || !d.RobotsAt.Equal(read) {
		t.Errorf("after robots.txt at %v: %+v", read, d)
	}
	e.Decide(req("192.0.2.2", uaBrowser, "/%72obots.txt"), p) // an encoded spelling counts
	if d := e.Decide(req("192.0.2.2", uaBrowser, "/trap"), p); !d.ReadRobots || d.Reason != ReasonTrap {
		t.Errorf("trap after robots.txt: %+v", d)
	}
}

// TestBlockClassesAndClassRates: blocked classes are refused; class rates
// apply where robots.txt has no Crawl-delay.
func TestBlockClassesAndClassRates(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{BlockClasses: []uaclass.Class{uaclass.AI}, Burst: 1, Grace: -1, ClassRates: map[uaclass.Class]time.Duration{uaclass.SEO: 4 * time.Second}}, clock)
	// As served: the class's known tokens get "Disallow: /".
	p := compile("User-agent: *\nAllow: /\n\nUser-agent: GPTBot\nUser-agent: ClaudeBot\nDisallow: /\n")
	expect(t, "ai", e.Decide(req("192.0.2.1", uaGPTBot, "/"), p), Deny, ReasonBlockedClass)
	seo := req("192.0.2.2", "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", "/")
	expect(t, "seo first", e.Decide(seo, p), Allow, ReasonNone)
	d := e.Decide(seo, p)
	expect(t, "seo rate", d, Throttle, ReasonRate)
	if d.RetryAfter != 4*time.Second {
		t.Errorf("class rate RetryAfter = %v", d.RetryAfter)
	}
	// Classes without a rate are not limited.
	for i := 0; i < 20; i++ {
		expect(t, "search, no rate", e.Decide(req("192.0.2.3", uaGooglebot, "/"), p), Allow, ReasonNone)
	}
}

// TestInvalidRequest: a request the module cannot parse is refused for bots,
// never passed unchecked, and served to browsers.
func TestInvalidRequest(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	p := compile("User-agent: *\nDisallow: /private\n")
	r := req("192.0.2.1", uaExample, "/x")
	r.Invalid = true
	expect(t, "bot", e.Decide(r, p), Deny, ReasonInvalid)
	b := req("192.0.2.2", uaBrowser, "/x")
	b.Invalid = true
	expect(t, "browser", e.Decide(b, p), Allow, ReasonNone)
}

// TestNoPolicy: without a robots.txt, bots are only paced by class rates.
func TestNoPolicy(t *testing.T) {
	e := newEngine(t, Config{}, newClock())
	expect(t, "no policy", e.Decide(req("192.0.2.1", uaExample, "/private"), nil), Allow, ReasonNone)
}

// TestConfigErrors: bad configuration fails with a message naming the field.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Burst: -1}, "burst"},
		{Config{Strikes: -2}, "strikes"},
		{Config{Window: -time.Second}, "window"},
		{Config{Cooldown: -time.Second}, "cooldown"},
		{Config{Cooldown: time.Hour, MaxCooldown: time.Minute}, "max cooldown"},
		{Config{Traps: []string{"trap"}}, "trap"},
		{Config{AllowTokens: []string{"GoogleBot"}}, "allowlisted token"},
		{Config{ClassRates: map[uaclass.Class]time.Duration{uaclass.AI: -1}}, "class rate for ai"},
		{Config{BlockClasses: []uaclass.Class{200}}, "invalid class"},
		{Config{Tarpit: -time.Second}, "tarpit"},
	} {
		_, err := New(tc.cfg, nil)
		if err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) error = %v, want it to mention %q", tc.cfg, err, tc.want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestVariants: a rule or trap that matches another spelling of the same
// resource applies, so encoded slashes and doubled slashes do not bypass it.
// The reference reading allows "/private%2Freport.html" (RFC 9309 keeps
// "%2F" encoded), so the refusal is a departure: no strike.
func TestVariants(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Traps: []string{"/trap/"}, Strikes: 100}, clock)
	p := compile("User-agent: *\nDisallow: /private/\nDisallow: /trap/\n")
	r := req("192.0.2.1", uaExample, "/private%2Freport.html")
	d := e.Decide(r, p)
	expect(t, "variant disallowed", d, Deny, ReasonDeparture)
	if d.Rule == nil || d.Rule.Pattern != "/private/" || d.Departure != policy.DepartureSpelling || d.Strikes != 0 {
		t.Errorf("rule %v, departure %q, strikes %d", d.Rule, d.Departure, d.Strikes)
	}
	r.Target = policy.Target{Normal: "/private%2Freport.html"}
	expect(t, "no variants", e.Decide(r, p), Allow, ReasonNone)
	// A trap under another spelling only: the served file allows
	// "//trap/x" as a polite crawler reads it, so it traps nobody, and a
	// bot is refused it by the spelling departure, without a strike.
	expect(t, "trap variant, bot", e.Decide(req("192.0.2.2", uaExample, "//trap/x"), p), Deny, ReasonDeparture)
	expect(t, "trap variant, browser", e.Decide(req("192.0.2.3", uaBrowser, "//trap/x"), p), Allow, ReasonNone)
	expect(t, "trap", e.Decide(req("192.0.2.3", uaBrowser, "/trap/x"), p), Deny, ReasonTrap)
}

// TestQueryVariants: a query does not dodge a "$" rule, unless a rule
// matches the whole target.
func TestQueryVariants(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Strikes: 100, ClassRates: map[uaclass.Class]time.Duration{}}, clock)
	p := compile("User-agent: *\nDisallow: /report.html$\nDisallow: /search$\nAllow: /search?q=\n")
	for target, want := range map[string]Action{
		"/report.html":     Deny,
		"/report.html?":    Deny,
		"/report.html?x=1": Deny,
		"/report.htmlx":    Allow,
		"/search":          Deny,
		"/search?q=robots": Allow, // explicitly allowed
		"/search?page=2":   Deny,
		"/other?x=1":       Allow,
	} {
		if d := e.Decide(req("192.0.2.1", uaExample, target), p); d.Action != want {
			t.Errorf("%s: %v/%q, want %v", target, d.Action, d.Reason, want)
		}
	}
}
