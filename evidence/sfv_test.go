package evidence

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dunglas/httpsfv"

	"github.com/robotsguard/robotsguard/internal/sfv"
)

// refList is httpsfv's verdict on a List: the reference the scanner is
// held to.
func refList(s string) bool {
	_, err := httpsfv.UnmarshalList([]string{s})
	return err == nil
}

// FuzzSecCHUA holds the List scanner (internal/sfv) to httpsfv on any input, and Judge to
// its contract on any Sec-CH-UA: it never panics, never allocates, and
// reports a value it cannot read as invalid, never as anything decisive.
func FuzzSecCHUA(f *testing.F) {
	for _, s := range []string{`"Not:A-Brand";v="8", "Chromium";v="156"`, `" Not A;Brand";v="99", "Chromium";v="98", "Google Chrome";v="98"`,
		`"Chromium";v="156",`, `"bad\escape"`, `:YQ==YQ==:`, `%"f%c3%bc%c3%bc"`, "\x00", "é"} {
		f.Add(s)
	}
	f.Add(`"Microsoft Edge";v="156", "Chromium";v="156"`)
	f.Add(`"Chromium";v="1"`)
	claim := ParseClaim(chromeUA)
	f.Fuzz(func(t *testing.T, s string) {
		got := sfv.List(s, nil)
		// httpsfv parses Lists as RFC 9651 says, with two liberties: its
		// scanner reads a field value's bytes beyond ASCII, and it accepts
		// them in display strings; the RFC rejects both.
		if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r > 0x7e }) {
			if ref := refList(s); ref != got {
				t.Fatalf("sfv.List(%q) = %v, httpsfv %v", s, got, ref)
			}
		} else if got {
			t.Fatalf("sfv.List accepted non-ASCII %q", s)
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
