package quicprint

// maxParams bounds the transport parameters read from a hello: real
// clients send fewer than 25.
const maxParams = 64

// param is one transport parameter (RFC 9000 section 18).
type param struct {
	id    uint64
	value []byte
}

// parseParams reads the transport parameters of a hello's
// quic_transport_parameters extension, in the order sent. It reports false
// when they are malformed or too many.
func parseParams(b []byte, out []param) ([]param, bool) {
	for len(b) > 0 {
		if len(out) == maxParams {
			return out, false
		}
		id, m := varint(b)
		if m == 0 {
			return out, false
		}
		l, k := varint(b[m:])
		if k == 0 || l > uint64(len(b)-m-k) {
			return out, false
		}
		out = append(out, param{id: id, value: b[m+k : m+k+int(l)]})
		b = b[m+k+int(l):]
	}
	return out, true
}

// reserved reports a reserved transport parameter id, 31 * N + 27 (RFC
// 9000 section 18.1): GREASE. One id of that form is a real parameter that
// Firefox sends, written as itself: 0xff02de1a, min_ack_delay in
// draft-ietf-quic-ack-frequency-01.
func reserved(id uint64) bool { return id >= 27 && (id-27)%31 == 0 && id != 0xff02de1a }
