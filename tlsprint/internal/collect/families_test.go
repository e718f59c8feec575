package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/robotsguard/robotsguard/tlsprint"
)

// TestFamiliesGenerated: the committed families.tsv is what the generator
// derives from the committed hellos.
func TestFamiliesGenerated(t *testing.T) {
	want, err := generateFamilies("testdata")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../families.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Error("tlsprint/families.tsv is not what go run ./tlsprint/internal/collect makes of testdata: regenerate it")
	}
}

// TestEveryHelloItsFamily: every whole hello of the test data (the real
// clients observed here, their one-line variants, Go 1.21 to 1.26,
// quic-go, and curl-impersonate's browsers) is its own family's by the
// built-in families.
func TestEveryHelloItsFamily(t *testing.T) {
	hellos, err := familyHellos("testdata")
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, h := range hellos {
		got := tlsprint.Classify(h.hello)
		if !got.Known || got.Family != h.family || got.Browser != h.browser {
			t.Errorf("%s: %+v, want %s\n\t%s", h.source, got, h.family, h.hello)
		}
		n[h.family]++
	}
	t.Logf("%d hellos, by family: %v", len(hellos), n)
}

// holdOut is one hold-out: the families are derived from the hellos train
// keeps, and every other hello is classified by them.
type holdOut struct {
	name  string
	train func(familyHello) bool
}

// version returns the major (and, for Go and Safari, minor) version in a
// hello's source: "chrome_118.0.5993.117_linux" 118, "Go go1.24.0" 124.
func version(source string) int {
	s := source[strings.LastIndex(source, ": ")+2:]
	for _, p := range []string{"chrome_", "edge_", "firefox_", "safari_", "tor_", "Go go1.", "Chromium ", "Mozilla Firefox "} {
		if i := strings.Index(s, p); i >= 0 {
			s = s[i+len(p):]
			n, rest := 0, s
			for len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
				n, rest = n*10+int(rest[0]-'0'), rest[1:]
			}
			if p == "Go go1." || p == "safari_" {
				m := 0
				if len(rest) > 1 && rest[0] == '.' {
					for rest = rest[1:]; len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9'; rest = rest[1:] {
						m = m*10 + int(rest[0]-'0')
					}
				}
				if p == "Go go1." {
					return 100 + n
				}
				return 100*n + m
			}
			return n
		}
	}
	return 0
}

// TestHoldOut derives the families from some versions and classifies the
// versions left out, as the next releases will come: Go 1.24, 1.25, 1.26
// and quic-go from Go 1.21 to 1.23 (across Go 1.23's new extension order
// and 1.24's post-quantum group); Python as urllib3 2 sets it up (requests
// 2.34's JA4, t13d1812h1_85036bcba153_b26ce05bbdd6, which the exact table
// lacked) and every caller's variant from the other OpenSSL clients;
// Chrome 118 to 156 from Chrome and Edge 98 to 116; Firefox 133 to 153
// from 91 to 117; Safari 17 to 26 from 15. A library's hello left out must
// be its library's; a browser's must never be a library's, and is counted
// when it is its own family's. Then each client and version is left out in
// turn, with the same demands.
func TestHoldOut(t *testing.T) {
	all, err := familyHellos("testdata")
	if err != nil {
		t.Fatal(err)
	}
	variant := func(h familyHello) bool {
		return strings.Contains(h.source, "-chrome-ciphers") || strings.Contains(h.source, "go-tls12") ||
			strings.Contains(h.source, "go-x25519") || strings.Contains(h.source, "go-session") || strings.Contains(h.source, "node-h2")
	}
	cases := []holdOut{
		{"Go 1.24-1.26, quic-go and Go's variants, from Go 1.21-1.23", func(h familyHello) bool {
			return h.family != "go" || strings.Contains(h.source, "observed: go, ") && version(h.source) <= 123
		}},
		{"requests 2.34 (urllib3 2, python.org's ciphers) and the callers' variants, from the other OpenSSL clients", func(h familyHello) bool {
			return !strings.Contains(h.source, "urllib3-2") && !variant(h)
		}},
		{"Chrome and Edge 118-156, from 98-116", func(h familyHello) bool { return h.family != "chromium" || version(h.source) <= 116 }},
		{"Firefox 133-153, Tor 14.5, from Firefox 91-117", func(h familyHello) bool {
			return h.family != "firefox" || version(h.source) <= 117 && !strings.Contains(h.source, "tor_")
		}},
		{"Safari 17-26, from 15", func(h familyHello) bool { return h.family != "webkit" || version(h.source) < 1600 }},
	}
	// Then each client and version in turn.
	groups := map[string]bool{}
	for _, h := range all {
		groups[group(h)] = true
	}
	for _, g := range slices.Sorted(func(yield func(string) bool) {
		for g := range groups {
			if !yield(g) {
				return
			}
		}
	}) {
		cases = append(cases, holdOut{"left out: " + g, func(h familyHello) bool { return group(h) != g }})
	}
	for _, c := range cases {
		var train, test []familyHello
		for _, h := range all {
			if c.train(h) {
				train = append(train, h)
			} else {
				test = append(test, h)
			}
		}
		if len(test) == 0 {
			t.Errorf("%s: nothing left out", c.name)
			continue
		}
		fams, err := deriveFamilies(train)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		trained := map[string]bool{} // the families (a browser's: of a transport) with hellos left in
		for _, h := range train {
			trained[h.family+transport(h)] = true
		}
		own, unknown := 0, 0
		for _, h := range test {
			got := fams.Classify(h.hello)
			switch {
			case got.Known && got.Family == h.family:
				own++
			case got.Known && got.Browser != h.browser:
				t.Errorf("%s: the %s hello %s is %s's, a %s\n\t%s", c.name, h.family, h.source, got.Family, map[bool]string{true: "browser's", false: "library's"}[got.Browser], h.hello)
			case !h.browser && trained[h.family+transport(h)]:
				t.Errorf("%s: the %s hello %s is %+v\n\t%s", c.name, h.family, h.source, got, h.hello)
			case !got.Known:
				unknown++
			}
		}
		if !strings.HasPrefix(c.name, "left out: ") || testing.Verbose() {
			t.Logf("%s: %d of %d hellos left out known as their own family, %d unknown, none of the other kind", c.name, own, len(test), unknown)
		}
	}
}

