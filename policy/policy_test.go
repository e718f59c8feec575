package policy

import (
	"strings"
	"testing"
	"time"
)

// check is one query against a robots.txt body.
type check struct {
	agent   string // a product token or a User-Agent string
	target  string
	allowed bool
}

func runChecks(t *testing.T, robots string, checks []check) {
	t.Helper()
	p := Compile(Parse([]byte(robots)))
	for _, c := range checks {
		res := p.Match([]string{c.agent}, c.target)
		if res.Allowed != c.allowed {
			t.Errorf("Match(%q, %q) = %v (rule %v), want %v\nrobots.txt:\n%s", c.agent, c.target, res.Allowed, res.Rule, c.allowed, robots)
		}
	}
}

// TestRFC9309_SimpleExample is the example of RFC 9309 section 5.1.
// https://www.rfc-editor.org/rfc/rfc9309.html#section-5.1
func TestRFC9309_SimpleExample(t *testing.T) {
	const robots = `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
`
	runChecks(t, robots, []check{
		{"otherbot", "/publications/a.html", true},
		{"otherbot", "/example/x", false},
		{"otherbot", "/images/a.gif", false},
		{"otherbot", "/images/a.gif?x=1", true}, // $ anchors the end of the whole target
		{"otherbot", "/", true},
		{"foobot", "/", false},
		{"foobot", "/example/page.html", true},
		{"foobot", "/example/allowed.gif", true},
		{"foobot", "/example/other.html", false},
		{"barbot", "/example/page.html", false},
		{"bazbot", "/example/page.html", false},
		{"bazbot", "/example/x", true}, // the * group does not apply to bazbot
		{"bazbot", "/a.gif", true},
		{"quxbot", "/example/x", true}, // empty group: unrestricted
		{"quxbot", "/a.gif", true},
	})
}

// TestRFC9309_LongestMatch is the example of RFC 9309 section 5.2: the most
// specific (longest) match wins.
// https://www.rfc-editor.org/rfc/rfc9309.html#section-5.2
func TestRFC9309_LongestMatch(t *testing.T) {
	const robots = "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n"
	runChecks(t, robots, []check{
		{"foobot", "/example/page/disallowed.gif", false},
		{"foobot", "/example/page/other.gif", true},
		{"foobot", "/example/page/", true},
	})
	// Order in the file does not matter.
	runChecks(t, "User-Agent: foobot\nDisallow: /example/page/disallowed.gif\nAllow: /example/page/\n", []check{
		{"foobot", "/example/page/disallowed.gif", false},
	})
}

// TestRFC9309_AllowWinsTie: on equal length the Allow rule wins (RFC 9309
// section 2.2.2: "If an allow rule and a disallow rule are equivalent, then
// the allow rule SHOULD be used").
func TestRFC9309_AllowWinsTie(t *testing.T) {
	runChecks(t, "user-agent: a\ndisallow: /x\nallow: /x\n", []check{{"a", "/x", true}, {"a", "/xy", true}})
	runChecks(t, "user-agent: a\nallow: /x\ndisallow: /x\n", []check{{"a", "/x", true}})
	// Equal length with different patterns: "/pag*" and "/page" both match.
	runChecks(t, "user-agent: a\ndisallow: /page\nallow: /pag*\n", []check{{"a", "/page", true}})
	runChecks(t, "user-agent: a\ndisallow: /page\nallow: /pa*\n", []check{{"a", "/page", false}})
}

// TestRFC9309_SpecialCharacters covers '*', '$' and their percent-encoded
// literal forms (RFC 9309 section 2.2.3).
func TestRFC9309_SpecialCharacters(t *testing.T) {
	runChecks(t, `user-agent: a
disallow: /this/path/exactly$
disallow: /star/*/exactly
disallow: /path/file-with-a-%2A.html
disallow: /path/foo-%24
disallow: /mid$dle
`, []check{
		{"a", "/this/path/exactly", false},
		{"a", "/this/path/exactly/", true},
		{"a", "/this/path/exactlyx", true},
		{"a", "/star/x/y/exactly", false},
		{"a", "/star/exactly", true},
		{"a", "/star//exactly", false},
		{"a", "/path/file-with-a-*.html", false},
		{"a", "/path/file-with-a-%2a.html", false},
		{"a", "/path/file-with-a-x.html", true}, // %2A is a literal star, not a wildcard
		{"a", "/path/foo-$", false},
		{"a", "/path/foo-", true},
		{"a", "/mid$dle", false}, // '$' is special only at the end
		{"a", "/mid%24dle", false},
		{"a", "/mid", true},
	})
	runChecks(t, "user-agent: a\ndisallow: /*.php$\ndisallow: /x*y*z$\ndisallow: /w*$\n", []check{
		{"a", "/index.php", false},
		{"a", "/dir/index.php", false},
		{"a", "/index.php?x", true},
		{"a", "/index.php5", true},
		{"a", "/x1y2z", false},
		{"a", "/xyz", false},
		{"a", "/xyzz", false},
		{"a", "/xyza", true},
		{"a", "/xzy", true},
		{"a", "/w", false},
		{"a", "/wanything?q", false},
	})
}

// TestRFC9309_EmptyDisallowAllowsAll: "Disallow:" with no value allows
// everything, and a matching specific group keeps the * group away.
func TestRFC9309_EmptyDisallowAllowsAll(t *testing.T) {
	runChecks(t, "user-agent: *\ndisallow: /\n\nuser-agent: helpbot\ndisallow:\n", []check{
		{"helpbot", "/", true},
		{"helpbot", "/anything", true},
		{"other", "/anything", false},
	})
	runChecks(t, "user-agent: *\nallow:\n", []check{{"x", "/a", true}})
}

