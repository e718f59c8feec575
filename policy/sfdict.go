package policy

import (
	"fmt"
	"slices"
	"unicode/utf8"
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

// errSF is the error of a value that is not a Structured Field Dictionary;
// its message says where and why.
type errSF struct {
	at  int
	msg string
}

func (e *errSF) Error() string { return e.msg }

// parseSFDictionary parses s as a Dictionary by the algorithm of RFC 9651
// section 4.2.2, parameters included (they are checked and dropped). A key
// that appears more than once keeps its last value, as the RFC says, and
// its place of first appearance; dups lists such keys. It fails on any
// syntax error: a statement of preference that does not parse states
// nothing (all its preferences are unknown).
func parseSFDictionary(s string) (out []sfMember, dups []string, err error) {
	p := sfParser{s: s}
	p.skipSP()
	for p.i < len(p.s) {
		key, err := p.key()
		if err != nil {
			return nil, nil, err
		}
		m := sfMember{key: key, kind: "boolean"}
		if p.peek() == '=' {
			p.i++
			if m.token, m.kind, err = p.itemOrList(); err != nil {
				return nil, nil, err
			}
		} else if err := p.params(); err != nil {
			return nil, nil, err
		}
		replaced := false
		for k := range out {
			if out[k].key == key {
				out[k], replaced = m, true
				if !slices.Contains(dups, key) {
					dups = append(dups, key)
				}
			}
		}
		if !replaced {
			out = append(out, m)
		}
		p.skipOWS()
		if p.i == len(p.s) {
			return out, dups, nil
		}
		if p.s[p.i] != ',' {
			return nil, nil, p.fail("expected ',' after the member %q", key)
		}
		p.i++
		p.skipOWS()
		if p.i == len(p.s) {
			return nil, nil, p.fail("trailing ','")
		}
	}
	return out, dups, nil
}

type sfParser struct {
	s string
	i int
	// numberErr is the error of the last number parsed.
	numberErr error
}

func (p *sfParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *sfParser) fail(format string, args ...any) error {
	return &errSF{at: p.i, msg: fmt.Sprintf(format, args...)}
}

func (p *sfParser) skipSP() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func isLCAlpha(c byte) bool { return c >= 'a' && c <= 'z' }
func isAlpha(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool   { return c >= '0' && c <= '9' }

// key parses a key: lcalpha or '*', then lcalpha, digits, '_', '-', '.'
// and '*'.
func (p *sfParser) key() (string, error) {
	start := p.i
	if c := p.peek(); !isLCAlpha(c) && c != '*' {
		if isAlpha(c) {
			return "", p.fail("key starts with an upper-case letter (keys are lower case)")
		}
		return "", p.fail("expected a key")
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !isLCAlpha(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' && c != '*' {
			break
		}
		p.i++
	}
	return p.s[start:p.i], nil
}

// itemOrList parses an Item or an Inner List with their parameters and
// returns the token value (for a Token) and the value's type.
func (p *sfParser) itemOrList() (token, kind string, err error) {
	if p.peek() == '(' {
		p.i++
		for {
			p.skipSP()
			if p.i == len(p.s) {
				return "", "", p.fail("inner list is not closed")
			}
			if p.s[p.i] == ')' {
				p.i++
				return "", "inner list", p.params()
			}
			if _, _, err := p.bareItem(); err != nil {
				return "", "", err
			}
			if err := p.params(); err != nil {
				return "", "", err
			}
			if c := p.peek(); c != ' ' && c != ')' {
				return "", "", p.fail("expected ' ' or ')' in an inner list")
			}
		}
	}
	token, kind, err = p.bareItem()
	if err != nil {
		return "", "", err
	}
	return token, kind, p.params()
}

// params parses parameters (";key[=value]" repeated); their values are
// checked and dropped.
func (p *sfParser) params() error {
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		if _, err := p.key(); err != nil {
			return err
		}
		if p.peek() == '=' {
			p.i++
			if _, _, err := p.bareItem(); err != nil {
				return err
			}
		}
	}
	return nil
}

// bareItem parses a Bare Item and returns its value when it is a Token.
func (p *sfParser) bareItem() (token, kind string, err error) {
	c := p.peek()
	switch {
	case c == '-' || isDigit(c):
		return "", p.number(), p.numberErr
	case c == '"':
		return "", "string", p.str()
	case c == '*' || isAlpha(c):
		start := p.i
		p.i++
		for p.i < len(p.s) && isSFTokenChar(p.s[p.i]) {
			p.i++
		}
		return p.s[start:p.i], "token", nil
	case c == ':':
		return "", "byte sequence", p.bytes()
	case c == '?':
		p.i++
		if c := p.peek(); c != '0' && c != '1' {
			return "", "", p.fail("a boolean is ?0 or ?1")
		}
		p.i++
		return "", "boolean", nil
	case c == '@':
		p.i++
		if kind := p.number(); p.numberErr != nil || kind != "integer" {
			return "", "", p.fail("a date is '@' and an integer")
		}
		return "", "date", nil
	case c == '%':
		return "", "display string", p.displayString()
	case p.i == len(p.s):
		return "", "", p.fail("value missing")
	}
	return "", "", p.fail("%q cannot start a value", string(c))
}

// isSFTokenChar reports whether c may continue a Token: tchar, ':' or '/'.
func isSFTokenChar(c byte) bool {
	if isAlpha(c) || isDigit(c) {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~', ':', '/':
		return true
	}
	return false
}

// number parses an Integer or Decimal and returns "integer" or "decimal";
// p.numberErr is set on failure.
func (p *sfParser) number() string {
	p.numberErr = nil
	if p.peek() == '-' {
		p.i++
	}
	if !isDigit(p.peek()) {
		p.numberErr = p.fail("expected a digit")
		return ""
	}
	kind, digits, frac := "integer", 0, -1
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case isDigit(c):
			digits++
			if frac >= 0 {
				frac++
			}
		case c == '.' && kind == "integer":
			if digits > 12 {
				p.numberErr = p.fail("a decimal has at most 12 integer digits")
				return ""
			}
			kind, frac = "decimal", 0
		default:
			goto done
		}
		p.i++
	}
