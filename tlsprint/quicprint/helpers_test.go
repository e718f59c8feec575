package quicprint

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"
)

// appendVarint appends a QUIC variable-length integer.
func appendVarint(b []byte, v uint64) []byte {
	switch {
	case v < 1<<6:
		return append(b, byte(v))
	case v < 1<<14:
		return binary.BigEndian.AppendUint16(b, uint16(v)|0x4000)
	case v < 1<<30:
		return binary.BigEndian.AppendUint32(b, uint32(v)|0x80000000)
	}
	return binary.BigEndian.AppendUint64(b, v|0xc000000000000000)
}

// encodeParams writes transport parameters.
func encodeParams(ps []param) []byte {
	var b []byte
	for _, p := range ps {
		b = appendVarint(b, p.id)
		b = appendVarint(b, uint64(len(p.value)))
		b = append(b, p.value...)
	}
	return b
}

// quicGoParams are the ids and values quic-go v0.63's http3 client sends
// by default, with its reserved id first.
var quicGoParams = []param{{0x131e, []byte{1, 2}}, {5, []byte{0x80, 8, 0, 0}}, {6, []byte{0x80, 8, 0, 0}}, {7, []byte{0x80, 8, 0, 0}},
	{4, []byte{0x80, 0x0c, 0, 0}}, {8, []byte{0}}, {9, []byte{0x40, 0x64}}, {1, []byte{0x80, 0, 0x75, 0x30}}, {3, []byte{0x45, 0xac}},
	{0xb, []byte{0x1a}}, {0xe, []byte{4}}, {0xf, []byte{1, 2, 3, 4}}}

// chromeParams are Chromium 156's, in one of its orders.
var chromeParams = []param{{8, []byte{0x40, 0x64}}, {9, []byte{0x40, 0x67}}, {0x3128, []byte("ORIG")}, {0x20, []byte{0x80, 1, 0, 0}},
	{0xf, nil}, {3, []byte{0x45, 0xc0}}, {7, []byte{0x80, 0x60, 0, 0}}, {5, []byte{0x80, 0x60, 0, 0}}, {6, []byte{0x80, 0x60, 0, 0}},
	{1, []byte{0x80, 0, 0x75, 0x30}}, {0x11, []byte{0, 0, 0, 1, 0x8a, 0x5a, 0xba, 0x1a, 0, 0, 0, 1}},
	{27 + 31*0x9cb2c6ea30b1c, []byte{1, 2, 3}}, {4, []byte{0x80, 0xf0, 0, 0}}}

// goHello returns a real ClientHello of Go's crypto/tls over QUIC, with
// the transport parameters ps: about 1,500 bytes with its post-quantum key
// share.
func goHello(t testing.TB, ps []param) []byte {
	t.Helper()
	return goHelloWith(t, ps, nil)
}

// goHelloCurves returns Go's hello with X25519 alone: about 300 bytes.
func goHelloCurves(t testing.TB, ps []param) []byte {
	t.Helper()
	return goHelloWith(t, ps, []tls.CurveID{tls.X25519})
}

func goHelloWith(t testing.TB, ps []param, curves []tls.CurveID) []byte {
	t.Helper()
	c := tls.QUICClient(&tls.QUICConfig{TLSConfig: &tls.Config{ServerName: "localhost", NextProtos: []string{"h3"}, MinVersion: tls.VersionTLS13, CurvePreferences: curves}})
	c.SetTransportParameters(encodeParams(ps))
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var hello []byte
	for {
		e := c.NextEvent()
		if e.Kind == tls.QUICNoEvent {
			break
		}
		if e.Kind == tls.QUICWriteData && e.Level == tls.QUICEncryptionLevelInitial {
			hello = append(hello, e.Data...)
		}
	}
	if len(hello) < 4 || hello[0] != 1 {
		t.Fatalf("no ClientHello: %x", hello)
	}
	return hello
}

// frag is a CRYPTO frame's data and offset.
type frag struct {
	off  int
	data []byte
}

// cryptoFrame appends a CRYPTO frame.
func cryptoFrame(b []byte, f frag) []byte {
	b = append(b, 0x06)
	b = appendVarint(b, uint64(f.off))
	b = appendVarint(b, uint64(len(f.data)))
	return append(b, f.data...)
}

// split cuts a hello into n fragments of random sizes.
func split(r *rand.Rand, hello []byte, n int) []frag {
	var fs []frag
	for off := 0; off < len(hello); {
		size := len(hello) - off
		if len(fs) < n-1 && size > 1 {
			size = 1 + r.IntN(size-1)
		}
		fs = append(fs, frag{off, hello[off : off+size]})
		off += size
	}
	return fs
}

// sealInitial protects an Initial packet of a client, as RFC 9001 section
// 5 says: its payload, padded to at least 1,162 bytes so that the
// datagram has QUIC's least size, sealed with the keys of dcid, its header
// protected. pn is its packet number, sent on 4 bytes.
func sealInitial(t testing.TB, version uint32, dcid, scid, token []byte, pn uint32, payload []byte) []byte {
	t.Helper()
	return sealInitialWith(t, version, dcid, dcid, scid, token, pn, payload)
}

// sealInitialWith seals with the keys of keysFrom, a client's first DCID,
// an Initial sent to dcid.
func sealInitialWith(t testing.TB, version uint32, keysFrom, dcid, scid, token []byte, pn uint32, payload []byte) []byte {
	t.Helper()
	keys, err := clientKeys(version, keysFrom)
	if err != nil {
		t.Fatal(err)
	}
	for len(payload) < 1162 {
		payload = append(payload, 0)
	}
	typ := byte(typeInitial)
	if version == Version2 {
		typ = 1
	}
	b := []byte{0xc0 | typ<<4 | 3}
	b = binary.BigEndian.AppendUint32(b, version)
	b = append(b, byte(len(dcid)))
	b = append(b, dcid...)
	b = append(b, byte(len(scid)))
	b = append(b, scid...)
	b = appendVarint(b, uint64(len(token)))
	b = append(b, token...)
	b = binary.BigEndian.AppendUint16(b, uint16(4+len(payload)+16)|0x4000)
	pnOffset := len(b)
	b = binary.BigEndian.AppendUint32(b, pn)
	nonce := keys.iv
	for i := range 8 {
		nonce[11-i] ^= byte(uint64(pn) >> (8 * i))
	}
	b = keys.aead.Seal(b, nonce[:], payload, b)
	var mask [16]byte
	keys.hp.Encrypt(mask[:], b[pnOffset+4:pnOffset+20])
	b[0] ^= mask[0] & 0x0f
	for i := range 4 {
		b[pnOffset+i] ^= mask[1+i]
	}
	return b
}

// udpAddr returns a new address value, as a conn's ReadFrom returns one
// per datagram.
func udpAddr(s string) *net.UDPAddr { return net.UDPAddrFromAddrPort(netip.MustParseAddrPort(s)) }

// receive passes a client's datagrams to tr, each with an address value of
// its own, and returns the first's: the one quic-go keeps for the
// connection.
func receive(tr *Tracker, from string, datagrams [][]byte) *net.UDPAddr {
	var first *net.UDPAddr
	for _, d := range datagrams {
		a := udpAddr(from)
		if first == nil {
			first = a
		}
		tr.Received(d, a)
	}
	return first
}