// TestRFC9309_RobotsTxtAlwaysAllowed: "The /robots.txt URI is implicitly
// allowed" (RFC 9309 section 2.2.2). The reference parser does not special
// case it; robotsguard does, so a crawler can always learn the rules.
func TestRFC9309_RobotsTxtAlwaysAllowed(t *testing.T) {
	runChecks(t, "user-agent: *\ndisallow: /\ndisallow: /robots.txt\n", []check{
		{"x", "/robots.txt", true},
		{"x", "/robots.txt?x=1", true},
		{"x", "/./robots.txt", true},
		{"x", "/robots.txt.bak", false},
		{"x", "/robots.txtx", false},
		{"x", "/dir/robots.txt", false},
	})
}

// TestRFC9309_GroupsMerged: groups naming the same agent are merged, and the
// * group applies only when no group names the agent (RFC 9309 section
// 2.2.1).
func TestRFC9309_GroupsMerged(t *testing.T) {
	const robots = `user-agent: googlebot
disallow: /a

user-agent: *
disallow: /c

user-agent: googlebot
disallow: /b
`
	runChecks(t, robots, []check{
		{"googlebot", "/a", false},
		{"googlebot", "/b", false},
		{"googlebot", "/c", true},
		{"bingbot", "/a", true},
		{"bingbot", "/c", false},
	})
	// Several * groups merge too.
	runChecks(t, "user-agent: *\ndisallow: /a\nuser-agent: x\ndisallow: /x\nuser-agent: *\ndisallow: /b\n", []check{
		{"y", "/a", false}, {"y", "/b", false}, {"y", "/x", true}, {"x", "/a", true},
	})
	// No * group and no specific group: everything is allowed.
	runChecks(t, "user-agent: x\ndisallow: /\n", []check{{"y", "/", true}})
	// An empty file allows everything.
	runChecks(t, "", []check{{"y", "/", true}})
}

// TestRFC9309_BlankLinesAndComments: blank lines and comments do not end a
// group, so a file in the old 1994 style (records separated by blank lines)
// and the same file without blank lines give the same answers.
func TestRFC9309_BlankLinesAndComments(t *testing.T) {
	style1994 := "# comment\nUser-agent: a\n\n# between\nUser-agent: b\nDisallow: /x\n\nDisallow: /y\n\nUser-agent: c\nDisallow: /z\n"
	compact := "User-agent: a\nUser-agent: b\nDisallow: /x\nDisallow: /y\nUser-agent: c\nDisallow: /z\n"
	checks := []check{
		{"a", "/x", false}, {"a", "/y", false}, {"b", "/y", false}, {"a", "/z", true},
		{"c", "/z", false}, {"c", "/x", true}, {"d", "/x", true},
	}
	runChecks(t, style1994, checks)
	runChecks(t, compact, checks)
}

// TestGroupReadings: a line other than Allow and Disallow between
// User-agent lines (issue 11). Google's reference parser and RFC 9309 keep
// one group; Scrapy's protego and temoto start a new one. Match answers as
// Google does, MatchTarget refuses only what both readings refuse, and lint
// names the line and the fix.
func TestGroupReadings(t *testing.T) {
	for _, c := range []struct {
		name, robots, agent, target string
		google, split               bool // allowed in each reading
		line                        int  // of the split-group warning
	}{
		// github.com's file: Google refuses baidu, protego allows.
		{"crawl-delay", "User-agent: baidu\ncrawl-delay: 1\n\nUser-agent: *\nDisallow: /*/*/pulse\n", "baidu", "/foo/bar/pulse", false, true, 2},
		{"sitemap", "user-agent: a\nsitemap: https://example.com/s.xml\nuser-agent: b\ndisallow: /x\n", "a", "/x", false, true, 2},
		{"host", "user-agent: a\nhost: example.com\nuser-agent: b\ndisallow: /x\n", "a", "/x", false, true, 2},
		{"unknown", "user-agent: a\nfoo: bar\nuser-agent: b\ndisallow: /\n", "a", "/x", false, true, 2},
		{"request-rate", "user-agent: a\nrequest-rate: 1/5\nuser-agent: b\ndisallow: /\n", "a", "/x", false, true, 2},
		// The other direction: the split reading refuses what Google allows.
		{"other direction", "user-agent: a\ncrawl-delay: 1\nuser-agent: b\nallow: /\nuser-agent: a\ndisallow: /\n", "a", "/x", true, false, 2},
		// No difference: the Crawl-delay stands below a rule.
		{"below a rule", "user-agent: a\ndisallow: /y\ncrawl-delay: 1\nuser-agent: b\ndisallow: /x\n", "a", "/x", true, true, 0},
	} {
		r := Parse([]byte(c.robots))
		p := Compile(r)
		if got := p.Match([]string{c.agent}, c.target).Allowed; got != c.google {
			t.Errorf("%s: Match = %v, want Google's %v", c.name, got, c.google)
		}
		target, _ := ParseTarget(c.target)
		g := p.MatchReading([]string{c.agent}, &target, GoogleReading)
		s := p.MatchReading([]string{c.agent}, &target, SplitReading)
		both := p.MatchTarget([]string{c.agent}, &target)
		if g.Allowed != c.google || s.Allowed != c.split {
			t.Errorf("%s: readings google %v split %v, want %v %v", c.name, g.Allowed, s.Allowed, c.google, c.split)
		}
		if both.Allowed != (c.google || c.split) || both.Ambiguous != (c.google != c.split) {
			t.Errorf("%s: MatchTarget %+v, want allowed %v", c.name, both, c.google || c.split)
		}
		found := false
		for _, d := range r.Lint() {
			if d.Code == CodeSplitGroup {
				found = d.Line == c.line
			}
		}
		if found != (c.line != 0) {
			t.Errorf("%s: split-group warning at line %d missing or misplaced: %v", c.name, c.line, r.Lint())
		}
	}
}

