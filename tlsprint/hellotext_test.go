package tlsprint

import (
	"reflect"
	"strings"
	"testing"
)

// TestHelloText: a hello's text reads back as the same hello, GREASE
// values, groups and odd ALPN bytes included; malformed text is refused.
func TestHelloText(t *testing.T) {
	for _, h := range []Hello{
		{},
		{QUIC: true, Versions: []uint16{0x0304}, Ciphers: []uint16{0x1301}, ALPN: []string{"h3"}},
		{Versions: []uint16{0x3a3a, 0x0304, 0x0303}, Ciphers: []uint16{0x4a4a, 0x1301}, Extensions: []uint16{0xdada, 0x44cd, 0x0000, 0xfafa},
			Groups: []uint16{0x8a8a, 0x11ec, 0x001d}, SignatureAlgorithms: []uint16{0x0403, 0x0804}, ALPN: []string{"h2", "http/1.1", "a b,c%\xba"}},
	} {
		text := h.String()
		got, err := ParseHello(text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if !reflect.DeepEqual(got, h) {
			t.Errorf("%q reads back as %+v, want %+v", text, got, h)
		}
	}
	if got := (Hello{Versions: []uint16{0x0303}, ALPN: []string{"a b"}}).String(); got != "tcp v=0303 alpn=a%20b" {
		t.Errorf("String: %q", got)
	}
	for _, bad := range []string{"", "udp v=0304", "tcp v=304", "tcp v=0304 v=0303", "tcp x=0001", "tcp v=", "tcp v", "tcp alpn=%4", "tcp alpn=%zz", "tcp c=0001,,0002", "tcp c=00011"} {
		if _, err := ParseHello(bad); err == nil {
			t.Errorf("ParseHello(%q): no error", bad)
		}
	}
	if _, err := ParseHello("tcp c=" + strings.Repeat("0001,", maxListLen) + "0001"); err == nil {
		t.Error("a list longer than any hello's: no error")
	}
}

// FuzzHelloText: any text either is refused or reads back to itself once
// written, and never panics.
func FuzzHelloText(f *testing.F) {
	f.Add("tcp v=3a3a,0304 c=4a4a,1301 e=0000 g=11ec s=0403 alpn=h2,http/1.1")
	f.Add("quic alpn=%BA%AD")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHello(s)
		if err != nil {
			return
		}
		again, err := ParseHello(h.String())
		if err != nil || !reflect.DeepEqual(again, h) {
			t.Errorf("%q: written as %q, reads back as %+v (%v)", s, h.String(), again, err)
		}
	})
}
