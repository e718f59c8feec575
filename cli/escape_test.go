package cli

import (
	"bytes"
	"testing"
)

// TestEscape: controls that a terminal acts on are spelt out, C1 (U+009B
// CSI) as well as C0 and DEL, and bytes that are no UTF-8; text, tabs,
// newlines and other characters are kept; a UTF-8 sequence cut between two
// writes is kept whole.
func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"/a\u009b2J/b":                 `/a\u009b2J/b`,
		"\x1b[31mred\x1b[0m":           `\u001b[31mred\u001b[0m`,
		"bell\x07 del\x7f cr\r":        `bell\u0007 del\u007f cr\u000d`,
		"tab\tnew\n":                   "tab\tnew\n",
		"café ✓ \u0085":                `café ✓ \u0085`,
		"raw \x9b byte":                `raw \x9b byte`,
		`{"uri":"/x` + "\u009b" + `"}`: `{"uri":"/x\u009b"}`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
	var b bytes.Buffer
	e := terminal(&b)
	s := []byte("é\u009b✓")
	for i := range s { // one byte at a time
		if _, err := e.Write(s[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	e.Write([]byte{0xe2})
	e.flush()
	if got, want := b.String(), `é\u009b✓\xe2`; got != want {
		t.Errorf("written byte by byte: %q, want %q", got, want)
	}
}
