package cli

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// Escape returns s with what a terminal would act on instead of showing
// spelt out: C0 controls but tab and newline, DEL, C1 controls
// (U+0080–U+009F, among them U+009B, CSI: the start of a control sequence
// for terminals that read C1 characters) as \u00XX, and bytes that are no
// UTF-8 as \xXX. Request targets, User-Agents and robots.txt lines come
// from the Internet; every command writes its output through it (see
// [terminal]). A JSON document stays valid, and means the same: raw
// controls only occur inside its strings, where \u00XX is their escape.
func Escape(s string) string {
	out, _ := appendEscaped(nil, []byte(s), true)
	return string(out)
}

// appendEscaped appends p escaped (see [Escape]) to dst. Unless final, an
// incomplete UTF-8 sequence at the end of p is not appended: rest is its
// length.
func appendEscaped(dst, p []byte, final bool) (out []byte, rest int) {
	for i := 0; i < len(p); {
		b := p[i]
		if b < utf8.RuneSelf {
			if b < ' ' && b != '\t' && b != '\n' || b == 0x7f {
				dst = fmt.Appendf(dst, `\u%04x`, b)
			} else {
				dst = append(dst, b)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			if !final && !utf8.FullRune(p[i:]) {
				return dst, len(p) - i
			}
			dst = fmt.Appendf(dst, `\x%02x`, b)
		case r >= 0x80 && r <= 0x9f:
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = append(dst, p[i:i+size]...)
		}
		i += size
	}
	return dst, 0
}

// escaper is a writer that escapes what it writes (see [Escape]), keeping
// a UTF-8 sequence that one Write cuts for the next.
type escaper struct {
	w     io.Writer
	carry []byte
	buf   []byte
}

// terminal returns w escaped: every command's output and errors go through
// it.
func terminal(w io.Writer) *escaper {
	if e, ok := w.(*escaper); ok {
		return e
	}
	return &escaper{w: w}
}

// flush writes what a cut UTF-8 sequence left, escaped.
func (e *escaper) flush() {
	if len(e.carry) > 0 {
		out, _ := appendEscaped(nil, e.carry, true)
		e.carry = e.carry[:0]
		_, _ = e.w.Write(out)
	}
}

func (e *escaper) Write(p []byte) (int, error) {
	data := p
	if len(e.carry) > 0 {
		data = append(e.carry, p...)
	}
	var rest int
	e.buf, rest = appendEscaped(e.buf[:0], data, false)
	e.carry = append(e.carry[:0:0], data[len(data)-rest:]...)
	if _, err := e.w.Write(e.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