// TestCrawlDelayRightAbove: a Crawl-delay applies only to the agents named
// right above it, so Wikipedia's "User-agent: SemrushBot / Crawl-delay: 5"
// before "User-agent: *" does not give every crawler a crawl-delay.
func TestCrawlDelayRightAbove(t *testing.T) {
	const robots = "User-agent: SemrushBot\nCrawl-delay: 5\n\nUser-agent: *\nDisallow: /w/\n"
	p := Compile(Parse([]byte(robots)))
	target, _ := ParseTarget("/w/index.php")
	if res := p.MatchTarget([]string{"semrushbot"}, &target); !res.Allowed || !res.Ambiguous || res.CrawlDelay != 5*time.Second || res.Agent != "semrushbot" {
		t.Errorf("semrushbot: %+v, want allowed (ambiguous) with crawl-delay 5s", res)
	}
	if res := p.MatchTarget([]string{"otherbot"}, &target); res.Allowed || res.CrawlDelay != 0 {
		t.Errorf("otherbot: %+v, want disallowed without crawl-delay", res)
	}
}

// TestClassic1994 covers the examples of the 1994 standard and the seed
// texts: roguebot shut out, comments after a value, "/do" matching
// "/document", several agents in one record, and the home page alone.
func TestClassic1994(t *testing.T) {
	// The "Deluxe robots.txt" of the seed text, with its Diasllow typo.
	const deluxe = `User-agent: roguebot
Disallow: /

User-agent: helpbot
Disallow:

User-agent: *
Diasllow: /private
Disallow: /~sharon/personal.html
Disallow: /~sam/ #marks sam with a no-trespassing sign
`
	runChecks(t, deluxe, []check{
		{"roguebot", "/", false},
		{"RogueBot/1.0", "/index.html", false},
		{"helpbot", "/private/x", true},
		{"x", "/private", false},
		{"x", "/private1/a", false},
		{"x", "/private.html", false},
		{"x", "/~sharon/personal.html", false},
		{"x", "/~sharon/other.html", true},
		{"x", "/~sam/", false},
		{"x", "/%7Esam/page", false},
		{"x", "/%7esam/page", false},
		{"x", "/~sam", true},
		{"x", "/public.html", true},
	})
	runChecks(t, "User-agent: *\nDisallow: /do\n", []check{
		{"x", "/do", false}, {"x", "/document", false}, {"x", "/do/x", false}, {"x", "/d", true},
	})
	runChecks(t, "User-agent: *\nDisallow: /do/\n", []check{
		{"x", "/do/x", false}, {"x", "/document", true}, {"x", "/do", true},
	})
	runChecks(t, "User-agent: webcrawler\nUser-agent: lycra\nUser-agent: BadBot\nDisallow: /\n", []check{
		{"webcrawler", "/a", false}, {"lycra", "/a", false}, {"badbot", "/a", false}, {"goodbot", "/a", true},
	})
	// Everything but the home page, and the home page alone.
	runChecks(t, "User-agent: *\nDisallow: /\nAllow: /$\n", []check{
		{"x", "/", true}, {"x", "/page", false}, {"x", "/?q", false},
	})
	runChecks(t, "User-agent: *\nDisallow: /$\n", []check{
		{"x", "/", false}, {"x", "/page", true},
	})
}

// TestCompat_LineEndsAndBOM: CR, LF and CRLF line ends, mixed, and a UTF-8
// byte order mark (also a partial one) are accepted.
func TestCompat_LineEndsAndBOM(t *testing.T) {
	for name, robots := range map[string]string{
		"LF":          "user-agent: a\ndisallow: /x\nallow: /x/y\n",
		"CRLF":        "user-agent: a\r\ndisallow: /x\r\nallow: /x/y\r\n",
		"CR":          "user-agent: a\rdisallow: /x\rallow: /x/y",
		"mixed":       "user-agent: a\r\ndisallow: /x\rallow: /x/y\n",
		"BOM":         "\xEF\xBB\xBFuser-agent: a\ndisallow: /x\nallow: /x/y\n",
		"partial BOM": "\xEF\xBBuser-agent: a\ndisallow: /x\nallow: /x/y\n",
		"no final LF": "user-agent: a\ndisallow: /x\nallow: /x/y",
	} {
		t.Run(name, func(t *testing.T) {
			runChecks(t, robots, []check{{"a", "/x", false}, {"a", "/x/y", true}, {"a", "/z", true}})
		})
	}
	// Line numbers count CRLF once and a lone CR as a line end.
	r := Parse([]byte("user-agent: a\r\n\r\ndisallow: /x\rdisallow: /y\n"))
	if got := r.Groups[0].Rules; got[0].Line != 3 || got[1].Line != 4 {
		t.Errorf("rule lines = %d, %d, want 3, 4", got[0].Line, got[1].Line)
	}
}

// TestCompat_KeysCaseAndTypos: keys are case-insensitive; the typos the
// reference parser accepts are accepted and reported by lint.
func TestCompat_KeysCaseAndTypos(t *testing.T) {
	for _, tc := range []struct {
		robots string
		lint   string // substring of the expected lint warning, "" for none
	}{
		{"USER-AGENT: a\nDISALLOW: /x\n", ""},
		{"User-Agent: a\nDisAllow: /x\n", ""},
		{"user-agent: a\ndisalow: /x\n", `misspelled field "disalow"`},
		{"user-agent: a\ndissallow: /x\n", `misspelled field "dissallow"`},
		{"user-agent: a\ndissalow: /x\n", `misspelled field "dissalow"`},
		{"user-agent: a\nDiasllow: /x\n", `misspelled field "Diasllow"`},
		{"user-agent: a\ndisallaw: /x\n", `misspelled field "disallaw"`},
		{"useragent: a\ndisallow: /x\n", `misspelled field "useragent"`},
		{"User agent: a\ndisallow: /x\n", `misspelled field "User agent"`},
		{"user-agent a\ndisallow /x\n", `missing ':'`},
	} {
		p := Compile(Parse([]byte(tc.robots)))
		if p.Match([]string{"a"}, "/x").Allowed || !p.Match([]string{"a"}, "/y").Allowed {
			t.Errorf("%q: /x should be disallowed and /y allowed for a", tc.robots)
		}
		ds := Parse([]byte(tc.robots)).Lint()
		if tc.lint == "" {
			if len(ds) != 0 {
				t.Errorf("%q: unexpected lint %v", tc.robots, ds)
			}
		} else if !hasDiag(ds, -1, Warning, tc.lint) {
			t.Errorf("%q: lint %v, want a warning containing %q", tc.robots, ds, tc.lint)
		}
	}
	// A line without a colon is read only when it has exactly two words.
	runChecks(t, "user-agent: a\ndisallow /x /y\n", []check{{"a", "/x", true}})
	if ds := Parse([]byte("user-agent: a\ndisallow /x /y\n")).Lint(); !hasDiag(ds, 2, Warning, "not a robots.txt field") {
		t.Errorf("lint %v", ds)
	}
}

