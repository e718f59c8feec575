package policy

import (
	"slices"

	"github.com/robotsguard/robotsguard/internal/sfv"
)

// sfMember is one member of a Structured Field Dictionary (RFC 9651
// section 3.2), reduced to what a statement of preference needs: its key
// and whether its value is the Token y, the Token n, or something else.
type sfMember struct {
	key string
	// token is the member's value when it is a Token ("y", "n", "yes",
	// ...), else "".
	token string
	// kind names the value's type for diagnostics: "token", "integer",
	// "decimal", "string", "byte sequence", "boolean", "date", "display
	// string" or "inner list".
	kind string
}

// parseSFDictionary parses s as a Dictionary with the module's one
// scanner (internal/sfv), parameters included (they are checked and
// dropped). A key that appears more than once keeps its last value, as the
// RFC says, and its place of first appearance; dups lists such keys. It
// fails on any syntax error, with an error that says where and why: a
// statement of preference that does not parse states nothing (all its
// preferences are unknown).
func parseSFDictionary(s string) (out []sfMember, dups []string, err error) {
	err = sfv.Dictionary(s, func(key string, it sfv.Item) bool {
		m := sfMember{key: key, kind: it.Kind.String()}
		if it.Kind == sfv.Token {
			m.token = it.Text
		}
		for k := range out {
			if out[k].key == key {
				out[k] = m
				if !slices.Contains(dups, key) {
					dups = append(dups, key)
				}
				return true
			}
		}
		out = append(out, m)
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	return out, dups, nil
}
