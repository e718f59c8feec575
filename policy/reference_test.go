package policy

import (
	"strings"
	"testing"
)

// refCase is one scenario of the behaviour of Google's reference parser
// (github.com/google/robotstxt), as its test suite states it: a robots.txt,
// a crawler's product token, a URL, and the reference's answer. Where
// robotsguard deliberately answers otherwise, departure says why and ours
// holds our answer.
type refCase struct {
	robots, agent, url string
	reference          bool
	departure          string
	ours               bool
}

// The scenarios, grouped as the reference's suite groups them.
var refCases = map[string][]refCase{
	"line syntax": {
		{robots: "user-agent: FooBot\ndisallow: /\n", agent: "FooBot", url: "http://foo.bar/x/y", reference: false},
		{robots: "foo: FooBot\nbar: /\n", agent: "FooBot", url: "http://foo.bar/x/y", reference: true},
		// A missing colon is assumed.
		{robots: "user-agent FooBot\ndisallow /\n", agent: "FooBot", url: "http://foo.bar/x/y", reference: false},
	},
	"groups": groupCases(),
	"key case": {
		{robots: "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n", agent: "FooBot", url: "http://foo.bar/x/y", reference: true},
		{robots: "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n", agent: "FooBot", url: "http://foo.bar/x/y", reference: true},
		{robots: "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n", agent: "FooBot", url: "http://foo.bar/a/b", reference: false},
		{robots: "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n", agent: "FooBot", url: "http://foo.bar/a/b", reference: false},
	},
	"agent value case, up to the first space": {
		{robots: "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n", agent: "Foo", url: "http://foo.bar/x/y", reference: true},
		{robots: "User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n", agent: "foo", url: "http://foo.bar/x/y", reference: true},
		{robots: "User-Agent: foo bar\nAllow: /x/\nDisallow: /\n", agent: "FOO", url: "http://foo.bar/a/b", reference: false},
		{robots: "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n", agent: "Foo", url: "http://foo.bar/x/y", reference: true},
	},
	"global group": {
		{robots: "", agent: "FooBot", url: "http://foo.bar/x/y", reference: true},
		{robots: "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n", agent: "FooBot", url: "http://foo.bar/x/y", reference: false},
		{robots: "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n", agent: "BarBot", url: "http://foo.bar/x/y", reference: true},
		{robots: "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\nuser-agent: BazBot\ndisallow: /\n", agent: "QuxBot", url: "http://foo.bar/x/y", reference: true},
	},
	"path case": {
		{robots: "user-agent: FooBot\ndisallow: /x/\n", agent: "FooBot", url: "http://foo.bar/x/y", reference: false},
		{robots: "user-agent: FooBot\ndisallow: /X/\n", agent: "FooBot", url: "http://foo.bar/x/y", reference: true},
	},
	"longest match": {
		{robots: "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", agent: "FooBot", url: "http://foo.bar/x/page.html", reference: false},
		{robots: "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", agent: "FooBot", url: "http://foo.bar/x/page.html", reference: true},
		{robots: "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", agent: "FooBot", url: "http://foo.bar/x/", reference: false},
		{robots: "user-agent: FooBot\ndisallow: \nallow: \n", agent: "FooBot", url: "http://foo.bar/x/page.html", reference: true},
		{robots: "user-agent: FooBot\ndisallow: /\nallow: /\n", agent: "FooBot", url: "http://foo.bar/x/page.html", reference: true},
		{robots: "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", agent: "FooBot", url: "http://foo.bar/x", reference: false},
		{robots: "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", agent: "FooBot", url: "http://foo.bar/x/", reference: true},
		{robots: "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", agent: "FooBot", url: "http://foo.bar/x/page.html", reference: true},
		{robots: "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", agent: "FooBot", url: "http://foo.bar/page.html", reference: false},
		{robots: "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", agent: "FooBot", url: "http://foo.bar/page", reference: true},
		{robots: "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", agent: "FooBot", url: "http://foo.bar/x/page.html", reference: true},
		{robots: "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", agent: "FooBot", url: "http://foo.bar/x/y.html", reference: false},
		{robots: "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", agent: "FooBot", url: "http://foo.bar/x/page", reference: true},
		{robots: "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", agent: "FooBot", url: "http://foo.bar/y/page", reference: false},
	},
	"encoding": {
		{robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", agent: "FooBot", url: "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par", reference: true},
		{robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", agent: "FooBot", url: "http://foo.bar/foo/bar/%E3%83%84", reference: true},
		{robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", agent: "FooBot", url: "http://foo.bar/foo/bar/%E3%83%84", reference: true},
		{robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", agent: "FooBot", url: "http://foo.bar/foo/bar/%62%61%7A", reference: true},
		// The reference compares a raw non-ASCII URL byte for byte with
		// the encoded pattern. A server decodes both spellings to the same
		// file, so robotsguard encodes the target as well.
		{robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", agent: "FooBot", url: "http://foo.bar/foo/bar/ツ", reference: false,
			departure: "the target is percent-encoded like the pattern", ours: true},
		{robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", agent: "FooBot", url: "http://foo.bar/foo/bar/ツ", reference: false,
			departure: "the target is percent-encoded like the pattern", ours: true},
		// The reference leaves encoded unreserved characters alone; a
		// server decodes /%62%61%7A to /baz, and a rule must not be
		// dodged by spelling it otherwise.
		{robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", agent: "FooBot", url: "http://foo.bar/foo/bar/baz", reference: false,
			departure: "encoded unreserved characters are decoded on both sides", ours: true},
	},
	"special characters": {
		{robots: "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", agent: "FooBot", url: "http://foo.bar/foo/bar/quz", reference: false},
		{robots: "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", agent: "FooBot", url: "http://foo.bar/foo/quz", reference: true},
		{robots: "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", agent: "FooBot", url: "http://foo.bar/foo//quz", reference: true},
		{robots: "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", agent: "FooBot", url: "http://foo.bar/foo/bax/quz", reference: true},
		{robots: "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", agent: "FooBot", url: "http://foo.bar/foo/bar", reference: false},
		{robots: "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", agent: "FooBot", url: "http://foo.bar/foo/bar/qux", reference: true},
		{robots: "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", agent: "FooBot", url: "http://foo.bar/foo/bar/", reference: true},
		{robots: "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", agent: "FooBot", url: "http://foo.bar/foo/bar/baz", reference: true},
		{robots: "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n", agent: "FooBot", url: "http://foo.bar/foo/bar", reference: true},
		{robots: "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n", agent: "FooBot", url: "http://foo.bar/foo/quz", reference: false},
	},
	"index.html is the directory": {
		{robots: "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n", agent: "foobot", url: "http://foo.com/allowed-slash/", reference: true},
		{robots: "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n", agent: "foobot", url: "http://foo.com/allowed-slash/index.htm", reference: false},
		{robots: "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n", agent: "foobot", url: "http://foo.com/allowed-slash/index.html", reference: true},
		{robots: "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n", agent: "foobot", url: "http://foo.com/anyother-url", reference: false},
	},
	"documentation: /fish": fishCases("/fish", map[string]bool{
		"/bar": false, "/fish": true, "/fish.html": true, "/fish/salmon.html": true, "/fishheads": true,
		"/fishheads/yummy.html": true, "/fish.html?id=anything": true, "/Fish.asp": false, "/catfish": false, "/?id=fish": false,
	}),
	"documentation: /fish*": fishCases("/fish*", map[string]bool{
		"/bar": false, "/fish": true, "/fish.html": true, "/fish/salmon.html": true, "/fishheads": true,
		"/fishheads/yummy.html": true, "/fish.html?id=anything": true, "/Fish.bar": false, "/catfish": false, "/?id=fish": false,
	}),
	"documentation: /fish/": fishCases("/fish/", map[string]bool{
		"/bar": false, "/fish/": true, "/fish/salmon": true, "/fish/?salmon": true, "/fish/salmon.html": true,
		"/fish/?id=anything": true, "/fish": false, "/fish.html": false, "/Fish/Salmon.html": false,
	}),
	"documentation: /*.php": fishCases("/*.php", map[string]bool{
		"/bar": false, "/filename.php": true, "/folder/filename.php": true, "/folder/filename.php?parameters": true,
		"//folder/any.php.file.html": true, "/filename.php/": true, "/index?f=filename.php/": true,
		"/php/": false, "/index?php": false, "/windows.PHP": false,
	}),
	"documentation: /*.php$": fishCases("/*.php$", map[string]bool{
		"/bar": false, "/filename.php": true, "/folder/filename.php": true, "/filename.php?parameters": false,
		"/filename.php/": false, "/filename.php5": false, "/php/": false, "/filename?php": false,
		"/aaaphpaaa": false, "//windows.PHP": false,
	}),
	"documentation: /fish*.php": fishCases("/fish*.php", map[string]bool{
		"/bar": false, "/fish.php": true, "/fishheads/catfish.php?parameters": true, "/Fish.PHP": false,
	}),
	"documentation: precedence": {
		{robots: "user-agent: FooBot\nallow: /p\ndisallow: /\n", agent: "FooBot", url: "http://example.com/page", reference: true},
		{robots: "user-agent: FooBot\nallow: /folder\ndisallow: /folder\n", agent: "FooBot", url: "http://example.com/folder/page", reference: true},
		{robots: "user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", agent: "FooBot", url: "http://example.com/page.htm", reference: false},
		{robots: "user-agent: FooBot\nallow: /$\ndisallow: /\n", agent: "FooBot", url: "http://example.com/", reference: true},
		{robots: "user-agent: FooBot\nallow: /$\ndisallow: /\n", agent: "FooBot", url: "http://example.com/page.html", reference: false},
	},
	"line ends and byte order mark": lineEndCases(),
}

// groupCases: groups start at user-agent lines, same-agent groups merge,
// and rules outside any group are ignored.
func groupCases() []refCase {
	const robots = "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\nuser-agent: BarBot\ndisallow: /\nallow: /y/\n\n\nallow: /w/\nuser-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n"
	var cases []refCase
	for _, c := range []struct {
		agent, path string
		want        bool
	}{
		{"FooBot", "/x/b", true}, {"FooBot", "/z/d", true}, {"FooBot", "/y/c", false},
		{"BarBot", "/y/c", true}, {"BarBot", "/w/a", true}, {"BarBot", "/z/d", false},
		{"BazBot", "/z/d", true},
		{"FooBot", "/foo/bar/", false}, {"BarBot", "/foo/bar/", false}, {"BazBot", "/foo/bar/", false},
	} {
		cases = append(cases, refCase{robots: robots, agent: c.agent, url: "http://foo.bar" + c.path, reference: c.want})
	}
	return cases
}

// fishCases: "disallow: /" with one allow pattern, for FooBot.
func fishCases(allow string, paths map[string]bool) []refCase {
	var cases []refCase
	for path, want := range paths {
		cases = append(cases, refCase{robots: "user-agent: FooBot\ndisallow: /\nallow: " + allow + "\n", agent: "FooBot", url: "http://foo.bar" + path, reference: want})
	}
	return cases
}

// lineEndCases: LF, CRLF, CR, mixed, no final newline and a BOM (whole or
// partial) all parse to the same rules.
func lineEndCases() []refCase {
	var cases []refCase
	for _, body := range []string{
		"User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n",
		"User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n",
		"User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r",
		"User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /",
		"User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /",
		"\xEF\xBB\xBFUser-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n",
		"\xEF\xBBUser-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n",
	} {
		cases = append(cases,
			refCase{robots: body, agent: "bar", url: "http://foo.bar/x", reference: false},
			refCase{robots: body, agent: "foo", url: "http://foo.bar/x", reference: true})
	}
	return cases
}

// TestReferenceSuite: robotsguard answers every scenario of the reference
// parser's own test suite as the reference does, except the documented
// departures, which answer as the enforcement needs.
func TestReferenceSuite(t *testing.T) {
	same, departures := 0, 0
	for group, cases := range refCases {
		for _, c := range cases {
			want := c.reference
			if c.departure != "" {
				want = c.ours
				departures++
			} else {
				same++
			}
			p := Compile(Parse([]byte(c.robots)))
			res := p.Match([]string{ProductToken(c.agent)}, TargetOf(c.url))
			if res.Allowed != want {
				t.Errorf("%s: %s for %s: allowed %v (rule %v), want %v%s\nrobots.txt:\n%s", group, c.url, c.agent, res.Allowed, res.Rule, want,
					map[bool]string{true: " (" + c.departure + ")", false: ""}[c.departure != ""], c.robots)
			}
		}
	}
	t.Logf("%d scenarios answered as the reference does, %d documented departures", same, departures)
}

// TestReferenceLongLines: like the reference, a line is cut after 2083*8
// bytes, and the cut pattern still applies.
func TestReferenceLongLines(t *testing.T) {
	// A Disallow whose pattern is cut: it matches what its first bytes
	// match.
	long := "/x/" + strings.Repeat("a", maxLineLen-len("disallow: ")-len("/x/")+1)
	p := Compile(Parse([]byte("user-agent: FooBot\ndisallow: " + long + "/qux\n")))
	if !p.Match([]string{"foobot"}, "/fux").Allowed {
		t.Error("a cut rule matched an unrelated path")
	}
	if p.Match([]string{"foobot"}, long+"/fux").Allowed {
		t.Error("the cut rule does not match what its kept part matches")
	}
	// Two Allow lines, one cut: both still apply.
	a := "/x/" + strings.Repeat("a", maxLineLen-len("allow: ")-len("/x/")+1)
	b := "/x/" + strings.Repeat("b", maxLineLen-len("allow: ")-len("/x/")+1)
	p = Compile(Parse([]byte("user-agent: FooBot\ndisallow: /\nallow: " + a + "/qux\nallow: " + b + "/qux\n")))
	for target, want := range map[string]bool{"/": false, a + "/qux": true, b + "/fux": true} {
		if got := p.Match([]string{"foobot"}, target).Allowed; got != want {
			t.Errorf("target of %d bytes: allowed %v, want %v", len(target), got, want)
		}
	}
}

// TestReferenceLineReport: lint classifies the lines of the reference
// reporter's sample file as the reference does: a missing colon, lines that
// are no field, acceptable typos, and known-but-unused or unknown fields;
// and the typo'd lines take effect.
func TestReferenceLineReport(t *testing.T) {
	const robots = "User-Agent: foo\n" + // 1
		"Allow: /some/path\n" + // 2
		"User-Agent bar # no\n" + // 3: missing colon, read
		"absolutely random line\n" + // 4: no field
		"#so comment, much wow\n" + // 5
		"\n" + // 6
		"unicorns: /extinct\n" + // 7: unknown
		"noarchive: /some\n" + // 8: unknown to robots.txt
		"Disallow: /\n" + // 9
		"Error #and comment\n" + // 10: no field
		"useragent: baz\n" + // 11: typo
		"disallaw: /some\n" + // 12: typo
		"site-map: https://e/s.xml #comment\n" + // 13: typo
		"sitemap: https://e/t.xml\n" + // 14
		"Noarchive: /someCapital\n" // 15: unknown
	want := map[int]string{
		3: "warning: missing ':'", 4: "warning: not a robots.txt field", 7: "info: unknown field",
		8: "info: unknown field", 10: "warning: not a robots.txt field", 11: "warning: misspelled field",
		12: "warning: misspelled field", 13: "warning: misspelled field", 15: "info: unknown field",
	}
	r := Parse([]byte(robots))
	got := map[int]string{}
	for _, d := range r.Lint() {
		got[d.Line] = d.Severity.String() + ": " + d.Message
	}
	for line, prefix := range want {
		if !strings.HasPrefix(got[line], prefix) {
			t.Errorf("line %d: lint says %q, want %q...", line, got[line], prefix)
		}
	}
	for line, msg := range got {
		if _, ok := want[line]; !ok {
			t.Errorf("line %d: unexpected finding %q", line, msg)
		}
	}
	p := Compile(r)
	for _, c := range []struct {
		agent, target string
		allowed       bool
	}{
		{"foo", "/some/path", true}, {"bar", "/x", false}, {"baz", "/some", false}, {"baz", "/x", true},
	} {
		if got := p.Match([]string{c.agent}, c.target).Allowed; got != c.allowed {
			t.Errorf("%s %s: allowed %v, want %v", c.agent, c.target, got, c.allowed)
		}
	}
	if s := r.Values("Sitemap"); len(s) != 2 || s[0] != "https://e/s.xml" {
		t.Errorf("sitemaps %q, want the typo'd one and the plain one", s)
	}
}