// TestCompat_Comments: '#' starts a comment anywhere on a line.
func TestCompat_Comments(t *testing.T) {
	runChecks(t, "# top\nuser-agent: a # the a bot\n  # indented\ndisallow: /x#y\nallow: /x/ok # fine\n", []check{
		{"a", "/x", false}, {"a", "/xy", false}, {"a", "/x/ok", true},
	})
}

// TestProductTokens: agent names and callers' tokens are reduced to product
// tokens (letters, digits, '_' and '-', case-insensitive) and never matched
// by prefix.
func TestProductTokens(t *testing.T) {
	for in, want := range map[string]string{
		"Googlebot/2.1":            "googlebot",
		"Googlebot-Image/1.0":      "googlebot-image",
		"MJ12bot":                  "mj12bot",
		"Mediapartners-Google*":    "mediapartners-google",
		"ExampleBot/1.0":           "examplebot",
		"VersionBot/3.2":           "versionbot",
		"foo_bar baz":              "foo_bar",
		"Mozilla/5.0 (compatible)": "mozilla",
		"*":                        "",
		"/x":                       "",
		"":                         "",
	} {
		if got := ProductToken(in); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", in, got, want)
		}
	}
	const robots = "User-agent: VersionBot/3.2\nDisallow: /v\n\nUser-agent: MJ12bot\nDisallow: /\n\nUser-agent: Google\nDisallow: /g\n\nUser-agent: Googlebot Images\nDisallow: /i\n"
	runChecks(t, robots, []check{
		{"versionbot", "/v", false},
		{"VersionBot/1.0", "/v", false},
		{"mj12bot", "/x", false},
		{"MJ12bot/v1.4.8", "/x", false},
		{"mj", "/x", true},
		{"googlebot", "/g", true}, // "Google" does not name Googlebot
		{"google", "/g", false},
		{"googlebot", "/i", false}, // "Googlebot Images" names googlebot
	})
	// Tokens are tried most specific first; the first that has a group wins.
	p := Compile(Parse([]byte("user-agent: googlebot\ndisallow: /a\n\nuser-agent: googlebot-image\ndisallow: /b\n\nuser-agent: *\ndisallow: /c\n")))
	for _, tc := range []struct {
		tokens []string
		target string
		agent  string
		ok     bool
	}{
		{[]string{"googlebot-image", "googlebot"}, "/a", "googlebot-image", true},
		{[]string{"googlebot-image", "googlebot"}, "/b", "googlebot-image", false},
		{[]string{"googlebot-news", "googlebot"}, "/a", "googlebot", false},
		{[]string{"Googlebot-News/1.0", "Googlebot/2.1"}, "/b", "googlebot", true},
		{[]string{"other"}, "/c", "*", false},
		{nil, "/c", "*", false},
		{[]string{""}, "/c", "*", false},
	} {
		res := p.Match(tc.tokens, tc.target)
		if res.Agent != tc.agent || res.Allowed != tc.ok {
			t.Errorf("Match(%q, %q) = agent %q allowed %v, want %q %v", tc.tokens, tc.target, res.Agent, res.Allowed, tc.agent, tc.ok)
		}
	}
	// '*' followed by a space and more is still the global agent, as in the
	// reference parser.
	runChecks(t, "user-agent: * everyone\ndisallow: /x\n", []check{{"a", "/x", false}})
}

// TestNormalizeTarget pins the percent-encoding and dot-segment rules that
// robotsguard applies to both patterns and targets.
func TestNormalizeTarget(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "/",
		"/":                   "/",
		"/a/b?c=d":            "/a/b?c=d",
		"/%7Esam/":            "/~sam/",
		"/%7esam/":            "/~sam/",
		"/%70rivate":          "/private",
		"/%2f":                "/%2F",
		"/a%2Fb":              "/a%2Fb",
		"/caf\xC3\xA9":        "/caf%C3%A9",
		"/caf%c3%a9":          "/caf%C3%A9",
		"/a b":                "/a%20b",
		"/a*b$":               "/a%2Ab%24",
		"/a%2ab%24":           "/a%2Ab%24",
		"/a%zz":               "/a%25zz",
		"/a%":                 "/a%25",
		"/public/../private":  "/private",
		"/a/./b":              "/a/b",
		"/a/b/..":             "/a/",
		"/a/.":                "/a/",
		"/../a":               "/a",
		"/%2e%2e/a":           "/a",
		"/a/%2E/b":            "/a/b",
		"//a//b":              "//a//b",
		"/a/..b":              "/a/..b",
		"/a?x=/../y":          "/a?x=/../y",
		"/a?x=%26&y=%7e":      "/a?x=%26&y=~",
		"/a?q=%2a":            "/a?q=%2A",
		"/a;p=1":              "/a;p=1",
		"/a%3Bp":              "/a;p",
		"/a%3fb":              "/a%3Fb",
		"?q":                  "/?q",
		"a":                   "/a",
		"/a#frag":             "/a%23frag",
		"/\x00":               "/%00",
		"/a/b/../../../../..": "/",
	} {
		if got := NormalizeTarget(in); got != want {
			t.Errorf("NormalizeTarget(%q) = %q, want %q", in, got, want)
		}
		if got := NormalizeTarget(want); got != want {
			t.Errorf("NormalizeTarget(%q) = %q, not idempotent", want, got)
		}
	}
}

