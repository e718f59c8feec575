package enforce

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/uaclass"
)

// PoserMode says what the engine does with a client whose User-Agent
// claims a browser while how it speaks is decisive evidence that it is
// none (see [Engine.Judge]).
type PoserMode uint8

// Poser modes.
const (
	// PosersEnforce holds a poser to robots.txt as an undeclared bot (the
	// default).
	PosersEnforce PoserMode = iota
	// PosersLog judges, logs and counts posers, and serves them as the
	// browsers they claim to be.
	PosersLog
	// PosersOff judges nothing.
	PosersOff
)

// ParsePoserMode reads a poser mode: "enforce" (or ""), "log" or "off".
func ParsePoserMode(s string) (PoserMode, error) {
	switch s {
	case "", "enforce":
		return PosersEnforce, nil
	case "log":
		return PosersLog, nil
	case "off":
		return PosersOff, nil
	}
	return 0, fmt.Errorf("unknown mode %q (want enforce, log or off)", s)
}

// Judge holds a browser's claim (ua.Claim) to how the request speaks
// (evidence.Judge): f are the facts of the request (the fingerprints of
// its TLS handshake, of an HTTP/3 connection's transport parameters and of
// its connection's framing, what the tables say of each, and how the
// client saw the site), method and h its method and headers. It returns
// what it found, for logs and metrics (Request.Evidence), and whether that
// makes the client a poser: decisive evidence with posers "enforce".
// [Reader.Read] then reads the client as class uaclass.Poser, with no
// product token and no browser's allowance, so that [Engine.Decide] holds
// it to the "*" group's rules and Crawl-delay, the strikes and the ladder,
// as it holds an undeclared bot; and a request of it is no browser's fetch
// for another site (Request.CrossSite).
//
// A mismatch alone (another engine's TLS, QUIC or HTTP stack, client hints
// missing or naming another brand or platform) changes nothing: a browser
// whose user changed its User-Agent, or a privacy browser that sends fewer
// hints, shows as much. Neither does anything unknown (a stack the table
// does not know, a browser no check can judge). A client whose JA4 or
// framing fingerprint the operator allows (Config.AllowFingerprints) is
// not judged. Judge allocates nothing.
func (e *Engine) Judge(ua *uaclass.Result, f *Facts, method string, h http.Header) (_ evidence.Verdict, poser bool) {
	if ua.Class != uaclass.Browser || e.cfg.Posers == PosersOff || !ua.Claim.Judged() {
		return evidence.Verdict{}, false
	}
	if e.allowedPrint(f) {
		return evidence.Verdict{}, false
	}
	v := evidence.Judge(ua.Claim, method, h, f.TLS, f.Origin)
	return v, v.Decisive() && e.cfg.Posers == PosersEnforce
}

// evidenceHeaders holds the X-Robots-Guard-Evidence value of each set of
// findings ("tls", "sec-fetch,gecko") once one refusal needed it, so that
// the next refusals of that set format nothing. Of the 4,096 sets of 12
// findings few are ever seen: they are made when first needed, not all at
// start-up (which took 300 KB and a millisecond).
var evidenceHeaders [evidence.All + 1]atomic.Pointer[string]

// evidenceHeader returns the X-Robots-Guard-Evidence value of e.
func evidenceHeader(e evidence.Evidence) string {
	if e > evidence.All {
		return e.String()
	}
	if s := evidenceHeaders[e].Load(); s != nil {
		return *s
	}
	s := e.String()
	evidenceHeaders[e].Store(&s)
	return s
}

// validFraming reports what may be a framing fingerprint (package
// framing): "h1:", "h2:" or "h3:" and printable ASCII without spaces.
func validFraming(s string) bool {
	if len(s) < 3 || len(s) > 1024 || s[0] != 'h' || s[1] < '1' || s[1] > '3' || s[2] != ':' {
		return false
	}
	for i := 3; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// validJA4 reports a JA4 fingerprint as FoxIO's spec writes it: a_b_c,
// where a is ten characters (the protocol t, q or d, the TLS version, d or
// i for SNI, two digits of ciphers, two of extensions, two of ALPN) and b
// and c are twelve lower-case hex digits.
func validJA4(s string) bool {
	if len(s) != 36 || s[10] != '_' || s[23] != '_' || s[0] != 't' && s[0] != 'q' && s[0] != 'd' || s[3] != 'd' && s[3] != 'i' {
		return false
	}
	for i := 4; i < 8; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	for _, i := range [...]int{1, 2, 8, 9} {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	for i := 11; i < len(s); i++ {
		if c := s[i]; i != 23 && !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// allowedPrint reports whether the request's JA4 or framing fingerprint is
// one the operator allows (Config.AllowFingerprints): neither Judge nor the
// behaviour evidence judges such a client.
func (e *Engine) allowedPrint(f *Facts) bool {
	return f.JA4 != "" && e.allowPrints[f.JA4] || f.Framing != "" && e.allowPrints[f.Framing]
}
