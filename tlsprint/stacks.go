package tlsprint

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

// Stack is what the table says of the TLS stack that sent a ClientHello.
// The zero Stack is an unknown one. Its fields are those of evidence.TLS
// (whose QUIC the QUIC table gives: tlsprint/quicprint).
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

// Row is one line of the table: a JA4, its stack and where it was seen.
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
	// exact maps "<cipher hash>_<extension hash>" to a stack.
	exact map[string]Stack
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
// and extension hashes, else the zero Stack. The first part (transport,
// version, SNI, counts, ALPN) is not compared: the same stack to a host or
// an IP address, with or without ALPN, is the same stack. A cipher hash
// alone identifies nothing: a caller sets its cipher list in one line
// (tls.Config.CipherSuites), so Go with Chrome's ciphers has Chrome's.
func (t *Table) Lookup(ja4 string) Stack {
	if !wellFormed(ja4) {
		return Stack{}
	}
	return t.exact[ja4[11:]]
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

// ParseTable reads a table: tab-separated rows of JA4, family, kind
// ("browser" or "library") and source; "#" starts a comment line. It
// refuses a row that is malformed and a JA4 given two families: a JA4 is
// one stack's or none.
func ParseTable(text string) (*Table, error) {
	t := &Table{exact: map[string]Stack{}}
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
		if !wellFormed(m) {
			return nil, fmt.Errorf("line %d: %q is not a JA4", n, m)
		}
		key := m[11:]
		if old, ok := t.exact[key]; ok && old != s {
			return nil, fmt.Errorf("line %d: %s is %s on line %d and %s here", n, m, old.Family, where[key], s.Family)
		}
		t.exact[key], where[key] = s, n
		t.Rows = append(t.Rows, Row{Match: m, Stack: s, Source: f[3]})
	}
	return t, nil
}

// Valid reports a string shaped as a JA4, as a header from a CDN must be
// before it is logged or looked up.
func Valid(s string) bool { return wellFormed(s) }
