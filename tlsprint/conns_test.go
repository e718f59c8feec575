package tlsprint

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/netip"
	"runtime"
	"testing"
)

// TestConnsHandshake: a real handshake's JA4 is found by the client's
// address as the server's requests give it (RemoteAddr), by no other, and
// no longer once forgotten.
func TestConnsHandshake(t *testing.T) {
	conns := NewConns(64)
	cert := testCert(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{cert},
		GetConfigForClient: func(info *tls.ClientHelloInfo) (*tls.Config, error) {
			conns.Record(info)
			return nil, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	remote := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.(*tls.Conn).Handshake()
		}
		remote <- c
	}()
	pool := x509.NewCertPool()
	leaf, _ := x509.ParseCertificate(cert.Certificate[0])
	pool.AddCert(leaf)
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "example.test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := <-remote
	defer srv.Close()
	ja4, stack := conns.Get(srv.RemoteAddr().String(), false)
	if ja4[:4] != "t13d" || stack.Family != "go" {
		t.Errorf("Get(%s) = %q %+v, want Go's t13d…", srv.RemoteAddr(), ja4, stack)
	}
	if ja4, _ := conns.Get(srv.RemoteAddr().String(), true); ja4 != "" {
		t.Errorf("the same address over QUIC: %q, want none", ja4)
	}
	if ja4, _ := conns.Get("127.0.0.1:1", false); ja4 != "" {
		t.Errorf("another port: %q, want none", ja4)
	}
	if ja4, _ := conns.Get("[::ffff:"+srv.RemoteAddr().String()[:len("127.0.0.1")]+"]"+srv.RemoteAddr().String()[len("127.0.0.1"):], false); ja4 == "" {
		t.Error("the IPv4-mapped spelling of the address: none, want the same entry")
	}
	ra := srv.RemoteAddr().String()
	if n := testing.AllocsPerRun(100, func() { conns.Get(ra, false) }); n != 0 {
		t.Errorf("Get: %v allocations", n)
	}
	conns.Forget(srv.RemoteAddr(), false)
	if ja4, _ := conns.Get(srv.RemoteAddr().String(), false); ja4 != "" || conns.Len() != 0 {
		t.Errorf("after Forget: %q, %d entries; want none", ja4, conns.Len())
	}
}

// fakeConn is a connection from a given address.
type fakeConn struct {
	net.Conn
	remote net.Addr
}

func (c fakeConn) RemoteAddr() net.Addr { return c.remote }
func (fakeConn) LocalAddr() net.Addr    { return &net.TCPAddr{} }

// TestConnsFlood: a million handshakes from distinct addresses and ports
// leave the table at its size and the heap near where it was: the last
// ones are found, the table never grows.
func TestConnsFlood(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	conns := NewConns(32768)
	info := &tls.ClientHelloInfo{SupportedVersions: []uint16{0x0304}, CipherSuites: []uint16{0x1301}, Extensions: []uint16{0, 0x2b}}
	record := func(i int) string {
		a := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), uint16(1024+i%60000))
		info.Conn = fakeConn{remote: net.TCPAddrFromAddrPort(a)}
		conns.Record(info)
		return a.String()
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for i := range 4 * conns.Slots() {
		record(i) // fill every bucket
	}
	before := heap()
	var last string
	for i := range n {
		last = record(4*conns.Slots() + i)
	}
	after := heap()
	if conns.Len() > conns.Slots() {
		t.Errorf("%d entries in %d slots", conns.Len(), conns.Slots())
	}
	if ja4, _ := conns.Get(last, false); ja4 == "" {
		t.Errorf("the last handshake (%s) is not found", last)
	}
	t.Logf("%d slots, %d entries; heap %.1f MiB full, %.1f MiB after %d more handshakes", conns.Slots(), conns.Len(), float64(before)/(1<<20), float64(after)/(1<<20), n)
	if after > before+1<<20 {
		t.Errorf("the heap grew from %d to %d bytes over %d handshakes", before, after, n)
	}
}

func BenchmarkConnsGet(b *testing.B) {
	conns := NewConns(32768)
	info := &tls.ClientHelloInfo{Conn: fakeConn{remote: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 50000}}, SupportedVersions: []uint16{0x0304}}
	conns.Record(info)
	b.ReportAllocs()
	for b.Loop() {
		conns.Get("192.0.2.1:50000", false)
	}
}

func BenchmarkConnsRecord(b *testing.B) {
	conns := NewConns(32768)
	info := &tls.ClientHelloInfo{SupportedVersions: []uint16{0x0304}, CipherSuites: []uint16{0x1301}, Extensions: []uint16{0, 0x2b}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		info.Conn = fakeConn{remote: &net.TCPAddr{IP: net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)), Port: 1024}}
		conns.Record(info)
	}
}
