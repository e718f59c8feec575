package enforce

import (
	"testing"

	"github.com/robotsguard/robotsguard/uaclass"
)

// TestUnverifiedSearchNotBlocked (issue 10, item 9): a claimed search
// crawler whose verification did not finish is refused on disallowed paths
// but never blocked for it, so that exhausting verification cannot get a
// real Googlebot blocked. A claim that was not checked at all (verification
// off) escalates as before.
func TestUnverifiedSearchNotBlocked(t *testing.T) {
	clock := newClock()
	p := compile("User-agent: *\nDisallow: /private\n")
	e := newEngine(t, Config{Strikes: 3}, clock)
	gb := req("66.249.66.1", uaGooglebot, "/private/x")
	gb.Verdict = uaclass.Unverified
	for i := 0; i < 20; i++ {
		expect(t, "unverified Googlebot on a disallowed path", e.Decide(gb, p), Deny, ReasonDisallowed)
	}
	ok := *gb
	ok.Target = tgt("/page")
	expect(t, "unverified Googlebot after 20 refusals", e.Decide(&ok, p), Allow, ReasonNone)

	unchecked := req("66.249.66.2", uaGooglebot, "/private/x")
	for i := 0; i < 3; i++ {
		e.Decide(unchecked, p)
	}
	expect(t, "unchecked Googlebot after 3 strikes", e.Decide(unchecked, p), Deny, ReasonBlockedClient)
}

// TestSignedAgentGentle: an agent verified by its Web Bot Auth signature is
// treated like a verified search crawler: robots.txt applies, it is never
// throttled or blocked; a bot verified by IP ranges is not.
func TestSignedAgentGentle(t *testing.T) {
	clock := newClock()
	p := compile("User-agent: *\nCrawl-delay: 10\nDisallow: /private\n")
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
