package tlsprint

import (
	"strings"
	"testing"
)

// TestTable: the built-in table parses (ParseTable's checks: one family per
// JA4) and has rows of each browser engine and of libraries, each with its
// source.
func TestTable(t *testing.T) {
	tab, err := ParseTable(stacksTSV)
	if err != nil {
		t.Fatal(err)
	}
	families := map[string]int{}
	for _, r := range tab.Rows {
		families[r.Stack.Family]++
		if got := tab.Lookup(r.Match); got != r.Stack {
			t.Errorf("row %s: Lookup gives %+v, want %+v", r.Match, got, r.Stack)
		}
	}
	for _, f := range []string{"chromium", "firefox", "webkit", "go", "openssl"} {
		if families[f] == 0 {
			t.Errorf("no row of %s", f)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, c := range []struct {
		ja4  string
		want Stack
	}{
		{"t13d1516h2_8daaf6152771_02713d6af862", Stack{Known: true, Browser: true, Family: "chromium"}},
		// Chrome's cipher set with Go's extensions: Go with
		// tls.Config.CipherSuites set to Chrome's (observed), Go's; with
		// extensions never seen, nobody's: a cipher list is the caller's
		{"t13d1512h2_8daaf6152771_ab7e3b40a677", Stack{Known: true, Browser: false, Family: "go"}},
		{"t13d1517h2_8daaf6152771_ffffffffffff", Stack{}},
		{"t13d1715h2_5b57614c22b0_000000000001", Stack{}},
		// to an IP address, without ALPN: the same stack
		{"t13i190800_9dc949149365_97f8aa674fd9", Stack{Known: true, Browser: false, Family: "go"}},
		{"t13d190900_9dc949149365_97f8aa674fd9", Stack{Known: true, Browser: false, Family: "go"}},
		// a library's ciphers with other extensions: not known
		{"t13d190900_9dc949149365_000000000000", Stack{}},
		{"t13d0310h3_55b375c5d22e_000000000000", Stack{}},
		{"", Stack{}},
		{"t13d1516h2_8daaf6152771", Stack{}},
		{"t13d1516h2_8DAAF6152771_02713d6af862", Stack{}},
		{"t13d1516h2-8daaf6152771-02713d6af862", Stack{}},
	} {
		if got := Lookup(c.ja4); got != c.want {
			t.Errorf("Lookup(%q) = %+v, want %+v", c.ja4, got, c.want)
		}
	}
}

func TestLookupAllocs(t *testing.T) {
	for _, s := range []string{"t13d1516h2_8daaf6152771_02713d6af862", "t13d1517h2_8daaf6152771_ffffffffffff", "t13d190900_9dc949149365_000000000000"} {
		if n := testing.AllocsPerRun(100, func() { Lookup(s) }); n != 0 {
			t.Errorf("Lookup(%s): %v allocations", s, n)
		}
	}
}

func TestParseTableErrors(t *testing.T) {
	const chrome = "t13d1516h2_8daaf6152771_02713d6af862\tchromium\tbrowser\tx\n"
	for _, c := range []struct{ text, want string }{
		{"x\tgo\tlibrary\n", "line 1: want 4"},
		{"x\tgo\tlibrary\t\n", "line 1: want 4"},
		{"t13d1516h2_8daaf6152771_02713d6af862\tchromium\tengine\tx\n", `kind "engine"`},
		{"t13d1516h2_8daaf6152771_02713d6af862\tgo\tbrowser\tx\n", `family "go" is not of kind browser`},
		{"t13d1516h2_8daaf6152771\tchromium\tbrowser\tx\n", "is not a JA4"},
		{"# c\n" + chrome + "t13i1515h2_8daaf6152771_02713d6af862\tfirefox\tbrowser\tx\n", "line 3: t13i1515h2_8daaf6152771_02713d6af862 is chromium on line 2 and firefox here"},
		// the cipher-set rows of old tables: a cipher list is the caller's
		{"*_8daaf6152771_*\tchromium\tbrowser\tx\n", "is not a JA4"},
	} {
		_, err := ParseTable(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTable(%q): %v, want an error with %q", c.text, err, c.want)
		}
	}
	if _, err := ParseTable(chrome + chrome); err != nil {
		t.Errorf("a row twice: %v", err)
	}
}
