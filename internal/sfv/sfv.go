// Package sfv reads Structured Field Values (RFC 9651, which obsoletes
// RFC 8941) without allocating: the one scanner of the module's packages
// that use the standard library only. package evidence reads the client
// hints with it on every browser's request (Sec-CH-UA's List,
// Sec-CH-UA-Mobile's and Sec-CH-UA-Platform's Items), where a parser that
// builds values (github.com/dunglas/httpsfv allocates per member) would
// cost each request; package policy reads the AI usage preferences of
// robots.txt (a Dictionary) with it, which must stay within the standard
// library. Packages that may use a library and are off the hot path
// (signature) use httpsfv.
//
// It accepts exactly what RFC 9651's parsing algorithms accept, dates and
// display strings included, and walks a value's members without copying:
// an [Item] holds pieces of the value. sfv_test.go checks it against
// httpsfv.
package sfv

import (
	"encoding/base64"
	"fmt"
)

// Kind is the type of a member's bare item, or an Inner List.
type Kind uint8

// The kinds.
const (
	InnerList Kind = iota
	Integer
	Decimal
	String
	Token
	ByteSequence
	Boolean
	Date
	DisplayString
)

var kindNames = [...]string{InnerList: "inner list", Integer: "integer", Decimal: "decimal", String: "string", Token: "token",
	ByteSequence: "byte sequence", Boolean: "boolean", Date: "date", DisplayString: "display string"}

// String returns the kind's name as RFC 9651 writes it, in lower case
// ("byte sequence").
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Item is one member of a List or a Dictionary as the scanner sees it: its
// bare item's kind and text (a String's content between its quotes,
// escapes kept; the other kinds as written; "" for an Inner List), and the
// String value of its "v" parameter, if any (escapes kept; a later "v"
// wins, as RFC 9651 section 4.2.3.2 says).
type Item struct {
	Kind Kind
	Text string
	V    string
	HasV bool
}

// Error is a value that does not parse: where and why.
type Error struct {
	// At is the byte offset at which parsing failed.
	At       int
	msg, arg string
}

// Error says why the value does not parse.
func (e *Error) Error() string {
	if e.arg != "" {
		return fmt.Sprintf(e.msg, e.arg)
	}
	return e.msg
}

// List parses s as a List (RFC 9651 section 4.2.1), calling each (when not
// nil) for every member in order, and reports whether s is a valid List. A
// callback that returns false stops the walk; the result is then false.
// An empty value is an empty List. It allocates nothing.
func List(s string, each func(Item) bool) bool {
	p := scanner{s: s}
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

// SingleItem parses s as an Item (RFC 9651 section 4.2.3); the top-level
// SP of section 4.2 is discarded. It allocates nothing.
func SingleItem(s string) (Item, bool) {
	p := scanner{s: s}
	p.skipSP()
	it, ok := p.item()
	if !ok {
		return it, false
	}
	p.skipSP()
	return it, p.eof()
}

// Dictionary parses s as a Dictionary (RFC 9651 section 4.2.2), calling
// each for every member in order, a key without a value as the Boolean
// true; a key given again is given again, and the last value is the
// member's (the caller keeps it where the first one stood). A callback
// that returns false stops the walk with a nil error. An error, a
// *Error, says where and why s does not parse.
//
// A Byte Sequence is only checked for base64's alphabet, as RFC 9651
// section 4.2.7 recommends ("parsers SHOULD NOT fail when '=' padding is
// not present"); List and SingleItem hold it to its padding, as httpsfv
// does.
func Dictionary(s string, each func(key string, value Item) bool) error {
	p := scanner{s: s, anyBase64: true}
	p.skipSP()
	for !p.eof() {
		key, ok := p.key()
		if !ok {
			return p.err()
		}
		it := Item{Kind: Boolean, Text: "?1"}
		if p.peek() == '=' {
			p.i++
			if it, ok = p.itemOrInnerList(); !ok {
				return p.err()
			}
		} else if !p.params(&it) {
			return p.err()
		}
		if !each(key, it) {
			return nil
		}
		p.skipOWS()
		if p.eof() {
			return nil
		}
		if p.s[p.i] != ',' {
			p.failArg("expected ',' after the member %q", key)
			return p.err()
		}
		p.i++
		p.skipOWS()
		if p.eof() {
			p.fail("trailing ','")
			return p.err()
		}
	}
	return nil
}

// StringEqual reports whether the escaped content of a String (an
// Item's Text) equals s. It allocates nothing.
func StringEqual(escaped, s string) bool {
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

// scanner walks a field value. A failure keeps where and why, to be made
// an error only when a caller asks (err), so that failing allocates
// nothing either.
type scanner struct {
	s        string
	i        int
	at       int
	msg, arg string
	// anyBase64 checks a Byte Sequence for base64's alphabet only.
	anyBase64 bool
}

func (p *scanner) eof() bool { return p.i >= len(p.s) }

func (p *scanner) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// fail records why parsing fails here, and returns false.
func (p *scanner) fail(msg string) bool {
	p.at, p.msg, p.arg = p.i, msg, ""
	return false
}

// failArg records a reason with one %q argument.
func (p *scanner) failArg(msg, arg string) bool {
	p.at, p.msg, p.arg = p.i, msg, arg
	return false
}

func (p *scanner) err() error {
	return &Error{At: p.at, msg: p.msg, arg: p.arg}
}

func (p *scanner) skipSP() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *scanner) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *scanner) itemOrInnerList() (Item, bool) {
	if p.peek() != '(' {
		return p.item()
	}
	p.i++
	for {
		p.skipSP()
		if p.eof() {
			return Item{}, p.fail("inner list is not closed")
		}
		if p.s[p.i] == ')' {
			p.i++
			it := Item{Kind: InnerList}
			return it, p.params(&it)
		}
		if _, ok := p.item(); !ok {
			return Item{}, false
		}
		if c := p.peek(); c != ' ' && c != ')' {
			return Item{}, p.fail("expected ' ' or ')' in an inner list")
		}
	}
}

