package policy

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wildRules returns n deterministic wildcard-heavy rules shaped like real
// files (extensions, query parameters, path pieces, anchors), and targets
// that hit and miss them.
func wildRules(n int, seed uint64) ([]Rule, []string) {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	words := []string{"print", "sort", "sid", "a", "x", "page", "ref", "utm", "pdf", "q", "ab", "tmp"}
	word := func() string {
		w := words[rng.IntN(len(words))]
		if rng.IntN(2) == 0 {
			w += fmt.Sprint(rng.IntN(n/4 + 1))
		}
		return w
	}
	var rules []Rule
	var targets []string
	for i := 0; i < n; i++ {
		var p, hit string
		switch rng.IntN(6) {
		case 0:
			p, hit = "/*."+word()+"$", "/dir/file."
		case 1:
			p, hit = "/*?"+word()+"=", "/list?"
		case 2:
			p, hit = "/*/"+word()+"/", "/any/"
		case 3:
			w := word()
			p, hit = "/"+w+"*"+word(), "/"+w+"/"
		case 4:
			p, hit = "/*"+word()+"*"+word()+"$", "/"
		default:
			p, hit = "/*"+string(rune('a'+rng.IntN(3))), "/"
		}
		rules = append(rules, Rule{Pattern: p, Allow: rng.IntN(3) == 0, Line: i + 2})
		targets = append(targets, hit+word()+"/"+word(), strings.ReplaceAll(p, "*", word()), strings.TrimSuffix(strings.ReplaceAll(p, "*", ""), "$"))
	}
	targets = append(targets, "/", "/index.html", "/a/b/c?d=e&f=g")
	return rules, targets
}

// attackRules returns n rules like "Disallow: /*abc*bcd*cde*def*zz$" over
// ten words (issue 29, item 8), and a target of size bytes made of near
// misses: every word occurs in every order, the final "zz" never.
func attackRules(n, size int) ([]Rule, string) {
	words := []string{"abc", "bcd", "cde", "def", "efg", "fga", "gab", "hij", "ijk", "jkl"}
	rules := []Rule{{Pattern: "/private/", Line: 2}}
	for i := range n {
		w := func(k int) string { return words[i/k%len(words)] }
		rules = append(rules, Rule{Pattern: "/*" + w(1) + "*" + w(10) + "*" + w(100) + "*" + w(1000) + "*zz$", Line: i + 3})
	}
	var b strings.Builder
	b.WriteString("/")
	for b.Len() < size-1 {
		b.WriteString(words[b.Len()%len(words)])
	}
	return rules, b.String()[:size-1] + "z"
}

// matchers are the matchers under test for one rule set: the old one (the
// reference), the new one as compiled, and the new one forced to the
// automaton and to trying the rules in turn.
type matchers struct {
	old                   oldMatcher
	dflt, automaton, each matcher
}

func newMatchers(rules []Rule) *matchers {
	ms := &matchers{old: buildOldMatcher(rules, nil, oldWildIndexMin), dflt: buildMatcher(rules, nil), automaton: buildMatcher(rules, nil), each: buildMatcher(rules, nil)}
	ms.automaton.direct, ms.each.direct = -1, math.MaxInt
	return ms
}

// check returns "" when every new matcher picks for the normal target t
// the rule the old one picks (the same line, verb and pattern length),
// else what differs.
func (ms *matchers) check(t string) string {
	want := ms.old.match(t)
	for _, x := range []struct {
		name string
		m    *matcher
	}{{"default", &ms.dflt}, {"automaton", &ms.automaton}, {"each rule", &ms.each}} {
		got := x.m.match(t)
		if (got < 0) != (want < 0) || got >= 0 && (x.m.rules[got].rule != ms.old.rules[want].rule || x.m.rules[got].prio != ms.old.rules[want].prio) {
			return fmt.Sprintf("target %q: %s picks %s, old %s", t, x.name, describe(x.m.rules, got), describe(ms.old.rules, want))
		}
	}
	return ""
}