// transport is "" for a library's hello (its profile is of both
// transports), a browser's hello's transport otherwise.
func transport(h familyHello) string {
	if !h.browser {
		return ""
	}
	if h.hello.QUIC {
		return "/quic"
	}
	return "/tcp"
}

// group names a hello's client and version, or its curl-impersonate
// browser and version.
func group(h familyHello) string {
	s := h.source
	if i := strings.Index(s, " ("); i >= 0 {
		s = s[:i]
	}
	if strings.Contains(s, "curl-impersonate@") {
		s = s[strings.LastIndex(s, ": ")+2:]
	}
	return h.family + ": " + s
}

// TestBrowsersNeverLibraries: no browser hello is a library's, even with
// its browser marks taken out (GREASE, ALPS, delegated credentials): a
// browser's signature algorithms, extension order and marks are no
// library's either. This holds the classification to more than the one
// line that keeps browsers apart. The browsers' hellos of which only the
// JA4_ro was kept (no GREASE, no groups) are included.
func TestBrowsersNeverLibraries(t *testing.T) {
	all, err := familyHellos("testdata")
	if err != nil {
		t.Fatal(err)
	}
	err = readObserved("testdata/observed.tsv", func(o observed) error {
		if o.hello == nil && o.browser {
			h, err := tlsprint.ParseRaw(o.raw)
			if err != nil {
				return err
			}
			all = append(all, familyHello{o.family, "observed (JA4_ro): " + o.client + ", " + short(o.version), true, h})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fams := tlsprint.BuiltinFamilies()
	n := 0
	for _, h := range all {
		if !h.browser {
			continue
		}
		for _, stripped := range []bool{false, true} {
			hello := h.hello
			if stripped {
				hello = stripBrowserMarks(hello)
			}
			n++
			got := fams.Classify(hello)
			if got.Known && !got.Browser {
				t.Errorf("%s (marks taken out: %v): %s's, a library's\n\t%s", h.source, stripped, got.Family, hello)
			}
			for _, p := range fams.Profiles {
				if !p.Browser && p.QUIC == hello.QUIC {
					if tells := p.Tells(hello, tlsprint.MarksOf(hello)); tells > 1 {
						t.Errorf("%s (marks taken out: %v): %d tells of %s", h.source, stripped, tells, p.Family)
					}
				}
			}
		}
	}
	t.Logf("%d browser hellos, with and without their browser marks: none a library's", n)
}

// stripBrowserMarks returns a hello without GREASE, ALPS and delegated
// credentials.
func stripBrowserMarks(h tlsprint.Hello) tlsprint.Hello {
	drop := func(vs []uint16) []uint16 {
		var out []uint16
		for _, v := range vs {
			if v&0x0f0f == 0x0a0a && v>>8 == v&0xff || v == 0x4469 || v == 0x44cd || v == 0x0022 {
				continue
			}
			out = append(out, v)
		}
		return out
	}
	h.Versions, h.Ciphers, h.Extensions, h.Groups, h.SignatureAlgorithms = drop(h.Versions), drop(h.Ciphers), drop(h.Extensions), drop(h.Groups), drop(h.SignatureAlgorithms)
	return h
}

var _ = fmt.Sprint
