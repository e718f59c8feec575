package enforce

import (
	"net/http"
	"net/textproto"

	"golang.org/x/net/http/httpguts"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/tlsprint"
	"github.com/robotsguard/robotsguard/tlsprint/quicprint"
)

// Fingerprints says which fingerprints of how a client speaks the [Facts]
// of its requests take (the options ja4, ja4_header and quic), and sets
// them from wherever the server found them: a trusted proxy's header, the
// handshake table of a TCP connection, the QUIC tracker's entry of an
// HTTP/3 connection. The Caddy handler says which applies to a request;
// what each gives is decided here. Its methods allocate nothing.
// The zero Fingerprints takes them all, with no header.
type Fingerprints struct {
	// NoJA4 leaves the TLS handshake's JA4 and its stack's family out
	// (ja4 off).
	NoJA4 bool
	// NoQUIC leaves the fingerprint of an HTTP/3 connection's transport
	// parameters and its QUIC stack out (quic off).
	NoQUIC bool
	// Header is the header in which a trusted proxy passes on its client's
	// JA4 (ja4_header), in canonical form; "" for none.
	Header string
}

// FingerprintSettings are the fingerprint options as a configuration
// writes them: JA4 and QUIC "on" (or "") or "off", Header a header name.
type FingerprintSettings struct {
	JA4, QUIC, Header string
}

// Check checks the options and returns what they say. Its errors are
// *FieldError, named ja4, quic or ja4_header.
func (s FingerprintSettings) Check() (Fingerprints, error) {
	for _, o := range [...]struct{ name, mode string }{{"ja4", s.JA4}, {"quic", s.QUIC}} {
		if o.mode != "" && o.mode != "on" && o.mode != "off" {
			return Fingerprints{}, field.Errorf(o.name, "unknown mode %q (want on or off)", o.mode)
		}
	}
	if s.Header != "" && !httpguts.ValidHeaderFieldName(s.Header) {
		return Fingerprints{}, field.Errorf("ja4_header", "%q is not a header name", s.Header)
	}
	return Fingerprints{NoJA4: s.JA4 == "off", NoQUIC: s.QUIC == "off", Header: textproto.CanonicalMIMEHeaderKey(s.Header)}, nil
}

// Given sets f's JA4 to one that the client's handshake was reported to
// have (a CDN's or a trusted proxy's header, "caddy robots check --ja4"),
// looked up in the exact table (tlsprint.Lookup), which knows the JA4s a
// CDN passes on; a value that is no JA4 sets nothing. No QUIC
// fingerprint comes with it.
func (fp Fingerprints) Given(f *Facts, ja4 string) {
	if !fp.NoJA4 && tlsprint.Valid(ja4) {
		f.JA4, f.TLS = ja4, stackTLS(tlsprint.Lookup(ja4))
	}
}

// Proxied sets f's JA4 from the Header of a request that a trusted proxy
// sent (Given); without Header, a proxied request has no fingerprint: the
// connection's handshake is the proxy's.
func (fp Fingerprints) Proxied(f *Facts, h http.Header) {
	if v := h[fp.Header]; fp.Header != "" && len(v) > 0 {
		fp.Given(f, v[0])
	}
}

// Conn sets f's JA4 and TLS family from a TCP connection's handshake as
// the handshake table recorded it (tlsprint.Conns.Get).
func (fp Fingerprints) Conn(f *Facts, ja4 string, s tlsprint.Stack) {
	if !fp.NoJA4 {
		f.JA4, f.TLS = ja4, stackTLS(s)
	}
}

// QUICConn sets f's fingerprints from an HTTP/3 connection's entry (nil
// when none): the JA4 and TLS family of its hello, and its transport
// parameters' fingerprint and QUIC stack when the QUIC wrapper read them.
func (fp Fingerprints) QUICConn(f *Facts, p *quicprint.Print) {
	if p == nil {
		return
	}
	fp.Conn(f, p.JA4, p.TLS)
	if !fp.NoQUIC && p.String != "" {
		f.QUIC, f.TLS.QUIC = p.String, evidence.QUIC(p.Stack)
	}
}

// stackTLS is what the TLS tables say of a stack, as evidence reads it.
func stackTLS(s tlsprint.Stack) evidence.TLS {
	return evidence.TLS{Known: s.Known, Browser: s.Browser, Family: s.Family}
}
