package quicprint

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// testCert returns a self-signed certificate for localhost and a pool
// that trusts it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// h3Server serves HTTP/3 on 127.0.0.1 through a Tracker's conn: each
// answer is the fingerprint Get gives for the request, with the family of
// its hello's TLS stack. With retry, the
// server asks every client to prove its address with a Retry first.
func h3Server(t *testing.T, tr *Tracker, cert tls.Certificate, retry bool) string {
	t.Helper()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := tr.Get(r.Context().Value(http3.RemoteAddrContextKey).(net.Addr)); p != nil {
			fmt.Fprintf(w, "%s %s %v tls %s", p.String, p.Stack.Family, p.Stack.Browser, p.TLS.Family)
		} else {
			fmt.Fprint(w, "unknown")
		}
	})
	tlsConf := http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}})
	qt := &quic.Transport{Conn: tr.Wrap(udp), VerifySourceAddress: func(net.Addr) bool { return retry }}
	ln, err := qt.ListenEarly(tlsConf, &quic.Config{Versions: []quic.Version{quic.Version1, quic.Version2}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http3.Server{Handler: handler}
	go srv.ServeListener(ln)
	t.Cleanup(func() { srv.Close(); ln.Close(); qt.Close(); udp.Close() })
	return fmt.Sprintf("https://127.0.0.1:%d/", udp.LocalAddr().(*net.UDPAddr).Port)
}

// TestQUICGo: quic-go's own HTTP/3 client, as a program would configure
// it (the defaults, datagrams, QUIC version 2, other windows and
// timeouts, 0-RTT resumption), through a quic-go server behind the
// Tracker's conn, with and without a Retry: every request is known as
// quic-go's, a library's, from the first, and its hello as Go's TLS
// stack (tlsprint.Classify of the hello the Tracker read).
func TestQUICGo(t *testing.T) {
	cert, pool := testCert(t)
	for _, retry := range []bool{false, true} {
		tr := NewTracker(64)
		url := h3Server(t, tr, cert, retry)
		for _, tc := range []struct {
			name string
			conf *quic.Config
			want string
		}{
			{"default", nil, `^q1_g\.5\.6\.7\.4\.8\.9\.1\.3\.b\.e\.f quic-go false tls go$`},
			{"datagrams", &quic.Config{EnableDatagrams: true}, `^q1_g\.5\.6\.7\.4\.8\.9\.1\.3\.b\.e\.f\.20 quic-go false tls go$`},
			{"version 2", &quic.Config{Versions: []quic.Version{quic.Version2}}, `^q2_g\.5\.6\.7\.4\.8\.9\.1\.3\.b\.e\.f quic-go false tls go$`},
			{"windows and timeouts", &quic.Config{MaxIdleTimeout: time.Minute, InitialStreamReceiveWindow: 1 << 20, MaxIncomingStreams: 1000,
				InitialConnectionReceiveWindow: 4 << 20, KeepAlivePeriod: time.Second}, `^q1_g(\.[0-9a-f]+)+ quic-go false tls go$`},
			{"stream resets", &quic.Config{EnableStreamResetPartialDelivery: true}, `^q1_g(\.[0-9a-f]+)+ quic-go false tls go$`},
		} {
			rt := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, QUICConfig: tc.conf}
			for i := range 2 {
				resp, err := (&http.Client{Transport: rt, Timeout: 10 * time.Second}).Get(url)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !regexp.MustCompile(tc.want).Match(body) {
					t.Errorf("retry %v, %s, request %d: %q, want %s", retry, tc.name, i, body, tc.want)
				}
			}
			rt.Close()
		}
		t.Logf("retry %v: %+v", retry, tr.Stats())
	}
}

// TestResumed: a client that resumes its session and sends its first
// request in 0-RTT is known from the request after its handshake: a
// request sent before the client has proved its address is not.
func TestResumed(t *testing.T) {
	cert, pool := testCert(t)
	tr := NewTracker(64)
	url := h3Server(t, tr, cert, false)
	cache := tls.NewLRUClientSessionCache(4)
	var got []string
	for range 2 {
		rt := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ClientSessionCache: cache}}
		for range 2 {
			req, _ := http.NewRequestWithContext(context.Background(), http3.MethodGet0RTT, url, nil)
			resp, err := (&http.Client{Transport: rt, Timeout: 10 * time.Second}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got = append(got, string(body))
		}
		rt.Close()
	}
	t.Logf("answers: %q", got)
	for i, g := range got {
		if g != "unknown" && !regexp.MustCompile(`^q1_g(\.[0-9a-f]+)+ quic-go false tls go$`).MatchString(g) {
			t.Errorf("request %d: %q", i, g)
		}
	}
	if got[0] == "unknown" || got[1] == "unknown" || got[3] == "unknown" {
		t.Errorf("the first connection's requests, and the resumed one's after its handshake, must be known: %q", got)
	}
}