done:
	switch {
	case kind == "integer" && digits > 15:
		p.numberErr = p.fail("an integer has at most 15 digits")
	case kind == "decimal" && frac == 0:
		p.numberErr = p.fail("a decimal ends in a digit")
	case kind == "decimal" && frac > 3:
		p.numberErr = p.fail("a decimal has at most 3 fractional digits")
	}
	return kind
}

// str parses a String.
func (p *sfParser) str() error {
	p.i++ // '"'
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.i == len(p.s) || p.s[p.i] != '"' && p.s[p.i] != '\\' {
				return p.fail("bad escape in a string")
			}
			p.i++
		case c == '"':
			return nil
		case c < 0x20 || c > 0x7e:
			return p.fail("a string holds only printable ASCII")
		}
	}
	return p.fail("string is not closed")
}

// bytes parses a Byte Sequence (":base64:"); the content is checked, not
// decoded.
func (p *sfParser) bytes() error {
	p.i++ // ':'
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		if c == ':' {
			return nil
		}
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '/' && c != '=' {
			return p.fail("a byte sequence holds only base64")
		}
	}
	return p.fail("byte sequence is not closed")
}

// displayString parses a Display String (%"..." with %xx escapes of UTF-8).
func (p *sfParser) displayString() error {
	p.i++ // '%'
	if p.peek() != '"' {
		return p.fail("a display string starts with %%\"")
	}
	p.i++
	var decoded []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c < 0x20 || c > 0x7e:
			return p.fail("a display string holds only printable ASCII")
		case c == '%':
			if p.i+2 > len(p.s) || !isLowerHex(p.s[p.i]) || !isLowerHex(p.s[p.i+1]) {
				return p.fail("bad escape in a display string")
			}
			h, _ := unhex(p.s[p.i])
			l, _ := unhex(p.s[p.i+1])
			decoded = append(decoded, h<<4|l)
			p.i += 2
		case c == '"':
			if !utf8.Valid(decoded) {
				return p.fail("a display string is UTF-8")
			}
			return nil
		default:
			decoded = append(decoded, c)
		}
	}
	return p.fail("display string is not closed")
}

func isLowerHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' }
