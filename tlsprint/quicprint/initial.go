package quicprint

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
)

// The QUIC versions whose Initial packets are read: version 1 (RFC 9000)
// and version 2 (RFC 9369). Other versions are not read: their Initials
// are protected with other salts, or not at all.
const (
	Version1 uint32 = 0x00000001
	Version2 uint32 = 0x6b3343cf
)

// The salts of the Initial secrets: RFC 9001 section 5.2, RFC 9369
// section 3.3.1. They are public: anyone who sees an Initial packet can
// remove its protection, which is what this file does.
var (
	salt1 = []byte{0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a}
	salt2 = []byte{0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93, 0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9}
)

// Packet types, numbered as in version 1; version 2 numbers them otherwise
// on the wire (RFC 9369 section 3.2).
const (
	typeInitial   = 0
	type0RTT      = 1
	typeHandshake = 2
	typeRetry     = 3
)

// maxCIDLen is the longest connection ID of versions 1 and 2.
const maxCIDLen = 20

// longHeader is what a long-header packet says in the clear (RFC 9000
// section 17.2).
type longHeader struct {
	version    uint32
	typ        int // typeInitial, ...
	dcid, scid []byte
	token      []byte // an Initial's
	pnOffset   int    // where the packet number starts
	end        int    // where the packet ends in the datagram
}

var errShort = errors.New("quicprint: truncated packet")

// parseLong reads the long header of the packet at the start of b, of
// version 1 or 2. It reports false for anything else: a short header, a
// version negotiation, another version, a truncated or malformed header.
func parseLong(b []byte) (h longHeader, ok bool) {
	if len(b) < 7 || b[0]&0x80 == 0 {
		return h, false
	}
	h.version = binary.BigEndian.Uint32(b[1:5])
	t := int(b[0]>>4) & 3
	switch h.version {
	case Version1:
		h.typ = t
	case Version2:
		h.typ = (t + 3) & 3 // 1 Initial, 2 0-RTT, 3 Handshake, 0 Retry
	default:
		return h, false
	}
	p := 5
	n := int(b[p])
	if n > maxCIDLen || len(b) < p+1+n+1 {
		return h, false
	}
	h.dcid = b[p+1 : p+1+n]
	p += 1 + n
	n = int(b[p])
	if n > maxCIDLen || len(b) < p+1+n {
		return h, false
	}
	h.scid = b[p+1 : p+1+n]
	p += 1 + n
	if h.typ == typeRetry {
		h.end = len(b)
		return h, true
	}
	if h.typ == typeInitial {
		tl, m := varint(b[p:])
		if m == 0 || tl > uint64(len(b)-p-m) {
			return h, false
		}
		p += m
		h.token = b[p : p+int(tl)]
		p += int(tl)
	}
	l, m := varint(b[p:])
	if m == 0 || l > uint64(len(b)-p-m) {
		return h, false
	}
	h.pnOffset = p + m
	h.end = h.pnOffset + int(l)
	return h, true
}

// varint reads a QUIC variable-length integer (RFC 9000 section 16) and
// returns it with its length, or a length of 0 when b is too short.
func varint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	n := 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0
	}
	v := uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n
}

// initialKeys are the protection of a client's Initial packets.
type initialKeys struct {
	aead cipher.AEAD
	iv   [12]byte
	hp   cipher.Block
}

// deriver derives Initial keys. It is not safe for concurrent use.
type deriver struct {
	salt [2]hash.Hash // HMAC-SHA256 keyed with each version's salt: HKDF-Extract
	buf  [sha256.Size]byte
	info []byte
}

