package signature

import (
	"errors"
	"fmt"

	"github.com/dunglas/httpsfv"
)

// maxHeaderBytes bounds the signature headers read, so that a hostile
// request cannot make the parser work on megabytes.
const maxHeaderBytes = 16 << 10

// parseDict parses the lines of a dictionary field and refuses one that
// names a member twice: parsers that keep the first and parsers that keep
// the last occurrence would see different signatures.
func parseDict(name string, lines []string) (*httpsfv.Dictionary, error) {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	if n > maxHeaderBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than %d", name, n, maxHeaderBytes)
	}
	d, err := httpsfv.UnmarshalDictionary(lines)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if members := countMembers(lines); members != len(d.Names()) {
		return nil, fmt.Errorf("%s: a label occurs more than once", name)
	}
	return d, nil
}

// countMembers counts the top-level members of a dictionary field that
// parsed: the commas outside strings and inner lists, plus one per
// non-empty line.
func countMembers(lines []string) int {
	n := 0
	for _, l := range lines {
		inString, escaped, depth, content := false, false, 0, false
		for i := 0; i < len(l); i++ {
			c := l[i]
			switch {
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
				}
			case c == '"':
				inString = true
			case c == '(':
				depth++
			case c == ')':
				depth--
			case c == ',' && depth == 0:
				n++
				continue
			}
			if c != ' ' && c != '\t' {
				content = true
			}
		}
		if content {
			n++
		}
	}
	return n
}

// errUnsupported marks what this verifier cannot check (an algorithm, a
// component, a discovery type): the outcome is Unverified, not Invalid.
var errUnsupported = errors.New("unsupported")

// unsupported returns an error that wraps errUnsupported.
func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUnsupported, fmt.Sprintf(format, args...))
}

// input is one signature's entry of Signature-Input.
type input struct {
	label      string
	components httpsfv.InnerList
	created    int64
	expires    int64
	hasCreated bool
	hasExpires bool
	keyID      string
	alg        string
	nonce      string
	tag        string
}

// parseInput reads the parameters of one Signature-Input member.
func parseInput(label string, m httpsfv.Member) (input, error) {
	in := input{label: label}
	il, ok := m.(httpsfv.InnerList)
	if !ok {
		return in, fmt.Errorf("signature %q: Signature-Input member is not an inner list", label)
	}
	in.components = il
	for _, it := range il.Items {
		if _, ok := it.Value.(string); !ok {
			return in, fmt.Errorf("signature %q: a covered component is not a string", label)
		}
	}
	p := il.Params
	if p == nil {
		return in, nil
	}
	for _, name := range p.Names() {
		v, _ := p.Get(name)
		var err error
		switch name {
		case "created":
			in.created, err = intParam(v)
			in.hasCreated = err == nil
		case "expires":
			in.expires, err = intParam(v)
			in.hasExpires = err == nil
		case "keyid":
			in.keyID, err = stringParam(v)
		case "alg":
			in.alg, err = stringParam(v)
		case "nonce":
			in.nonce, err = stringParam(v)
		case "tag":
			in.tag, err = stringParam(v)
		}
		if err != nil {
			return in, fmt.Errorf("signature %q: parameter %s: %v", label, name, err)
		}
	}
	return in, nil
}

func intParam(v any) (int64, error) {
	i, ok := v.(int64)
	if !ok {
		return 0, errors.New("not an integer")
	}
	return i, nil
}

func stringParam(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", errors.New("not a string")
	}
	return s, nil
}
