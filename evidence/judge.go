package evidence

import (
	"net"
	"net/http"
	"strings"
)

// TLS is what the TLS fingerprint table says of a request's handshake. The
// zero TLS is an unknown stack (or no TLS at all), which is never evidence.
type TLS struct {
	// Known reports that the table knows the stack.
	Known bool
	// Browser reports that the stack is a browser engine's.
	Browser bool
	// Family names the stack: for a browser engine's, "chromium" (Chrome's
	// BoringSSL; "chrome" and "boringssl" are read so too), "firefox" (NSS;
	// "nss", "gecko") or "webkit" (Apple's; "safari", "apple"); for a
	// library's, its name as the table gives it ("go", "openssl", ...),
	// which the verdict's description quotes. A browser stack of another
	// name is a browser all the same, compared with no claim.
	Family string
}

// Framing is what the framing table says of the HTTP stack that opened
// a request's connection (package framing). The zero Framing is an
// unknown stack (or no fingerprint: plain HTTP, a trusted proxy's
// connection, a table entry gone), which is never evidence. Its fields
// are those of TLS.
type Framing TLS

// Origin is how the client saw the site: what decides whether a browser
// sends Fetch Metadata and client hints, which go only to potentially
// trustworthy origins.
type Origin uint8

const (
	// Insecure: plain HTTP to a host that is not a loopback one. Browsers
	// send neither Sec-Fetch-* nor Sec-CH-UA there, so only the checks of
	// the User-Agent itself apply.
	Insecure Origin = iota
	// Loopback: plain HTTP to localhost, 127.0.0.0/8 or ::1, which Chromium
	// and Firefox treat as trustworthy (WebKit's claims are not held to
	// the headers there).
	Loopback
	// Secure: HTTPS, as the client saw it.
	Secure
)

