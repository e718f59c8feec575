package quicprint

import (
	"math/rand/v2"
	"net"
	"testing"
)

// BenchmarkReceivedShort: what the wrapper costs a connection's datagram
// after its handshake (a short header): a look at its first byte.
func BenchmarkReceivedShort(b *testing.B) {
	tr := NewTracker(16384)
	d := make([]byte, 1200)
	d[0] = 0x43
	a := udpAddr("192.0.2.1:443")
	b.ReportAllocs()
	for b.Loop() {
		tr.Received(d, a)
	}
}

// BenchmarkReceivedHello: reading a new connection's hello, in one Initial
// (quic-go's parameters, Go's 1,500-byte hello cut to fit) or in two
// scrambled ones (Chromium's way): derive the keys, decrypt a copy,
// reassemble, parse, fingerprint, look up, store.
func BenchmarkReceivedHello(b *testing.B) {
	for _, tc := range []struct {
		name    string
		packets int
	}{{"1 Initial", 1}, {"2 Initials", 2}} {
		b.Run(tc.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			hello := goHello(b, quicGoParams)
			if tc.packets == 1 {
				hello = shortHello(b)
			}
			pkts := buildInitials(b, r, Version1, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{9}, hello, tc.packets, tc.packets > 1)
			tr := NewTracker(16384)
			addrs := make([]*net.UDPAddr, 4096)
			for i := range addrs {
				addrs[i] = &net.UDPAddr{IP: net.IPv4(10, 0, byte(i>>8), byte(i)).To4(), Port: 1000 + i}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				a := addrs[i%len(addrs)]
				for _, p := range pkts {
					tr.Received(p, a)
				}
				i++
			}
			if tr.Stats().Hellos == 0 {
				b.Fatal("no hello read")
			}
		})
	}
}

// shortHello is a Go QUIC hello without its post-quantum key share (X25519
// only), which fits one Initial.
func shortHello(b *testing.B) []byte {
	b.Helper()
	h := goHelloCurves(b, quicGoParams)
	if len(h) > 1100 {
		b.Fatalf("hello of %d bytes", len(h))
	}
	return h
}

// BenchmarkGet: what a request pays to find its connection's fingerprint.
func BenchmarkGet(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	tr := NewTracker(16384)
	c := receive(tr, "192.0.2.1:443", buildInitials(b, r, Version1, []byte{1, 2, 3, 4, 5, 6, 7, 8}, nil, goHello(b, quicGoParams), 2, false))
	if tr.Get(c) == nil {
		b.Fatal("no fingerprint")
	}
	b.ReportAllocs()
	for b.Loop() {
		tr.Get(c)
	}
}
