package policy

import (
	"errors"
	"net/url"
	"path"
	"slices"
	"strings"
	"testing"
)

// TestParseTarget pins the normal form and the spellings a backend may
// resolve to the same resource.
func TestParseTarget(t *testing.T) {
	for _, c := range []struct {
		raw      string
		normal   string
		variants []string
		err      error
	}{
		{raw: "/private/report.html", normal: "/private/report.html"},
		{raw: "/search?q=caf%C3%A9", normal: "/search?q=caf%C3%A9"},
		{raw: "/%70rivate/", normal: "/private/"},
		{raw: "/private%2Freport.html", normal: "/private%2Freport.html", variants: []string{"/private/report.html"}},
		{raw: "/private%2freport.html?x=1", normal: "/private%2Freport.html?x=1", variants: []string{"/private/report.html?x=1"}},
		{raw: "//private//report.html", normal: "//private//report.html", variants: []string{"/private/report.html"}},
		{raw: `/private\report.html`, normal: "/private%5Creport.html", variants: []string{"/private/report.html"}},
		{raw: "/private;jsessionid=1/report.html", normal: "/private;jsessionid=1/report.html", variants: []string{"/private/report.html"}},
		{raw: "/a/..%2Fprivate/x", normal: "/a/..%2Fprivate/x", variants: []string{"/private/x"}},
		{raw: "/docs/%3Fnot-a-query", normal: "/docs/%3Fnot-a-query"},
		// Escapes of octets a path may hold literally, as robots.txt files
		// write them (Wikipedia's "Disallow: /wiki/Special%3A").
		{raw: "/wiki/Special%3ARandom", normal: "/wiki/Special:Random"},
		{raw: "/wiki/Wikipedia%3AL%C3%B6schkandidaten/x?a=%3A&b=%41", normal: "/wiki/Wikipedia:L%C3%B6schkandidaten/x?a=%3A&b=A"},
		{raw: "/a/%2E%2E/private/x%3A", normal: "/private/x:"}, // the full reading
		// Issue 10, item 2: file_server drops a final "/.".
		{raw: "/docs/report.pdf/.", normal: "/docs/report.pdf/", variants: []string{"/docs/report.pdf"}},
		{raw: "/docs/report.pdf/./.", normal: "/docs/report.pdf/", variants: []string{"/docs/report.pdf"}},
		{raw: "/docs/report.pdf/x/..?a", normal: "/docs/report.pdf/?a", variants: []string{"/docs/report.pdf?a"}},
		// Absolute form: the path Go's server hands the backend.
		{raw: "http://example.com/private/x?y", normal: "/private/x?y"},
		{raw: "HTTP://example.com", normal: "/"},
		{raw: "http://example.com?q", normal: "/?q"},
		{raw: "x:/private/x", normal: "/private/x"},
		{raw: "*", normal: "/%2A"},
		// Issue 10, item 1: '#' anywhere is refused.
		{raw: "http://example.com/#/../private/secret.html", err: ErrFragment},
		{raw: "/robots.txt#/../anything", err: ErrFragment},
		{raw: "/a?b#c", err: ErrFragment},
		{raw: "", err: ErrInvalidTarget},
		{raw: "/%zz", err: ErrInvalidTarget},
		{raw: "mailto:x", err: ErrInvalidTarget},
		{raw: "private", err: ErrInvalidTarget},
	} {
		got, err := ParseTarget(c.raw)
		if !errors.Is(err, c.err) {
			t.Errorf("ParseTarget(%q): error %v, want %v", c.raw, err, c.err)
			continue
		}
		if got.Normal != c.normal || !slices.Equal(got.Variants, c.variants) {
			t.Errorf("ParseTarget(%q) = %q %q, want %q %q", c.raw, got.Normal, got.Variants, c.normal, c.variants)
		}
	}
}

// TestParseTargetAllocs: an ordinary target costs no allocation.
func TestParseTargetAllocs(t *testing.T) {
	for _, raw := range []string{"/", "/private/report.html", "/search?q=robots&page=2", "/wiki/Caf%C3%A9", "/a%20b?c=%26"} {
		if n := testing.AllocsPerRun(100, func() { _, _ = ParseTarget(raw) }); n != 0 {
			t.Errorf("ParseTarget(%q) allocates %v times", raw, n)
		}
	}
}

// FuzzParseTarget: for any request target Go's server accepts, the path
// Caddy's file_server opens (the decoded path, cleaned) is among the
// spellings, every spelling is in normal form, and the fast path agrees
// with the full reading.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"/private%2Freport.html", "//private/", `/a\b`, "/p;jsessionid=1/r.html?q=1", "/x/.", "/a/%2e%2e/b", "http://h/#/../x", "/caf%C3%A9?q", "*", "x:/y", "/a?",
		"/wiki/Special%3ARandom", "/%7Esam/%3A?x=%3a", "/a%3A/.%2E/b", "/a%3A/./b", "/a%3A//b", "/a%3A;x", "/a%3A%3B", "/a%3A%5Cb", "/a%3A%2f", "/a%3A%2", "/a%3A b", "/%3A#x", "/a%3A?%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := ParseTarget(raw)
		if strings.Contains(raw, "#") {
			if !errors.Is(err, ErrFragment) {
				t.Fatalf("ParseTarget(%q) = %v, %v: want ErrFragment", raw, got, err)
			}
			return
		}
		u, uerr := url.ParseRequestURI(raw)
		if uerr != nil || u.Opaque != "" {
			if err == nil {
				t.Fatalf("ParseTarget(%q) = %v, but Go's server refuses it (%v)", raw, got, uerr)
			}
			return
		}
		if err != nil {
			t.Fatalf("ParseTarget(%q): %v", raw, err)
		}
		if isPlainTarget(raw) {
			slow, _ := parseTarget(raw)
			if got.Normal != raw || got.Variants != nil || slow.Normal != raw || slow.Variants != nil {
				t.Fatalf("plain %q: fast %q %q, full %q %q", raw, got.Normal, got.Variants, slow.Normal, slow.Variants)
			}
		}
		if n, ok := escapedPlainTarget(raw); ok {
			slow, err := parseTarget(raw)
			if err != nil || got.Normal != n || got.Variants != nil || slow.Normal != n || slow.Variants != nil {
				t.Fatalf("escaped plain %q: fast %q %q, full %q %q %v", raw, got.Normal, got.Variants, slow.Normal, slow.Variants, err)
			}
		}
		all := append([]string{got.Normal}, got.Variants...)
		for _, s := range all {
			if NormalizeTarget(s) != s || !strings.HasPrefix(s, "/") {
				t.Fatalf("ParseTarget(%q): spelling %q is not in normal form", raw, s)
			}
		}
		// What file_server opens: caddyhttp.SanitizedPathJoin's clean of
		// the decoded path, a final slash kept only where there was one.
		fs := path.Clean("/" + u.Path)
		if strings.HasSuffix(u.Path, "/") && fs != "/" {
			fs += "/"
		}
		q := ""
		if u.ForceQuery || u.RawQuery != "" {
			q = "?" + u.RawQuery
		}
		want := NormalizeTarget((&url.URL{Path: fs}).EscapedPath() + q)
		if !slices.Contains(all, want) {
			t.Fatalf("ParseTarget(%q) = %q %q: the file server's path %q is missing", raw, got.Normal, got.Variants, want)
		}
	})
}
