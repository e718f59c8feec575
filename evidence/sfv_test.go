package evidence

import (
	"net/http"
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

func TestSFList(t *testing.T) {
	for _, tc := range sfCases {
		if got := sfList(tc.in, nil); got != tc.ok {
			t.Errorf("sfList(%q) = %v, want %v", tc.in, got, tc.ok)
		}
		if ref := refList(tc.in); ref != tc.ok {
			t.Errorf("httpsfv says %v for %q, the table %v", ref, tc.in, tc.ok)
		}
	}
}

func TestSFListItems(t *testing.T) {
	var got []string
	ok := sfList(`"Not:A-Brand";v="8";x=1, "a\"b";v="2";v="3", tok;v=4, ("in");v="5"`, func(it sfItem) bool {
		got = append(got, it.text+"|"+it.v)
		return true
	})
	want := []string{`Not:A-Brand|8`, `a\"b|3`, `tok|4`, `|5`}
	if !ok || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("items %q (ok %v), want %q", got, ok, want)
	}
	if !sfStringEqual(`a\"b\\c`, `a"b\c`) || sfStringEqual(`a\"b`, `a"bc`) || sfStringEqual(`ab`, `a`) {
		t.Error("sfStringEqual")
	}
	for _, tc := range []struct {
		in   string
		kind sfKind
		ok   bool
	}{{"?1", sfBoolean, true}, {" ?0 ", sfBoolean, true}, {`"Windows"`, sfString, true}, {`"Windows" x`, sfString, false}, {"?1, ?0", sfBoolean, false}} {
		it, ok := sfSingleItem(tc.in)
		if ok != tc.ok || ok && it.kind != tc.kind {
			t.Errorf("sfSingleItem(%q) = %v, %v", tc.in, it.kind, ok)
		}
	}
}

// refList is httpsfv's verdict on a List: the reference the scanner is
// held to.
func refList(s string) bool {
	_, err := httpsfv.UnmarshalList([]string{s})
	return err == nil
}

// FuzzSecCHUA holds the List scanner to httpsfv on any input, and Judge to
// its contract on any Sec-CH-UA: it never panics, never allocates, and
// reports a value it cannot read as invalid, never as anything decisive.
func FuzzSecCHUA(f *testing.F) {
	for _, tc := range sfCases {
		f.Add(tc.in)
	}
	f.Add(`"Microsoft Edge";v="156", "Chromium";v="156"`)
	f.Add(`"Chromium";v="1"`)
	claim := ParseClaim(chromeUA)
	f.Fuzz(func(t *testing.T, s string) {
		got := sfList(s, nil)
		// httpsfv parses Lists as RFC 9651 says, with two liberties: its
		// scanner reads a field value's bytes beyond ASCII, and it accepts
		// them in display strings; the RFC rejects both.
		if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r > 0x7e }) {
			if ref := refList(s); ref != got {
				t.Fatalf("sfList(%q) = %v, httpsfv %v", s, got, ref)
			}
		} else if got {
			t.Fatalf("sfList accepted non-ASCII %q", s)
		}
		h := with(chromeNav, "Sec-Ch-Ua", s)
		v := Judge(claim, "GET", h, TLS{}, Secure)
		if v.Decisive() {
			t.Fatalf("Sec-CH-UA %q is decisive: %v", s, v.Evidence)
		}
		if strings.Trim(s, " \t") != "" && !got && v.Evidence&SecCHUAInvalid == 0 {
			t.Fatalf("unparsable Sec-CH-UA %q not reported: %v", s, v.Evidence)
		}
		if n := testing.AllocsPerRun(1, func() { Judge(claim, "GET", h, TLS{}, Secure) }); n != 0 {
			t.Fatalf("Judge allocates %v times for %q", n, s)
		}
	})
}

// FuzzParseClaim: ParseClaim never panics, never allocates, and what it
// claims is coherent.
func FuzzParseClaim(f *testing.F) {
	for _, ua := range []string{chromeUA, firefoxUA,
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.0 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (Linux; Android 8.1.0; Moto G (5S) Plus) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/83.0.4103.106 Mobile Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15",
		"Mozilla/5.0 ((((", "Mozilla/5.0 ()))", "Mozilla/5.0 (X11; Linux x86_64; rv:1) Gecko/1 Firefox/1"} {
		f.Add(ua)
	}
	f.Fuzz(func(t *testing.T, ua string) {
		c := ParseClaim(ua)
		if c.Judged() && (c.Family == NoFamily || c.Major <= 0 || c.Platform == UnknownPlatform) {
			t.Fatalf("%q: judged but %+v", ua, c)
		}
		if c.checks&checkHeaders != 0 && c.checks&checkTLS == 0 {
			t.Fatalf("%q: held to headers but not to its TLS stack", ua)
		}
		if n := testing.AllocsPerRun(1, func() { ParseClaim(ua) }); n != 0 {
			t.Fatalf("ParseClaim allocates %v times for %q", n, ua)
		}
		Judge(c, "GET", http.Header{}, TLS{Known: true}, Secure)
	})
}
