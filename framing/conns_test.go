package framing

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConnsFlood: a million connections, each recorded and most never
// forgotten (a flood that closes nothing), leave the table at its size and
// the heap where a full table puts it; the last ones are all found.
func TestConnsFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("a million connections")
	}
	c := NewConns(32768)
	unknown := func(i int) *Print { return &Print{Text: fmt.Sprintf("h1:1:Host,X-%d", i), Proto: H1} }
	addr := func(i int) string { return fmt.Sprintf("198.51.%d.%d:%d", i>>24&0xff, i>>16&0xff, i&0xffff) }
	for i := range 32768 {
		c.Put(addr(i), unknown(i))
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	n := 1_000_000
	if raceEnabled {
		n = 100_000
	}
	for i := range n {
		c.Put(addr(i), unknown(i))
		if i%3 == 0 {
			c.Forget(addr(i))
		}
	}
	after := heap()
	t.Logf("%d connections into a table of %d slots: %d entries, heap %.1f MiB before, %.1f MiB after",
		n, c.Slots(), c.Len(), float64(before)/(1<<20), float64(after)/(1<<20))
	if c.Len() > c.Slots() {
		t.Errorf("%d entries in %d slots", c.Len(), c.Slots())
	}
	if after > before+before/4+1<<20 {
		t.Errorf("heap grew from %d to %d bytes", before, after)
	}
	found := 0
	for i := n - 100; i < n; i++ {
		if i%3 != 0 && c.Get(addr(i)) != nil {
			found++
		}
	}
	if found < 60 {
		t.Errorf("%d of the last 66 live connections found", found)
	}
}

// TestConnsGet: an entry is found by its address and port as net/http
// writes them, replaced by its address's next connection, forgotten, and
// an HTTP/3 connection's Print is made once and found again with the same
// settings.
func TestConnsGet(t *testing.T) {
	c := NewConns(8)
	p1, p2 := &Print{Text: "a"}, &Print{Text: "b"}
	c.Put("[2001:db8::1]:443", p1)
	c.Put("192.0.2.1:1", p2)
	if c.Get("[2001:db8::1]:443") != p1 || c.Get("192.0.2.1:1") != p2 || c.Get("192.0.2.1:2") != nil {
		t.Error("entries not found by their addresses")
	}
	c.Put("192.0.2.1:1", p1)
	if c.Get("192.0.2.1:1") != p1 || c.Len() != 2 {
		t.Errorf("a new connection of the same address: %v, %d entries", c.Get("192.0.2.1:1"), c.Len())
	}
	c.Forget("192.0.2.1:1")
	if c.Get("192.0.2.1:1") != nil {
		t.Error("forgotten, still found")
	}
	other := map[uint64]uint64{1: 65536, 7: 100, 0x1f*7 + 0x21: 99}
	h := c.H3("192.0.2.9:4433", other, false, true)
	if h.Text != "h3:1:10000;7:64;21;33:1" || !h.Stack.Browser || h.Stack.Family != "chromium" {
		t.Errorf("Chromium's HTTP/3 settings: %+v", h)
	}
	if n := testing.AllocsPerRun(100, func() { c.H3("192.0.2.9:4433", other, false, true) }); n != 0 {
		t.Errorf("a connection's next request allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { c.Get("[2001:db8::1]:443") }); n != 0 {
		t.Errorf("Get allocates %v times", n)
	}
}

// TestListener: over real TLS, HTTP/1.1 and HTTP/2 clients' connections
// are fingerprinted before their first request reaches the handler, every
// byte of a request body passes through unchanged, and a closed
// connection's entry is forgotten.
func TestListener(t *testing.T) {
	cert, pool := testCert()
	conns := NewConns(64)
	got := make(chan string, 10)
	srv := newTLSServer(t, conns, cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p := conns.Get(r.RemoteAddr)
		text := "none"
		if p != nil {
			text = p.Text + " " + p.Stack.Family
		}
		got <- fmt.Sprintf("%s %d %t %s", r.Proto, len(body), r.TLS != nil, text)
		w.Write(body)
	}))
	body := strings.Repeat("0123456789", 100_000)
	for _, c := range []struct {
		name string
		tr   http.RoundTripper
		want string
	}{
		{"h1", &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, "HTTP/1.1 1000000 true h1:1:Host,User-Agent,Content-Length,Accept,Accept-Language,Sec-Fetch-Mode,Sec-Fetch-Site,Accept-Encoding go"},
		{"h2", &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}, "HTTP/2.0 1000000 true h2:2:0;4:4194304;5:16384;6:10485760|1073741824|0|a,m,p,s|0 go"},
	} {
		req, _ := http.NewRequest("POST", srv, strings.NewReader(body))
		for _, h := range []string{"Sec-Fetch-Site", "Accept", "Sec-Fetch-Mode", "Accept-Language"} {
			req.Header.Set(h, "x")
		}
		resp, err := (&http.Client{Transport: c.tr}).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		echo, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(echo) != body {
			t.Errorf("%s: the body came back changed (%d bytes)", c.name, len(echo))
		}
		if s := <-got; s != c.want {
			t.Errorf("%s: %q, want %q", c.name, s, c.want)
		}
		if ci, ok := c.tr.(interface{ CloseIdleConnections() }); ok {
			ci.CloseIdleConnections()
		}
	}
	for deadline := time.Now().Add(5 * time.Second); conns.Len() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := conns.Len(); n != 0 {
		t.Errorf("%d entries after every connection closed", n)
	}
}

// newTLSServer serves h over HTTP/1.1 and HTTP/2 on loopback through a
// Listener, as framing/internal/testserver does (which this package's
// tests cannot import): ConnectionState hidden from net/http.
func newTLSServer(t testing.TB, conns *Conns, cert tls.Certificate, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	type stateKey struct{}
	srv := &http.Server{Protocols: p, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st, ok := r.Context().Value(stateKey{}).(func() *tls.ConnectionState); ok {
			r.TLS = st()
		}
		h.ServeHTTP(w, r)
	}), ConnContext: func(ctx context.Context, c net.Conn) context.Context {
		if hc, ok := c.(hiddenConn); ok { // the state once the handshake is done, as Caddy keeps it
			return context.WithValue(ctx, stateKey{}, sync.OnceValue(func() *tls.ConnectionState {
				st := hc.Conn.(connectionStater).ConnectionState()
				return &st
			}))
		}
		return ctx
	}}
	fl := &Listener{Listener: tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}), Conns: conns}
	go srv.Serve(hidingListener{fl})
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String() + "/"
}

type hidingListener struct{ net.Listener }

func (l hidingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return hiddenConn{c}, nil
}

type hiddenConn struct{ net.Conn }

var testCert = sync.OnceValues(func() (tls.Certificate, *x509.CertPool) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	c, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
})
