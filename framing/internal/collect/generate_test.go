package main

import (
	"os"
	"strings"
	"testing"

	"github.com/robotsguard/robotsguard/framing"
	"github.com/robotsguard/robotsguard/internal/stacktable"
)

// TestGenerated: the committed table is what the generator makes of the
// committed inputs (regenerate it with go run ./framing/internal/collect).
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
		t.Error("framing/stacks.tsv is not what go run ./framing/internal/collect makes of testdata: regenerate it")
	}
}

// TestObservedKnown: every fingerprint observed here is known as its
// client's family and kind by the built-in table; every browser, library
// and HTTP version was observed.
func TestObservedKnown(t *testing.T) {
	seen := map[string]bool{}
	err := stacktable.ReadFile("testdata/observed.tsv", 5, func(f []string) error {
		proto, _, _ := strings.Cut(f[2], " ")
		seen[f[0]+" "+proto] = true
		if f[4] == "-" {
			return nil
		}
		family, err := familyOf(f[0], proto)
		if err != nil {
			return err
		}
		if s := framing.Lookup(f[4]); !s.Known || s.Family != family || s.Browser != browserFamilies[family] {
			t.Errorf("%s's %s: %+v, want %s", f[0], f[4], s, family)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"chromium h1", "chromium h2", "chromium h3", "firefox-esr h1", "firefox-esr h2", "firefox-esr h3",
		"curl h1", "curl h2", "go h1", "go h2", "utls h2", "python-httpx h2", "node h2", "quic-go h3"} {
		if !seen[want] {
			t.Errorf("nothing of %s in testdata/observed.tsv", want)
		}
	}
}

// TestGenerateRefusesConflicts: a fingerprint seen from two families stops
// the generator, and so does a browser's HTTP/1.1 order that the rules
// give a library.
func TestGenerateRefusesConflicts(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{"node\tv20\th2\t/\th2:2:0;4:4194304;5:16384;6:10485760|1073741824|0|a,m,p,s|0\n", "is go"},
		{"chromium\tChromium 999\th1\t/\th1:1:Host,Accept,B,C,D,E\n", "by the rules of HTTP/1.1 stacks"},
	} {
		dir := t.TempDir()
		for _, f := range []string{"observed.tsv", "published.tsv", "curl-impersonate.tsv"} {
			b, err := os.ReadFile("testdata/" + f)
			if err != nil {
				t.Fatal(err)
			}
			if f == "observed.tsv" {
				b = append(b, c.extra...)
			}
			os.WriteFile(dir+"/"+f, b, 0o644)
		}
		if _, err := generate(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.extra, err, c.want)
		}
	}
}
