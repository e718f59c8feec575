package enforce

import (
	"fmt"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/uaclass"
)

const (
	uaOAISearch  = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot"
	uaCCBot      = "CCBot/2.0 (https://commoncrawl.org/faq/)"
	uaPerplexity = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)"
)

// TestContentUsage: a bot whose purpose the site's preferences refuse is
// refused on a path its Allow/Disallow rules permit, with the line named,
// and never struck for it; other purposes, unknown bots and people pass.
func TestContentUsage(t *testing.T) {
	robots := "User-agent: *\nAllow: /\nDisallow: /private/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n"
	for _, form := range []struct{ name, robots, rule string }{
		{"Content-Usage", robots, "Content-Usage: train-ai=n"},
		{"Content-Signal", "User-agent: *\nAllow: /\nDisallow: /private/\nContent-Signal: search=yes, ai-train=no\n", "Content-Signal: search=yes, ai-train=no"},
	} {
		t.Run(form.name, func(t *testing.T) {
			clock := newClock()
			e := newEngine(t, Config{}, clock)
			p := compile(form.robots)
			// Spaced out, so that no rate applies: 20 refusals, no strike,
			// no block.
			for i := range 20 {
				d := e.Decide(req("192.0.2.1", uaGPTBot, "/article"), p)
				expect(t, fmt.Sprintf("GPTBot %d", i), d, Deny, ReasonContentUsage)
				if d.Rule == nil || d.Rule.String() != form.rule || d.Rule.Line != 4 || d.Group != "*" || d.Strikes != 0 || !d.Violation {
					t.Fatalf("GPTBot %d: rule %v line %v group %q strikes %d", i, d.Rule, d.Rule.Line, d.Group, d.Strikes)
				}
				clock.Advance(2 * time.Second)
			}
			// A disallowed path is refused as disallowed, a strike.
			d := e.Decide(req("192.0.2.1", uaGPTBot, "/private/x"), p)
			expect(t, "GPTBot disallowed", d, Deny, ReasonDisallowed)
			if d.Strikes != 1 {
				t.Errorf("disallowed: %d strikes", d.Strikes)
			}
			clock.Advance(2 * time.Second)
			expect(t, "OAI-SearchBot", e.Decide(req("192.0.2.2", uaOAISearch, "/article"), p), Allow, ReasonNone)
			expect(t, "browser", e.Decide(req("192.0.2.3", uaBrowser, "/article"), p), Allow, ReasonNone)
			expect(t, "unknown purpose", e.Decide(req("192.0.2.4", uaExample, "/article"), p), Allow, ReasonNone)
			expect(t, "CCBot trains too", e.Decide(req("192.0.2.5", uaCCBot, "/article"), p), Deny, ReasonContentUsage)
			expect(t, "robots.txt", e.Decide(req("192.0.2.1", uaGPTBot, "/robots.txt"), p), Allow, ReasonRobotsTxt)
			if form.name == "Content-Usage" {
				expect(t, "GPTBot under /ai-ok/", e.Decide(req("192.0.2.6", uaGPTBot, "/ai-ok/page"), p), Allow, ReasonNone)
				// Another spelling of a refused path is refused too.
				expect(t, "GPTBot, dot segments", e.Decide(req("192.0.2.7", uaGPTBot, "/ai-ok/../article"), p), Deny, ReasonContentUsage)
			}
		})
	}
}

// TestContentUsageModes: log serves and logs, off does not look, and a
// bot's rate still applies to requests the preferences refuse.
func TestContentUsageModes(t *testing.T) {
	p := compile("User-agent: *\nContent-Signal: ai-train=no\n")
	clock := newClock()
	e := newEngine(t, Config{ContentUsage: UsageLog}, clock)
	d := e.Decide(req("192.0.2.1", uaGPTBot, "/a"), p)
	if d.Action != Allow || d.Reason != ReasonContentUsage || !d.Violation || !d.Noteworthy() || d.Enforced() || d.Rule == nil {
		t.Errorf("log: %+v", d)
	}
	e = newEngine(t, Config{ContentUsage: UsageOff}, clock)
	d = e.Decide(req("192.0.2.1", uaGPTBot, "/a"), p)
	if d.Action != Allow || d.Reason != ReasonNone || d.Violation || d.Rule != nil {
		t.Errorf("off: %+v", d)
	}
	if _, err := New(Config{ContentUsage: UsageOff + 1}, nil); err == nil {
		t.Error("an invalid mode is accepted")
	}
	// Enforced, fast: the burst, then the ladder's 429s, never a strike
	// for the preference itself.
	e = newEngine(t, Config{Burst: 2, Grace: -1}, clock)
	var got []string
	for range 5 {
		d := e.Decide(req("192.0.2.9", uaGPTBot, "/a"), p)
		got = append(got, fmt.Sprintf("%v/%s", d.Action, d.Reason))
	}
	want := "[deny/content_usage deny/content_usage throttle/rate throttle/rate throttle/rate]"
	if fmt.Sprint(got) != want {
		t.Errorf("fast GPTBot: %v, want %v", got, want)
	}
	// Dry run reports the refusal without enforcing it.
	e = newEngine(t, Config{DryRun: true}, clock)
	if d := e.Decide(req("192.0.2.1", uaGPTBot, "/a"), p); d.Action != Deny || d.Reason != ReasonContentUsage || d.Enforced() {
		t.Errorf("dry run: %+v", d)
	}
}

// TestContentUsageUserTriggered: Content Signals' ai-input covers
// user-triggered fetchers, unless the "*" group does not bind them (a
// verified one); a bot
// with a group of its own follows that group's preferences.
func TestContentUsageUserTriggered(t *testing.T) {
	p := compile("User-agent: *\nContent-Signal: search=yes, ai-input=no\n\nUser-agent: PerplexityBot\nAllow: /\n")
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	expect(t, "ChatGPT-User", e.Decide(req("192.0.2.1", uaChatGPT, "/a"), p), Deny, ReasonContentUsage)
	expect(t, "GPTBot: training is not refused", e.Decide(req("192.0.2.2", uaGPTBot, "/a"), p), Allow, ReasonNone)
	expect(t, "Googlebot: search=yes", e.Decide(req("192.0.2.3", uaGooglebot, "/a"), p), Allow, ReasonNone)
	expect(t, "PerplexityBot: its own group", e.Decide(req("192.0.2.4", uaPerplexity, "/a"), p), Allow, ReasonNone)
	verified := req("192.0.2.1", uaChatGPT, "/a")
	verified.Verdict = uaclass.Verified
	expect(t, "verified ChatGPT-User: * does not bind it", e.Decide(verified, p), Allow, ReasonNone)
}

// TestContentUsageAllocs: the check allocates nothing.
func TestContentUsageAllocs(t *testing.T) {
	p := compile("User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n")
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	refused, served := req("192.0.2.1", uaGPTBot, "/a"), req("192.0.2.1", uaGPTBot, "/ai-ok/a")
	e.Decide(refused, p)
	allocs := testing.AllocsPerRun(100, func() {
		clock.Advance(2 * time.Second)
		if d := e.Decide(refused, p); d.Reason != ReasonContentUsage {
			t.Fatal(d.Reason)
		}
		clock.Advance(2 * time.Second)
		if d := e.Decide(served, p); d.Action != Allow {
			t.Fatal(d.Reason)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations", allocs)
	}
}
