package evidence

import "encoding/base64"

// Structured field values (RFC 9651, which obsoletes RFC 8941), as far as
// the client hints need them: a validating scanner for Lists, whose Items
// it hands to a callback without copying, and the Boolean and String Items
// of Sec-CH-UA-Mobile and Sec-CH-UA-Platform. It accepts exactly what
// RFC 9651's parsing algorithms accept, dates and display strings
// included; sfv_test.go checks it against github.com/dunglas/httpsfv.

// sfItem is one member of a List as the scanner sees it: its bare item's
// kind and text (a String's content still escaped), and the String value
// of its "v" parameter, if any.
type sfItem struct {
	kind sfKind
	// text is a String's content between its quotes, escapes kept, or the
	// bare item as written for the other kinds.
	text string
	// v is the content of a String "v" parameter (escapes kept); hasV
	// reports one.
	v    string
	hasV bool
}

type sfKind uint8

const (
	sfInnerList sfKind = iota
	sfInteger
	sfDecimal
	sfString
	sfToken
	sfBytes
	sfBoolean
	sfDate
	sfDisplayString
)

// sfScanner walks a field value.
type sfScanner struct {
	s string
	i int
}

func (p *sfScanner) eof() bool { return p.i >= len(p.s) }

func (p *sfScanner) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *sfScanner) skipSP() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfScanner) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// sfList parses s as a List, calling each for every member in order, and
// reports whether s is a valid List. A callback that returns false stops
// the walk early; the result is then false as well. An empty value is an
// empty List.
func sfList(s string, each func(sfItem) bool) bool {
	p := sfScanner{s: s}
	p.skipSP()
	for !p.eof() {
		it, ok := p.itemOrInnerList()
		if !ok || each != nil && !each(it) {
			return false
		}
		p.skipOWS()
		if p.eof() {
			return true
		}
		if p.s[p.i] != ',' {
			return false
		}
		p.i++
		p.skipOWS()
		if p.eof() {
			return false // a trailing comma
		}
	}
	return true
}

// sfSingleItem parses s as an Item; the top-level SP of RFC 9651 section
// 4.2 is discarded.
func sfSingleItem(s string) (sfItem, bool) {
	p := sfScanner{s: s}
	p.skipSP()
	it, ok := p.item()
	if !ok {
		return it, false
	}
	p.skipSP()
	return it, p.eof()
}

func (p *sfScanner) itemOrInnerList() (sfItem, bool) {
	if p.peek() != '(' {
		return p.item()
	}
	p.i++
	for {
		p.skipSP()
		if p.eof() {
			return sfItem{}, false
		}
		if p.s[p.i] == ')' {
			p.i++
			var it sfItem
			return it, p.params(&it)
		}
		if _, ok := p.item(); !ok {
			return sfItem{}, false
		}
		if c := p.peek(); c != ' ' && c != ')' {
			return sfItem{}, false
		}
	}
}

func (p *sfScanner) item() (sfItem, bool) {
	var it sfItem
	kind, text, ok := p.bareItem()
	if !ok {
		return it, false
	}
	it.kind, it.text = kind, text
	return it, p.params(&it)
}

// params parses an item's parameters, keeping a String "v" in it; a later
// "v" overrides an earlier one, as RFC 9651 section 4.2.3.2 says.
func (p *sfScanner) params(it *sfItem) bool {
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		key, ok := p.key()
		if !ok {
			return false
		}
		kind, text := sfBoolean, "?1"
		if p.peek() == '=' {
			p.i++
			if kind, text, ok = p.bareItem(); !ok {
				return false
			}
		}
		if key == "v" {
			it.v, it.hasV = text, kind == sfString
		}
	}
	return true
}

func (p *sfScanner) key() (string, bool) {
	start := p.i
	if c := p.peek(); !isLCAlpha(c) && c != '*' {
		return "", false
	}
	p.i++
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !isLCAlpha(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' && c != '*' {
			break
		}
		p.i++
	}
	return p.s[start:p.i], true
}

// bareItem parses a bare item and returns its kind and text: a String's
// content between its quotes, or the item as written.
func (p *sfScanner) bareItem() (sfKind, string, bool) {
	start := p.i
	switch c := p.peek(); {
	case c == '-' || isDigit(c):
		kind, ok := p.number()
		return kind, p.s[start:p.i], ok
	case c == '"':
		text, ok := p.str()
		return sfString, text, ok
	case c == '*' || isAlpha(c):
		p.i++
		for p.i < len(p.s) && (isTchar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
			p.i++
		}
		return sfToken, p.s[start:p.i], true
	case c == ':':
		ok := p.bytes()
		return sfBytes, p.s[start:p.i], ok
	case c == '?':
		if p.i+1 < len(p.s) && (p.s[p.i+1] == '0' || p.s[p.i+1] == '1') {
			p.i += 2
			return sfBoolean, p.s[start:p.i], true
		}
		return sfBoolean, "", false
	case c == '@':
		p.i++
		kind, ok := p.number()
		return sfDate, p.s[start:p.i], ok && kind == sfInteger
	case c == '%':
		p.i++
		ok := p.displayString()
		return sfDisplayString, p.s[start:p.i], ok
	}
	return 0, "", false
}

