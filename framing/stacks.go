package framing

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/robotsguard/robotsguard/internal/stacktable"
)

// Stack is what the table says of the HTTP stack that sent a fingerprint
// (families "go", "python-h2", "node", "curl", ... for libraries). The
// zero Stack is an unknown one. Its fields are those of evidence.Framing,
// which a Stack converts to.
type Stack = stacktable.Stack

// Row is one line of the table: a fingerprint, a shape ("h2~..." or
// "h3~...", see Shape) that only one stack sends, or an HTTP/2
// pseudo-header order that no browser sends ("h2~*|a,m,p,s"); its stack and
// where it was seen.
type Row = stacktable.Row

//go:embed stacks.tsv
var stacksTSV string

// Table holds the rows of a table, indexed for Lookup.
type Table struct {
	Rows []Row
	// exact maps a fingerprint to its row's Print, shapes a shape to its
	// stack.
	exact  map[string]*Print
	shapes map[string]Stack
}

var builtin = sync.OnceValue(func() *Table {
	t, err := ParseTable(stacksTSV)
	if err != nil {
		panic("framing: stacks.tsv: " + err.Error()) // TestTable keeps this from happening
	}
	return t
})

// Builtin returns the built-in table (stacks.tsv).
func Builtin() *Table { return builtin() }

// Lookup returns the stack the built-in table knows for a fingerprint, or
// the zero Stack. It allocates nothing.
func Lookup(fingerprint string) Stack { return builtin().Lookup(fingerprint) }

// Lookup returns the stack the table knows for a fingerprint: its row,
// else the row of its shape, else the row of its HTTP/2 pseudo-header
// order ("h2~*|m,p,s,a": one that no browser sends), else what the rules of
// HTTP/1.1 stacks say (H1Stack), else the zero Stack.
func (t *Table) Lookup(fingerprint string) Stack {
	if p, ok := t.exact[fingerprint]; ok {
		return p.Stack
	}
	var buf [256]byte
	if shape := appendShape(buf[:0], fingerprint); len(shape) > 0 {
		if s, ok := t.shapes[string(shape)]; ok {
			return s
		}
		if bytes.HasPrefix(shape, []byte("h2~")) {
			// A pseudo-header order no browser sends.
			_, order, _ := bytes.Cut(shape, []byte("|"))
			b := append(append(buf[len(shape):len(shape)], "h2~*|"...), order...)
			if s, ok := t.shapes[string(b)]; ok {
				return s
			}
		}
	}
	if names, ok := strings.CutPrefix(fingerprint, "h1:"); ok && len(names) > 2 {
		return H1Stack(names[2:])
	}
	return Stack{}
}

// Print returns the Print of complete Frames: the table's own for a
// fingerprint it has a row of (shared, so that a known client's
// connection allocates no Print), else a new one.
func (t *Table) Print(f *Frames) *Print {
	var buf [512]byte
	text := f.AppendText(buf[:0])
	if p, ok := t.exact[string(text)]; ok {
		return p
	}
	s := string(text)
	return &Print{Text: s, Proto: f.Proto, Stack: t.Lookup(s)}
}

// Shape returns the shape of a fingerprint: what its stack does whatever
// its caller configures. For HTTP/2, "h2~", the SETTINGS identifiers in
// the order sent joined with ";", "|" and the pseudo-header order (values,
// the window and priorities left out: a caller can set those); for
// HTTP/3, "h3~" and the SETTINGS identifiers. HTTP/1.1 has none (see
// H1Stack).
func Shape(fingerprint string) string { return string(appendShape(nil, fingerprint)) }

func appendShape(b []byte, fp string) []byte {
	switch {
	case strings.HasPrefix(fp, "h2:"):
		fields := fp[3:]
		settings, rest, ok := strings.Cut(fields, "|")
		if !ok {
			return nil
		}
		_, rest, _ = strings.Cut(rest, "|") // the window
		_, rest, _ = strings.Cut(rest, "|") // the priorities
		pseudo, _, _ := strings.Cut(rest, "|")
		b = append(b, "h2~"...)
		b = appendIDs(b, settings)
		b = append(b, '|')
		return append(b, pseudo...)
	case strings.HasPrefix(fp, "h3:"):
		return appendIDs(append(b, "h3~"...), fp[3:])
	}
	return nil
}

// appendIDs appends the identifiers of "id:value;id:value" joined with ";".
func appendIDs(b []byte, settings string) []byte {
	for i := 0; settings != ""; i++ {
		var s string
		s, settings, _ = strings.Cut(settings, ";")
		id, _, _ := strings.Cut(s, ":")
		if i > 0 {
			b = append(b, ';')
		}
		b = append(b, id...)
	}
	return b
}

// ParseTable reads a table: one row a line, tab-separated: the match (a
// fingerprint or a shape), the family, the kind ("browser" or "library")
// and where it was seen. Empty lines and lines that start with '#' are
// skipped.
func ParseTable(tsv string) (*Table, error) {
	t := &Table{exact: map[string]*Print{}, shapes: map[string]Stack{}}
	err := stacktable.Parse(tsv, func(_ int, r Row) error {
		m := r.Match
		switch {
		case strings.HasPrefix(m, "h2~") || strings.HasPrefix(m, "h3~"):
			if _, dup := t.shapes[m]; dup {
				return fmt.Errorf("%s twice", m)
			}
			t.shapes[m] = r.Stack
		case strings.HasPrefix(m, "h1:") || strings.HasPrefix(m, "h2:") || strings.HasPrefix(m, "h3:"):
			if _, dup := t.exact[m]; dup {
				return fmt.Errorf("%s twice", m)
			}
			proto := map[string]Proto{"h1": H1, "h2": H2, "h3": H3}[m[:2]]
			t.exact[m] = &Print{Text: m, Proto: proto, Stack: r.Stack}
		default:
			return fmt.Errorf("%q is neither a fingerprint nor a shape", m)
		}
		t.Rows = append(t.Rows, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Families returns the families of the table's rows and of H1Stack's
// rules, each once, in order of first appearance.
func (t *Table) Families() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range t.Rows {
		if !seen[r.Stack.Family] {
			seen[r.Stack.Family] = true
			out = append(out, r.Stack.Family)
		}
	}
	for _, f := range h1Families {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}