func (p *scanner) item() (Item, bool) {
	var it Item
	kind, text, ok := p.bareItem()
	if !ok {
		return it, false
	}
	it.Kind, it.Text = kind, text
	return it, p.params(&it)
}

// params parses an item's parameters (";key[=value]" repeated), keeping
// a String "v" in it.
func (p *scanner) params(it *Item) bool {
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		key, ok := p.key()
		if !ok {
			return false
		}
		kind, text := Boolean, "?1"
		if p.peek() == '=' {
			p.i++
			if kind, text, ok = p.bareItem(); !ok {
				return false
			}
		}
		if key == "v" {
			it.V, it.HasV = text, kind == String
		}
	}
	return true
}

// key parses a key: lcalpha or '*', then lcalpha, digits, '_', '-', '.'
// and '*'.
func (p *scanner) key() (string, bool) {
	start := p.i
	if c := p.peek(); !isLCAlpha(c) && c != '*' {
		if isAlpha(c) {
			return "", p.fail("key starts with an upper-case letter (keys are lower case)")
		}
		return "", p.fail("expected a key")
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
func (p *scanner) bareItem() (Kind, string, bool) {
	start := p.i
	switch c := p.peek(); {
	case c == '-' || isDigit(c):
		kind, ok := p.number()
		return kind, p.s[start:p.i], ok
	case c == '"':
		text, ok := p.str()
		return String, text, ok
	case c == '*' || isAlpha(c):
		p.i++
		for p.i < len(p.s) && (isTchar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
			p.i++
		}
		return Token, p.s[start:p.i], true
	case c == ':':
		ok := p.bytes()
		return ByteSequence, p.s[start:p.i], ok
	case c == '?':
		if p.i+1 < len(p.s) && (p.s[p.i+1] == '0' || p.s[p.i+1] == '1') {
			p.i += 2
			return Boolean, p.s[start:p.i], true
		}
		p.i++
		return Boolean, "", p.fail("a boolean is ?0 or ?1")
	case c == '@':
		p.i++
		kind, ok := p.number()
		if !ok || kind != Integer {
			return Date, "", p.fail("a date is '@' and an integer")
		}
		return Date, p.s[start:p.i], true
	case c == '%':
		p.i++
		ok := p.displayString()
		return DisplayString, p.s[start:p.i], ok
	case p.eof():
		return 0, "", p.fail("value missing")
	default:
		return 0, "", p.failArg("%q cannot start a value", p.s[p.i:p.i+1])
	}
}

// number parses an Integer or a Decimal (RFC 9651 section 4.2.4).
func (p *scanner) number() (Kind, bool) {
	if p.peek() == '-' {
		p.i++
	}
	if !isDigit(p.peek()) {
		return 0, p.fail("expected a digit")
	}
	digits, dot := 0, -1
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case isDigit(c):
			digits++
		case c == '.' && dot < 0:
			if digits > 12 {
				return 0, p.fail("a decimal has at most 12 integer digits")
			}
			dot = digits
		default:
			goto done
		}
		p.i++
		if dot < 0 && digits > 15 {
			return 0, p.fail("an integer has at most 15 digits")
		}
	}
done:
	if dot < 0 {
		return Integer, true
	}
	switch frac := digits - dot; {
	case frac == 0:
		return 0, p.fail("a decimal ends in a digit")
	case frac > 3:
		return 0, p.fail("a decimal has at most 3 fractional digits")
	}
	return Decimal, true
}

