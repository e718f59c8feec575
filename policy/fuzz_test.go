package policy

import (
	"strings"
	"testing"
)

// googleRules reads robots.txt line by line as Google's reference parser
// does (robots.cc, RobotsMatcher): a run of User-agent lines ends only at
// an Allow or Disallow line, the rules of every run that names the agent
// apply, and those of the "*" runs only when no run names it. It shares
// nothing with Parse but the reading of one line (keys, typos, comments),
// so that it checks the grouping.
func googleRules(robots string, tokens []string) []Rule {
	s := robots
	for _, bom := range []string{"\xEF\xBB\xBF", "\xEF\xBB", "\xEF"} {
		if strings.HasPrefix(s, bom) {
			s = s[len(bom):]
			break
		}
	}
	if len(s) > MaxSize {
		return nil // not needed for the fuzzers' inputs
	}
	want := ""
	for _, tok := range tokens {
		if pt := ProductToken(tok); pt != "" {
			want = pt
			break
		}
	}
	var specific, global []Rule
	seenSep, inSpecific, inGlobal, ever := false, false, false, false
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"), "\n")
	for num, line := range lines {
		if len(line) > maxLineLen {
			line = line[:maxLineLen]
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, value, ok := splitKeyValue(trimSpace(line))
		if !ok {
			continue
		}
		switch kind, _, _ := classifyKey(key); kind {
		case kindUserAgent:
			if seenSep {
				inSpecific, inGlobal, seenSep = false, false, false
			}
			switch tok := (Agent{Name: value}).Token(); {
			case tok == "*":
				inGlobal = true
			case tok != "" && tok == want:
				inSpecific, ever = true, true
			}
		case kindAllow, kindDisallow:
			if !inSpecific && !inGlobal {
				continue
			}
			seenSep = true
			r := Rule{Allow: kind == kindAllow, Pattern: value, Line: num + 1}
			if inSpecific {
				specific = append(specific, r)
			} else {
				global = append(global, r)
			}
		}
	}
	if ever {
		return specific
	}
	return global
}

// splitRules returns the rules of the groups of the parsed model that apply
// to tokens, as SplitReading reads them.
func splitRules(r *Robots, tokens []string) []Rule {
	for _, tok := range tokens {
		if pt := ProductToken(tok); pt != "" {
			if rules, found := modelRules(r, pt); found {
				return rules
			}
		}
	}
	rules, _ := modelRules(r, "*")
	return rules
}

func modelRules(r *Robots, tok string) (rules []Rule, found bool) {
	for _, g := range r.Groups {
		if g.names(tok) {
			rules = append(rules, g.Rules...)
			found = true
		}
	}
	return rules, found
}

// refAllowed is a plain, obviously-correct matcher: it tries every rule
// with a textbook wildcard matcher against the normalised target and keeps
// the longest match, Allow winning ties. The compiled matcher must always
// agree with it.
func refAllowed(rules []Rule, target string) (allowed bool, line int) {
	t := NormalizeTarget(target)
	if t == "/robots.txt" || strings.HasPrefix(t, "/robots.txt?") {
		return true, 0
	}
	return refMatch(rules, t, t)
}

// refMatch matches the rules whose pattern has no '?' against path and
// those with one against t.
func refMatch(rules []Rule, path, t string) (allowed bool, line int) {
	best, bestAllow, bestLine := -1, false, 0
	for _, rule := range rules {
		np := normalizePattern(rule.Pattern)
		if np == "" {
			continue
		}
		cands := []string{np}
		if s := strings.LastIndexByte(np, '/'); rule.Allow && s >= 0 && strings.HasPrefix(np[s:], "/index.htm") {
			cands = append(cands, np[:s+1]+"$")
		}
		subject := path
		if strings.Contains(np, "?") {
			subject = t
		}
		for _, c := range cands {
			if !globMatch(c, subject) {
				continue
			}
			if len(c) > best || len(c) == best && rule.Allow && !bestAllow {
				best, bestAllow, bestLine = len(c), rule.Allow, rule.Line
			}
		}
	}
	if best < 0 {
		return true, 0
	}
	return bestAllow, bestLine
}

// refEnforce is MatchTarget's reference: a spelling is refused when the
// rules refuse it as RFC 9309 reads it or when the rules without '?'
// refuse its path (with the rules with '?' against the whole target); a
// target is refused when a spelling is; and the file refuses when both
// readings of its groups refuse.
func refEnforce(robots string, tokens []string, t *Target) bool {
	refuses := func(rules []Rule) bool {
		for i := 0; i < t.spellings(); i++ {
			s := t.spelling(i)
			if IsRobotsTxt(s) {
				continue
			}
			if ok, _ := refMatch(rules, s, s); !ok {
				return true
			}
			if path, _, q := strings.Cut(s, "?"); q {
				if ok, _ := refMatch(rules, path, s); !ok {
					return true
				}
			}
		}
		return false
	}
	return refuses(googleRules(robots, tokens)) && refuses(splitRules(Parse([]byte(robots)), tokens))
}

// globMatch reports whether pattern p matches a prefix of s: '*' matches any
// run of bytes and a final '$' anchors the end. It is the textbook dynamic
// programme over (pattern position, string position).
func globMatch(p, s string) bool {
	anchored := strings.HasSuffix(p, "$")
	if anchored {
		p = p[:len(p)-1]
	}
	// reach[j] reports whether p[:i] can match s[:j].
	reach := make([]bool, len(s)+1)
	reach[0] = true
	for i := 0; i < len(p); i++ {
		next := make([]bool, len(s)+1)
		for j := 0; j <= len(s); j++ {
			if !reach[j] {
				continue
			}
			if p[i] == '*' {
				for k := j; k <= len(s); k++ {
					next[k] = true
				}
				break
			}
			if j < len(s) && s[j] == p[i] {
				next[j+1] = true
			}
		}
		reach = next
	}
	if anchored {
		return reach[len(s)]
	}
	for _, ok := range reach {
		if ok {
			return true
		}
	}
	return false
}

var fuzzSeeds = []struct{ robots, agent, target string }{
	{"User-Agent: *\nDisallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n\nUser-Agent: foobot\nDisallow:/\nAllow:/example/page.html\n", "foobot", "/example/page.html"},
	{"user-agent: *\ndisallow: /x*y*z$\nallow: /x\n", "a", "/x1y2z"},
	{"user-agent: a\ndisallow: /\nallow: /$\nallow: /a/index.html\n", "a", "/a/"},
	{"user-agent: *\ndisallow: /%7Esam/\ndisallow: /caf\xC3\xA9\n", "b", "/~sam/x"},
	{"\xEF\xBB\xBFuser-agent: googlebot\r\ndisallow: /p\rallow: /p/q\n", "Googlebot/2.1", "/p/q/../r"},
	{"user-agent: *\ndisallow: /*?\ndisallow: /a**b*$\n", "x", "/aab?"},
	{"useragent a\ndiasllow /x\nsitemap: http://e/s\nuser-agent: b\nallow: /x/y\n", "a", "/x/y"},
	{"user-agent: a\ncontent-signal: ai-train=no\nuser-agent: b\ncontent-usage: /x/ train-ai=n\nallow: /\ncontent-usage: search=y\n", "b", "/x/y"},
}

// FuzzParse: parsing, linting, compiling and generating never panic on any
// bytes.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s.robots))
	}
	f.Add([]byte("<html><body>404</body></html>"))
	f.Add([]byte{0, 0xff, '\r', '\n', '#', ':'})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := Parse(data)
		for _, d := range r.Lint() {
			if d.Line < 1 {
				t.Fatalf("diagnostic without a line: %v", d)
			}
		}
		_ = r.Err()
		p := Compile(r)
		p.Match([]string{"a"}, string(data))
		_ = r.Generate()
	})
}