// TestTargetOf: URLs are reduced to path, parameters and query.
func TestTargetOf(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/a/b?c#d": "/a/b?c",
		"http://example.com":          "/",
		"http://example.com?q":        "/?q",
		"example.com/a":               "/a",
		"/a/b":                        "/a/b",
		"//example.com/a;p":           "/a;p",
		"http://e.com#x/y":            "/",
		"":                            "/",
	} {
		if got := TargetOf(in); got != want {
			t.Errorf("TargetOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNormalizationEquivalence: a rogue bot cannot dodge a rule by
// re-spelling the path, and operators may write patterns either way.
func TestNormalizationEquivalence(t *testing.T) {
	const robots = "user-agent: *\ndisallow: /private\ndisallow: /caf\xC3\xA9\ndisallow: /%7Esam/\ndisallow: /Upper%2fcase\ndisallow: /search?q=\n"
	runChecks(t, robots, []check{
		{"x", "/%70rivate", false},
		{"x", "/%70%72%69%76%61%74%65/x", false},
		{"x", "/public/../private", false},
		{"x", "/./private", false},
		{"x", "/x/%2e%2e/private", false},
		{"x", "/caf%C3%A9", false},
		{"x", "/caf%c3%a9/menu", false},
		{"x", "/~sam/", false},
		{"x", "/%7esam/a", false},
		{"x", "/Upper%2Fcase", false},
		{"x", "/Upper%2fcase", false},
		{"x", "/Upper/case", true}, // an encoded slash is not a path separator
		{"x", "/search?q=robots", false},
		{"x", "/search", true},
		{"x", "/Private", true}, // paths are case-sensitive
	})
	// Pattern side: the same rules spelled differently.
	runChecks(t, "user-agent: *\ndisallow: /%70rivate\ndisallow: /caf%c3%a9\ndisallow: /~sam/\ndisallow: /a/../b/\n", []check{
		{"x", "/private", false}, {"x", "/caf\xC3\xA9", false}, {"x", "/%7Esam/", false}, {"x", "/b/c", false}, {"x", "/a/b/c", true},
	})
}

// TestQueryStringMatched: the query string is part of what rules match.
func TestQueryStringMatched(t *testing.T) {
	runChecks(t, "user-agent: *\ndisallow: /*?\ndisallow: /*sessionid=\nallow: /page?id=\n", []check{
		{"x", "/page", true},
		{"x", "/page?id=3", true},
		{"x", "/page?x=3", false},
		{"x", "/a?sessionid=1", false},
		{"x", "/a/sessionid=1", false},
	})
}

// TestCompat_IndexHTML: like the reference parser, "Allow: /dir/index.html"
// also allows "/dir/".
func TestCompat_IndexHTML(t *testing.T) {
	runChecks(t, "user-agent: *\ndisallow: /\nallow: /a/index.html\nallow: /b/index.htm\n", []check{
		{"x", "/a/", true}, {"x", "/a/index.html", true}, {"x", "/a/x", false}, {"x", "/b/", true}, {"x", "/c/", false},
	})
}

// TestRulesBeforeUserAgent: rules before any User-agent line are ignored and
// reported, as in the reference parser.
func TestRulesBeforeUserAgent(t *testing.T) {
	const robots = "disallow: /x\nuser-agent: a\ndisallow: /y\n"
	runChecks(t, robots, []check{{"a", "/x", true}, {"a", "/y", false}, {"b", "/x", true}})
	if ds := Parse([]byte(robots)).Lint(); !hasDiag(ds, 1, Warning, "before any User-agent") {
		t.Errorf("lint %v", ds)
	}
}

// TestMatchResult: the result names the group, the deciding rule with its
// line and pattern, and the crawl-delay.
func TestMatchResult(t *testing.T) {
	p := Compile(Parse([]byte("user-agent: *\ncrawl-delay: 0.5\ndisallow: /private # keep out\nallow: /private/ok\n\nuser-agent: fast\ncrawl-delay: 10\nallow: /\n")))
	res := p.Match([]string{"x"}, "/private/secret")
	if res.Allowed || res.Agent != "*" || res.Rule == nil || res.Rule.Line != 3 || res.Rule.Pattern != "/private" || res.Rule.Allow || res.CrawlDelay != 500*time.Millisecond {
		t.Errorf("Match = %+v (rule %+v)", res, res.Rule)
	}
	res = p.Match([]string{"x"}, "/private/ok")
	if !res.Allowed || res.Rule == nil || res.Rule.Line != 4 || !res.Rule.Allow {
		t.Errorf("Match = %+v (rule %+v)", res, res.Rule)
	}
	res = p.Match([]string{"x"}, "/public")
	if !res.Allowed || res.Rule != nil {
		t.Errorf("Match = %+v, want allowed with no rule", res)
	}
	res = p.Match([]string{"fast"}, "/x")
	if !res.Allowed || res.Agent != "fast" || res.CrawlDelay != 10*time.Second || res.Rule == nil || res.Rule.Line != 8 {
		t.Errorf("Match = %+v", res)
	}
	res = Compile(Parse(nil)).Match([]string{"x"}, "/")
	if !res.Allowed || res.Agent != "" || res.Rule != nil {
		t.Errorf("empty policy: %+v", res)
	}
}

// TestFieldsKept: Crawl-delay, Sitemap, Host, the canonicalisation fields and
// unknown lines are kept in the model.
func TestFieldsKept(t *testing.T) {
	r := Parse([]byte(`QueryParam: -sid
X-Custom: yes
User-agent: *
Crawl-delay: 2.5
QueryParam: -sid, refby=search
Request-rate: 1/5
Disallow: /x
Sitemap: https://example.com/sitemap.xml
Host: example.com
Domain: https://example.com/
IndexPage: index.html
Site-map: https://example.com/other.xml
`))
	g := r.Groups[0]
	if d, ok := g.CrawlDelay(); !ok || d != 2500*time.Millisecond {
		t.Errorf("CrawlDelay = %v, %v", d, ok)
	}
	if got := g.Values(KeyQueryParam); len(got) != 1 || got[0] != "-sid, refby=search" {
		t.Errorf("group QueryParam = %q", got)
	}
	if got := g.Values("Request-rate"); len(got) != 1 || got[0] != "1/5" {
		t.Errorf("unknown group field = %q", got)
	}
	for key, want := range map[string]string{
		KeyQueryParam: "-sid", "X-Custom": "yes", KeyHost: "example.com",
		KeyDomain: "https://example.com/", KeyIndexPage: "index.html",
	} {
		if got := r.Values(key); len(got) != 1 || got[0] != want {
			t.Errorf("Values(%q) = %q, want %q", key, got, want)
		}
	}
	if got := r.Values(KeySitemap); len(got) != 2 {
		t.Errorf("sitemaps = %q", got)
	}
	out := string(r.Generate())
	for _, line := range []string{"QueryParam: -sid\n", "X-Custom: yes\n", "Crawl-delay: 2.5\n", "Request-rate: 1/5\n", "Sitemap: https://example.com/other.xml\n", "Host: example.com\n", "Domain: https://example.com/\n", "IndexPage: index.html\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("Generate lost %q:\n%s", line, out)
		}
	}
}

// TestLimits: only MaxSize bytes are read, overlong lines are cut, junk never
// crashes the parser.
func TestLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("user-agent: *\n")
	for b.Len() < MaxSize-20 {
		b.WriteString("disallow: /in\n")
	}
	b.WriteString("disallow: /beyond-the-limit-of-the-parser\n")
	r := Parse([]byte(b.String()))
	p := Compile(r)
	if p.Match([]string{"x"}, "/in").Allowed {
		t.Error("rules within the limit are ignored")
	}
	if !p.Match([]string{"x"}, "/beyond-the-limit-of-the-parser").Allowed {
		t.Error("a rule beyond MaxSize was read")
	}
	if !hasDiag(r.Lint(), -1, Warning, "larger than") {
		t.Error("no lint warning for an oversized file")
	}
	long := "user-agent: *\ndisallow: /" + strings.Repeat("a", 3*maxLineLen) + "\ndisallow: /b\n"
	r = Parse([]byte(long))
	if !hasDiag(r.Lint(), 2, Warning, "longer than") {
		t.Error("no lint warning for an overlong line")
	}
	if Compile(r).Match([]string{"x"}, "/b").Allowed {
		t.Error("the line after an overlong line was lost")
	}
}

// TestLint covers each lint check.
func TestLint(t *testing.T) {
	for _, tc := range []struct {
		name, robots string
		line         int
		sev          Severity
		msg          string
	}{
		{"html", "<!DOCTYPE html>\n<html><body>Not found</body></html>\n", 1, Error, "HTML"},
		{"html after blank lines", "\r\n\r\n  <html><body>Not found</body></html>\n", 3, Error, "HTML"},
		{"binary", "user-agent: *\ndisallow: /\x00\x01\x02\n", 2, Error, "NUL"},
		{"pattern without slash", "user-agent: *\ndisallow: private\n", 2, Warning, "does not start with '/'"},
		{"wildcard agent", "user-agent: Mediapartners-Google*\ndisallow: /\n", 1, Warning, "wildcard in user-agent"},
		{"no token", "user-agent: /bot\ndisallow: /\n", 1, Warning, "no product token"},
		{"version in agent", "user-agent: Googlebot/2.1\ndisallow: /\n", 1, Info, "product token \"googlebot\""},
		{"empty group", "user-agent: a\nsitemap: https://e.com/s.xml\n", 1, Warning, "has no rules"},
		{"shadowed", "user-agent: a\ndisallow: /x\nallow: /x\n", 2, Warning, "never decides"},
		{"shadowed by star", "user-agent: a\nallow: /x\ndisallow: /x*\n", 2, Warning, "never decides"},
		{"duplicate", "user-agent: a\ndisallow: /x\ndisallow: /x\n", 3, Info, "repeats line 2"},
		{"unknown", "user-agent: a\nfoo: bar\ndisallow: /\n", 2, Info, "unknown field \"foo\""},
		{"bad delay", "user-agent: a\ncrawl-delay: soon\ndisallow: /\n", 2, Warning, "not a number"},
		{"bad sitemap", "user-agent: a\ndisallow: /\nsitemap: /sitemap.xml\n", 3, Warning, "not an absolute"},
		{"two hosts", "host: a.com\nhost: b.com\n", 2, Warning, "more than one Host"},
		{"blank among agents", "user-agent: a\n\nuser-agent: b\ndisallow: /\n", 3, Info, "blank line between User-agent lines"},
		{"non-standard key", "user-agent: a\ndisallowed: /x\n", 2, Warning, "only its start"},
		{"junk", "user-agent: a\nthis line has words\ndisallow: /\n", 2, Warning, "not a robots.txt field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Parse([]byte(tc.robots))
			ds := r.Lint()
			if !hasDiag(ds, tc.line, tc.sev, tc.msg) {
				t.Errorf("Lint() = %v, want %s on line %d containing %q", ds, tc.sev, tc.line, tc.msg)
			}
			if err := r.Err(); (tc.sev == Error) != (err != nil) {
				t.Errorf("Err() = %v", err)
			}
		})
	}
	// A clean file lints clean.
	if ds := Parse([]byte("User-agent: *\nDisallow: /private/\nAllow: /private/public\nSitemap: https://example.com/sitemap.xml\n")).Lint(); len(ds) != 0 {
		t.Errorf("clean file: %v", ds)
	}
	// Diagnostics are sorted by line and formatted LINE: severity: message.
	ds := Parse([]byte("user-agent: a\ndisalow: /x\nfoo: 1\n")).Lint()
	if len(ds) != 2 || ds[0].Line != 2 || ds[1].Line != 3 || !strings.HasPrefix(ds[0].String(), "2: warning: ") {
		t.Errorf("diagnostics: %v", ds)
	}
	err := Parse([]byte("<html>\n")).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "robots.txt line 1: ") {
		t.Errorf("Err() = %v", err)
	}
}

