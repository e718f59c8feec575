package tlsprint

import (
	_ "embed"
	"fmt"
	"sync"

	"github.com/robotsguard/robotsguard/internal/stacktable"
)

// Stack is what the table says of the TLS stack that sent a ClientHello
// (families "go", "openssl", "gnutls", "nss", "java", "node", "rustls",
// ... for libraries). Its fields are those of evidence.TLS, whose QUIC the
// QUIC table gives (tlsprint/quicprint).
type Stack = stacktable.Stack

// Row is one line of the table: a JA4, its stack and where it was seen.
type Row = stacktable.Row

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
	err := stacktable.Parse(text, func(n int, r Row) error {
		if r.Stack.Browser != browsers[r.Stack.Family] {
			return fmt.Errorf("family %q is not of kind %s", r.Stack.Family, stacktable.Kind(r.Stack.Browser))
		}
		if !wellFormed(r.Match) {
			return fmt.Errorf("%q is not a JA4", r.Match)
		}
		key := r.Match[11:]
		if old, ok := t.exact[key]; ok && old != r.Stack {
			return fmt.Errorf("%s is %s on line %d and %s here", r.Match, old.Family, where[key], r.Stack.Family)
		}
		t.exact[key], where[key] = r.Stack, n
		t.Rows = append(t.Rows, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Valid reports a string shaped as a JA4, as a header from a CDN must be
// before it is logged or looked up.
func Valid(s string) bool { return wellFormed(s) }
