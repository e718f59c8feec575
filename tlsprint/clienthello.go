package tlsprint

import "crypto/tls"

// FromClientHello reads what JA4 needs of a ClientHello as crypto/tls gives
// it to GetConfigForClient or a handshake matcher. The hello is QUIC when
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
	if len(info.SignatureSchemes) > 0 {
		h.SignatureAlgorithms = make([]uint16, len(info.SignatureSchemes))
		for i, s := range info.SignatureSchemes {
			h.SignatureAlgorithms[i] = uint16(s)
		}
	}
	return h
}