// str parses a String and returns its content between the quotes, escapes
// kept.
func (p *scanner) str() (string, bool) {
	p.i++ // the opening quote
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '\\':
			if p.i+1 >= len(p.s) || p.s[p.i+1] != '"' && p.s[p.i+1] != '\\' {
				return "", p.fail("bad escape in a string")
			}
			p.i += 2
		case c == '"':
			text := p.s[start:p.i]
			p.i++
			return text, true
		case c < 0x20 || c > 0x7e:
			return "", p.fail("a string holds only printable ASCII")
		default:
			p.i++
		}
	}
	return "", p.fail("string is not closed")
}

// bytes parses a Byte Sequence: base64 between colons, which must decode
// as the standard encoding with its padding does.
func (p *scanner) bytes() bool {
	p.i++
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ':' {
		c := p.s[p.i]
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '/' && c != '=' {
			return p.fail("a byte sequence holds only base64")
		}
		p.i++
	}
	if p.eof() {
		return p.fail("byte sequence is not closed")
	}
	b64 := p.s[start:p.i]
	p.i++
	if p.anyBase64 {
		return true
	}
	if len(b64)%4 != 0 {
		return p.fail("a byte sequence is base64 with its padding")
	}
	var out [3]byte
	var in [4]byte
	for k := 0; k < len(b64); k += 4 {
		copy(in[:], b64[k:k+4])
		if k+4 < len(b64) && (in[0] == '=' || in[1] == '=' || in[2] == '=' || in[3] == '=') {
			return p.fail("a byte sequence is base64 with its padding") // padding only at the end
		}
		if _, err := base64.StdEncoding.Decode(out[:], in[:]); err != nil {
			return p.fail("a byte sequence is base64 with its padding")
		}
	}
	return true
}

// displayString parses a Display String after its '%': a quoted string of
// printable ASCII with %xx escapes (lower-case hex) that decodes to UTF-8.
func (p *scanner) displayString() bool {
	if p.peek() != '"' {
		return p.fail(`a display string starts with %"`)
	}
	p.i++
	var need, have int // UTF-8 continuation bytes expected and seen
	var lead byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c < 0x20 || c > 0x7e:
			return p.fail("a display string holds only printable ASCII")
		case c == '%':
			if p.i+2 >= len(p.s) {
				return p.fail("bad escape in a display string")
			}
			h, ok1 := unhex(p.s[p.i+1])
			l, ok2 := unhex(p.s[p.i+2])
			if !ok1 || !ok2 {
				return p.fail("bad escape in a display string")
			}
			p.i += 3
			if !utf8Step(h<<4|l, &need, &have, &lead) {
				return p.fail("a display string is UTF-8")
			}
			continue
		case c == '"':
			p.i++
			if need != 0 {
				return p.fail("a display string is UTF-8")
			}
			return true
		}
		if need != 0 {
			return p.fail("a display string is UTF-8") // a plain byte inside a multi-byte sequence
		}
		p.i++
	}
	return p.fail("display string is not closed")
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
