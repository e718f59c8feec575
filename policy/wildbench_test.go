package policy

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// githubRules returns every Allow and Disallow rule of github.com's
// robots.txt in the conformance corpus, all groups together: 154 of them
// have a wildcard, as the file the issue measured.
func githubRules(tb testing.TB) []Rule {
	data, err := os.ReadFile(filepath.Join("testdata", "conformance", "robots", "github.com.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	var rules []Rule
	for _, g := range Parse(data).Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}

// githubTargets returns two targets of n bytes shaped like GitHub's
// paths: a deep path in a repository, and one with a query whose
// parameters almost match the file's.
func githubTargets(n int) []string {
	fill := func(head, unit string) string {
		var b strings.Builder
		b.WriteString(head)
		for b.Len() < n {
			b.WriteString(unit)
		}
		return b.String()[:n]
	}
	return []string{
		fill("/octo/hello/blob/main/", "src/pkg/file_name-x.go/"),
		fill("/octo/hello/issues?", "sourc=1&ref_ct=2&tab_=3&"),
	}
}

// BenchmarkWildTarget measures one match against files of many wildcard
// rules as the target grows: github.com's file (154 wildcard rules) and
// the attack of issue 29 (8,000 rules like "/*abc*bcd*cde*def*zz$", with a
// target of near misses), with the matcher (new) and, in the same run, the
// one it replaced (old, oldmatch_test.go).
func BenchmarkWildTarget(b *testing.B) {
	for _, size := range []int{100, 2048, 16384} {
		attack, target := attackRules(8000, size)
		for _, file := range []struct {
			name    string
			rules   []Rule
			targets []string
		}{
			{"github", githubRules(b), githubTargets(size)},
			{"attack8000", attack, []string{target}},
		} {
			for i, t := range file.targets {
				file.targets[i] = NormalizeTarget(t)
			}
			b.Run(fmt.Sprintf("%s/len=%d/new", file.name, size), func(b *testing.B) {
				m := buildMatcher(file.rules, nil)
				benchMatch(b, m.match, file.targets)
			})
			b.Run(fmt.Sprintf("%s/len=%d/old", file.name, size), func(b *testing.B) {
				m := buildOldMatcher(file.rules, nil, oldWildIndexMin)
				benchMatch(b, m.match, file.targets)
			})
		}
	}
}

// BenchmarkWildOrdinary measures the ordinary case: Wikipedia's rules for
// "*" and short targets, with the matcher (new) and the old one.
func BenchmarkWildOrdinary(b *testing.B) {
	data := readBenchFile(b)
	rules, _ := modelRules(Parse(data), "*")
	targets := []string{"/wiki/Main_Page", "/w/index.php?title=Special:Random", "/wiki/Special:Search", "/api/rest_v1/page/html/Robot", "/wiki/Caf%C3%A9"}
	for i, t := range targets {
		targets[i] = NormalizeTarget(t)
	}
	b.Run("wikipedia/new", func(b *testing.B) {
		m := buildMatcher(rules, nil)
		benchMatch(b, m.match, targets)
	})
	b.Run("wikipedia/old", func(b *testing.B) {
		m := buildOldMatcher(rules, nil, oldWildIndexMin)
		benchMatch(b, m.match, targets)
	})
	b.Run("wikipedia/interleaved", func(b *testing.B) {
		nm, om := buildMatcher(rules, nil), buildOldMatcher(rules, nil, oldWildIndexMin)
		benchInterleaved(b, nm.match, om.match, targets)
	})
}

// benchInterleaved times match (new) and old alternately, 256 matches at a
// time, so that both see the same load of a shared machine, and reports
// each one's time per match in its fastest chunk (the least disturbed by
// other work) and new's as a percentage of old's.
func benchInterleaved(b *testing.B, match, old func(string) int32, targets []string) {
	const chunk = 256
	tn, to := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for b.Loop() {
		start := time.Now()
		for i := range chunk {
			old(targets[i%len(targets)])
		}
		mid := time.Now()
		for i := range chunk {
			match(targets[i%len(targets)])
		}
		tn, to = min(tn, time.Since(mid)), min(to, mid.Sub(start))
	}
	b.ReportMetric(float64(tn.Nanoseconds())/chunk, "new-ns/match")
	b.ReportMetric(float64(to.Nanoseconds())/chunk, "old-ns/match")
	b.ReportMetric(100*float64(tn)/float64(to), "new/old-%")
}

func benchMatch(b *testing.B, match func(string) int32, targets []string) {
	match(targets[0])
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		match(targets[i%len(targets)])
		i++
	}
}

// BenchmarkWildCompile measures compiling the attack's 8,000 rules (a
// Policy's compile step for them), and reports the memory the compiled
// matcher holds (heap-bytes), new and old.
func BenchmarkWildCompile(b *testing.B) {
	rules, _ := attackRules(8000, 100)
	b.Run("attack8000/new", func(b *testing.B) {
		benchCompile(b, func() any { m := buildMatcher(rules, nil); return &m })
	})
	b.Run("attack8000/old", func(b *testing.B) {
		benchCompile(b, func() any { m := buildOldMatcher(rules, nil, oldWildIndexMin); return &m })
	})
}

func benchCompile(b *testing.B, build func() any) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	b.ReportAllocs()
	for b.Loop() {
		build()
	}
	// After the loop: b.Loop's reset deletes metrics reported before it.
	b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "heap-bytes")
}

