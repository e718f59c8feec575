package policy_test

import (
	"fmt"

	"github.com/robotsguard/robotsguard/policy"
)

func ExampleCompile() {
	robots := []byte(`User-agent: *
Disallow: /private/   # keep out
Allow: /private/press/
Crawl-delay: 2

User-agent: roguebot
Disallow: /
`)
	p := policy.Compile(policy.Parse(robots))
	for _, q := range []struct{ ua, target string }{
		{"Googlebot/2.1", "/private/report.pdf"},
		{"Googlebot/2.1", "/private/press/release.html"},
		{"Googlebot/2.1", "/%70rivate/../private/x"},
		{"RogueBot/1.0", "/"},
		{"RogueBot/1.0", "/robots.txt"},
	} {
		res := p.Match([]string{q.ua}, q.target)
		rule := "no rule"
		if res.Rule != nil {
			rule = fmt.Sprintf("line %d %q", res.Rule.Line, res.Rule.String())
		}
		fmt.Printf("%-14s %-28s allowed=%-5v group=%s delay=%v (%s)\n", q.ua, q.target, res.Allowed, res.Agent, res.CrawlDelay, rule)
	}
	// Output:
	// Googlebot/2.1  /private/report.pdf          allowed=false group=* delay=2s (line 2 "Disallow: /private/")
	// Googlebot/2.1  /private/press/release.html  allowed=true  group=* delay=2s (line 3 "Allow: /private/press/")
	// Googlebot/2.1  /%70rivate/../private/x      allowed=false group=* delay=2s (line 2 "Disallow: /private/")
	// RogueBot/1.0   /                            allowed=false group=roguebot delay=0s (line 7 "Disallow: /")
	// RogueBot/1.0   /robots.txt                  allowed=true  group=roguebot delay=0s (no rule)
}

func ExampleRobots_Lint() {
	r := policy.Parse([]byte("User-agent: *\nDiasllow: /private\nDisallow: secret\nNoindex: /x\n"))
	for _, d := range r.Lint() {
		fmt.Println(d)
	}
	// Output:
	// 2: warning: misspelled field "Diasllow" read as "Disallow"
	// 3: warning: pattern "secret" does not start with '/' or '*' and never matches
	// 4: info: unknown field "Noindex" is kept but has no effect
}

func ExampleRobots_Generate() {
	r := policy.Parse([]byte("user-agent: *\ndisallow: /private\n"))
	r.AddGroup([]string{"GPTBot", "CCBot"}, policy.Rule{Pattern: "/"})
	r.AddRulesToAll(policy.Rule{Pattern: "/trap/"})
	r.AddSitemap("https://example.com/sitemap.xml")
	fmt.Print(string(r.Generate()))
	// Output:
	// User-agent: *
	// Disallow: /private
	// Disallow: /trap/
	//
	// User-agent: GPTBot
	// User-agent: CCBot
	// Disallow: /
	// Disallow: /trap/
	//
	// Sitemap: https://example.com/sitemap.xml
}
