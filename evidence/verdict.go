package evidence

import (
	"iter"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Evidence is a set of findings against a claim, one bit each. Each has a
// stable code for logs, metrics and configuration.
type Evidence uint16

// The findings. [Decisive] ones are what no browser shows, even one whose
// user changed its User-Agent; the others are a [Mismatch].
const (
	// TLSStack ("tls"): the TLS handshake is one the table knows as a
	// library's (Go, OpenSSL as curl and Python use it, GnuTLS, Node, ...),
	// under a User-Agent whose browser uses its engine's own stack.
	TLSStack Evidence = 1 << iota
	// SecFetch ("sec-fetch"): no Sec-Fetch-Site, Sec-Fetch-Mode or
	// Sec-Fetch-Dest to a potentially trustworthy origin, from a browser
	// that sends them on every request there: Chromium 76, Firefox 90,
	// Safari 16.4 and later, and so every current browser.
	SecFetch
	// Gecko ("gecko"): a desktop Firefox User-Agent whose Gecko token is
	// not "20100101", which every desktop Gecko browser has written since
	// Firefox 4.
	Gecko
	// TLSFamily ("tls-family"): the TLS handshake is another browser
	// engine's (Firefox's NSS under a Chrome User-Agent): a browser whose
	// User-Agent was changed.
	TLSFamily
	// SecCHUA ("sec-ch-ua"): no Sec-CH-UA on a top-level navigation from
	// Chromium 89 or later over HTTPS. Firefox or Safari with a Chrome
	// User-Agent, a User-Agent set through DevTools or automation, and
	// privacy forks that send no client hints (Cromite, Brave before 1.45)
	// look the same.
	SecCHUA
	// SecCHUAInvalid ("sec-ch-ua-invalid"): Sec-CH-UA is not a List of
	// Strings with a "v" parameter, or Sec-CH-UA-Mobile is not a Boolean,
	// or Sec-CH-UA-Platform is not a String (RFC 9651).
	SecCHUAInvalid
	// SecCHUABrand ("sec-ch-ua-brand"): Sec-CH-UA names another browser
	// (Microsoft Edge without Edg/ in the User-Agent, Opera without OPR/,
	// ...) or another Chromium version than the User-Agent, or comes with a
	// Firefox or Safari User-Agent, which never send it.
	SecCHUABrand
	// SecCHUAPlatform ("sec-ch-ua-platform"): Sec-CH-UA-Platform or
	// Sec-CH-UA-Mobile contradicts the User-Agent's platform.
	SecCHUAPlatform
	// QUICStack ("quic"): the transport parameters of the HTTP/3
	// connection's hello are ones the QUIC table knows as a library's
	// (quic-go, ngtcp2, ...), under a User-Agent whose browser uses its
	// own QUIC stack (Chromium's QUICHE, Firefox's neqo).
	QUICStack
	// QUICFamily ("quic-family"): the transport parameters are another
	// browser engine's (Firefox's under a Chrome User-Agent).
	QUICFamily
	// FramingStack ("framing"): how the client's HTTP stack opened the
	// connection and wrote its first request (HTTP/2 SETTINGS, window,
	// priorities and pseudo-header order; HTTP/1.1 header order; HTTP/3
	// SETTINGS) is a library's (Go's, Python's h2, Node's, curl's, ...)
	// under a User-Agent whose browser uses its engine's own stack: a
	// browser's TLS hello copied, its HTTP stack not.
	FramingStack
	// FramingFamily ("framing-family"): the HTTP framing is another browser
	// engine's (Firefox's under a Chrome User-Agent).
	FramingFamily
	// Behaviour ("behaviour"): the client navigates as a crawler that
	// drives a browser does, not as a person (package evidence/behaviour):
	// within seconds, many pages opened with no page of the site behind
	// them (a queue of URLs) or by a script of the page. It is found from
	// what the client did over several requests, not from one: Verdict.Seen
	// says what.
	Behaviour

	lastEvidence = Behaviour
)

// All is every finding: the Evidence values are at most All.
const All = lastEvidence<<1 - 1

// Decisive is the evidence no person's browser shows, even one whose
// User-Agent its user changed: such a client is held to robots.txt as a
// bot. TLSStack, SecFetch, Gecko, QUICStack and FramingStack say the
// client is no browser; Behaviour that it is a browser no person drives.
const Decisive = TLSStack | SecFetch | Gecko | QUICStack | FramingStack | Behaviour

// Mismatch is the evidence that the client is not the browser its
// User-Agent names, which a browser with a changed User-Agent, or with
// fewer client hints, shows too.
const Mismatch = TLSFamily | SecCHUA | SecCHUAInvalid | SecCHUABrand | SecCHUAPlatform | QUICFamily | FramingFamily

var evidenceInfo = [...]struct{ code, text string }{
	{"tls", "its TLS handshake is a library's, which no browser uses"},
	{"sec-fetch", "no Sec-Fetch-* headers over a trustworthy origin, which the browser sends on every request"},
	{"gecko", "its Gecko token is not 20100101, which every desktop Firefox writes"},
	{"tls-family", "its TLS handshake is another browser engine's"},
	{"sec-ch-ua", "no Sec-CH-UA on a navigation over HTTPS, which the browser sends"},
	{"sec-ch-ua-invalid", "Sec-CH-UA, -Mobile or -Platform is not a valid structured field"},
	{"sec-ch-ua-brand", "Sec-CH-UA names another browser or version than the User-Agent"},
	{"sec-ch-ua-platform", "Sec-CH-UA-Platform or -Mobile contradicts the User-Agent's platform"},
	{"quic", "its QUIC transport parameters are a library's, which no browser uses"},
	{"quic-family", "its QUIC transport parameters are another browser engine's"},
	{"framing", "its HTTP framing is a library's, which no browser uses"},
	{"framing-family", "its HTTP framing is another browser engine's"},
	{"behaviour", "it navigates as a crawler: many pages opened within seconds with no page of the site behind them"},
}

// AllEvidence lists every finding, in the order of their bits.
func AllEvidence() iter.Seq[Evidence] {
	return All.Each()
}

// Each yields the findings of e, one bit each, in order.
func (e Evidence) Each() iter.Seq[Evidence] {
	return func(yield func(Evidence) bool) {
		for rest := e & All; rest != 0; rest &= rest - 1 {
			if !yield(rest & -rest) {
				return
			}
		}
	}
}

// Code returns the code of a single finding ("tls", "sec-fetch", ...), or
// "" when e is not exactly one finding.
func (e Evidence) Code() string {
	if e == 0 || e&(e-1) != 0 || e > lastEvidence {
		return ""
	}
	return evidenceInfo[bits.TrailingZeros16(uint16(e))].code
}

// Text returns a short description of a single finding, or "".
func (e Evidence) Text() string {
	if e.Code() == "" {
		return ""
	}
	return evidenceInfo[bits.TrailingZeros16(uint16(e))].text
}

// String returns the codes of e joined with commas ("tls,sec-fetch"), or
// "" for none.
func (e Evidence) String() string {
	var b strings.Builder
	for f := range e.Each() {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.Code())
	}
	return b.String()
}