// BenchmarkWildChoice measures, for few wildcard rules and short targets,
// trying the rules in turn against the automaton: where the former is
// cheaper sets directBudget.
func BenchmarkWildChoice(b *testing.B) {
	for _, n := range []int{2, 8, 32} {
		rules, targets := wildRules(n, 2)
		for _, size := range []int{16, 64, 256} {
			normal := make([]string, len(targets))
			for i, t := range targets {
				t = NormalizeTarget(t)
				for len(t) < size {
					t += "/x" + t
				}
				normal[i] = t[:size]
			}
			for _, mode := range []struct {
				name   string
				direct int
			}{{"each", 1 << 30}, {"automaton", -1}} {
				b.Run(fmt.Sprintf("rules=%d/len=%d/%s", n, size, mode.name), func(b *testing.B) {
					m := buildMatcher(rules, nil)
					m.direct = mode.direct
					benchMatch(b, m.match, normal)
				})
			}
		}
	}
}

// BenchmarkWildPolicy measures the enforcement path of one request
// (ParseTarget and MatchTarget) through a compiled Policy: the attack's
// 8,000 rules with a 16 KB target, github.com's file with a 20 KB target
// (the measurements), and Wikipedia's with short targets. It uses
// only the package's API, so that the same file measures an older
// version of the package.
func BenchmarkWildPolicy(b *testing.B) {
	attack, target := attackRules(8000, 16384)
	ar := &Robots{}
	ar.AddGroup([]string{"*"}, attack...)
	gh, err := os.ReadFile(filepath.Join("testdata", "conformance", "robots", "github.com.txt"))
	if err != nil {
		b.Fatal(err)
	}
	wiki := readBenchFile(b)
	for _, c := range []struct {
		name    string
		p       *Policy
		targets []string
	}{
		{"attack8000/len=16384", Compile(ar), []string{target}},
		{"github/len=20480", Compile(Parse(gh)), githubTargets(20480)},
		{"wikipedia/short", Compile(Parse(wiki)), []string{"/wiki/Main_Page", "/w/index.php?title=Special:Random", "/wiki/Special:Search", "/api/rest_v1/page/html/Robot", "/wiki/Caf%C3%A9"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			tokens := []string{"examplebot"}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				t, _ := ParseTarget(c.targets[i%len(c.targets)])
				c.p.MatchTarget(tokens, &t)
				i++
			}
		})
	}
}
