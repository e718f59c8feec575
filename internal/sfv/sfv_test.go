package sfv

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dunglas/httpsfv"
)

// sfCases are Lists from RFC 9651's examples, the structured-field test
// suite's corner cases, and what browsers send in Sec-CH-UA.
var sfCases = []struct {
	in string
	ok bool
}{
	{`"Not:A-Brand";v="8", "Chromium";v="156"`, true},
	{`" Not A;Brand";v="99", "Chromium";v="98", "Google Chrome";v="98"`, true},
	{`"Not/A)Brand";v="8", "Chromium";v="126", "Google Chrome";v="126"`, true},
	{`"Chromium";v="156","Brave";v="156"`, true},
	{`"a\"b\\c";v="1"`, true},
	{"", true}, {"   ", true}, {`"x";v="1"   `, true}, {"\"x\"\t,\t\"y\"", true},
	{`sugar, tea, rum`, true}, {`1, 42, -7, 3.14, -0.5, 123456789012.123`, true},
	{`?0, ?1, :cHJldGVuZCB0aGlzIGlzIGJpbmFyeSBjb250ZW50Lg==:, ::`, true},
	{`@1659578233, %"f%c3%bc%c3%bc"`, true},
	{`("foo" "bar");lvl=5, ("baz");lvl=1, ()`, true},
	{`abc;a=1;b=2;cde_456, (ghi;jk=4 l);q="9";r=w`, true},
	{`*foo;*key=*val`, true},
	// Invalid ones.
	{`"Chromium";v="156",`, false}, {`,`, false}, {`"x" "y"`, false}, {`"unterminated`, false},
	{`"bad\escape"`, false}, {"\"tab\there\"", false}, {"\"\xc3\xbc\"", false},
	{`Google Chrome;v=156`, false}, {`"x";V="1"`, false}, {`"x";v=`, false}, {`"x";=1`, false},
	{`1234567890123456`, false}, {`1234567890123.1`, false}, {`1.1234`, false}, {`1.`, false}, {`-`, false}, {`--1`, false},
	{`?2`, false}, {`?`, false}, {`:abc:`, false}, {`:ab=c:`, false}, {`:YQ==YQ==:`, false}, {`:abc`, false},
	{`@1.5`, false}, {`@`, false}, {`%"f%C3%BC"`, false}, {`%"%c3"`, false}, {`%"%ed%a0%80"`, false}, {`%"%f4%90%80%80"`, false},
	{`%"x`, false}, {`%x`, false}, {`("a"`, false}, {`("a""b")`, false}, {`(a b`, false},
	{"\x00", false}, {"é", false}, {`a,,b`, false}, {"\t\"x\"", false},
}

func TestList(t *testing.T) {
	for _, tc := range sfCases {
		if got := List(tc.in, nil); got != tc.ok {
			t.Errorf("List(%q) = %v, want %v", tc.in, got, tc.ok)
		}
		if ref := refList(tc.in); ref != tc.ok {
			t.Errorf("httpsfv says %v for %q, the table %v", ref, tc.in, tc.ok)
		}
	}
}

func TestListItems(t *testing.T) {
	var got []string
	ok := List(`"Not:A-Brand";v="8";x=1, "a\"b";v="2";v="3", tok;v=4, ("in");v="5"`, func(it Item) bool {
		got = append(got, it.Text+"|"+it.V)
		return true
	})
	want := []string{`Not:A-Brand|8`, `a\"b|3`, `tok|4`, `|5`}
	if !ok || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("items %q (ok %v), want %q", got, ok, want)
	}
	if !StringEqual(`a\"b\\c`, `a"b\c`) || StringEqual(`a\"b`, `a"bc`) || StringEqual(`ab`, `a`) {
		t.Error("StringEqual")
	}
	for _, tc := range []struct {
		in   string
		kind Kind
		ok   bool
	}{{"?1", Boolean, true}, {" ?0 ", Boolean, true}, {`"Windows"`, String, true}, {`"Windows" x`, String, false}, {"?1, ?0", Boolean, false}} {
		it, ok := SingleItem(tc.in)
		if ok != tc.ok || ok && it.Kind != tc.kind {
			t.Errorf("SingleItem(%q) = %v, %v", tc.in, it.Kind, ok)
		}
	}
}

// refList is httpsfv's verdict on a List: the reference the scanner is
// held to.
func refList(s string) bool {
	_, err := httpsfv.UnmarshalList([]string{s})
	return err == nil
}

