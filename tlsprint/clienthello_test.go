package tlsprint

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"
)

// testCert returns a self-signed certificate for "example.test" and
// 127.0.0.1.
func testCert(t testing.TB) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "example.test"},
		DNSNames: []string{"example.test"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestGoClient: Go's own client over a real handshake on loopback: with and
// without SNI and ALPN, and resumed with a pre-shared key, whose extension
// (0x0029) counts, as JA4.md counts every extension.
func TestGoClient(t *testing.T) {
	cert := testCert(t)
	seen := make(chan string, 1)
	srv := &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2", "http/1.1"},
		GetConfigForClient: func(info *tls.ClientHelloInfo) (*tls.Config, error) {
			h := FromClientHello(info)
			seen <- h.JA4()
			return nil, nil
		},
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if c.(*tls.Conn).Handshake() == nil {
					c.Write([]byte("x")) // lets the client read its session ticket
				}
			}()
		}
	}()
	pool := x509.NewCertPool()
	leaf, _ := x509.ParseCertificate(cert.Certificate[0])
	pool.AddCert(leaf)
	cache := tls.NewLRUClientSessionCache(4)
	dial := func(name string, alpn []string) string {
		t.Helper()
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: name, NextProtos: alpn, ClientSessionCache: cache})
		if err != nil {
			t.Fatal(err)
		}
		c.Read(make([]byte, 1))
		c.Close()
		return <-seen
	}
	first := dial("example.test", []string{"h2", "http/1.1"})
	if !wellFormed(first) || !strings.HasPrefix(first, "t13d") || first[8:10] != "h2" {
		t.Errorf("Go client to a host, h2: %s, want t13d…h2_…", first)
	}
	resumed := dial("example.test", []string{"h2", "http/1.1"})
	if n, m := first[6:8], resumed[6:8]; resumed[:6] != first[:6] || m <= n || resumed[11:23] != first[11:23] || resumed[24:] == first[24:] {
		t.Errorf("resumed: %s after %s: want one more extension (pre_shared_key), the same ciphers, another extension hash", resumed, first)
	}
	ip := dial("127.0.0.1", nil)
	if ip[:4] != "t13i" || ip[8:10] != "00" || ip[11:23] != first[11:23] {
		t.Errorf("Go client to an IP, no ALPN: %s, want t13i…00 with the ciphers of %s", ip, first)
	}
}

// udpConn is a net.Conn with UDP addresses, as quic-go gives handshake
// matchers.
type udpConn struct{ net.Conn }

func (udpConn) LocalAddr() net.Addr  { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443} }
func (udpConn) RemoteAddr() net.Addr { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000} }

func TestQUIC(t *testing.T) {
	info := &tls.ClientHelloInfo{SupportedVersions: []uint16{0x0304}, CipherSuites: []uint16{0x1301}, Extensions: []uint16{0, 0x10, 0x39}, SupportedProtos: []string{"h3"}}
	if got := FromClientHello(info).JA4(); !strings.HasPrefix(got, "q13d0103h3") {
		t.Errorf("no connection, QUIC transport parameters: %s, want q13d0103h3_…", got)
	}
	info.Conn = udpConn{}
	if got := FromClientHello(info).JA4(); !strings.HasPrefix(got, "q") {
		t.Errorf("UDP connection: %s, want q…", got)
	}
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	info.Conn = c1 // "pipe" addresses: not UDP
	if got := FromClientHello(info).JA4(); !strings.HasPrefix(got, "t") {
		t.Errorf("a stream connection: %s, want t…", got)
	}
}
