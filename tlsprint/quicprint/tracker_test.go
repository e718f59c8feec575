package quicprint

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/tlsprint"
)

// TestKeys derives the client Initial keys of the RFCs' examples, for the
// Destination Connection ID 8394c8f03e515708: RFC 9001 appendix A.1
// (version 1) and RFC 9369 appendix A.1 (version 2).
func TestKeys(t *testing.T) {
	dcid := mustHex("8394c8f03e515708")
	for _, tc := range []struct {
		version     uint32
		key, iv, hp string
	}{
		{Version1, "1f369613dd76d5467730efcbe3b1a22d", "fa044b2f42a3fd3b46fb255c", "9f50449e04a0e810283a1e9933adedd2"},
		{Version2, "8b1a0bc121284290a29e0971b5cd045d", "91f73e2351d8fa91660e909f", "45b95e15235d6f45a6b19cbcb0294ba9"},
	} {
		k, err := clientKeys(tc.version, dcid)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(k.iv[:]); got != tc.iv {
			t.Errorf("version %#x: iv %s, want %s", tc.version, got, tc.iv)
		}
		// The keys are inside their ciphers: compare what they make of the
		// same input with what the RFC's keys make.
		key, _ := aes.NewCipher(mustHex(tc.key))
		aead, _ := cipher.NewGCM(key)
		hp, _ := aes.NewCipher(mustHex(tc.hp))
		var a, b [16]byte
		k.hp.Encrypt(a[:], make([]byte, 16))
		hp.Encrypt(b[:], make([]byte, 16))
		if a != b {
			t.Errorf("version %#x: the header protection key is not %s", tc.version, tc.hp)
		}
		nonce := make([]byte, 12)
		if !bytes.Equal(k.aead.Seal(nil, nonce, []byte("x"), nil), aead.Seal(nil, nonce, []byte("x"), nil)) {
			t.Errorf("version %#x: the packet key is not %s", tc.version, tc.key)
		}
	}
}