// TestGenerate: output is canonical, deterministic and round-trip safe, and
// additions merge in.
func TestGenerate(t *testing.T) {
	const in = `# header
Disallow: /stray
user agent: a
USER-AGENT: b
Diasllow: /x   # typo
crawl-delay: 3

user-agent: *
disallow: /y
sitemap: https://example.com/s.xml
user-agent: quxbot
`
	r := Parse([]byte(in))
	const want = `# ignored, before any User-agent line: Disallow: /stray

User-agent: a
User-agent: b
Crawl-delay: 3
Disallow: /x

User-agent: *
Disallow: /y

User-agent: quxbot
Disallow:

Sitemap: https://example.com/s.xml
`
	if got := string(r.Generate()); got != want {
		t.Errorf("Generate() =\n%s\nwant\n%s", got, want)
	}
	// The comment for the ignored rule is dropped when read back; from then
	// on the text is a fixed point.
	again := strings.TrimPrefix(want, "# ignored, before any User-agent line: Disallow: /stray\n\n")
	if got := string(Parse(r.Generate()).Generate()); got != again {
		t.Errorf("Generate(Parse(Generate())) =\n%s\nwant\n%s", got, again)
	}
	assertSameAnswers(t, r, Parse(r.Generate()), []string{"a", "b", "quxbot", "other"}, []string{"/x", "/y", "/stray", "/"})

	// Additions: a blocked class's group, trap rules for every group, a
	// sitemap.
	add := r.Clone()
	add.AddGroup([]string{"GPTBot", "CCBot"}, Rule{Pattern: "/"})
	add.AddRulesToAll(Rule{Pattern: "/trap/"})
	add.AddSitemap("https://example.com/s.xml")
	add.AddSitemap("https://example.com/more.xml")
	p := Compile(Parse(add.Generate()))
	for _, c := range []check{
		{"gptbot", "/anything", false}, {"ccbot", "/", false}, {"a", "/trap/x", false}, {"quxbot", "/trap/", false},
		{"other", "/trap/", false}, {"quxbot", "/x", true}, {"a", "/y", true},
	} {
		if got := p.Match([]string{c.agent}, c.target).Allowed; got != c.allowed {
			t.Errorf("after additions: Match(%q, %q) = %v, want %v", c.agent, c.target, got, c.allowed)
		}
	}
	if got := Parse(add.Generate()).Values(KeySitemap); len(got) != 2 {
		t.Errorf("sitemaps after additions: %q", got)
	}
	// The original model is untouched by edits to the clone.
	if len(r.Groups) != 3 || len(r.Values(KeySitemap)) != 1 {
		t.Error("Clone shares state with the original")
	}
	// AddRulesToAll creates a * group when there is none.
	none := Parse([]byte("user-agent: a\ndisallow: /a\n"))
	none.AddRulesToAll(Rule{Pattern: "/trap"})
	if Compile(none).Match([]string{"zzz"}, "/trap").Allowed {
		t.Error("AddRulesToAll did not cover agents without a group")
	}
	// Values that would break the line structure are made safe.
	odd := &Robots{}
	odd.AddGroup([]string{"a\nUser-agent: b"}, Rule{Pattern: "/x#y z"})
	out := Parse(odd.Generate())
	if len(out.Groups) != 1 || len(out.Groups[0].Agents) != 1 {
		t.Errorf("an agent name with a line end split the group:\n%s", odd.Generate())
	}
	for _, p := range []*Policy{Compile(odd), Compile(out)} {
		if p.Match([]string{"a"}, "/x%23y%20z").Allowed {
			t.Errorf("pattern with '#' lost:\n%s", odd.Generate())
		}
	}
}