func describe(rules []crule, i int32) string {
	if i < 0 {
		return "no rule"
	}
	r := rules[i].rule
	return fmt.Sprintf("line %d %v %q (length %d)", r.Line, r.Allow, r.Pattern, rules[i].prio)
}

// TestWildSetMatchesOld: for rule sets of many shapes and sizes, and the
// attack's, the new matcher picks exactly the rule the old one picks.
func TestWildSetMatchesOld(t *testing.T) {
	checked := 0
	for _, n := range []int{1, 5, 16, 40, 300, 2000} {
		for seed := uint64(1); seed <= 5; seed++ {
			rules, targets := wildRules(n, seed)
			ms := newMatchers(rules)
			for _, target := range targets {
				if d := ms.check(NormalizeTarget(target)); d != "" {
					t.Fatalf("%d rules, seed %d: %s", n, seed, d)
				}
				checked++
			}
		}
	}
	rules, target := attackRules(300, 2048)
	ms := newMatchers(rules)
	for _, tg := range []string{target, target[:len(target)-1] + "zz", target + "zz", "/abcbcdcdedefzz", "/abczz", "/private/x"} {
		if d := ms.check(tg); d != "" {
			t.Fatalf("attack rules: %s", d)
		}
		checked++
	}
	t.Logf("%d targets matched alike", checked)
}