// FuzzMatch: Match agrees with refAllowed over the rules that Google's
// reading of the lines gives the agent, for whole files; and MatchTarget
// agrees with refEnforce.
func FuzzMatch(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s.robots, s.agent, s.target)
	}
	f.Fuzz(func(t *testing.T, robots, agent, target string) {
		if len(robots) > MaxSize {
			return
		}
		r := Parse([]byte(robots))
		p := Compile(r)
		res := p.Match([]string{agent}, target)
		if n := p.Match([]string{agent}, NormalizeTarget(target)); n != res {
			t.Fatalf("Match(%q) = %+v, Match of its normal form = %+v", target, res, n)
		}
		rules := googleRules(robots, []string{agent})
		want, line := refAllowed(rules, target)
		if res.Allowed != want {
			t.Fatalf("Match(%q, %q) = %v (rule %v), reference says %v (line %d)\nrobots.txt:\n%s", agent, target, res.Allowed, res.Rule, want, line, robots)
		}
		if res.Rule != nil && res.Rule.Line != line {
			// Several rules may tie; the deciding one must at least tie.
			if ok, _ := refAllowed([]Rule{*res.Rule}, target); ok != res.Allowed {
				t.Fatalf("Match(%q, %q) names rule %v, which does not decide that way", agent, target, res.Rule)
			}
		}
		if pt, err := ParseTarget(target); err == nil {
			got := p.MatchTarget([]string{agent}, &pt).Allowed
			if want := !refEnforce(robots, []string{agent}, &pt); got != want {
				t.Fatalf("MatchTarget(%q, %q %q) = %v, reference says %v\nrobots.txt:\n%s", agent, pt.Normal, pt.Variants, got, want, robots)
			}
		}
	})
}

