//go:build ignore

// generate asks Google's reference parser (github.com/google/robotstxt,
// built outside this repository) about every robots.txt file of the corpus
// and writes its answers to answers.tsv, which conformance_test.go replays
// against robotsguard. Run it from the repository root:
//
//	go run ./policy/testdata/conformance/generate.go -reference /path/to/robots
//
// where /path/to/robots is the reference's robots_main binary
// ("robots <robots.txt file> <user agent> <URL>", exit status 0 for
// allowed, 1 for disallowed). The queries are derived from each file's own
// rules, deterministically: the patterns as URLs (wildcards filled in, with
// and without a query, one level up), a few fixed URLs, for a fixed set of
// crawlers plus the agents the file names. Where robotsguard's normal form
// of a URL differs from it, the reference is asked about the normal form
// too, so that the test can tell an encoding departure from a
// disagreement.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/robotsguard/robotsguard/policy"
)

const dir = "policy/testdata/conformance"

// agents asked about every file: major crawlers, one whose token has a
// digit, and one no file names.
var agents = []string{"Googlebot", "bingbot", "GPTBot", "CCBot", "Baiduspider", "MJ12bot", "FooBot"}

// fixedPaths are asked about every file.
var fixedPaths = []string{"/", "/robots.txt", "/index.html", "/search?q=test", "/admin/", "/wp-admin/admin-ajax.php", "/%7Euser/", "/caf%C3%A9", "/a/b/c.pdf", "/page.html?utm_source=x"}

const maxPatterns = 24

func main() {
	ref := flag.String("reference", "", "the reference parser's robots_main binary")
	flag.Parse()
	if *ref == "" {
		log.Fatal("-reference is required")
	}
	files, err := filepath.Glob(filepath.Join(dir, "robots", "*.txt"))
	if err != nil {
		log.Fatal(err)
	}
	sort.Strings(files)
	out, err := os.Create(filepath.Join(dir, "answers.tsv"))
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(out)
	fmt.Fprintln(w, "# file\tagent\turl\treference allows\treference allows the normal form (- when it is the same URL)")
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			log.Fatal(err)
		}
		r := policy.Parse(data)
		for _, agent := range fileAgents(r) {
			for _, path := range filePaths(r) {
				u := "https://example.com" + path
				allowed := ask(*ref, f, agent, u)
				normal := "-"
				if np := policy.NormalizeTarget(path); np != path {
					normal = fmt.Sprint(b2i(ask(*ref, f, agent, "https://example.com"+np)))
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", filepath.Base(f), agent, u, b2i(allowed), normal)
				n++
			}
		}
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d files, %d queries", len(files), n)
}

// fileAgents returns the fixed agents and up to three that the file names
// by their bare product token.
func fileAgents(r *policy.Robots) []string {
	out := append([]string(nil), agents...)
	seen := map[string]bool{}
	for _, a := range out {
		seen[strings.ToLower(a)] = true
	}
	named := 0
	for _, g := range r.Groups {
		for _, a := range g.Agents {
			tok := a.Token()
			if tok == "" || tok == "*" || seen[tok] || named == 3 || len(tok) != len(a.Name) {
				// Only names that are a whole product token: the reference
				// compares the agent it is asked about with the token of
				// each line as a whole string.
				continue
			}
			seen[tok] = true
			out = append(out, a.Name)
			named++
		}
	}
	return out
}

// filePaths returns the paths to ask about: the fixed ones and, for up to
// maxPatterns patterns of the file, the pattern as a URL.
func filePaths(r *policy.Robots) []string {
	var patterns []string
	seen := map[string]bool{}
	for _, g := range r.Groups {
		for _, rule := range g.Rules {
			p := rule.Pattern
			if p == "" || seen[p] || strings.ContainsAny(p, " \t\"'\\") {
				continue
			}
			seen[p] = true
			patterns = append(patterns, p)
		}
	}
	if len(patterns) > maxPatterns {
		// Spread the sample over the file.
		step := float64(len(patterns)) / maxPatterns
		var s []string
		for i := 0; i < maxPatterns; i++ {
			s = append(s, patterns[int(float64(i)*step)])
		}
		patterns = s
	}
	out := append([]string(nil), fixedPaths...)
	have := map[string]bool{}
	for _, p := range out {
		have[p] = true
	}
	add := func(p string) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		if !have[p] && len(p) < 300 {
			have[p] = true
			out = append(out, p)
		}
	}
	for _, p := range patterns {
		lit := strings.TrimSuffix(p, "$")
		filled := strings.ReplaceAll(lit, "*", "x")
		add(filled)
		if strings.Contains(filled, "?") {
			add(filled + "&y=2")
		} else {
			add(filled + "z")
			add(filled + "?q=1")
		}
		if i := strings.LastIndex(strings.TrimSuffix(filled, "/"), "/"); i > 0 {
			add(filled[:i+1])
		}
	}
	return out
}

// ask runs the reference for one query.
func ask(ref, file, agent, url string) bool {
	err := exec.Command(ref, file, agent, url).Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return true
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return false
	}
	log.Fatalf("%s %s %s %s: %v", ref, file, agent, url, err)
	return false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