// TestCompileIsolated: a Policy does not change when its model is edited.
func TestCompileIsolated(t *testing.T) {
	r := Parse([]byte("user-agent: *\ndisallow: /x\n"))
	p := Compile(r)
	r.Groups[0].Rules[0].Pattern = "/y"
	if p.Match(nil, "/x").Allowed {
		t.Error("editing the model changed the compiled policy")
	}
	if got := p.Robots().Groups[0].Rules[0].Pattern; got != "/x" {
		t.Errorf("Policy.Robots() = %q", got)
	}
}

// TestMatchAllocs: Match allocates nothing, also for targets that need
// normalising.
func TestMatchAllocs(t *testing.T) {
	p := Compile(Parse([]byte("user-agent: *\ndisallow: /private\ndisallow: /*.gif$\n\nuser-agent: googlebot\nallow: /\n")))
	for _, target := range []string{"/public/page.html", "/%70rivate/../x.gif", "/caf\xC3\xA9?q=1"} {
		tokens := []string{"Googlebot-Image/1.0", "GoogleBot"}
		if n := testing.AllocsPerRun(100, func() { p.Match(tokens, target) }); n != 0 {
			t.Errorf("Match(%q) allocates %v times", target, n)
		}
	}
}

func hasDiag(ds []Diagnostic, line int, sev Severity, msg string) bool {
	for _, d := range ds {
		if (line < 0 || d.Line == line) && d.Severity == sev && strings.Contains(d.Message, msg) {
			return true
		}
	}
	return false
}

func assertSameAnswers(t *testing.T, a, b *Robots, agents, targets []string) {
	t.Helper()
	pa, pb := Compile(a), Compile(b)
	for _, ag := range agents {
		for _, tg := range targets {
			ra, rb := pa.Match([]string{ag}, tg), pb.Match([]string{ag}, tg)
			if ra.Allowed != rb.Allowed || ra.Agent != rb.Agent || ra.CrawlDelay != rb.CrawlDelay {
				t.Errorf("Match(%q, %q): %+v vs %+v", ag, tg, ra, rb)
			}
		}
	}
}

