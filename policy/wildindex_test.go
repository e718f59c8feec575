package policy

import (
	"fmt"
	"math/rand/v2"
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

// TestWildIndexAgrees: with the bigram index, the matcher picks exactly the
// rule that trying every wildcard rule in turn picks, for rule sets of many
// shapes and sizes.
func TestWildIndexAgrees(t *testing.T) {
	checked := 0
	for _, n := range []int{1, 5, 16, 40, 300, 2000} {
		for seed := uint64(1); seed <= 5; seed++ {
			rules, targets := wildRules(n, seed)
			indexed, linear := buildMatcher(rules, nil, 1), buildMatcher(rules, nil, 1<<30)
			indexedNodes := 0
			for _, nd := range indexed.nodes {
				if nd.index != nil {
					indexedNodes++
				}
			}
			if indexedNodes == 0 {
				t.Fatalf("%d rules, seed %d: nothing indexed", n, seed)
			}
			for _, target := range targets {
				target = NormalizeTarget(target)
				i, l := indexed.match(target), linear.match(target)
				if (i < 0) != (l < 0) || i >= 0 && indexed.rules[i].rule != linear.rules[l].rule {
					t.Fatalf("%d rules, seed %d, target %q: indexed picks %v, linear %v", n, seed, target, ruleAt(&indexed, i), ruleAt(&linear, l))
				}
				checked++
			}
		}
	}
	t.Logf("%d targets matched alike", checked)
}

func ruleAt(m *matcher, i int32) *Rule {
	if i < 0 {
		return nil
	}
	return m.rules[i].rule
}

// TestWildIndexAllocs: indexed matching allocates nothing.
func TestWildIndexAllocs(t *testing.T) {
	rules, targets := wildRules(500, 1)
	r := &Robots{}
	r.AddGroup([]string{"*"}, rules...)
	p := Compile(r)
	tokens := []string{"examplebot"}
	parsed := make([]Target, len(targets))
	for i, target := range targets {
		parsed[i] = Target{Normal: NormalizeTarget(target)}
	}
	if n := testing.AllocsPerRun(100, func() {
		for i := range parsed {
			p.MatchTarget(tokens, &parsed[i])
		}
	}); n > 0 {
		t.Errorf("%v allocations per run", n)
	}
}

// BenchmarkMatchWildcards measures files whose rules are all wildcards
// under "/", with the bigram index and, in the same run, trying every rule
// in turn, and temoto/robotstxt on the same file.
func BenchmarkMatchWildcards(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		rules, targets := wildRules(n, 1)
		for _, mode := range []struct {
			name     string
			indexMin int
		}{{"indexed", wildIndexMin}, {"linear", 1 << 30}} {
			b.Run(fmt.Sprintf("rules=%d/%s", n, mode.name), func(b *testing.B) {
				m := buildMatcher(rules, nil, mode.indexMin)
				normal := make([]string, len(targets))
				for i, t := range targets {
					normal[i] = NormalizeTarget(t)
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					m.match(normal[i%len(normal)])
					i++
				}
			})
		}
		b.Run(fmt.Sprintf("rules=%d/temoto", n), func(b *testing.B) {
			r := &Robots{}
			r.AddGroup([]string{"*"}, rules...)
			benchTemoto(b, string(r.Generate()), targets)
		})
	}
}
