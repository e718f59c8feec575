package quicprint

import (
	"encoding/binary"
	"errors"

	"github.com/robotsguard/robotsguard/tlsprint"
)

// Extension types read from a ClientHello.
const (
	extServerName     = 0x0000
	extGroups         = 0x000a
	extSigAlgs        = 0x000d
	extALPN           = 0x0010
	extVersions       = 0x002b
	extQUICParams     = 0x0039
	extQUICParamsDraf = 0xffa5 // draft-ietf-quic-tls-33 and earlier
)

var errHello = errors.New("quicprint: malformed ClientHello")

// clientHello is what is read of a ClientHello carried by QUIC: what JA4
// and the TLS stack's family (tlsprint.Classify) read, and the raw
// transport parameters.
type clientHello struct {
	tlsprint.Hello
	params      []byte // the quic_transport_parameters extension's data
	draftParams bool   // carried in the draft's extension type (0xffa5)
}

// parseClientHello reads a ClientHello handshake message (its 4-byte
// header included). The slices it returns point into msg, except Hello's.
func parseClientHello(msg []byte) (clientHello, error) {
	var h clientHello
	h.QUIC = true
	if len(msg) < 4 || msg[0] != 1 {
		return h, errHello
	}
	p := msg[4:]
	// legacy_version, random
	if len(p) < 2+32 {
		return h, errHello
	}
	legacy := binary.BigEndian.Uint16(p)
	p = p[34:]
	sid, p, ok := vec8(p)
	if !ok || len(sid) > 32 {
		return h, errHello
	}
	ciphers, p, ok := vec16(p)
	if !ok || len(ciphers)%2 != 0 {
		return h, errHello
	}
	h.Ciphers = make([]uint16, len(ciphers)/2)
	for i := range h.Ciphers {
		h.Ciphers[i] = binary.BigEndian.Uint16(ciphers[2*i:])
	}
	if _, p, ok = vec8(p); !ok { // legacy_compression_methods
		return h, errHello
	}
	exts, _, ok := vec16(p)
	if !ok {
		return h, errHello
	}
	for len(exts) > 0 {
		if len(exts) < 4 {
			return h, errHello
		}
		typ := binary.BigEndian.Uint16(exts)
		data, rest, ok := vec16(exts[2:])
		if !ok {
			return h, errHello
		}
		exts = rest
		h.Extensions = append(h.Extensions, typ)
		switch typ {
		case extALPN:
			list, _, ok := vec16(data)
			for ok && len(list) > 0 {
				var proto []byte
				if proto, list, ok = vec8(list); ok {
					h.ALPN = append(h.ALPN, string(proto))
				}
			}
		case extVersions:
			list, _, ok := vec8(data)
			for ok && len(list) >= 2 {
				h.Versions = append(h.Versions, binary.BigEndian.Uint16(list))
				list = list[2:]
			}
		case extSigAlgs:
			list, _, ok := vec16(data)
			for ok && len(list) >= 2 {
				h.SignatureAlgorithms = append(h.SignatureAlgorithms, binary.BigEndian.Uint16(list))
				list = list[2:]
			}
		case extGroups:
			list, _, ok := vec16(data)
			for ok && len(list) >= 2 {
				h.Groups = append(h.Groups, binary.BigEndian.Uint16(list))
				list = list[2:]
			}
		case extQUICParams:
			h.params, h.draftParams = data, false
		case extQUICParamsDraf:
			if h.params == nil {
				h.params, h.draftParams = data, true
			}
		}
	}
	if h.Versions == nil {
		h.Versions = []uint16{legacy}
	}
	return h, nil
}

// vec8 and vec16 read a vector with a 1- or 2-byte length.
func vec8(p []byte) (v, rest []byte, ok bool) {
	if len(p) < 1 || len(p) < 1+int(p[0]) {
		return nil, nil, false
	}
	return p[1 : 1+int(p[0])], p[1+int(p[0]):], true
}

func vec16(p []byte) (v, rest []byte, ok bool) {
	if len(p) < 2 {
		return nil, nil, false
	}
	n := int(binary.BigEndian.Uint16(p))
	if len(p) < 2+n {
		return nil, nil, false
	}
	return p[2 : 2+n], p[2+n:], true
}