// corpusFiles returns the robots.txt files of the repository and of the
// shared benchmark data: the conformance corpus, the demo site's, and
// Wikipedia's when it is there.
func corpusFiles(t testing.TB) map[string][]byte {
	files := map[string][]byte{}
	paths, _ := filepath.Glob(filepath.Join("testdata", "conformance", "robots", "*.txt"))
	paths = append(paths, filepath.Join("..", "examples", "site", "robots.txt"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = data
	}
	if len(files) < 50 {
		t.Fatalf("only %d corpus files", len(files))
	}
	if data, err := readWikipedia(); err == nil {
		files["wikipedia-robots.txt"] = data
	} else {
		t.Logf("without Wikipedia's file: %v", err)
	}
	return files
}

// corpusURLs returns the URLs that answers.tsv asks of each corpus file.
func corpusURLs(t testing.TB) map[string][]string {
	f, err := os.Open(filepath.Join("testdata", "conformance", "answers.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	urls := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		col := strings.Split(sc.Text(), "\t")
		if len(col) == 5 && !strings.HasPrefix(col[0], "#") {
			urls[col[0]] = append(urls[col[0]], col[2])
		}
	}
	return urls
}

// corpusTargets returns targets for rules: each pattern spelt out (its
// wildcards replaced by runs of bytes from the file's pieces, with and
// without its anchor, cut short, extended), the given URLs, random
// mixtures of the file's pieces, and long targets of them.
func corpusTargets(rng *rand.Rand, rules []Rule, urls []string) []string {
	var pieces []string
	for _, r := range rules {
		for _, p := range strings.Split(strings.TrimSuffix(normalizePattern(r.Pattern), "$"), "*") {
			if p != "" {
				pieces = append(pieces, p)
			}
		}
	}
	pieces = append(pieces, "/", "x", "?", "=", ".", "a/b")
	fill := func(n int) string {
		var b strings.Builder
		for range n {
			p := pieces[rng.IntN(len(pieces))]
			if rng.IntN(3) == 0 && len(p) > 1 {
				p = p[:1+rng.IntN(len(p)-1)] // a near miss
			}
			b.WriteString(p)
		}
		return b.String()
	}
	var targets []string
	for _, r := range rules {
		np := normalizePattern(r.Pattern)
		for range 3 {
			var b strings.Builder
			for i, part := range strings.Split(np, "*") {
				if i > 0 {
					b.WriteString(fill(rng.IntN(3)))
				}
				b.WriteString(part)
			}
			s := b.String()
			plain := strings.TrimSuffix(s, "$")
			targets = append(targets, plain, plain+fill(1), plain[:rng.IntN(len(plain)+1)])
		}
	}
	for _, u := range urls {
		targets = append(targets, TargetOf(u))
	}
	for range 200 {
		targets = append(targets, "/"+fill(1+rng.IntN(8)))
	}
	for range 5 {
		targets = append(targets, "/"+fill(300))
	}
	for i, tg := range targets {
		if !strings.HasPrefix(tg, "/") {
			tg = "/" + tg
		}
		targets[i] = NormalizeTarget(tg)
	}
	return targets
}

// TestWildSetCorpus is the differential test on real files: for every
// group of every robots.txt of the corpus (and for each file's rules all
// together), the new matcher picks for many targets exactly the rule the
// old one picks, its path matcher and its query matcher alike.
func TestWildSetCorpus(t *testing.T) {
	urls := corpusURLs(t)
	rng := rand.New(rand.NewPCG(29, 8))
	checked, wild := 0, 0
	for name, data := range corpusFiles(t) {
		r := Parse(data)
		sets := [][]Rule{nil}
		for _, g := range r.Groups {
			sets = append(sets, g.Rules)
			sets[0] = append(sets[0], g.Rules...)
		}
		for _, rules := range sets {
			if len(rules) == 0 {
				continue
			}
			ms := newMatchers(rules)
			wild += ms.dflt.nwild
			for _, tg := range corpusTargets(rng, rules, urls[name]) {
				if d := ms.check(tg); d != "" {
					t.Fatalf("%s: %s", name, d)
				}
				if q := strings.IndexByte(tg, '?'); q >= 0 {
					if d := ms.check(tg[:q]); d != "" {
						t.Fatalf("%s: %s", name, d)
					}
				}
				checked++
			}
		}
	}
	if wild < 500 {
		t.Fatalf("only %d wildcard rules in the corpus", wild)
	}
	t.Logf("%d targets matched alike (%d wildcard rules)", checked, wild)
}

// FuzzWildSet: for any set of patterns (one a line, alternately Disallow
// and Allow) and any target, the new matcher (as compiled, forced to the
// automaton, forced to try rules in turn) picks the rule the old one picks,
// and the policy gives the answer of the textbook matcher.
func FuzzWildSet(f *testing.F) {
	f.Add("/*a*b$\n/*ab\n/*b\n/a*\n/*", "/xaab")
	f.Add("/*abc*bcd*cde*def*zz$\n/*abc*bcd*cde*def*zz\n/*zz$", "/abcdefgabcdefgzz")
	f.Add("/*b\n/*ab\n/*cab\n/*dcab$\n/x*cab*b", "/xdcab")
	f.Add("/*a*a*a*a\n/*aa*aa\n/*aaa$\n/*a$", "/aaaaaaa")
	f.Add("/p*\n/p*$\n/p**q\n/p*q*$\n/*$", "/pq")
	f.Add("/a/*/b\n/a/*/b/\n/a/*$\n/a/index.html\n/a/*/index.html", "/a/x/b/")
	f.Add("/*.php$\n/*.php\n/*?\n/*?*=\n/*?id=*&", "/x.php?id=1&y")
	f.Add("*\n**\n*$\n$\n/$", "/")
	f.Fuzz(func(t *testing.T, patterns, target string) {
		var rules []Rule
		for i, p := range strings.Split(patterns, "\n") {
			rules = append(rules, Rule{Pattern: p, Allow: i%2 == 1, Line: i + 1})
		}
		if len(rules) > 200 {
			rules = rules[:200]
		}
		nt := NormalizeTarget(target)
		ms := newMatchers(rules)
		if d := ms.check(nt); d != "" {
			t.Fatalf("%s\npatterns:\n%s", d, patterns)
		}
		if q := strings.IndexByte(nt, '?'); q >= 0 {
			if d := ms.check(nt[:q]); d != "" {
				t.Fatalf("%s\npatterns:\n%s", d, patterns)
			}
		}
		r := &Robots{}
		r.AddGroup([]string{"*"}, rules...)
		if got, want := Compile(r).Match(nil, target).Allowed, first(refAllowed(rules, target)); got != want {
			t.Fatalf("Match(%q) = %v, textbook matcher says %v\npatterns:\n%s", target, got, want, patterns)
		}
	})
}

// TestWildSetAllocs: matching by the automaton allocates nothing, through
// the policy's MatchTarget as through the matcher.
func TestWildSetAllocs(t *testing.T) {
	rules, targets := wildRules(500, 1)
	attack, long := attackRules(2000, 16384)
	r := &Robots{}
	r.AddGroup([]string{"*"}, rules...)
	r.AddGroup([]string{"attackbot"}, attack...)
	p := Compile(r)
	parsed := make([]Target, 0, len(targets)+1)
	for _, target := range append(targets, long) {
		parsed = append(parsed, Target{Normal: NormalizeTarget(target)})
	}
	for _, tokens := range [][]string{{"examplebot"}, {"attackbot"}} {
		p.MatchTarget(tokens, &parsed[0]) // the pool's first scratch
		if n := testing.AllocsPerRun(20, func() {
			for i := range parsed {
				p.MatchTarget(tokens, &parsed[i])
			}
		}); n > 0 {
			t.Errorf("%v: %v allocations per run", tokens, n)
		}
	}
}

// TestWildSetDenseAndSparse: the automaton follows goto and fail links
// where its table would be too large, and picks the same rules.
func TestWildSetDenseAndSparse(t *testing.T) {
	rules, targets := wildRules(300, 3)
	dense := buildMatcher(rules, nil)
	sparse := buildMatcher(rules, nil)
	sparse.wild.delta = nil
	dense.direct, sparse.direct = -1, -1
	if dense.wild.delta == nil {
		t.Fatal("no table for a small automaton")
	}
	for _, tg := range targets {
		tg = NormalizeTarget(tg)
		if a, b := dense.match(tg), sparse.match(tg); a != b {
			t.Fatalf("target %q: table picks %s, links %s", tg, describe(dense.rules, a), describe(sparse.rules, b))
		}
	}
}

func first(ok bool, _ int) bool { return ok }

// readWikipedia reads Wikipedia's robots.txt from the shared benchmark
// data beside the repository (from a checkout in /work/main or a worktree
// in /work/wt/<name>).
func readWikipedia() ([]byte, error) {
	data, err := os.ReadFile(wikipediaRobots)
	if err != nil {
		var err2 error
		if data, err2 = os.ReadFile(filepath.Join("..", wikipediaRobots)); err2 == nil {
			return data, nil
		}
	}
	return data, err
}

// BenchmarkMatchWildcards measures files whose rules are all wildcards
// under "/": the matcher as compiled, the old matcher (its bigram index) in
// the same run, and temoto/robotstxt on the same file.
func BenchmarkMatchWildcards(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		rules, targets := wildRules(n, 1)
		normal := make([]string, len(targets))
		for i, t := range targets {
			normal[i] = NormalizeTarget(t)
		}
		b.Run(fmt.Sprintf("rules=%d/new", n), func(b *testing.B) {
			m := buildMatcher(rules, nil)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				m.match(normal[i%len(normal)])
				i++
			}
		})
		b.Run(fmt.Sprintf("rules=%d/old", n), func(b *testing.B) {
			m := buildOldMatcher(rules, nil, oldWildIndexMin)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				m.match(normal[i%len(normal)])
				i++
			}
		})
		b.Run(fmt.Sprintf("rules=%d/temoto", n), func(b *testing.B) {
			r := &Robots{}
			r.AddGroup([]string{"*"}, rules...)
			benchTemoto(b, string(r.Generate()), targets)
		})
	}
}
