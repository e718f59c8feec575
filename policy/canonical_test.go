package policy

import (
	"strings"
	"testing"
)

// TestCanonical applies QueryParam, Domain and IndexPage as the seed text
// proposes them.
func TestCanonical(t *testing.T) {
	p := Compile(Parse([]byte(`QueryParam: -utm_source, -utm_medium
Domain: https://example.com/
IndexPage: index.html

User-agent: Slurp
Disallow:
QueryParam: -sid
QueryParam: refby=yhoo_srch

User-agent: strictbot
Disallow:
QueryParam: -*, page

User-agent: *
Disallow: /private/
QueryParam: -sid, refby=search
`)))
	if !p.HasCanonical() {
		t.Fatal("HasCanonical = false")
	}
	for _, tc := range []struct {
		agent, scheme, host, target string
		want                        string
		changed                     bool
	}{
		{"slurp", "http", "www.example.com", "/page.php?refby=affiliate&sid=abc123", "https://example.com/page.php?refby=yhoo_srch", true},
		{"googlebot", "https", "example.com", "/page.php?sid=abc&refby=aff&x=1", "https://example.com/page.php?refby=search&x=1", true},
		{"googlebot", "https", "example.com", "/page.php?x=1", "https://example.com/page.php?x=1", false},
		{"googlebot", "https", "EXAMPLE.com", "/a", "https://example.com/a", false},
		{"googlebot", "https", "example.com", "/docs/index.html", "https://example.com/docs/", true},
		{"googlebot", "https", "example.com", "/docs/index.html?sid=1", "https://example.com/docs/", true},
		{"googlebot", "https", "example.com", "/docs/index.htm", "https://example.com/docs/index.htm", false},
		{"googlebot", "https", "example.com", "/?utm_source=x&q=1", "https://example.com/?q=1", true},
		{"strictbot", "https", "example.com", "/list?page=2&sort=asc&sid=1&utm_source=x", "https://example.com/list?page=2", true},
		{"googlebot", "http", "mirror.example.net", "/x", "https://example.com/x", true},
		{"googlebot", "https", "example.com", "/x?", "https://example.com/x", true},
	} {
		got, target, changed := p.Canonical([]string{tc.agent}, tc.scheme, tc.host, tc.target)
		if got != tc.want || changed != tc.changed || !strings.HasSuffix(got, target) {
			t.Errorf("Canonical(%s, %s://%s%s) = %s (target %s), %v; want %s, %v", tc.agent, tc.scheme, tc.host, tc.target, got, target, changed, tc.want, tc.changed)
		}
	}
	// Without canonicalisation fields nothing changes.
	plain := Compile(Parse([]byte("User-agent: *\nDisallow: /x\n")))
	if plain.HasCanonical() {
		t.Error("HasCanonical for a plain file")
	}
	if got, _, changed := plain.Canonical(nil, "https", "example.com", "/a?b=1"); changed || got != "https://example.com/a?b=1" {
		t.Errorf("plain: %s %v", got, changed)
	}
}

// TestCanonicalLint: malformed canonicalisation fields are reported.
func TestCanonicalLint(t *testing.T) {
	ds := Parse([]byte("QueryParam: -sid=1\nIndexPage: /index.html\nDomain: example.com\nUser-agent: *\nQueryParam: =x\nDisallow:\n")).Lint()
	for _, want := range []struct {
		line int
		msg  string
	}{{1, `QueryParam "-sid=1"`}, {2, "IndexPage"}, {3, "not an absolute"}, {5, `QueryParam "=x"`}} {
		if !hasDiag(ds, want.line, Warning, want.msg) {
			t.Errorf("no warning %q on line %d: %v", want.msg, want.line, ds)
		}
	}
}

// TestRelativeRef: a canonical target is its own relative reference,
// except one that a client would read as naming a host ("//x", "/\x"),
// which "/./" keeps a path.
func TestRelativeRef(t *testing.T) {
	for _, tc := range []struct{ target, want string }{
		{"/page.html?x=2", "/page.html?x=2"},
		{"/a//b", "/a//b"},
		{"//evil.example/x", "/.//evil.example/x"},
		{`/\evil.example/x`, `/./\evil.example/x`},
		{"/", "/"},
	} {
		if got := RelativeRef(tc.target); got != tc.want {
			t.Errorf("RelativeRef(%q) = %q, want %q", tc.target, got, tc.want)
		}
	}
}