// FuzzMatchRules stresses the matcher with many patterns: each line of rules
// is a pattern, alternately Disallow and Allow, in one "*" group.
func FuzzMatchRules(f *testing.F) {
	f.Add("/a\n/a*b$\n/*.php\n/a/b/c\n/a/$\n*", "/a/b.php")
	f.Add("/x*y*z$\n/x*y\n/x\n/xy*$", "/x1y2z")
	f.Add("/p%2A\n/p*\n/p$", "/p*")
	f.Add("/abc\n/ab\n/a\n/abcd$\n/ab*d", "/abcd")
	f.Add("/*ab\n/*b\n/*xab$\n/*a*b\n/x*ab*", "/xxab")
	f.Fuzz(func(t *testing.T, rules, target string) {
		var b strings.Builder
		b.WriteString("user-agent: *\n")
		for i, p := range strings.Split(rules, "\n") {
			if i%2 == 0 {
				b.WriteString("disallow: ")
			} else {
				b.WriteString("allow: ")
			}
			b.WriteString(p)
			b.WriteByte('\n')
		}
		r := Parse([]byte(b.String()))
		got := Compile(r).Match(nil, target).Allowed
		if want, _ := refAllowed(googleRules(b.String(), nil), target); got != want {
			t.Fatalf("Match(%q) = %v, reference says %v\nrobots.txt:\n%s", target, got, want, b.String())
		}
		// The matcher picks the rule the old one (oldmatch_test.go) picks.
		if len(r.Groups) == 1 {
			if d := newMatchers(r.Groups[0].Rules).check(NormalizeTarget(target)); d != "" {
				t.Fatalf("%s\nrobots.txt:\n%s", d, b.String())
			}
		}
	})
}

// FuzzRoundTrip: parsing the generated text gives the same answers as the
// original for the query and for every pattern of the file used as a target.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s.robots, s.agent, s.target)
	}
	f.Fuzz(func(t *testing.T, robots, agent, target string) {
		r := Parse([]byte(robots))
		gen := r.Generate()
		r2 := Parse(gen)
		if again := r2.Generate(); string(Parse(again).Generate()) != string(again) {
			t.Fatalf("generated text is not stable:\n%s\n---\n%s", again, Parse(again).Generate())
		}
		p1, p2 := Compile(r), Compile(r2)
		targets := []string{target, "/"}
		agents := append([]string{agent, "*", "zzz"}, r.Agents()...)
		for _, g := range r.Groups {
			for _, rule := range g.Rules {
				targets = append(targets, rule.Pattern, strings.TrimRight(rule.Pattern, "$*"))
			}
		}
		for _, a := range agents {
			for _, tg := range targets {
				x, y := p1.Match([]string{a}, tg), p2.Match([]string{a}, tg)
				if x.Allowed != y.Allowed || x.Agent != y.Agent || x.CrawlDelay != y.CrawlDelay {
					t.Fatalf("Match(%q, %q): original %+v, round trip %+v\noriginal:\n%s\ngenerated:\n%s", a, tg, x, y, robots, gen)
				}
				pt, err := ParseTarget(NormalizeTarget(tg))
				if err != nil {
					continue
				}
				for _, rd := range []Reading{SplitReading, BothReadings} {
					if x, y := p1.MatchReading([]string{a}, &pt, rd), p2.MatchReading([]string{a}, &pt, rd); x.Allowed != y.Allowed {
						t.Fatalf("MatchReading(%q, %q, %v): original %+v, round trip %+v\noriginal:\n%s\ngenerated:\n%s", a, tg, rd, x, y, robots, gen)
					}
					all := UsageTrainAI | UsageSearch | UsageAIInput
					if x, y := p1.MatchUsageReading([]string{a}, &pt, all, rd), p2.MatchUsageReading([]string{a}, &pt, all, rd); x.Prefs != y.Prefs || x.Refused != y.Refused {
						t.Fatalf("MatchUsageReading(%q, %q, %v): original %+v, round trip %+v\noriginal:\n%s\ngenerated:\n%s", a, tg, rd, x, y, robots, gen)
					}
				}
			}
		}
	})
}

// FuzzNormalizeTarget: normalisation is idempotent and never yields a
// dot-segment, so a normalised target cannot be re-spelled further.
func FuzzNormalizeTarget(f *testing.F) {
	for _, s := range []string{"/a/../b", "/%2e%2E/x", "/caf\xC3\xA9?q=%7e", "/a%zz", "//x/./y/..", "?q", "/a/.%2e/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeTarget(s)
		if n2 := NormalizeTarget(n); n2 != n {
			t.Fatalf("NormalizeTarget(%q) = %q, but NormalizeTarget(%q) = %q", s, n, n, n2)
		}
		if n == "" || n[0] != '/' {
			t.Fatalf("NormalizeTarget(%q) = %q does not start with '/'", s, n)
		}
		path, _, _ := strings.Cut(n, "?")
		for _, seg := range strings.Split(path, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("NormalizeTarget(%q) = %q keeps a dot-segment", s, n)
			}
		}
		var buf [16]byte
		if got := normalizeTargetInto(buf[:], s); got != n {
			t.Fatalf("normalizeTargetInto(%q) = %q, NormalizeTarget = %q", s, got, n)
		}
	})
}
