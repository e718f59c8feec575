package evidence

import (
	"net/http"
	"strings"
	"testing"
)

// Real navigations over HTTPS, as the browsers send them (Chromium 156 and
// Firefox ESR 153 from testdata/captures; Edge, Safari and mobile Chrome as
// their vendors' browsers send them).
var (
	chromeNav = http.Header{
		"Sec-Ch-Ua":          {`"Not:A-Brand";v="8", "Chromium";v="156", "Google Chrome";v="156"`},
		"Sec-Ch-Ua-Mobile":   {"?0"},
		"Sec-Ch-Ua-Platform": {`"Windows"`},
		"Sec-Fetch-Site":     {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}, "Sec-Fetch-User": {"?1"},
	}
	firefoxNav = http.Header{
		"Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}, "Sec-Fetch-User": {"?1"},
	}
)

func with(h http.Header, kv ...string) http.Header {
	out := h.Clone()
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = []string{kv[i+1]}
		}
	}
	return out
}

func TestJudge(t *testing.T) {
	const (
		edgeUA    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36 Edg/156.0.0.0"
		operaUA   = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/155.0.0.0 Safari/537.36 OPR/140.0.0.0"
		androidUA = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36"
		tabletUA  = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
		desktopOn = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
		chrome75  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3770.100 Safari/537.36"
		chrome88  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/88.0.4324.190 Safari/537.36"
		ff89      = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:89.0) Gecko/20100101 Firefox/89.0"
		ffAndroid = "Mozilla/5.0 (Android 14; Mobile; rv:153.0) Gecko/153.0 Firefox/153.0"
		ffBadGeck = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:120.0) Gecko/20121011 Firefox/120.0"
		ffNoGecko = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:120.0) Firefox/120.0"
		ff36      = "Mozilla/5.0 (X11; U; Linux i686; en-US; rv:1.9.2.3) Gecko/20100401 Firefox/3.6.3"
		paleMoon  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:102.0) Gecko/20100101 Goanna/6.5 Firefox/102.0 PaleMoon/33.0.1"
		safari163 = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.3 Safari/605.1.15"
		safari164 = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.4 Safari/605.1.15"
		ios26     = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.0 Mobile/15E148 Safari/604.1"
		ios15     = "Mozilla/5.0 (iPhone; CPU iPhone OS 15_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/15.7 Mobile/15E148 Safari/604.1"
		criOS     = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1"
		instagram = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 337.0.0.33.103 (iPhone14,5; iOS 17_5; en_US; en; scale=3.00; 1170x2532; 614262133)"
		webview   = "Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/125.0.6422.165 Mobile Safari/537.36"
		electron  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) discord/1.0.9035 Chrome/120.0.6099.56 Electron/28.1.0 Safari/537.36"
		epiphany  = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15 Epiphany/605.1.15"
		headless  = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36"
		googlebot = "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	)
	goTLS := TLS{Known: true, Family: "go"}
	nss := TLS{Known: true, Browser: true, Family: "firefox"}
	boring := TLS{Known: true, Browser: true, Family: "chromium"}
	apple := TLS{Known: true, Browser: true, Family: "webkit"}
	for _, tc := range []struct {
		name, ua, method string
		h                http.Header
		tls              TLS
		o                Origin
		want             Evidence
	}{
		// Real browsers, as they send their requests.
		{name: "chrome navigation", ua: chromeUA, h: chromeNav, o: Secure},
		{name: "chrome, its own stack", ua: chromeUA, h: chromeNav, tls: boring, o: Secure},
		{name: "chrome subresource without hints", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua", "", "Sec-Fetch-Dest", "image", "Sec-Fetch-Mode", "no-cors"), o: Secure},
		{name: "chrome download without hints", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua", "", "Sec-Fetch-Dest", "empty"), o: Secure},
		{name: "chrome websocket", ua: chromeUA, h: http.Header{"Upgrade": {"websocket"}, "Sec-Websocket-Key": {"x"}, "Sec-Websocket-Version": {"13"}}, o: Secure},
		{name: "chrome report upload", ua: chromeUA, method: "POST", h: http.Header{"Content-Type": {"application/reports+json"}}, o: Secure},
		{name: "chrome csp report", ua: chromeUA, method: "POST", h: http.Header{"Content-Type": {"application/csp-report"}}, o: Secure},
		{name: "chrome over plain http", ua: chromeUA, h: http.Header{}, o: Insecure},
		{name: "chrome on loopback", ua: chromeUA, h: chromeNav, o: Loopback},
		{name: "edge", ua: edgeUA, h: with(chromeNav, "Sec-Ch-Ua", `"Microsoft Edge";v="156", "Not-A.Brand";v="24", "Chromium";v="156"`), o: Secure},
		{name: "opera", ua: operaUA, h: with(chromeNav, "Sec-Ch-Ua", `"Opera";v="140", "Chromium";v="155", "Not_A Brand";v="24"`), o: Secure},
		{name: "brave", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua", `"Brave";v="156", "Chromium";v="156", "Not/A)Brand";v="24"`), o: Secure},
		{name: "android phone", ua: androidUA, h: with(chromeNav, "Sec-Ch-Ua-Mobile", "?1", "Sec-Ch-Ua-Platform", `"Android"`), o: Secure},
		{name: "android tablet", ua: tabletUA, h: with(chromeNav, "Sec-Ch-Ua-Platform", `"Android"`), o: Secure},
		{name: "android, request desktop site", ua: desktopOn, h: with(chromeNav, "Sec-Ch-Ua-Platform", `"Linux"`), o: Secure},
		{name: "chrome 75 sends no fetch metadata", ua: chrome75, h: http.Header{}, o: Secure},
		{name: "chrome 88 sends no client hints", ua: chrome88, h: firefoxNav, o: Secure},
		{name: "firefox", ua: firefoxUA, h: firefoxNav, o: Secure},
		{name: "firefox, its own stack", ua: firefoxUA, h: firefoxNav, tls: nss, o: Secure},
		{name: "firefox 89 sends no fetch metadata", ua: ff89, h: http.Header{}, o: Secure},
		{name: "firefox for android", ua: ffAndroid, h: firefoxNav, o: Secure},
		{name: "firefox 3.6's gecko date", ua: ff36, h: http.Header{}, o: Secure},
		{name: "pale moon sends no fetch metadata", ua: paleMoon, h: http.Header{}, o: Secure},
		// Firefox's reader view opened from its address (a restored tab)
		// downloads the page with a system request, which carries no Fetch
		// Metadata (Firefox's SecFetch.cpp skips system XHR): its own
		// handshake does not excuse it, since a browser's handshake is no
		// evidence for a claim (uTLS copies one in a line of Go).
		{name: "firefox reader view, its own stack", ua: firefoxUA, h: http.Header{}, tls: nss, o: Secure, want: SecFetch},
		{name: "safari 16.3 sends no fetch metadata", ua: safari163, h: http.Header{}, o: Secure},
		{name: "safari 16.4", ua: safari164, h: firefoxNav, o: Secure},
		{name: "safari on loopback is not judged by its headers", ua: safari164, h: http.Header{}, o: Loopback},
		{name: "ios 15 sends no fetch metadata", ua: ios15, h: http.Header{}, o: Secure},
		{name: "ios 26 with its frozen 18_6", ua: ios26, h: firefoxNav, o: Secure},
		{name: "chrome on ios, chromium's stack, no headers", ua: criOS, h: http.Header{}, tls: boring, o: Secure, want: TLSFamily | SecFetch},
		// A copy of Chrome's hello (uTLS) is Chrome's handshake, and its
		// headers are judged all the same.
		{name: "chrome's stack, no headers", ua: chromeUA, h: http.Header{}, tls: boring, o: Secure, want: SecFetch},
		{name: "chrome's stack, no client hints", ua: chromeUA, h: firefoxNav, tls: boring, o: Secure, want: SecCHUA},
		{name: "ios in-app browser", ua: instagram, h: http.Header{}, tls: goTLS, o: Secure},
		{name: "android web view", ua: webview, h: http.Header{}, tls: goTLS, o: Secure},
		{name: "epiphany's own stack", ua: epiphany, h: http.Header{}, tls: TLS{Known: true, Family: "gnutls"}, o: Secure},
		{name: "a corporate proxy the table does not know", ua: chromeUA, h: chromeNav, tls: TLS{}, o: Secure},
		{name: "honest headless", ua: headless, h: http.Header{}, tls: goTLS, o: Secure},
		{name: "googlebot", ua: googlebot, h: http.Header{}, tls: goTLS, o: Secure},

		// Libraries posing as browsers.
		{name: "a library with a chrome UA", ua: chromeUA, h: http.Header{"Accept": {"*/*"}}, o: Secure, want: SecFetch},
		{name: "a library with a firefox UA", ua: firefoxUA, h: http.Header{"Accept": {"*/*"}}, o: Secure, want: SecFetch},
		{name: "a library with a safari UA", ua: safari164, h: http.Header{}, o: Secure, want: SecFetch},
		{name: "a library with an ios UA", ua: ios26, h: http.Header{}, o: Secure, want: SecFetch},
		{name: "a library on loopback", ua: chromeUA, h: http.Header{}, o: Loopback, want: SecFetch},
		{name: "a library over plain http", ua: chromeUA, h: http.Header{}, o: Insecure},
		{name: "go's stack", ua: chromeUA, h: chromeNav, tls: goTLS, o: Secure, want: TLSStack},
		{name: "go's stack, no headers", ua: chromeUA, h: http.Header{}, tls: goTLS, o: Secure, want: TLSStack | SecFetch},
		{name: "an electron app's node fetch", ua: electron, h: http.Header{}, tls: TLS{Known: true, Family: "openssl"}, o: Secure, want: TLSStack},
		{name: "a GET posing as a report", ua: chromeUA, method: "GET", h: http.Header{"Content-Type": {"application/reports+json"}}, o: Secure, want: SecFetch},
		{name: "a GET posing as a websocket, no Upgrade", ua: chromeUA, h: http.Header{"Sec-Websocket-Key": {"x"}, "Sec-Websocket-Version": {"13"}}, o: Secure, want: SecFetch},
		{name: "empty fetch metadata", ua: chromeUA, h: http.Header{"Sec-Fetch-Site": {""}, "Sec-Fetch-Mode": {" "}, "Sec-Fetch-Dest": {}}, o: Secure, want: SecFetch},
		{name: "a tab between the tokens", ua: strings.Replace(chromeUA, " Safari", "\tSafari", 1), h: http.Header{}, o: Secure, want: SecFetch},
		{name: "gecko token", ua: ffBadGeck, h: firefoxNav, o: Insecure, want: Gecko},
		{name: "no gecko token", ua: ffNoGecko, h: firefoxNav, o: Secure, want: Gecko},

		// Browsers whose User-Agent was changed, and copied headers.
		{name: "nss under a chrome UA", ua: chromeUA, h: firefoxNav, tls: nss, o: Secure, want: TLSFamily | SecCHUA},
		{name: "apple's stack under a chrome UA", ua: chromeUA, h: firefoxNav, tls: apple, o: Secure, want: TLSFamily | SecCHUA},
		{name: "a browser stack of an unknown family", ua: chromeUA, h: chromeNav, tls: TLS{Known: true, Browser: true, Family: "presto"}, o: Secure},
		{name: "the table's name for nss", ua: chromeUA, h: chromeNav, tls: TLS{Known: true, Browser: true, Family: "NSS"}, o: Secure, want: TLSFamily},
		{name: "firefox with a chrome UA", ua: chromeUA, h: firefoxNav, o: Secure, want: SecCHUA},
		{name: "no hints on a subresource", ua: chromeUA, h: with(firefoxNav, "Sec-Fetch-Dest", "image", "Sec-Fetch-Mode", "no-cors"), o: Secure},
		{name: "chrome with a firefox UA", ua: firefoxUA, h: chromeNav, o: Secure, want: SecCHUABrand},
		{name: "chrome with a safari UA", ua: safari164, h: chromeNav, o: Secure, want: SecCHUABrand},
		{name: "edge with a chrome UA", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua", `"Microsoft Edge";v="156", "Chromium";v="156"`), o: Secure, want: SecCHUABrand},
		{name: "opera with a chrome UA", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua", `"Opera GX";v="140", "Chromium";v="156"`), o: Secure, want: SecCHUABrand},
		{name: "stale hints with a new UA", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua", `"Chromium";v="120", "Google Chrome";v="120"`), o: Secure, want: SecCHUABrand},
		{name: "linux hints with a windows UA", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua-Platform", `"Linux"`), o: Secure, want: SecCHUAPlatform},
		{name: "mobile hint with a desktop UA", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua-Mobile", "?1"), o: Secure, want: SecCHUAPlatform},
		{name: "an unknown platform hint", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua-Platform", `"Fuchsia"`), o: Secure},
		{name: "unparsable hints", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua", `Google Chrome;v=156`), o: Secure, want: SecCHUAInvalid},
		{name: "a trailing comma", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua", `"Chromium";v="156",`), o: Secure, want: SecCHUAInvalid},
		{name: "brands that are tokens", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua", `Chromium;v="156"`), o: Secure, want: SecCHUAInvalid},
		{name: "a brand without a version", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua", `"Chromium"`), o: Secure, want: SecCHUAInvalid},
		{name: "an unquoted platform", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua-Platform", `Windows`), o: Secure, want: SecCHUAInvalid},
		{name: "a mobile hint that is no boolean", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua-Mobile", `0`), o: Secure, want: SecCHUAInvalid},
		{name: "an empty hint is none", ua: chromeUA, h: with(chromeNav, "Sec-Ch-Ua", " "), o: Secure, want: SecCHUA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = "GET"
			}
			v := Judge(ParseClaim(tc.ua), method, tc.h, tc.tls, tc.o)
			if v.Evidence != tc.want {
				t.Errorf("evidence %q, want %q (claim %s; %s)", v.Evidence, tc.want, ParseClaim(tc.ua), v.Reason())
			}
			if v.None() != (tc.want == 0) || v.Decisive() != (tc.want&Decisive != 0) {
				t.Errorf("None %v, Decisive %v for %q", v.None(), v.Decisive(), v.Evidence)
			}
		})
	}
}

// TestJudgeNothingForNoClaim: a client that claims no judged browser is
// never judged, whatever it sends.
func TestJudgeNothingForNoClaim(t *testing.T) {
	for _, ua := range []string{"", "curl/8.5.0", "python-requests/2.31.0", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"} {
		if v := Judge(ParseClaim(ua), "GET", http.Header{}, TLS{Known: true, Family: "go"}, Secure); !v.None() {
			t.Errorf("%q: %v", ua, v.Evidence)
		}
	}
	if v := Judge(Claim{}, "GET", nil, TLS{Known: true}, Secure); !v.None() {
		t.Errorf("the zero Claim: %v", v.Evidence)
	}
}

func TestEvidenceCodes(t *testing.T) {
	var all Evidence
	seen := map[string]bool{}
	for e := range AllEvidence() {
		code := e.Code()
		if code == "" || seen[code] || e.Text() == "" {
			t.Errorf("bit %d: code %q, text %q", e, code, e.Text())
		}
		seen[code] = true
		if back, ok := ParseEvidence(code); !ok || back != e {
			t.Errorf("ParseEvidence(%q) = %v, %v", code, back, ok)
		}
		all |= e
	}
	if len(seen) != 13 {
		t.Errorf("%d findings, want 13", len(seen))
	}
	if Decisive&Mismatch != 0 || Decisive|Mismatch != all {
		t.Errorf("Decisive %b and Mismatch %b do not partition %b", Decisive, Mismatch, all)
	}
	if (TLSStack|SecFetch).Code() != "" || Evidence(0).Code() != "" || Evidence(1<<15).Code() != "" {
		t.Error("Code of no single finding is not empty")
	}
	if got := (SecFetch | TLSStack).String(); got != "tls,sec-fetch" {
		t.Errorf("String = %q", got)
	}
	if _, ok := ParseEvidence("nope"); ok {
		t.Error("ParseEvidence accepted an unknown code")
	}
	v := Judge(ParseClaim(chromeUA), "GET", http.Header{}, TLS{Known: true, Family: "go"}, Secure)
	r := v.Reason()
	for _, want := range []string{"claims Chrome 156 on Windows", "tls: its TLS handshake is go's, which no browser uses", "sec-fetch:"} {
		if !strings.Contains(r, want) {
			t.Errorf("Reason %q lacks %q", r, want)
		}
	}
	if (Verdict{}).Reason() != "" {
		t.Error("the zero Verdict has a reason")
	}
}

func TestOriginOf(t *testing.T) {
	for _, tc := range []struct {
		tls  bool
		host string
		want Origin
	}{
		{true, "example.com", Secure}, {false, "example.com", Insecure}, {false, "localhost", Loopback},
		{false, "LOCALHOST:8080", Loopback}, {false, "127.0.0.1:80", Loopback}, {false, "127.8.9.1", Loopback},
		{false, "[::1]:8080", Loopback}, {false, "[::1]", Loopback}, {false, "::1", Loopback},
		{false, "foo.localhost", Insecure}, {false, "192.0.2.2:8080", Insecure}, {false, "", Insecure},
		{false, "localhost.example.com", Insecure},
	} {
		if got := OriginOf(tc.tls, tc.host); got != tc.want {
			t.Errorf("OriginOf(%v, %q) = %v, want %v", tc.tls, tc.host, got, tc.want)
		}
	}
}

// FuzzJudgeTLS: for any User-Agent and headers, an unknown handshake is
// never evidence, and a known one (a library's, a browser's of any
// family) adds at most tls or tls-family: a handshake never takes header
// evidence away, nor adds any.
func FuzzJudgeTLS(f *testing.F) {
	f.Add(chromeUA, "none", "navigate", "document", `"Chromium";v="156", "Google Chrome";v="156"`, "chromium", true)
	f.Add(chromeUA, "", "", "", "", "go", false)
	f.Fuzz(func(t *testing.T, ua, site, mode, dest, chua, family string, browser bool) {
		h := http.Header{}
		for k, v := range map[string]string{"Sec-Fetch-Site": site, "Sec-Fetch-Mode": mode, "Sec-Fetch-Dest": dest, "Sec-Ch-Ua": chua} {
			if v != "" {
				h[k] = []string{v}
			}
		}
		c := ParseClaim(ua)
		none := Judge(c, "GET", h, TLS{}, Secure)
		if none.Evidence&(TLSStack|TLSFamily) != 0 {
			t.Fatalf("%q: an unknown handshake is evidence: %s", ua, none.Evidence)
		}
		known := Judge(c, "GET", h, TLS{Known: true, Browser: browser, Family: family}, Secure)
		if known.Evidence&^(TLSStack|TLSFamily) != none.Evidence {
			t.Errorf("%q with %s (browser %v): %s, without a known handshake %s", ua, family, browser, known.Evidence, none.Evidence)
		}
		if browser && known.Evidence&TLSStack != 0 || !browser && known.Evidence&TLSFamily != 0 {
			t.Errorf("%q with %s (browser %v): %s", ua, family, browser, known.Evidence)
		}
	})
}