// TestDictionary: a Dictionary's members in order, a key without a value
// as true, a key given again given again; a value that does not parse
// says where and why, as httpsfv rejects it.
func TestDictionary(t *testing.T) {
	var got []string
	err := Dictionary(`train-ai=n, search;p=1, x=("a" b);q=2, train-ai=y, s="a\"b", d=@1`, func(key string, it Item) bool {
		got = append(got, key+"="+it.Kind.String()+":"+it.Text)
		return true
	})
	want := `train-ai=token:n search=boolean:?1 x=inner list: train-ai=token:y s=string:a\"b d=date:@1`
	if err != nil || strings.Join(got, " ") != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	// Without its padding, as RFC 9651 section 4.2.7 recommends a parser
	// accept.
	if err := Dictionary("b=:YQ:", func(string, Item) bool { return true }); err != nil {
		t.Errorf("a byte sequence without its padding: %v", err)
	}
	for _, tc := range []struct{ in, msg string }{
		{"train-ai=n,", "trailing ','"},
		{"Train-ai=n", "key starts with an upper-case letter (keys are lower case)"},
		{"a=n b=y", `expected ',' after the member "a"`},
		{"a=é", `"\xc3" cannot start a value`},
		{"a=", "value missing"},
		{"a=?2", "a boolean is ?0 or ?1"},
		{"a=@1.5", "a date is '@' and an integer"},
		{"a=1.1234", "a decimal has at most 3 fractional digits"},
		{"a=:a-c:", "a byte sequence holds only base64"},
		{`a=%"%c3"`, "a display string is UTF-8"},
		{`a=("x" `, "inner list is not closed"},
	} {
		err := Dictionary(tc.in, func(string, Item) bool { return true })
		var e *Error
		if err == nil || err.Error() != tc.msg {
			t.Errorf("Dictionary(%q): %v, want %q", tc.in, err, tc.msg)
		} else if e = err.(*Error); e.At < 0 || e.At > len(tc.in) {
			t.Errorf("Dictionary(%q): at %d", tc.in, e.At)
		}
		if _, ref := httpsfv.UnmarshalDictionary([]string{tc.in}); ref == nil {
			t.Errorf("httpsfv parses %q", tc.in)
		}
	}
}

// TestNoAllocations: scanning a browser's hints allocates nothing, and
// neither does failing.
func TestNoAllocations(t *testing.T) {
	for _, s := range []string{`"Not:A-Brand";v="8", "Chromium";v="156", "Google Chrome";v="156"`, `"Chromium";v="156",`, `%"f%c3%bc"`, `:YQ==:`} {
		if n := testing.AllocsPerRun(100, func() { List(s, func(Item) bool { return true }) }); n != 0 {
			t.Errorf("List(%q): %v allocations", s, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { SingleItem(`"Windows"`) }); n != 0 {
		t.Errorf("SingleItem: %v allocations", n)
	}
}

// FuzzList holds the List scanner to httpsfv on any input: the same
// verdict on every ASCII value, and no value beyond ASCII accepted (which
// httpsfv, more liberal than RFC 9651, reads).
func FuzzList(f *testing.F) {
	for _, tc := range sfCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := List(s, nil)
		if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r > 0x7e }) {
			if ref := refList(s); ref != got {
				t.Fatalf("List(%q) = %v, httpsfv %v", s, got, ref)
			}
		} else if got {
			t.Fatalf("List accepted non-ASCII %q", s)
		}
	})
}

// BenchmarkClientHints: reading Chrome's Sec-CH-UA, as evidence.Judge does
// on every browser's request over HTTPS, with this scanner and with
// httpsfv, the library the module uses off the hot path: why the hot path
// keeps a scanner of its own.
func BenchmarkClientHints(b *testing.B) {
	const ua = `"Chromium";v="156", "Not-A.Brand";v="24", "Google Chrome";v="156"`
	b.Run("scanner=sfv", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			List(ua, func(it Item) bool {
				if StringEqual(it.Text, "Chromium") {
					n++
				}
				return true
			})
		}
	})
	b.Run("scanner=httpsfv", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l, err := httpsfv.UnmarshalList([]string{ua})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for _, m := range l {
				if it, ok := m.(httpsfv.Item); ok && it.Value == "Chromium" {
					n++
				}
			}
		}
	})
}
