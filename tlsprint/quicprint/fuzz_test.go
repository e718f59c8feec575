package quicprint

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzReceived feeds arbitrary datagrams, from real Initials, to a
// Tracker: nothing panics, and nothing is kept of what is not a hello.
func FuzzReceived(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 1))
	hello := goHello(f, quicGoParams)
	for _, d := range buildInitials(f, r, Version1, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{9}, hello, 2, true) {
		f.Add(d)
	}
	f.Add(buildInitials(f, r, Version2, []byte{1, 2, 3, 4, 5, 6, 7, 8}, nil, goHello(f, chromeParams), 1, false)[0])
	f.Add([]byte{0xc0, 0, 0, 0, 1, 20})
	f.Add([]byte{0x40, 1, 2, 3})
	tr := NewTracker(64)
	f.Fuzz(func(t *testing.T, d []byte) {
		a := udpAddr("192.0.2.1:443")
		tr.Received(d, a)
		if p := tr.Get(a); p != nil {
			checkPrint(t, p)
		}
	})
}

// FuzzInitials seals arbitrary payloads into two valid Initial packets of
// one connection, so that what follows their decryption is fuzzed: the
// frames, the reassembly of CRYPTO data in any order and overlap, the
// ClientHello and its transport parameters. Nothing panics, and a
// fingerprint read is well-formed.
func FuzzInitials(f *testing.F) {
	r := rand.New(rand.NewPCG(2, 2))
	hello := goHello(f, chromeParams)
	fs := split(r, hello, 6)
	var p1, p2 []byte
	for i, fr := range fs {
		if i%2 == 0 {
			p1 = append(cryptoFrame(p1, fr), 0x01, 0, 0)
		} else {
			p2 = cryptoFrame(p2, fr)
		}
	}
	f.Add(p1, p2)
	f.Add(cryptoFrame(nil, frag{0, hello}), []byte{})
	f.Add([]byte{0x06, 0x80, 0, 0x1f, 0xff, 0x01, 0x01}, []byte{0x02, 0x3f, 0x3f, 0x3f, 0x3f})
	f.Fuzz(func(t *testing.T, p1, p2 []byte) {
		if len(p1) > 1400 || len(p2) > 1400 {
			return
		}
		tr := NewTracker(64)
		dcid := []byte{1, 2, 3, 4, 5, 6, 7, 8}
		first := udpAddr("192.0.2.1:443")
		tr.Received(sealInitial(t, Version1, dcid, nil, nil, 0, p1), first)
		tr.Received(sealInitial(t, Version1, dcid, nil, nil, 1, p2), udpAddr("192.0.2.1:443"))
		if p := tr.Get(first); p != nil {
			checkPrint(t, p)
		}
	})
}

// FuzzClientHello reads arbitrary ClientHello messages, from real ones:
// nothing panics, and a fingerprint is well-formed.
func FuzzClientHello(f *testing.F) {
	f.Add(goHello(f, quicGoParams))
	f.Add(goHello(f, chromeParams))
	f.Add([]byte{1, 0, 0, 0})
	table := Builtin()
	f.Fuzz(func(t *testing.T, msg []byte) {
		if p := table.fingerprint(Version1, msg); p != nil {
			checkPrint(t, p)
		}
	})
}

// FuzzTable reads arbitrary tables, from the built-in one: nothing panics,
// and a table read looks every fingerprint up.
func FuzzTable(f *testing.F) {
	f.Add(quicTSV, "q1_g.5.6.7.4.8.9.1.3.b.e.f")
	f.Add("a.b?\tx\tlibrary\ts\nset:g.1\ty\tbrowser\ts\n", "q1_g.1")
	f.Fuzz(func(t *testing.T, text, fp string) {
		if tb, err := ParseTable(text); err == nil {
			tb.Lookup(fp)
		}
	})
}

// checkPrint checks a fingerprint's form: "q", a version, "_", and ids.
func checkPrint(t *testing.T, p *Print) {
	t.Helper()
	s := p.String
	if len(s) < 3 || s[0] != 'q' || !strings.Contains(s, "_") || len(s) > 4+maxParams*17 {
		t.Fatalf("fingerprint %q", s)
	}
	if len(p.JA4) != 36 {
		t.Fatalf("JA4 %q", p.JA4)
	}
}