// TestMatchTarget: for enforcement, a query never turns a disallowed
// resource into an allowed one (issue 10, items 3 and 4), unless a rule with
// '?' names the target; Match keeps RFC 9309's reading.
func TestMatchTarget(t *testing.T) {
	p := Compile(Parse([]byte("User-agent: *\nDisallow: /report.html$\nDisallow: /search$\nAllow: /search?q=\nDisallow: /private\n" +
		"\nUser-agent: plain\nDisallow: /x\n" +
		"\nUser-agent: pdf\nAllow: /\nDisallow: /*.pdf$\n" +
		"\nUser-agent: css\nAllow: /*.css$\nDisallow: /admin\nAllow: /*.js\n")))
	for _, c := range []struct {
		agent, target string
		want          bool
	}{
		{"x", "/report.html", false},
		{"x", "/report.html?", false},
		{"x", "/report.html?x=1", false},
		{"x", "/report.htmlx", true},
		{"x", "/search?q=robots", true}, // a rule with '?' names it
		{"x", "/search?page=2", false},
		{"x", "/private?x", false},
		{"x", "/other?x=1", true},
		{"plain", "/y?x", true},
		{"plain", "/x?y", false},
		// Item 3: a '$' rule and a query, while another rule matches too.
		{"pdf", "/docs/report.pdf", false},
		{"pdf", "/docs/report.pdf?x=1", false},
		{"pdf", "/docs/report.pdfx?x=1", true},
		{"pdf", "/docs/report.html?f=a.pdf", false}, // as RFC 9309 reads it
		{"pdf", "/docs/report.html?f=a.pdf&x", true},
		// Item 4: a query does not satisfy a '$' Allow...
		{"css", "/admin.html?.css", false},
		{"css", "/site.css?v=2", true},
		// ... nor an Allow without '$' that reaches into the query.
		{"css", "/admin.html?x.js", false},
		{"css", "/static/app.js?v=1", true},
	} {
		target, err := ParseTarget(c.target)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.MatchTarget([]string{c.agent}, &target).Allowed; got != c.want {
			t.Errorf("%s: MatchTarget(%q) = %v, want %v", c.agent, c.target, got, c.want)
		}
	}
	if !p.Match(nil, "/report.html?x=1").Allowed || !p.Match([]string{"css"}, "/admin.html?.css").Allowed {
		t.Error("Match must keep RFC 9309's reading of '$' and of the query")
	}
}

// TestMatchTargetDotSegments: every spelling a file server cleans to a
// disallowed file is refused (issue 10, item 2).
func TestMatchTargetDotSegments(t *testing.T) {
	p := Compile(Parse([]byte("User-agent: *\nDisallow: /*.pdf$\nDisallow: /private/\nDisallow: /exact$\n")))
	for target, want := range map[string]bool{
		"/docs/report.pdf":              false,
		"/docs/report.pdf/.":            false,
		"/docs/report.pdf/./.":          false,
		"/docs/report.pdf/x/..":         false,
		"/docs/report.pdf/%2e":          false,
		"/docs/report.pdf/.?x=1":        false,
		"/docs//report.pdf":             false,
		"/docs/report.pdf%2F.":          false,
		"/docs/report.pdf/":             true, // a normal spelling, allowed by the rules; file_server redirects it
		"/private/x":                    false,
		"/private%2Fx":                  false,
		"/private;jsessionid=1/x":       false,
		`/private\x`:                    false,
		"/exact/.":                      false,
		"/exact":                        false,
		"/exact/":                       true,
		"http://host/private/x":         false,
		"http://host/docs/report.pdf/.": false,
		"x:/private/x":                  false,
	} {
		pt, err := ParseTarget(target)
		if err != nil {
			t.Fatalf("ParseTarget(%q): %v", target, err)
		}
		if got := p.MatchTarget([]string{"bot"}, &pt).Allowed; got != want {
			t.Errorf("MatchTarget(%q) = %v, want %v (normal %q, variants %q)", target, got, want, pt.Normal, pt.Variants)
		}
	}
}

// TestGenerateKeepsReadings: the served robots.txt (the site's file with
// added groups and trap rules) reads as the site's file does, in both
// readings of the groups.
func TestGenerateKeepsReadings(t *testing.T) {
	check := func(name string, r *Robots, agent, target string, google, split bool) {
		t.Helper()
		p := Compile(Parse(r.Generate()))
		pt, _ := ParseTarget(target)
		if g := p.MatchReading([]string{agent}, &pt, GoogleReading).Allowed; g != google {
			t.Errorf("%s: %s %s in Google's reading: %v, want %v\n%s", name, agent, target, g, google, r.Generate())
		}
		if s := p.MatchReading([]string{agent}, &pt, SplitReading).Allowed; s != split {
			t.Errorf("%s: %s %s in the split reading: %v, want %v\n%s", name, agent, target, s, split, r.Generate())
		}
	}
	// A group without rules at the end, then an added group: the added
	// group's rules must not reach it in Google's reading.
	r := Parse([]byte("User-agent: *\nDisallow: /p\n\nUser-agent: a\nCrawl-delay: 5\n"))
	r.AddGroup([]string{"gptbot"}, Rule{Pattern: "/"})
	check("added group", r, "a", "/x", true, true)
	check("added group", r, "gptbot", "/x", false, false)
	// A Sitemap line between User-agent lines stays where it stood.
	r = Parse([]byte("User-agent: a\nSitemap: https://example.com/s.xml\nUser-agent: b\nDisallow: /x\n"))
	check("sitemap", r, "a", "/x", false, true)
	// Trap rules reach a joined group's agents without ending the join.
	r = Parse([]byte("User-agent: baidu\ncrawl-delay: 1\n\nUser-agent: *\nDisallow: /*/*/pulse\n"))
	r.AddRulesToAll(Rule{Pattern: "/trap/"})
	check("trap", r, "baidu", "/trap/x", false, false)
	check("trap", r, "baidu", "/a/b/pulse", false, true)
	check("trap", r, "other", "/trap/x", false, false)
}
