package tlsprint

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

// Stack is what the table says of the TLS stack that sent a ClientHello.
// The zero Stack is an unknown one. Its fields are those of evidence.TLS,
// which a Stack converts to.
type Stack struct {
	// Known reports that the table knows the stack.
	Known bool
	// Browser reports a browser engine's stack.
	Browser bool
	// Family names the stack: "chromium", "firefox" or "webkit" for a
	// browser engine's; "go", "openssl", "gnutls", "nss", "java",
	// "node", "rustls", ... for a library's.
	Family string
}

// Row is one line of the table: a JA4 (or "*_<cipher hash>_*", a browser
// engine's cipher set whatever its extensions), its stack and where it was
// seen.
type Row struct {
	Match  string
	Stack  Stack
	Source string
}

//go:embed stacks.tsv
var stacksTSV string

// Table holds the rows of a table, indexed for Lookup.
type Table struct {
	Rows []Row
	// exact maps "<cipher hash>_<extension hash>" to a stack; ciphers maps
	// a browser engine's cipher hash to its stack.
	exact, ciphers map[string]Stack
}

var builtin = sync.OnceValue(func() *Table {
	t, err := ParseTable(stacksTSV)
	if err != nil {
		panic("tlsprint: stacks.tsv: " + err.Error()) // TestTable keeps this from happening
	}
	return t
})

// Lookup returns the stack the built-in table (stacks.tsv) knows for a
// JA4, or the zero Stack. It allocates nothing.
func Lookup(ja4 string) Stack { return builtin().Lookup(ja4) }

// Builtin returns the built-in table.
func Builtin() *Table { return builtin() }

// Lookup returns the stack the table knows for a JA4: the row of its cipher
// and extension hashes, else the browser engine of its cipher hash, else
// the zero Stack. The first part (transport, version, SNI, counts, ALPN)
// is not compared: the same stack to a host or an IP address, with or
// without ALPN, is the same stack.
func (t *Table) Lookup(ja4 string) Stack {
	if !wellFormed(ja4) {
		return Stack{}
	}
	if s, ok := t.exact[ja4[11:]]; ok {
		return s
	}
	return t.ciphers[ja4[11:23]]
}

// wellFormed reports a string shaped as a JA4: 10 characters, then two
// 12-digit lower-case hex hashes, separated by "_".
func wellFormed(s string) bool {
	if len(s) != 36 || s[10] != '_' || s[23] != '_' {
		return false
	}
	for i := 11; i < 36; i++ {
		if c := s[i]; i != 23 && !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// browsers are the browser engines' families; every other is a library's.
var browsers = map[string]bool{"chromium": true, "firefox": true, "webkit": true}

// ParseTable reads a table: tab-separated rows of match, family, kind
// ("browser" or "library") and source; "#" starts a comment line. It
// refuses a row that is malformed, a JA4 given two families, a cipher-set
// row for a library, and a cipher set that a row of another family shares:
// a JA4 is one stack's or none.
func ParseTable(text string) (*Table, error) {
	t := &Table{exact: map[string]Stack{}, ciphers: map[string]Stack{}}
	where := map[string]int{}
	for n, line := range strings.Split(text, "\n") {
		n++
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 || f[3] == "" {
			return nil, fmt.Errorf("line %d: want 4 tab-separated fields (match, family, kind, source), with a source", n)
		}
		s := Stack{Known: true, Family: f[1], Browser: f[2] == "browser"}
		if f[2] != "browser" && f[2] != "library" {
			return nil, fmt.Errorf("line %d: kind %q: want browser or library", n, f[2])
		}
		if s.Browser != browsers[f[1]] {
			return nil, fmt.Errorf("line %d: family %q is not of kind %s", n, f[1], f[2])
		}
		m := f[0]
		var key string
		var index map[string]Stack
		switch {
		case wellFormed(m):
			key, index = m[11:], t.exact
		case len(m) == 16 && strings.HasPrefix(m, "*_") && strings.HasSuffix(m, "_*") && wellFormed("t13d0000h2_"+m[2:14]+"_000000000000"):
			if !s.Browser {
				return nil, fmt.Errorf("line %d: a cipher set (%s) identifies a browser engine only", n, m)
			}
			key, index = m[2:14], t.ciphers
		default:
			return nil, fmt.Errorf("line %d: match %q: want a JA4 or *_<cipher hash>_*", n, m)
		}
		if old, ok := index[key]; ok && old != s {
			return nil, fmt.Errorf("line %d: %s is %s on line %d and %s here", n, m, old.Family, where[key], s.Family)
		}
		index[key], where[key] = s, n
		t.Rows = append(t.Rows, Row{Match: m, Stack: s, Source: f[3]})
	}
	for k, s := range t.exact {
		if c, ok := t.ciphers[k[:12]]; ok && c != s {
			return nil, fmt.Errorf("cipher set %s is %s's (line %d) and %s's (line %d)", k[:12], c.Family, where[k[:12]], s.Family, where[k])
		}
	}
	return t, nil
}

// Valid reports a string shaped as a JA4, as a header from a CDN must be
// before it is logged or looked up.
func Valid(s string) bool { return wellFormed(s) }