// OriginOf returns the origin of a request the client made over TLS (tls)
// or plain HTTP to host (a Host header, with or without a port). Behind a
// proxy that terminates TLS, tls must be what the client used (from
// X-Forwarded-Proto of a trusted proxy); when in doubt pass false, which
// only drops checks.
func OriginOf(tls bool, host string) Origin {
	if tls {
		return Secure
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.EqualFold(host, "localhost") {
		return Loopback
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return Loopback
	}
	return Insecure
}

// Judge compares a request with the claim of its User-Agent. method and h
// are the request's method and headers (canonical keys, as net/http gives
// them), t what the fingerprint table says of its TLS handshake, o how the
// client saw the site. The result is only ever no evidence or evidence
// against the claim. Judge returns at once for a claim that is not judged,
// and allocates nothing.
//
// When the handshake is a browser engine's, the headers are not judged:
// they are that browser's, whatever its User-Agent says. A browser's own
// internal requests lack some of them (Firefox's reader view, Chrome for
// iOS's native fetches), and a client that copies a browser's handshake
// copies its headers too. Another engine's stack is a mismatch by itself.
func Judge(c Claim, method string, h http.Header, t TLS, o Origin) Verdict {
	if c.checks == 0 {
		return Verdict{}
	}
	var e Evidence
	if c.checks&badGecko != 0 {
		e |= Gecko
	}
	browser := false
	if t.Known && c.checks&checkTLS != 0 {
		switch f := stackFamily(t.Family); {
		case !t.Browser:
			e |= TLSStack
		case f != NoFamily && f != c.Family:
			browser = true
			e |= TLSFamily
		default:
			browser = true
		}
	}
	if !browser && c.checks&checkHeaders != 0 && (o == Secure || o == Loopback && c.Family != WebKit) {
		e |= judgeHeaders(c, method, h)
	}
	if e == 0 {
		return Verdict{}
	}
	return Verdict{Evidence: e, Claim: c, Stack: t.Family}
}

// JudgeFraming adds to v what the framing of the request's connection, f,
// shows against the claim c: a library's HTTP stack (FramingStack, decisive)
// or another browser engine's (FramingFamily), for a claim held to its
// engine's stack (as the TLS check is; web views and apps may fetch with
// another stack). f must be the client's own connection's: Caddy
// terminated its TLS, no proxy in between. Unlike the headers, the framing
// is judged whatever the TLS handshake: a browser's hello copied (uTLS,
// curl-impersonate) is often followed by a library's HTTP stack. It
// allocates nothing.
func JudgeFraming(v Verdict, c Claim, f Framing) Verdict {
	if !f.Known || c.checks&checkTLS == 0 {
		return v
	}
	var e Evidence
	switch g := stackFamily(f.Family); {
	case !f.Browser:
		e = FramingStack
	case g != NoFamily && g != c.Family:
		e = FramingFamily
	default:
		return v
	}
	if v.None() {
		v = Verdict{Claim: c}
	}
	v.Evidence |= e
	v.Framing = f.Family
	return v
}

// stackFamily maps a browser stack's family name to its engine; the
// table's names and its engines' and libraries' own are all accepted.
func stackFamily(name string) Family {
	for _, f := range [...]struct {
		name   string
		family Family
	}{{"chromium", Chromium}, {"chrome", Chromium}, {"boringssl", Chromium}, {"firefox", Firefox}, {"gecko", Firefox},
		{"nss", Firefox}, {"webkit", WebKit}, {"safari", WebKit}, {"apple", WebKit}} {
		if strings.EqualFold(name, f.name) {
			return f.family
		}
	}
	return NoFamily
}

// judgeHeaders holds a mainstream claim to the headers its engine sends to
// a trustworthy origin.
func judgeHeaders(c Claim, method string, h http.Header) Evidence {
	var e Evidence
	mode, dest := h["Sec-Fetch-Mode"], h["Sec-Fetch-Dest"]
	if !sent(h["Sec-Fetch-Site"]) && !sent(mode) && !sent(dest) && sendsFetchMetadata(c) && !reportUpload(method, h) && !webSocket(method, h) {
		e |= SecFetch
	}
	ua := h["Sec-Ch-Ua"]
	present := sent(ua)
	if c.Family != Chromium {
		// Firefox and Safari have never sent client hints; Chromium with a
		// Firefox or Safari User-Agent does.
		if present {
			e |= SecCHUABrand
		}
		return e
	}
	if !present {
		if c.Major >= 89 && first(mode) == "navigate" && first(dest) == "document" {
			e |= SecCHUA
		}
	} else {
		e |= judgeBrands(c, ua)
	}
	if v := h["Sec-Ch-Ua-Mobile"]; len(v) > 0 {
		it, ok := sfSingleItem(strings.Join(v, ","))
		switch {
		case !ok || it.kind != sfBoolean:
			e |= SecCHUAInvalid
		case (it.text == "?1") != c.Mobile:
			e |= SecCHUAPlatform
		}
	}
	if v := h["Sec-Ch-Ua-Platform"]; len(v) > 0 {
		it, ok := sfSingleItem(strings.Join(v, ","))
		switch {
		case !ok || it.kind != sfString:
			e |= SecCHUAInvalid
		default:
			if p := hintPlatform(it.text); p != UnknownPlatform && c.Platform != OtherPlatform && p != c.Platform {
				e |= SecCHUAPlatform
			}
		}
	}
	return e
}

// sendsFetchMetadata reports whether the claimed browser sends Sec-Fetch-*
// on every request to a trustworthy origin: Chromium since 76 (Site, Mode
// and User; Dest since 80), Firefox since 90, Safari since 16.4.
func sendsFetchMetadata(c Claim) bool {
	switch c.Family {
	case Chromium:
		return c.Major >= 76
	case Firefox:
		return c.Major >= 90
	case WebKit:
		return c.Major > 16 || c.Major == 16 && c.Minor >= 4
	}
	return false
}

// reportUpload reports a browser's upload of reports (the Reporting API,
// Network Error Logging, CSP's report-uri), which Chromium's network
// service sends without Fetch Metadata.
func reportUpload(method string, h http.Header) bool {
	if method != http.MethodPost {
		return false
	}
	ct := first(h["Content-Type"])
	return strings.HasPrefix(ct, "application/reports+json") || strings.HasPrefix(ct, "application/csp-report")
}

// webSocket reports a WebSocket opening handshake (RFC 6455 section 4.1),
// which Chromium sends without Fetch Metadata (Firefox sends it).
func webSocket(method string, h http.Header) bool {
	return method == http.MethodGet && len(h["Sec-Websocket-Key"]) > 0 && len(h["Sec-Websocket-Version"]) > 0 &&
		strings.EqualFold(first(h["Upgrade"]), "websocket")
}

// judgeBrands holds the brands of Sec-CH-UA to the User-Agent: each brand
// that names a product needs the product's token, and Chromium's version
// must be the User-Agent's. Brands this package does not know (GREASE,
// Brave, Vivaldi, HeadlessChrome, forks) are no evidence.
func judgeBrands(c Claim, values []string) Evidence {
	v := values[0]
	if len(values) > 1 {
		v = strings.Join(values, ", ") // rare: the hints come in one field line
	}
	var e Evidence
	ok := sfList(v, func(it sfItem) bool {
		if it.kind != sfString || !it.hasV {
			return false
		}
		var need tokens
		switch {
		case sfStringEqual(it.text, "Microsoft Edge"):
			need = tokEdge
		case sfStringEqual(it.text, "Opera"), sfStringEqual(it.text, "Opera GX"):
			need = tokOpera
		case sfStringEqual(it.text, "Yandex"):
			need = tokYandex
		case sfStringEqual(it.text, "Samsung Internet"):
			need = tokSamsung
		case sfStringEqual(it.text, "Chromium"):
			if n, rest := leadingInt(it.v); rest == "" && n != 0 && n != c.Major {
				e |= SecCHUABrand
			}
		}
		if need != 0 && c.tokens&need == 0 {
			e |= SecCHUABrand
		}
		return true
	})
	if !ok {
		e |= SecCHUAInvalid
	}
	return e
}

// hintPlatform maps the content of a Sec-CH-UA-Platform String to a
// platform; Chromium writes "macOS" ("Mac OS X" before 93), "Chrome OS"
// ("ChromeOS" in later releases), and its system's name otherwise.
func hintPlatform(s string) Platform {
	switch s {
	case "Windows":
		return Windows
	case "macOS", "Mac OS X":
		return MacOS
	case "Linux":
		return Linux
	case "Android":
		return Android
	case "iOS":
		return IOS
	case "Chrome OS", "ChromeOS", "Chromium OS":
		return ChromeOS
	}
	return UnknownPlatform
}

// sent reports a header with a value: browsers send none empty, so an
// empty one is as good as none.
func sent(v []string) bool {
	for _, s := range v {
		if strings.Trim(s, " \t") != "" {
			return true
		}
	}
	return false
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