// clientKeys derives the keys of the client's Initial packets from the
// Destination Connection ID of its first Initial (RFC 9001 section 5.2;
// RFC 9369 section 3.3 for version 2's salt and labels).
func (d *deriver) clientKeys(version uint32, dcid []byte) (*initialKeys, error) {
	v, key, iv, hp := 0, "quic key", "quic iv", "quic hp"
	if version == Version2 {
		v, key, iv, hp = 1, "quicv2 key", "quicv2 iv", "quicv2 hp"
	}
	if d.salt[v] == nil {
		d.salt[0], d.salt[1] = hmac.New(sha256.New, salt1), hmac.New(sha256.New, salt2)
	}
	ext := d.salt[v]
	ext.Reset()
	ext.Write(dcid)
	initial := ext.Sum(d.buf[:0])
	secret := d.expandLabel(hmac.New(sha256.New, initial), "client in", 32)
	mac := hmac.New(sha256.New, secret)
	block, err := aes.NewCipher(d.expandLabel(mac, key, 16))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	keys := &initialKeys{aead: aead}
	copy(keys.iv[:], d.expandLabel(mac, iv, 12))
	if keys.hp, err = aes.NewCipher(d.expandLabel(mac, hp, 16)); err != nil {
		return nil, err
	}
	return keys, nil
}

// clientKeys derives Initial keys with a deriver of its own.
func clientKeys(version uint32, dcid []byte) (*initialKeys, error) {
	var d deriver
	return d.clientKeys(version, dcid)
}

// expandLabel is TLS 1.3's HKDF-Expand-Label with an empty context (RFC
// 8446 section 7.1), for a length of at most one hash: HKDF-Expand's
// first block (RFC 5869 section 2.3), from mac, HMAC keyed with the
// secret. The result is valid until the next call.
func (d *deriver) expandLabel(mac hash.Hash, label string, length int) []byte {
	d.info = binary.BigEndian.AppendUint16(d.info[:0], uint16(length))
	d.info = append(d.info, byte(6+len(label)))
	d.info = append(d.info, "tls13 "...)
	d.info = append(d.info, label...)
	d.info = append(d.info, 0, 1) // the empty context, then HKDF's counter
	mac.Reset()
	mac.Write(d.info)
	return mac.Sum(d.buf[:0])[:length]
}

// unprotect removes the header protection of a packet (pkt, from its
// first byte; h its header), in place, and returns the length of its
// packet number and the number (RFC 9001 section 5.4).
func (k *initialKeys) unprotect(pkt []byte, h *longHeader) (int, uint64, error) {
	// The sample starts 4 bytes after the start of the packet number.
	if h.pnOffset+4+16 > len(pkt) {
		return 0, 0, errShort
	}
	var mask [16]byte
	k.hp.Encrypt(mask[:], pkt[h.pnOffset+4:h.pnOffset+4+16])
	pkt[0] ^= mask[0] & 0x0f
	pnLen := int(pkt[0]&3) + 1
	var pn uint64
	for i := range pnLen {
		pkt[h.pnOffset+i] ^= mask[1+i]
		pn = pn<<8 | uint64(pkt[h.pnOffset+i])
	}
	return pnLen, pn, nil
}

// open removes the header protection and the AEAD protection of the
// Initial packet pkt (the packet alone, from its first byte to its end;
// h its header), in place, and returns the plaintext payload and the
// packet number. pkt must be a copy: it is overwritten.
func (k *initialKeys) open(pkt []byte, h *longHeader) ([]byte, uint64, error) {
	pnLen, pn, err := k.unprotect(pkt, h)
	if err != nil {
		return nil, 0, err
	}
	// A client's first Initials are numbered from 0 (or a little more),
	// so the truncated number is the number (RFC 9000 appendix A.3, with
	// nothing received before).
	nonce := k.iv
	for i := range 8 {
		nonce[11-i] ^= byte(pn >> (8 * i))
	}
	hdr := pkt[:h.pnOffset+pnLen]
	ct := pkt[h.pnOffset+pnLen:]
	if len(ct) < k.aead.Overhead() {
		return nil, 0, errShort
	}
	out, err := k.aead.Open(ct[:0], nonce[:], ct, hdr)
	return out, pn, err
}