// ParseEvidence returns the finding a code names.
func ParseEvidence(code string) (Evidence, bool) {
	for f := range AllEvidence() {
		if f.Code() == code {
			return f, true
		}
	}
	return 0, false
}

// Verdict is what Judge found against one request's claim. The zero Verdict
// is no evidence.
type Verdict struct {
	// Evidence is the set of findings.
	Evidence Evidence
	// Claim is the claim judged.
	Claim Claim
	// Stack is the TLS stack's family as the request's TLS named it, kept
	// for the description of "tls" and "tls-family".
	Stack string
	// QUIC is the QUIC stack's family, for "quic" and "quic-family".
	QUIC string
	// Framing is the HTTP stack's family as the framing table named it,
	// kept for the description of "framing" and "framing-family".
	Framing string
	// Seen is what the client did, for the description of "behaviour".
	Seen Seen
}

// Seen is what a client did that made it Behaviour: in Window, Pages
// navigations to distinct pages that no page of the site led to with a
// person's gesture, Disallowed of them to pages robots.txt's "*" group
// disallows, among Navs navigations.
type Seen struct {
	Pages, Disallowed, Navs uint16
	Window                  time.Duration
}

// None reports no evidence at all.
func (v Verdict) None() bool { return v.Evidence == 0 }

// Decisive reports evidence that the client is no browser at all.
func (v Verdict) Decisive() bool { return v.Evidence&Decisive != 0 }

// Reason describes the verdict for a person: the claim, then each finding.
// It allocates; call it to log, not to decide.
func (v Verdict) Reason() string {
	if v.None() {
		return ""
	}
	var b strings.Builder
	b.WriteString("claims ")
	b.WriteString(v.Claim.String())
	for f := range v.Evidence.Each() {
		b.WriteString("; ")
		b.WriteString(f.Code())
		b.WriteString(": ")
		if layer, name, library := v.stackOf(f); name != "" {
			b.WriteString(layer)
			b.WriteString(name)
			if library {
				b.WriteString("'s, which no browser uses")
			} else {
				b.WriteString("'s, another browser engine's")
			}
			continue
		}
		if f == Behaviour && v.Seen.Pages > 0 {
			b.WriteString("it opened ")
			b.WriteString(strconv.Itoa(int(v.Seen.Pages)))
			b.WriteString(" pages in ")
			b.WriteString(v.Seen.Window.String())
			b.WriteString(" with no page of the site behind them (")
			b.WriteString(strconv.Itoa(int(v.Seen.Disallowed)))
			b.WriteString(" of them disallowed), among ")
			b.WriteString(strconv.Itoa(int(v.Seen.Navs)))
			b.WriteString(" navigations, as a crawler does")
			continue
		}
		b.WriteString(f.Text())
	}
	return b.String()
}

// stackOf returns, for a finding about a layer's stack (TLS, QUIC, HTTP
// framing), the layer's words, the family the stack table named for it
// ("" when none was kept) and whether f is the library finding rather
// than the other-engine one; for any other finding, name "".
func (v Verdict) stackOf(f Evidence) (layer, name string, library bool) {
	switch f {
	case TLSStack, TLSFamily:
		return "its TLS handshake is ", v.Stack, f == TLSStack
	case QUICStack, QUICFamily:
		return "its QUIC transport parameters are ", v.QUIC, f == QUICStack
	case FramingStack, FramingFamily:
		return "its HTTP framing is ", v.Framing, f == FramingStack
	}
	return "", "", false
}
