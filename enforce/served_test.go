package enforce

import (
	"testing"

	"github.com/robotsguard/robotsguard/uaclass"
)

// TestTrapUnderOwnersAllow (issue 29, item 2): the served robots.txt with
// "trap /trap-here/" and the site's "Allow: /trap-here/open/" allows
// /trap-here/open/x.html (the longer rule wins): a bot that obeys it is
// served there, never refused or blocked, and so is a browser; the rest of
// the trap traps.
func TestTrapUnderOwnersAllow(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Traps: []string{"/trap-here/"}}, clock)
	// As the handler serves it: the site's rules, and the trap for every
	// agent.
	p := compile("User-agent: *\nAllow: /trap-here/open/\nDisallow: /private/\nDisallow: /trap-here/\n")
	for _, ua := range []string{uaExample, uaBrowser} {
		for i := 0; i < 10; i++ {
			clock.Advance(2e9)
			d := e.Decide(req("192.0.2.1", ua, "/trap-here/open/x.html"), p)
			expect(t, "allowed part of the trap", d, Allow, ReasonNone)
		}
		expect(t, "after it", e.Decide(req("192.0.2.1", ua, "/"), p), Allow, ReasonNone)
	}
	expect(t, "the trap", e.Decide(req("192.0.2.2", uaExample, "/trap-here/x.html"), p), Deny, ReasonTrap)
	expect(t, "after the trap", e.Decide(req("192.0.2.2", uaExample, "/"), p), Deny, ReasonBlockedClient)
	d := e.Decide(req("192.0.2.3", uaBrowser, "/trap-here/x.html"), p)
	expect(t, "the trap, browser", d, Deny, ReasonTrap)
	if d.Rule == nil || d.Rule.Pattern != "/trap-here/" || d.Group != "*" {
		t.Errorf("the trap names %q %v, want the served file's line", d.Group, d.Rule)
	}
	// A group of its own that allows the trap path: that bot is not trapped
	// there; others are.
	p2 := compile("User-agent: *\nDisallow: /trap-here/\n\nUser-agent: ExampleBot\nAllow: /trap-here/\nDisallow: /trap-here/\n")
	expect(t, "own group allows the trap", e.Decide(req("198.51.100.4", uaExample, "/trap-here/x"), p2), Allow, ReasonNone)
	expect(t, "another bot", e.Decide(req("192.0.2.5", uaGPTBot, "/trap-here/x"), p2), Deny, ReasonTrap)
}

// TestClassBlockUnderOwnersAllow (issue 29, item 2): with "block_class ai"
// the served file adds "Disallow: /" for GPTBot, which ties the site's own
// "User-agent: GPTBot" / "Allow: /" and loses (Allow wins a tie): GPTBot
// is allowed by the file it is served, so it is judged as any other bot,
// paced and never blocked for its class. Another AI bot the site names
// nowhere is shut out.
func TestClassBlockUnderOwnersAllow(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{BlockClasses: []uaclass.Class{uaclass.AI}}, clock)
	p := compile("User-agent: *\nDisallow: /private/\n\nUser-agent: GPTBot\nAllow: /\nDisallow: /private/\n\n" +
		"User-agent: GPTBot\nUser-agent: ClaudeBot\nDisallow: /\n")
	gpt := req("20.171.206.1", uaGPTBot, "/page")
	for i := 0; i < 20; i++ {
		clock.Advance(2e9) // keeps to its class rate
		expect(t, "GPTBot, allowed by its own group", e.Decide(gpt, p), Allow, ReasonNone)
	}
	// Where the served file disallows it, the class block applies, naming
	// the line that disallows.
	d := e.Decide(req("20.171.206.1", uaGPTBot, "/private/x"), p)
	expect(t, "GPTBot, disallowed by its own group", d, Deny, ReasonBlockedClass)
	if d.Rule == nil || d.Rule.Pattern != "/private/" || d.Rule.Line != 6 {
		t.Errorf("GPTBot on /private/x: rule %v", d.Rule)
	}
	claude := req("20.171.206.2", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", "/page")
	d = e.Decide(claude, p)
	expect(t, "ClaudeBot, blocked class", d, Deny, ReasonBlockedClass)
	if d.Rule == nil || d.Rule.Pattern != "/" || d.Group != "claudebot" {
		t.Errorf("the class block names %q %v, want the served file's Disallow: /", d.Group, d.Rule)
	}
	// Without a policy, the class block applies as configured.
	expect(t, "no policy", e.Decide(req("20.171.206.3", uaGPTBot, "/"), nil), Deny, ReasonBlockedClass)
}
