package quicprint

import "math/bits"

// MaxHello bounds the ClientHello read from a client's Initial packets:
// a longer one is not read (its connection has no QUIC fingerprint, which
// is never evidence). Real hellos are far shorter: Chromium's, with its
// post-quantum key share (1,216 bytes) and an ECH GREASE extension, is
// about 2,000 bytes.
const MaxHello = 8192

// maxFrames bounds the frames read from one Initial packet: 1,200 bytes
// hold at most a few hundred frames of any use.
const maxFrames = 512

// assembly gathers the CRYPTO data of a client's Initial packets until it
// holds the first handshake message, the ClientHello, whatever the order
// of the frames and packets and however often they overlap.
type assembly struct {
	buf  [MaxHello]byte
	have [MaxHello / 64]uint64 // a bit per byte of buf received
}

// add copies the CRYPTO data at offset off; what lies beyond MaxHello is
// dropped.
func (a *assembly) add(off uint64, data []byte) {
	if off >= MaxHello || len(data) == 0 {
		return
	}
	end := off + uint64(len(data))
	if end > MaxHello {
		end = MaxHello
	}
	copy(a.buf[off:end], data)
	for i := off; i < end; {
		w, b := i/64, i%64
		n := min(64-b, end-i)
		m := ^uint64(0)
		if n < 64 {
			m = (uint64(1)<<n - 1) << b
		}
		a.have[w] |= m
		i += n
	}
}

// prefix returns the length of the data received without a gap from
// offset 0.
func (a *assembly) prefix() int {
	for w, v := range a.have {
		if v != ^uint64(0) {
			return w*64 + bits.TrailingZeros64(^v)
		}
	}
	return MaxHello
}

// hello returns the ClientHello message (with its 4-byte header) once all
// of it has been received, done false until then, and bad when the
// message is longer than MaxHello or not a ClientHello at all.
func (a *assembly) hello() (msg []byte, done, bad bool) {
	n := a.prefix()
	if n < 4 {
		return nil, false, false
	}
	if a.buf[0] != 1 { // client_hello
		return nil, false, true
	}
	total := 4 + (int(a.buf[1])<<16 | int(a.buf[2])<<8 | int(a.buf[3]))
	if total > MaxHello {
		return nil, false, true
	}
	if n < total {
		return nil, false, false
	}
	return a.buf[:total], true, false
}

// readFrames reads the frames of a decrypted Initial packet and adds its
// CRYPTO data to a. It reports false for a packet that is malformed or
// holds a frame an Initial packet may not carry (RFC 9000 section 12.4).
func (a *assembly) readFrames(p []byte) bool {
	for n := 0; len(p) > 0; n++ {
		if n == maxFrames {
			return false
		}
		t := p[0]
		switch {
		case t == 0x00: // PADDING
			for len(p) > 0 && p[0] == 0 {
				p = p[1:]
			}
		case t == 0x01: // PING
			p = p[1:]
		case t == 0x02 || t == 0x03: // ACK
			rest, ok := skipACK(p[1:], t == 0x03)
			if !ok {
				return false
			}
			p = rest
		case t == 0x06: // CRYPTO
			off, m := varint(p[1:])
			if m == 0 {
				return false
			}
			l, k := varint(p[1+m:])
			if k == 0 || l > uint64(len(p)-1-m-k) {
				return false
			}
			data := p[1+m+k : 1+m+k+int(l)]
			p = p[1+m+k+int(l):]
			a.add(off, data)
		case t == 0x1c: // CONNECTION_CLOSE
			return false
		default:
			return false
		}
	}
	return true
}

// skipACK skips the body of an ACK frame (RFC 9000 section 19.3).
func skipACK(p []byte, ecn bool) ([]byte, bool) {
	for range 2 { // Largest Acknowledged, ACK Delay
		_, m := varint(p)
		if m == 0 {
			return nil, false
		}
		p = p[m:]
	}
	count, m := varint(p)
	if m == 0 || count > uint64(len(p)) {
		return nil, false
	}
	p = p[m:]
	fields := 1 + 2*count // First ACK Range, then Gap and Length per range
	if ecn {
		fields += 3
	}
	for range fields {
		_, m := varint(p)
		if m == 0 {
			return nil, false
		}
		p = p[m:]
	}
	return p, true
}
