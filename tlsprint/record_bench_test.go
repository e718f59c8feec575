package tlsprint

import (
	"crypto/tls"
	"net"
	"testing"
)

// benchConn is a connection from 192.0.2.1:40000.
type benchConn struct{ net.Conn }

func (benchConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 40000} }
func (benchConn) LocalAddr() net.Addr  { return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 2), Port: 443} }

// recordHellos are Chromium 156's and Go 1.26's hellos as crypto/tls gives
// them (observed.tsv).
var recordHellos = []struct {
	name string
	info *tls.ClientHelloInfo
}{
	{"chromium", &tls.ClientHelloInfo{
		SupportedVersions: []uint16{0x3a3a, 0x0304, 0x0303},
		CipherSuites:      []uint16{0x1a1a, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035},
		Extensions:        []uint16{0x5a5a, 0xff01, 0x001b, 0x000a, 0x0000, 0xfe0d, 0x44cd, 0x0010, 0x0012, 0x0033, 0x0017, 0x002b, 0x0005, 0xca34, 0x000d, 0x0023, 0x000b, 0x002d, 0xdada},
		SupportedCurves:   []tls.CurveID{0xbaba, 0x11ec, 0x001d, 0x0017, 0x0018},
		SignatureSchemes:  []tls.SignatureScheme{0x5a5a, 0x0904, 0x0905, 0x0906, 0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601},
		SupportedProtos:   []string{"h2", "http/1.1"},
		Conn:              benchConn{},
	}},
	{"go", &tls.ClientHelloInfo{
		SupportedVersions: []uint16{0x0304, 0x0303},
		CipherSuites:      []uint16{0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc009, 0xc013, 0xc00a, 0xc014, 0x1301, 0x1302, 0x1303},
		Extensions:        []uint16{0x0000, 0x000b, 0xff01, 0x0017, 0x0012, 0x0005, 0x000a, 0x000d, 0x0032, 0x0010, 0x002b, 0x0033},
		SupportedCurves:   []tls.CurveID{0x11ec, 0x11eb, 0x11ed, 0x001d, 0x0017, 0x0018, 0x0019},
		SignatureSchemes:  []tls.SignatureScheme{0x0804, 0x0403, 0x0807, 0x0805, 0x0806, 0x0401, 0x0501, 0x0601, 0x0503, 0x0603},
		SupportedProtos:   []string{"h2", "http/1.1"},
		Conn:              benchConn{},
	}},
}

// BenchmarkRecord: what a handshake costs the fingerprint, once per
// connection (Conns.Record: the JA4 and the stack), and what a request
// costs it (Conns.Get).
func BenchmarkRecord(b *testing.B) {
	for _, h := range recordHellos {
		c := NewConns(64)
		b.Run("handshake/"+h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Record(h.info)
			}
		})
		b.Run("request/"+h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Get("192.0.2.1:40000", false)
			}
		})
	}
}
