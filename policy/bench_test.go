package policy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/temoto/robotstxt"
)

// wikipediaRobots is the real-world benchmark input shipped in the shared
// data folder beside the repository.
const wikipediaRobots = "../../shared/data/robots-bench/wikipedia-robots.txt"

func readBenchFile(b *testing.B) []byte {
	data, err := readWikipedia()
	if err != nil {
		b.Skipf("benchmark input not available: %v", err)
	}
	return data
}

// BenchmarkParse measures parse throughput on Wikipedia's robots.txt, against
// temoto/robotstxt on the same input.
func BenchmarkParse(b *testing.B) {
	data := readBenchFile(b)
	b.Run("robotsguard", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			Parse(data)
		}
	})
	b.Run("robotsguard+compile", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			Compile(Parse(data))
		}
	})
	b.Run("temoto", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := robotstxt.FromBytes(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// synthRobots returns a deterministic robots.txt with n rules in the "*"
// group plus a few named groups, shaped like real files: mostly directory
// and file prefixes, some Allow exceptions, one rule in ten with a wildcard
// or an anchor. It also returns targets that hit and miss those rules.
func synthRobots(n int) (string, []string) {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	var b strings.Builder
	b.WriteString("User-agent: googlebot\nDisallow: /nogoogle/\n\nUser-agent: mj12bot\nDisallow: /\n\nUser-agent: *\n")
	var targets []string
	for i := 0; i < n; i++ {
		dir := fmt.Sprintf("/section%d/topic%d/", rng.IntN(n/4+1), i)
		switch {
		case i%10 == 9:
			fmt.Fprintf(&b, "Disallow: %s*.pdf$\n", dir)
			targets = append(targets, dir+"report/2024.pdf", dir+"report/2024.pdf?dl=1")
		case i%10 == 8:
			fmt.Fprintf(&b, "Allow: %spublic/\n", dir)
			targets = append(targets, dir+"public/index.html")
		default:
			fmt.Fprintf(&b, "Disallow: %s\n", dir)
			targets = append(targets, dir+"page.html", strings.TrimSuffix(dir, "/")+"x/other")
		}
	}
	targets = append(targets, "/", "/wiki/Main_Page", "/w/index.php?title=Special:Search&search=robots")
	rng.Shuffle(len(targets), func(i, j int) { targets[i], targets[j] = targets[j], targets[i] })
	return b.String(), targets[:min(len(targets), 256)]
}

// BenchmarkMatch measures one allow/disallow query for files of 10, 1,000
// and 10,000 rules, against temoto/robotstxt with the same files and
// targets.
func BenchmarkMatch(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		robots, targets := synthRobots(n)
		b.Run(fmt.Sprintf("rules=%d/robotsguard", n), func(b *testing.B) {
			p := Compile(Parse([]byte(robots)))
			tokens := []string{"examplebot"}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p.Match(tokens, targets[i%len(targets)])
				i++
			}
		})
		b.Run(fmt.Sprintf("rules=%d/temoto", n), func(b *testing.B) {
			benchTemoto(b, robots, targets)
		})
	}
}

// benchTemoto measures temoto/robotstxt's answer for ExampleBot on the
// targets in turn, for comparison in the same run.
func benchTemoto(b *testing.B, robots string, targets []string) {
	r, err := robotstxt.FromString(robots)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r.TestAgent(targets[i%len(targets)], "ExampleBot")
		i++
	}
}

// BenchmarkMatchWikipedia measures queries against the real-world file.
func BenchmarkMatchWikipedia(b *testing.B) {
	data := readBenchFile(b)
	p := Compile(Parse(data))
	targets := []string{"/wiki/Main_Page", "/w/index.php?title=Special:Random", "/wiki/Special:Search", "/api/rest_v1/page/html/Robot", "/wiki/Caf%C3%A9"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p.Match([]string{"googlebot"}, targets[i%len(targets)])
		i++
	}
}

// TestSynthAgreesWithTemoto sanity-checks the benchmark: on the synthetic
// files both libraries give the same answers, so the comparison is like for
// like.
func TestSynthAgreesWithTemoto(t *testing.T) {
	for _, n := range []int{10, 1000} {
		robots, targets := synthRobots(n)
		p := Compile(Parse([]byte(robots)))
		r, err := robotstxt.FromString(robots)
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range targets {
			if got, want := p.Match([]string{"examplebot"}, tg).Allowed, r.TestAgent(tg, "ExampleBot"); got != want {
				t.Errorf("rules=%d: Match(%q) = %v, temoto says %v", n, tg, got, want)
			}
		}
	}
}

// BenchmarkEnforce measures the enforcement path of one request: reading
// the request target (ParseTarget) and MatchTarget, for targets with and
// without a query, on the synthetic file of 1,000 rules and on Wikipedia's.
func BenchmarkEnforce(b *testing.B) {
	robots, targets := synthRobots(1000)
	b.Run("rules=1000", func(b *testing.B) { benchEnforce(b, robots, targets) })
	data := readBenchFile(b)
	b.Run("wikipedia", func(b *testing.B) {
		benchEnforce(b, string(data), []string{"/wiki/Main_Page", "/w/index.php?title=Special:Random", "/wiki/Special:Search", "/api/rest_v1/page/html/Robot", "/wiki/Caf%C3%A9"})
	})
}

func benchEnforce(b *testing.B, robots string, targets []string) {
	p := Compile(Parse([]byte(robots)))
	tokens := []string{"examplebot"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		t, _ := ParseTarget(targets[i%len(targets)])
		p.MatchTarget(tokens, &t)
		i++
	}
}
