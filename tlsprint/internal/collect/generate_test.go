package main

import (
	"os"
	"strings"
	"testing"

	"github.com/robotsguard/robotsguard/internal/tlsclients"
	"github.com/robotsguard/robotsguard/tlsprint"
)

// TestGenerated: the committed table is what the generator makes of the
// committed inputs (regenerate it with go run ./tlsprint/internal/collect).
func TestGenerated(t *testing.T) {
	want, err := generate("testdata")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../stacks.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Error("tlsprint/stacks.tsv is not what go run ./tlsprint/internal/collect makes of testdata: regenerate it")
	}
}

// TestObservedKnown: every client observed here is known as its own
// family by the built-in table, and no library's hello as a browser's.
func TestObservedKnown(t *testing.T) {
	seen := map[string]bool{}
	err := readObserved("testdata/observed.tsv", func(o observed) error {
		seen[o.client] = true
		if s := tlsprint.Lookup(o.ja4); !s.Known || s.Family != o.family || s.Browser != o.browser {
			t.Errorf("%s's %s: %+v, want %s", o.client, o.ja4, s, o.family)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tlsclients.Clients {
		if !seen[c.Name] {
			t.Errorf("no hello of %s in testdata/observed.tsv", c.Name)
		}
	}
}

// TestGenerateRefusesConflicts: a JA4 seen from two families stops the
// generator, naming both.
func TestGenerateRefusesConflicts(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"observed.tsv", "curl-impersonate.tsv"} {
		b, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(dir+"/"+f, b, 0o644)
	}
	os.WriteFile(dir+"/foxio.tsv", []byte("t13d1312h2_f57a46bbacb6_ab7e3b40a677\tjava\tlibrary\tx\n"), 0o644)
	if _, err := generate(dir); err == nil || !strings.Contains(err.Error(), "is go") || !strings.Contains(err.Error(), "and java") {
		t.Errorf("a JA4 of go and java: %v, want an error naming both", err)
	}
}
