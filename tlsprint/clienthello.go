package tlsprint

import "crypto/tls"

// FromClientHello reads what JA4 and Classify need of a ClientHello as
// crypto/tls gives it to GetConfigForClient or a handshake matcher: every
// list as sent, GREASE values included (crypto/tls keeps them). The hello is QUIC when
// its connection is a UDP one (quic-go gives a net.Conn whose addresses are
// UDP ones) or, without a connection, when it carries QUIC transport
// parameters. Without the supported_versions extension, crypto/tls gives
// the versions up to the legacy one, whose highest is that version.
func FromClientHello(info *tls.ClientHelloInfo) Hello {
	h := Hello{
		Versions:   info.SupportedVersions,
		Ciphers:    info.CipherSuites,
		Extensions: info.Extensions,
		ALPN:       info.SupportedProtos,
	}
	if info.Conn != nil {
		if a := info.Conn.LocalAddr(); a != nil {
			h.QUIC = a.Network() == "udp"
		}
	} else {
		for _, e := range info.Extensions {
			h.QUIC = h.QUIC || e == extQUICParams
		}
	}
	// One array for both lists crypto/tls gives in types of its own.
	if n, m := len(info.SignatureSchemes), len(info.SupportedCurves); n+m > 0 {
		vs := make([]uint16, n+m)
		for i, s := range info.SignatureSchemes {
			vs[i] = uint16(s)
		}
		for i, g := range info.SupportedCurves {
			vs[n+i] = uint16(g)
		}
		if n > 0 {
			h.SignatureAlgorithms = vs[:n:n]
		}
		if m > 0 {
			h.Groups = vs[n:]
		}
	}
	return h
}
