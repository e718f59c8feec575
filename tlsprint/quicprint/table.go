package quicprint

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/robotsguard/robotsguard/internal/stacktable"
)

// Stack is what the table says of the QUIC stack that sent a hello's
// transport parameters: a browser's own ("chromium", QUICHE; "firefox",
// neqo) or a library's ("quic-go", "ngtcp2", ...). The zero Stack is an
// unknown one, which is never evidence.
type Stack = stacktable.Stack

// grease stands for every reserved transport parameter (31 * N + 27):
// no parameter id is this large (ids are varints, below 2^62).
const grease = 1 << 63

// Fingerprint returns the fingerprint of a hello's transport parameters:
// "q", the QUIC version of its Initial packets ("1" or "2", then "d" when
// the parameters came in the drafts' extension), "_", and the parameter
// ids in the order sent, in hex, separated by dots, a reserved (GREASE)
// id written "g". quic-go's, for one: "q1_g.5.6.7.4.8.9.1.3.b.e.f".
// Values are left out: they are the caller's settings, not the stack's.
func Fingerprint(version uint32, ps []param, draft bool) string {
	b := make([]byte, 0, 4+len(ps)*4)
	b = append(b, 'q')
	if version == Version2 {
		b = append(b, '2')
	} else {
		b = append(b, '1')
	}
	if draft {
		b = append(b, 'd')
	}
	b = append(b, '_')
	for i, p := range ps {
		if i > 0 {
			b = append(b, '.')
		}
		if reserved(p.id) {
			b = append(b, 'g')
		} else {
			b = strconv.AppendUint(b, p.id, 16)
		}
	}
	return string(b)
}

// Row is one line of the table.
type Row struct {
	// Match is the transport parameter ids a stack sends (hex, "g" for a
	// reserved one, separated by dots): in that order, an id followed by
	// "?" being one it may leave out; or, after "set:", in any order (a
	// stack that shuffles them).
	stacktable.Row

	set     bool
	ids     []uint64
	options []bool
}

//go:embed quic.tsv
var quicTSV string

// Table is a table of QUIC stacks.
type Table struct {
	Rows []Row
	// strings maps each fingerprint of an exact row to one string.
	strings map[string]string
}

var builtin = sync.OnceValue(func() *Table {
	t, err := ParseTable(quicTSV)
	if err != nil {
		panic("quicprint: quic.tsv: " + err.Error()) // TestTable keeps this from happening
	}
	return t
})

// Builtin returns the built-in table (quic.tsv).
func Builtin() *Table { return builtin() }

// ParseTable reads a table: tab-separated rows of match, family, kind
// ("browser" or "library") and source; "#" starts a comment line. It
// refuses a malformed row, and a family given two kinds.
func ParseTable(text string) (*Table, error) {
	t := &Table{strings: map[string]string{}}
	err := stacktable.Parse(text, func(_ int, sr stacktable.Row) error {
		r := Row{Row: sr}
		m, set := strings.CutPrefix(r.Match, "set:")
		r.set = set
		for el := range strings.SplitSeq(m, ".") {
			el, opt := strings.CutSuffix(el, "?")
			if opt && set {
				return fmt.Errorf("%q: a set has no optional ids", r.Match)
			}
			var id uint64
			if el == "g" {
				id = grease
			} else {
				v, err := strconv.ParseUint(el, 16, 62)
				if err != nil || reserved(v) || strconv.FormatUint(v, 16) != el {
					return fmt.Errorf("%q: %q is not a parameter id in lower-case hex, nor g", r.Match, el)
				}
				id = v
			}
			r.ids, r.options = append(r.ids, id), append(r.options, opt)
		}
		if set {
			slices.Sort(r.ids)
		} else if !slices.Contains(r.options, true) {
			fp := "q1_" + m
			t.strings[fp] = fp
		}
		t.Rows = append(t.Rows, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// lookup returns the stack of the first row that matches the ids.
func (t *Table) lookup(ps []param) Stack {
	var buf [maxParams]uint64
	ids := buf[:0]
	for _, p := range ps {
		if reserved(p.id) {
			ids = append(ids, grease)
		} else {
			ids = append(ids, p.id)
		}
	}
	var sorted [maxParams]uint64
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.set {
			s := append(sorted[:0], ids...)
			slices.Sort(s)
			if slices.Equal(s, r.ids) {
				return r.Stack
			}
		} else if r.matches(ids) {
			return r.Stack
		}
	}
	return Stack{}
}

// Lookup returns the stack the table knows for a fingerprint as
// [Fingerprint] writes it, or the zero Stack.
func (t *Table) Lookup(fp string) Stack {
	_, ids, ok := strings.Cut(fp, "_")
	if !ok || ids == "" {
		return Stack{}
	}
	var buf [maxParams]param
	ps := buf[:0]
	for el := range strings.SplitSeq(ids, ".") {
		if len(ps) == maxParams {
			return Stack{}
		}
		if el == "g" {
			ps = append(ps, param{id: 27})
			continue
		}
		v, err := strconv.ParseUint(el, 16, 62)
		if err != nil {
			return Stack{}
		}
		ps = append(ps, param{id: v})
	}
	return t.lookup(ps)
}

// matches reports whether ids are the row's, in its order, its optional
// ones left out or not.
func (r *Row) matches(ids []uint64) bool {
	for i, id := range r.ids {
		switch {
		case len(ids) > 0 && ids[0] == id:
			ids = ids[1:]
		case !r.options[i]:
			return false
		}
	}
	return len(ids) == 0
}
