package framing

import "testing"

// TestLookup: a fingerprint the table has, one of a known shape (the next
// Chrome's values), one in a pseudo-header order only libraries send,
// HTTP/1.1 orders by the rules, and the unknown.
func TestLookup(t *testing.T) {
	for _, c := range []struct {
		fp      string
		family  string
		browser bool
	}{
		{chromePrint, "chromium", true},
		{"h2:1:65536;2:0;4:6291456;6:524288|15663105|0|m,a,s,p|1:0:220", "chromium", true},       // another Chrome's values
		{"h2:1:65536;2:0;4:131072;5:16384|12517377|0|m,p,a,s|0:0:42", "firefox", true},           // Firefox
		{"h2:2:0;4:2097152;3:100;5:16384;9:1|10485760|0|m,s,p,a|0", "webkit", true},              // Safari, published
		{"h2:2:0;4:4194304;5:16384;6:10485760|1073741824|0|a,m,p,s|0", "go", false},              // Go, uTLS
		{"h2:2:0;4:1048576;6:65536|1073741824|0|a,m,p,s|0", "go/java", false},                    // Go, configured
		{"h2:1:4096;2:0;4:65535;5:16384;3:100;6:65536|16777216|0|m,a,s,p|0", "python-h2", false}, // httpx
		{"h2:3:100;4:10485760;2:0|1048510465|0|m,p,s,a|0", "curl", false},                        // another curl
		{"h2:|0|0|p,m,a,s|0", "node", false},
		{"h3:1:10000;7:64;21;33:1", "chromium", true},
		{"h3:1:10000;7:64;21;33:1;6:40000", "", false}, // not a shape seen
		{"h3:", "quic-go", false},
		{"h1:1:Host,User-Agent,Accept,Accept-Encoding,Accept-Language,Sec-Ch-Ua,Sec-Fetch-Dest,Sec-Fetch-Mode", "go", false},
		{"h1:1:Accept,Host,User-Agent", "library", false},
		{"h1:1:Host,Connection,sec-ch-ua-platform,User-Agent,Accept,Sec-Fetch-Site,Sec-Fetch-Mode,Sec-Fetch-Dest,Referer", "", false}, // a Chrome request not seen
		{"h2:1:1|0|0|m,a,s,p|0", "", false},
		{"nonsense", "", false},
		{"", "", false},
	} {
		s := Lookup(c.fp)
		if s.Family != c.family || s.Known != (c.family != "") || s.Browser != c.browser {
			t.Errorf("Lookup(%q) = %+v, want family %q browser %v", c.fp, s, c.family, c.browser)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Lookup("h2:2:0;4:1048576;6:65536|1073741824|0|a,m,p,s|0") }); n != 0 {
		t.Errorf("Lookup allocates %v times", n)
	}
}

// TestH1Stack: Go's order whatever the caller's fields, and no browser
// request's order of the observations (framing/internal/collect checks all).
func TestH1Stack(t *testing.T) {
	for _, c := range []struct {
		names, want string
	}{
		{"Host,User-Agent,Accept,Accept-Encoding,Accept-Language,Priority", "go"},
		{"Host,User-Agent,Content-Length,Accept,Cookie,Referer,X-A,Accept-Encoding,Connection", "go"},
		{"Host,Accept,Cookie,Referer,X-A", "go"},
		{"Host,User-Agent,Accept,Accept-Encoding", ""},                                                                     // too short to tell
		{"Host,User-Agent,Accept,Accept-Language,Accept-Encoding,Connection,Upgrade-Insecure-Requests,Sec-Fetch-Dest", ""}, // Firefox
		{"Host,Connection,sec-ch-ua,sec-ch-ua-mobile,sec-ch-ua-platform,Upgrade-Insecure-Requests,User-Agent,Accept", ""},  // Chromium
		{"user-agent,Host,Connection", "library"},
		{"", "library"},
	} {
		if got := H1Stack(c.names).Family; got != c.want {
			t.Errorf("H1Stack(%q) = %q, want %q", c.names, got, c.want)
		}
	}
}

// TestTable: the built-in table parses, and a malformed one is refused.
func TestTable(t *testing.T) {
	if len(Builtin().Rows) < 20 {
		t.Errorf("the built-in table has %d rows", len(Builtin().Rows))
	}
	for _, bad := range []string{"h2:x\tgo\tlibrary\n", "h2:x\tgo\tlib\tsrc\n", "x\tgo\tlibrary\tsrc\n", "h2~x\tgo\tlibrary\ts\nh2~x\tgo\tlibrary\ts\n"} {
		if _, err := ParseTable(bad); err == nil {
			t.Errorf("ParseTable(%q) accepted", bad)
		}
	}
}