// number parses an Integer or a Decimal (RFC 9651 section 4.2.4).
func (p *sfScanner) number() (sfKind, bool) {
	if p.peek() == '-' {
		p.i++
	}
	if !isDigit(p.peek()) {
		return 0, false
	}
	digits, dot := 0, -1
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case isDigit(c):
			digits++
		case c == '.' && dot < 0:
			if digits > 12 {
				return 0, false
			}
			dot = digits
		default:
			goto done
		}
		p.i++
		if digits > 15 {
			return 0, false
		}
	}
done:
	if dot < 0 {
		return sfInteger, true
	}
	frac := digits - dot
	if frac == 0 || frac > 3 {
		return 0, false
	}
	return sfDecimal, true
}

// str parses a String and returns its content between the quotes, escapes
// kept.
func (p *sfScanner) str() (string, bool) {
	p.i++ // the opening quote
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '\\':
			if p.i+1 >= len(p.s) || p.s[p.i+1] != '"' && p.s[p.i+1] != '\\' {
				return "", false
			}
			p.i += 2
		case c == '"':
			text := p.s[start:p.i]
			p.i++
			return text, true
		case c < 0x20 || c > 0x7e:
			return "", false
		default:
			p.i++
		}
	}
	return "", false
}

// bytes parses a Byte Sequence: base64 between colons, which must decode
// as the standard encoding with its padding does.
func (p *sfScanner) bytes() bool {
	p.i++
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ':' {
		c := p.s[p.i]
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '/' && c != '=' {
			return false
		}
		p.i++
	}
	if p.eof() {
		return false
	}
	b64 := p.s[start:p.i]
	p.i++
	if len(b64)%4 != 0 {
		return false
	}
	var out [3]byte
	for k := 0; k < len(b64); k += 4 {
		group := b64[k : k+4]
		if k+4 < len(b64) {
			for j := 0; j < 4; j++ {
				if group[j] == '=' {
					return false // padding only at the end
				}
			}
		}
		if _, err := base64.StdEncoding.Decode(out[:], []byte(group)); err != nil {
			return false
		}
	}
	return true
}

// displayString parses a Display String after its '%': a quoted string of
// printable ASCII with %xx escapes (lower-case hex) that decodes to UTF-8.
func (p *sfScanner) displayString() bool {
	if p.peek() != '"' {
		return false
	}
	p.i++
	var need, have int // UTF-8 continuation bytes expected and seen
	var lead byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c < 0x20 || c > 0x7e:
			return false
		case c == '%':
			if p.i+2 >= len(p.s) {
				return false
			}
			h, ok1 := unhex(p.s[p.i+1])
			l, ok2 := unhex(p.s[p.i+2])
			if !ok1 || !ok2 {
				return false
			}
			b := h<<4 | l
			p.i += 3
			if !utf8Step(b, &need, &have, &lead) {
				return false
			}
			continue
		case c == '"':
			p.i++
			return need == 0
		}
		if need != 0 {
			return false // a plain byte inside a multi-byte sequence
		}
		p.i++
	}
	return false
}

// utf8Step checks one decoded byte of a Display String against the UTF-8
// rules (no overlong forms, no surrogates, at most U+10FFFF).
func utf8Step(b byte, need, have *int, lead *byte) bool {
	if *need == 0 {
		switch {
		case b < 0x80:
			return true
		case b >= 0xc2 && b <= 0xdf:
			*need = 1
		case b >= 0xe0 && b <= 0xef:
			*need = 2
		case b >= 0xf0 && b <= 0xf4:
			*need = 3
		default:
			return false
		}
		*have, *lead = 0, b
		return true
	}
	if b < 0x80 || b > 0xbf {
		return false
	}
	if *have == 0 {
		switch {
		case *lead == 0xe0 && b < 0xa0, *lead == 0xed && b > 0x9f, *lead == 0xf0 && b < 0x90, *lead == 0xf4 && b > 0x8f:
			return false
		}
	}
	*have++
	if *have == *need {
		*need = 0
	}
	return true
}

func unhex(c byte) (byte, bool) {
	switch {
	case isDigit(c):
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func isDigit(c byte) bool   { return '0' <= c && c <= '9' }
func isLCAlpha(c byte) bool { return 'a' <= c && c <= 'z' }
func isAlpha(c byte) bool   { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isTchar reports a token character of RFC 9110 section 5.6.2.
func isTchar(c byte) bool {
	if isAlpha(c) || isDigit(c) {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// sfStringEqual reports whether the escaped content of a String equals s.
func sfStringEqual(escaped, s string) bool {
	j := 0
	for i := 0; i < len(escaped); i++ {
		c := escaped[i]
		if c == '\\' {
			i++
			c = escaped[i]
		}
		if j >= len(s) || s[j] != c {
			return false
		}
		j++
	}
	return j == len(s)
}
