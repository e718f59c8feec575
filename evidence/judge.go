package evidence

import (
	"net"
	"net/http"
	"strings"

	"github.com/robotsguard/robotsguard/internal/sfv"
)

// TLS is what tlsprint says of a request's handshake: the family of its
// stack (tlsprint.Classify), or for a JA4 a CDN passes on, the exact
// table's; and what the QUIC and framing tables say of the connection
// that carried it. The zero TLS is an unknown stack (or no TLS at all),
// which is never evidence.
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
	// QUIC is what the QUIC table says of the transport parameters of an
	// HTTP/3 connection's hello (tlsprint/quicprint): the zero QUIC for
	// any other request, or an unknown stack.
	QUIC QUIC
	// Framing is what the framing table says of the HTTP stack that
	// opened the request's connection (package framing): the zero
	// Framing when unknown.
	Framing Framing
}

// QUIC is what the QUIC table says of the QUIC stack that sent a
// connection's transport parameters. The zero QUIC is an unknown stack
// (or no QUIC at all), which is never evidence.
type QUIC struct {
	// Known reports that the table knows the stack.
	Known bool
	// Browser reports a browser's own QUIC stack.
	Browser bool
	// Family names the stack: "chromium" (QUICHE) or "firefox" (neqo) for a
	// browser's, as for TLS; a library's name ("quic-go", "ngtcp2", ...)
	// otherwise.
	Family string
}

// Framing is what the framing table says of the HTTP stack that opened
// a request's connection and wrote its first request (package framing).
// The zero Framing is an unknown stack (or no fingerprint: plain HTTP, a
// trusted proxy's connection, a table entry gone), which is never
// evidence.
type Framing struct {
	// Known reports that the table knows the stack.
	Known bool
	// Browser reports a browser engine's own HTTP stack.
	Browser bool
	// Family names the stack: "chromium" or "firefox" for a browser's, as
	// for TLS; a library's name ("go", "python-h2", "nodejs", ...)
	// otherwise.
	Family string
}

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
// The TLS handshake and the headers are judged apart, and neither excuses
// the other: a browser engine's handshake is no evidence for a claim (uTLS
// copies Chrome's hello in a line of Go), so a client with Chrome's hello
// and no Fetch Metadata is still "sec-fetch". A library's handshake is
// "tls"; another browser engine's is a mismatch.
//
// Over HTTP/3 the transport parameters are judged as the TLS stack is: a
// library's QUIC stack is decisive ("quic"), even under a browser's TLS
// hello (a copy of the hello over a library's QUIC), and another browser
// engine's is a mismatch ("quic-family"). Like the hello, a browser's QUIC
// stack excuses no header: the headers are judged whatever it is.
//
// The framing of the connection (t.Framing: how its HTTP stack opened it
// and wrote its first request, over HTTP/1.1, HTTP/2 or HTTP/3) is judged
// the same way and, like the QUIC stack, whatever the TLS handshake: a
// browser's hello copied (uTLS, curl-impersonate) is often followed by a
// library's HTTP stack ("framing"); another engine's is a mismatch
// ("framing-family"). It must be the client's own connection's: Caddy
// terminated its TLS, no proxy in between.
func Judge(c Claim, method string, h http.Header, t TLS, o Origin) Verdict {
	if c.checks == 0 {
		return Verdict{}
	}
	var e Evidence
	if c.checks&badGecko != 0 {
		e |= Gecko
	}
	if c.checks&checkTLS != 0 {
		e |= stackEvidence(c, t.Known, t.Browser, t.Family, TLSStack, TLSFamily)
		e |= stackEvidence(c, t.QUIC.Known, t.QUIC.Browser, t.QUIC.Family, QUICStack, QUICFamily)
		e |= stackEvidence(c, t.Framing.Known, t.Framing.Browser, t.Framing.Family, FramingStack, FramingFamily)
	}
	if c.checks&checkHeaders != 0 && (o == Secure || o == Loopback && c.Family != WebKit) {
		e |= judgeHeaders(c, method, h)
	}
	if e == 0 {
		return Verdict{}
	}
	return Verdict{Evidence: e, Claim: c, Stack: t.Family, QUIC: t.QUIC.Family, Framing: t.Framing.Family}
}

// stackEvidence is what a stack a table knows shows against the claim c:
// library for a library's stack, other for another browser engine's,
// nothing for the claimed engine's or an unknown one.
func stackEvidence(c Claim, known, browser bool, family string, library, other Evidence) Evidence {
	switch f := stackFamily(family); {
	case !known:
	case !browser:
		return library
	case f != NoFamily && f != c.Family:
		return other
	}
	return 0
}

// Engine returns the browser engine whose stack the handshake is, or
// NoFamily for a library's or an unknown one.
func (t TLS) Engine() Family {
	if !t.Known || !t.Browser {
		return NoFamily
	}
	return stackFamily(t.Family)
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
		it, ok := sfv.SingleItem(strings.Join(v, ","))
		switch {
		case !ok || it.Kind != sfv.Boolean:
			e |= SecCHUAInvalid
		case (it.Text == "?1") != c.Mobile:
			e |= SecCHUAPlatform
		}
	}
	if v := h["Sec-Ch-Ua-Platform"]; len(v) > 0 {
		it, ok := sfv.SingleItem(strings.Join(v, ","))
		switch {
		case !ok || it.Kind != sfv.String:
			e |= SecCHUAInvalid
		default:
			if p := hintPlatform(it.Text); p != UnknownPlatform && c.Platform != OtherPlatform && p != c.Platform {
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
	ok := sfv.List(v, func(it sfv.Item) bool {
		if it.Kind != sfv.String || !it.HasV {
			return false
		}
		var need tokens
		switch {
		case sfv.StringEqual(it.Text, "Microsoft Edge"):
			need = tokEdge
		case sfv.StringEqual(it.Text, "Opera"), sfv.StringEqual(it.Text, "Opera GX"):
			need = tokOpera
		case sfv.StringEqual(it.Text, "Yandex"):
			need = tokYandex
		case sfv.StringEqual(it.Text, "Samsung Internet"):
			need = tokSamsung
		case sfv.StringEqual(it.Text, "Chromium"):
			if n, rest := leadingInt(it.V); rest == "" && n != 0 && n != c.Major {
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