// TestHeaderProtection removes the header protection of the client
// Initial of RFC 9001 appendix A.2: its protected header and the sample
// that follows give back the unprotected header, packet number 2.
func TestHeaderProtection(t *testing.T) {
	pkt := mustHex("c000000001088394c8f03e5157080000449e7b9aec34" + "d1b1c98dd7689fb8ec11d242b123dc9b" + strings.Repeat("00", 1200-22-16))
	h, ok := parseLong(pkt)
	if !ok || h.typ != typeInitial || hex.EncodeToString(h.dcid) != "8394c8f03e515708" || len(h.scid) != 0 || h.pnOffset != 18 {
		t.Fatalf("header %+v, %v", h, ok)
	}
	keys, err := clientKeys(h.version, h.dcid)
	if err != nil {
		t.Fatal(err)
	}
	pnLen, pn, err := keys.unprotect(pkt, &h)
	if err != nil || pnLen != 4 || pn != 2 {
		t.Fatalf("packet number %d (%d bytes), %v; want 2 (4 bytes)", pn, pnLen, err)
	}
	if got := hex.EncodeToString(pkt[:22]); got != "c300000001088394c8f03e5157080000449e00000002" {
		t.Errorf("unprotected header %s", got)
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestHello reads Go's real QUIC ClientHello (1,500 bytes, so two
// Initials), with quic-go's and with Chromium's transport parameters,
// however its CRYPTO frames are cut, ordered, repeated and spread over
// packets and interleaved with PING and PADDING, in versions 1 and 2: the
// fingerprint is the parameters', and the JA4 and TLS family of the hello
// read are those a handshake matcher computes of it through crypto/tls.
func TestHello(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		ps     []param
		fp     string
		family string
	}{
		{quicGoParams, "q1_g.5.6.7.4.8.9.1.3.b.e.f", "quic-go"},
		{chromeParams, "q1_8.9.3128.20.f.3.7.5.6.1.11.g.4", "chromium"},
	} {
		hello := goHello(t, tc.ps)
		ja4, stack := goJA4(t, hello)
		if stack.Family != "go" || stack.Browser {
			t.Fatalf("the matcher classifies Go's QUIC hello as %+v, want go's", stack)
		}
		for round := range 40 {
			version := Version1
			if round%4 == 3 {
				version = Version2
			}
			dcid := make([]byte, 8+r.IntN(13))
			for i := range dcid {
				dcid[i] = byte(r.Uint32())
			}
			scid := dcid[:r.IntN(len(dcid))]
			packets := buildInitials(t, r, version, dcid, scid, hello, 1+r.IntN(4), round%2 == 1)
			tr := NewTracker(64)
			conn := receive(tr, "192.0.2.10:51234", packets)
			p := tr.Get(conn)
			want := tc.fp
			if version == Version2 {
				want = "q2" + want[2:]
			}
			if p == nil || p.String != want || p.Stack.Family != tc.family || !p.Stack.Known || p.JA4 != ja4 || p.TLS != stack {
				t.Fatalf("round %d (%d packets, version %#x): %+v, want %s of %s, JA4 %s, TLS %+v; stats %+v", round, len(packets), version, p, want, tc.family, ja4, stack, tr.Stats())
			}
			if s := tr.Stats(); s.Hellos != 1 || s.Unread != 0 {
				t.Errorf("round %d: stats %+v", round, s)
			}
			if p := tr.Get(udpAddr("192.0.2.10:51234")); p != nil {
				t.Errorf("round %d: another address value of the same address has %+v", round, p)
			}
		}
	}
}

// buildInitials cuts hello into CRYPTO frames, shuffled when scramble is
// set, with PING and PADDING frames between, over n Initial packets; some
// frames are sent twice.
func buildInitials(t testing.TB, r *rand.Rand, version uint32, dcid, scid, hello []byte, n int, scramble bool) [][]byte {
	fs := split(r, hello, 2+r.IntN(12))
	if scramble {
		r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	}
	if len(fs) > 2 {
		fs = append(fs, fs[r.IntN(len(fs))]) // a repeat
	}
	if n > len(fs) {
		n = len(fs)
	}
	payloads := make([][]byte, n)
	for i, f := range fs {
		k := i % n
		if r.IntN(3) == 0 {
			payloads[k] = append(payloads[k], 0x01) // PING
		}
		if r.IntN(3) == 0 {
			payloads[k] = append(payloads[k], make([]byte, r.IntN(20))...) // PADDING
		}
		payloads[k] = cryptoFrame(payloads[k], f)
	}
	var out [][]byte
	for i, p := range payloads {
		out = append(out, sealInitial(t, version, dcid, scid, nil, uint32(i), p))
	}
	return out
}

// goJA4 returns the JA4 that tlsprint computes of a QUIC ClientHello as
// crypto/tls's server reads it, and the family of its TLS stack
// (tlsprint.Classify): the Caddy matcher's way.
func goJA4(t *testing.T, hello []byte) (string, tlsprint.Stack) {
	t.Helper()
	var ja4 string
	var stack tlsprint.Stack
	stop := errors.New("stop")
	s := tls.QUICServer(&tls.QUICConfig{TLSConfig: &tls.Config{MinVersion: tls.VersionTLS13,
		GetConfigForClient: func(info *tls.ClientHelloInfo) (*tls.Config, error) {
			h := tlsprint.FromClientHello(info)
			ja4, stack = h.JA4(), tlsprint.Classify(h)
			return nil, stop
		}}})
	defer s.Close()
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.HandleData(tls.QUICEncryptionLevelInitial, hello)
	if ja4 == "" {
		t.Fatal("crypto/tls did not read the hello")
	}
	return ja4, stack
}

// TestSpoofed: a hello is known only for the connection that its own
// datagrams started. Initials spoofed from a client's address, before and
// after the client's own, make connections of their own: the client's
// connection keeps its own fingerprint, and the spoofed ones are never
// another's.
func TestSpoofed(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tr := NewTracker(4096)
	spoofed := func() [][]byte {
		dcid := []byte{byte(r.Uint32()), 2, 3, 4, 5, 6, 7, 8}
		return buildInitials(t, r, Version1, dcid, dcid[:2], goHello(t, quicGoParams), 2, false)
	}
	const victim = "192.0.2.10:51234"
	receive(tr, victim, spoofed())
	own := receive(tr, victim, buildInitials(t, r, Version1, []byte{8, 7, 6, 5, 4, 3, 2, 1}, nil, goHello(t, chromeParams), 2, true))
	for range 20 {
		receive(tr, victim, spoofed())
	}
	if p := tr.Get(own); p == nil || p.Stack.Family != "chromium" {
		t.Fatalf("the client's own connection: %+v", p)
	}
	if p := tr.Get(udpAddr(victim)); p != nil {
		t.Fatalf("a connection of the same address and port that sent no hello: %+v", p)
	}
	if s := tr.Stats(); s.Hellos != 22 {
		t.Errorf("stats %+v", s)
	}
}

// TestUnread: what cannot be read is unknown, never an error or a panic:
// another version, a hello over MaxHello, a packet that does not decrypt,
// a hello that never completes, a client's later Initials (to the
// server's connection ID).
func TestUnread(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	tr := NewTracker(64)
	dcid, scid := []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{5}
	pkts := buildInitials(t, r, Version1, dcid, scid, goHello(t, quicGoParams), 2, false)

	bad := slices.Clone(pkts[0])
	bad[len(bad)-1] ^= 1 // the tag
	tr.Received(bad, udpAddr("192.0.2.1:1"))
	other := slices.Clone(pkts[0])
	other[1], other[4] = 0xff, 0x1d // draft 29
	tr.Received(other, udpAddr("192.0.2.1:1"))
	tr.Received(pkts[0], udpAddr("192.0.2.2:1")) // half a hello
	huge := make([]byte, MaxHello)
	huge[0], huge[1], huge[2], huge[3] = 1, 0, 0x20, 0
	tr.Received(sealInitial(t, Version1, dcid, scid, nil, 0, cryptoFrame(nil, frag{0, huge[:1000]})), udpAddr("192.0.2.3:1"))
	later := sealInitial(t, Version1, []byte{9, 9, 9, 9}, scid, nil, 3, []byte{2, 3, 0, 0, 0})
	later[6] = 4 // its DCID is the server's, its keys the first DCID's
	tr.Received(later, udpAddr("192.0.2.4:1"))
	if s := tr.Stats(); s.Hellos != 0 || s.Unread != 3 {
		t.Errorf("stats %+v, want no hello and 3 unread (the bad tag, the long hello, the later Initial)", s)
	}
	if n, _ := tr.Len(); n != 0 {
		t.Errorf("%d entries", n)
	}
}

// TestIdle: an entry that requests read stays while in use; one unread for
// more than a minute gives its place to a new connection first, then the
// oldest that no request read.
func TestIdle(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	now := int64(1_000_000)
	tr := NewTracker(4) // one bucket
	tr.now = func() int64 { return now }
	hello := goHello(t, quicGoParams)
	conns := make([]*net.UDPAddr, 7)
	for i := range conns {
		dcid := []byte{byte(i), 1, 2, 3, 4, 5, 6, 7}
		conns[i] = receive(tr, "192.0.2.1:"+itoa(1000+i), buildInitials(t, r, Version1, dcid, dcid[:4], hello, 1, false))
		switch i {
		case 0, 1, 2:
			tr.Get(conns[i]) // read by its requests
		case 3:
			now += 2 * int64(idle/time.Second)
			tr.Get(conns[0]) // still in use
		}
	}
	var got []bool
	for _, c := range conns {
		got = append(got, tr.Get(c) != nil)
	}
	// 4 and 5 replaced the idle 1 and 2, then 6 the oldest unread, 3.
	if want := []bool{true, false, false, false, true, true, true}; !slices.Equal(got, want) {
		t.Errorf("known: %v", got)
	}
}

// TestFlood: Initials from as many addresses (a million with
// QUICPRINT_FLOOD=1000000; 200,000 by default), each a whole hello or the
// first half of one, while 4,000 connections are in use: the heap does not
// grow beyond the table's bound, and every connection in use keeps its
// fingerprint.
func TestFlood(t *testing.T) {
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("QUICPRINT_FLOOD")); err == nil && v > 0 {
		n = v
	} else if testing.Short() || raceEnabled {
		n = 20_000
	}
	r := rand.New(rand.NewPCG(9, 10))
	tr := NewTracker(16384)
	hello := goHello(t, quicGoParams)
	whole := buildInitials(t, r, Version1, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{1}, hello, 1, false)[0]
	halves := buildInitials(t, r, Version1, []byte{8, 7, 6, 5, 4, 3, 2, 1}, []byte{2}, hello, 2, false)
	var inUse []*net.UDPAddr
	for i := range 4000 {
		dcid := []byte{1, 1, 1, 1, 1, 1, byte(i >> 8), byte(i)}
		c := receive(tr, "198.51.100."+itoa(i%250)+":"+itoa(20000+i), buildInitials(t, r, Version1, dcid, dcid[6:], hello, 1, false))
		if tr.Get(c) != nil {
			inUse = append(inUse, c)
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	start := time.Now()
	addr := &net.UDPAddr{IP: net.IPv4(10, 0, 0, 0).To4()}
	for i := range n {
		a := &net.UDPAddr{IP: net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)).To4(), Port: 1024 + i%50000}
		if i%2 == 0 {
			tr.Received(whole, a)
		} else {
			tr.Received(halves[0], a)
		}
		if i%1000 == 0 {
			tr.Get(inUse[i/1000%len(inUse)])
		}
		addr = a
	}
	elapsed := time.Since(start)
	after := heap()
	lost := 0
	for _, c := range inUse {
		if tr.Get(c) == nil {
			lost++
		}
	}
	entries, read := tr.Len()
	t.Logf("%d Initials in %v (%.1f µs each): heap %.1f MiB before, %.1f MiB after; %d entries (%d read by requests); %d of %d connections in use lost; %+v (last %v)",
		n, elapsed.Round(time.Millisecond), float64(elapsed.Microseconds())/float64(n), float64(before)/(1<<20), float64(after)/(1<<20), entries, read, lost, len(inUse), tr.Stats(), addr)
	if after > before+8<<20 {
		t.Errorf("heap grew from %d to %d bytes", before, after)
	}
	if lost > 0 || len(inUse) < 3900 {
		t.Errorf("%d of %d connections in use lost their fingerprint", lost, len(inUse))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestPutJA4: a handshake matcher's JA4 and TLS family are kept for a
// connection without a fingerprint, and never replace one.
func TestPutJA4(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	tr := NewTracker(64)
	c := receive(tr, "192.0.2.1:443", buildInitials(t, r, Version1, []byte{1, 2, 3, 4, 5, 6, 7, 8}, nil, goHello(t, quicGoParams), 2, false))
	ja4, stack := tr.Get(c).JA4, tr.Get(c).TLS
	tr.PutJA4(c, "q13d0000h3_000000000000_000000000000", tlsprint.Stack{Known: true, Browser: true, Family: "chromium"})
	if p := tr.Get(c); p.JA4 != ja4 || p.TLS != stack || p.String == "" {
		t.Errorf("the matcher's JA4 replaced the wrapper's: %+v", p)
	}
	other := udpAddr("192.0.2.1:443")
	tr.PutJA4(other, ja4, stack)
	if p := tr.Get(other); p == nil || p.JA4 != ja4 || p.TLS != stack || p.String != "" || p.Stack.Known {
		t.Errorf("the matcher's JA4 alone: %+v", p)
	}
}

// TestSwitchedDCID: a client whose server acknowledged its first Initial
// before it sent the rest of its hello sends the rest to the server's
// connection ID, protected with the keys of its first (quic-go's client
// does, when it is slow): the hello is still read, for the connection of
// its first datagram.
func TestSwitchedDCID(t *testing.T) {
	hello := goHello(t, quicGoParams)
	dcid, scid, server := []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{9, 9, 9, 9}, []byte{4, 4, 4, 4}
	tr := NewTracker(64)
	first := udpAddr("192.0.2.1:443")
	tr.Received(sealInitial(t, Version1, dcid, scid, nil, 0, cryptoFrame(nil, frag{0, hello[:1000]})), first)
	tr.Received(sealInitialWith(t, Version1, dcid, server, scid, nil, 1, cryptoFrame([]byte{0x02, 0, 0, 0, 0}, frag{1000, hello[1000:]})), udpAddr("192.0.2.1:443"))
	if p := tr.Get(first); p == nil || p.Stack.Family != "quic-go" {
		t.Fatalf("%+v; stats %+v", p, tr.Stats())
	}
}
