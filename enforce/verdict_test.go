package enforce

import (
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/uaclass"
)

// TestUnverifiedClaimBounded (issue 29, item 7; it reverses issue 10,
// item 9): a claimed search crawler whose verification did not finish
// (an attacker controls its own reverse zone) lifts no limit: it is paced
// at class bot's rate where robots.txt sets no Crawl-delay, and blocked
// for its disallowed hits like any bot. The issue measured 40 quick
// requests served and 30 disallowed hits without a block. A verified
// Googlebot keeps its gentle treatment.
func TestUnverifiedClaimBounded(t *testing.T) {
	clock := newClock()
	p := compile("User-agent: *\nDisallow: /private\n")
	e := newEngine(t, Config{}, clock)
	gb := req("66.249.66.1", uaGooglebot, "/page")
	gb.Verdict = uaclass.Unverified
	served := 0
	for i := 0; i < 40; i++ {
		if d := e.Decide(gb, p); d.Action == Allow {
			served++
		}
	}
	if served > 5 {
		t.Errorf("unverified Googlebot: %d of 40 quick requests served", served)
	}
	priv := req("66.249.66.2", uaGooglebot, "/private/x")
	priv.Verdict = uaclass.Unverified
	var d Decision
	for i := 0; i < 30; i++ {
		d = e.Decide(priv, p)
	}
	expect(t, "unverified Googlebot after 30 disallowed hits", d, Deny, ReasonBlockedClient)
	ok := *priv
	ok.Target = tgt("/page")
	expect(t, "and then an allowed page", e.Decide(&ok, p), Deny, ReasonBlockedClient)

	verified := req("66.249.66.3", uaGooglebot, "/private/x")
	verified.Verdict = uaclass.Verified
	for i := 0; i < 30; i++ {
		expect(t, "verified Googlebot on a disallowed path", e.Decide(verified, p), Deny, ReasonDisallowed)
	}
	verified.Target = tgt("/page")
	for i := 0; i < 40; i++ {
		expect(t, "verified Googlebot", e.Decide(verified, p), Allow, ReasonNone)
	}
}

// TestMonitorRate (issue 29, item 7): a claimed monitor has a rate by
// default, one request a second, so that a scraper claiming to be
// UptimeRobot gains nothing over an unknown bot.
func TestMonitorRate(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Grace: -1}, clock)
	p := compile("User-agent: *\nDisallow: /private\n")
	m := req("192.0.2.1", "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", "/")
	if m.UA.Class != uaclass.Monitor {
		t.Fatalf("UptimeRobot is %v", m.UA.Class)
	}
	for i := 0; i < 3; i++ {
		expect(t, "monitor burst", e.Decide(m, p), Allow, ReasonNone)
	}
	d := e.Decide(m, p)
	expect(t, "monitor over its rate", d, Throttle, ReasonRate)
	if d.RetryAfter != time.Second {
		t.Errorf("RetryAfter %v, want 1s", d.RetryAfter)
	}
	clock.Advance(time.Minute)
	expect(t, "monitor a minute later", e.Decide(m, p), Allow, ReasonNone)
}

// TestSignedAgentGentle: an agent verified by its Web Bot Auth signature is
// treated like a verified search crawler: robots.txt applies, it is never
// throttled or blocked; a bot verified by IP ranges is not. (The ChatGPT
// agent is user-triggered: verified, it answers only to a group that names
// it, issue 27.)
func TestSignedAgentGentle(t *testing.T) {
	clock := newClock()
	p := compile("User-agent: ChatGPT\nCrawl-delay: 10\nDisallow: /private\n\nUser-agent: *\nCrawl-delay: 10\nDisallow: /private\n")
	e := newEngine(t, Config{Burst: 1, Strikes: 3}, clock)
	agent := req("203.0.113.5", uaBrowser, "/page")
	agent.UA = classifier.SignedAgent("https://chatgpt.com", agent.UA)
	agent.Verdict, agent.Signed = uaclass.Verified, true
	for i := 0; i < 20; i++ {
		if d := e.Decide(agent, p); d.Action != Allow {
			t.Fatalf("signed agent request %d: %+v", i, d)
		}
	}
	priv := *agent
	priv.Target = tgt("/private/x")
	for i := 0; i < 10; i++ {
		expect(t, "signed agent on a disallowed path", e.Decide(&priv, p), Deny, ReasonDisallowed)
	}
	if d := e.Decide(agent, p); d.Action != Allow {
		t.Fatalf("signed agent after 10 refusals: %+v", d)
	}
	gpt := req("20.171.206.1", uaGPTBot, "/page")
	gpt.Verdict = uaclass.Verified
	e.Decide(gpt, p)
	e.Decide(gpt, p)
	expect(t, "GPTBot verified by ranges", e.Decide(gpt, p), Throttle, ReasonCrawlDelay)
}
