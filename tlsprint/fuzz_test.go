package tlsprint

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// scriptConn is a net.Conn whose reads are a fixed byte string, then EOF,
// and whose writes go nowhere: a client that sends one record.
type scriptConn struct{ r *bytes.Reader }

func (c scriptConn) Read(p []byte) (int, error)     { return c.r.Read(p) }
func (scriptConn) Write(p []byte) (int, error)      { return len(p), nil }
func (scriptConn) Close() error                     { return nil }
func (scriptConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (scriptConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (scriptConn) SetDeadline(time.Time) error      { return nil }
func (scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (scriptConn) SetWriteDeadline(time.Time) error { return nil }

// recordConn records what a client writes and fails its reads: the client
// sends its ClientHello and gives up.
type recordConn struct {
	scriptConn
	w *bytes.Buffer
}

func (c recordConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (recordConn) Read([]byte) (int, error)      { return 0, io.EOF }

// goClientHello returns the handshake message of a real Go ClientHello.
func goClientHello(t testing.TB, cfg *tls.Config) []byte {
	var w bytes.Buffer
	tls.Client(recordConn{w: &w}, cfg).Handshake()
	b := w.Bytes()
	if len(b) < 5 || b[0] != 22 {
		t.Fatalf("the Go client wrote %d bytes, not a handshake record", len(b))
	}
	return b[5:]
}

// FuzzClientHello feeds arbitrary ClientHello messages, from real ones of
// Go's client, to crypto/tls's server, which calls FromClientHello, JA4,
// Lookup and Classify for each it parses, as the Caddy matcher does: none
// of them may panic, every JA4 is well-formed, and a hello with a browser
// mark is never a library's.
func FuzzClientHello(f *testing.F) {
	f.Add(goClientHello(f, &tls.Config{ServerName: "example.test", NextProtos: []string{"h2", "http/1.1"}}))
	f.Add(goClientHello(f, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12}))
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, msg []byte) {
		if len(msg) > 1<<14 {
			return
		}
		rec := binary.BigEndian.AppendUint16([]byte{22, 3, 1}, uint16(len(msg)))
		cfg := &tls.Config{GetConfigForClient: func(info *tls.ClientHelloInfo) (*tls.Config, error) {
			h := FromClientHello(info)
			ja4 := h.JA4()
			if !wellFormed(ja4) {
				t.Errorf("JA4 %q is not well-formed", ja4)
			}
			Lookup(ja4)
			if s := Classify(h); s.Known && !s.Browser && MarksOf(h)&BrowserMarks != 0 {
				t.Errorf("%s: a library's (%s) with a browser mark", h, s.Family)
			}
			return nil, io.EOF
		}}
		tls.Server(scriptConn{bytes.NewReader(append(rec, msg...))}, cfg).Handshake()
	})
}

// FuzzJA4: any hello at all gives a well-formed JA4, and Lookup of any
// string does not panic.
func FuzzJA4(f *testing.F) {
	f.Add([]byte{3, 4, 0x13, 1, 0, 0, 0, 0x10}, "h2", "t13d1516h2_8daaf6152771_02713d6af862")
	f.Fuzz(func(t *testing.T, b []byte, alpn, s string) {
		var vs []uint16
		for i := 0; i+1 < len(b); i += 2 {
			vs = append(vs, binary.BigEndian.Uint16(b[i:]))
		}
		n := len(vs) / 4
		h := Hello{QUIC: len(b)%2 == 1, Versions: vs[:n], Ciphers: vs[n : 2*n], Extensions: vs[2*n : 3*n], SignatureAlgorithms: vs[3*n:], ALPN: []string{alpn}}
		if ja4 := h.JA4(); !wellFormed(ja4) {
			t.Errorf("JA4 %q of %+v is not well-formed", ja4, h)
		}
		h.Raw(true)
		Lookup(s)
	})
}

// TestScriptedHello: the fuzz target's server does read a real hello, so
// the fuzzing reaches the fingerprint.
func TestScriptedHello(t *testing.T) {
	msg := goClientHello(t, &tls.Config{ServerName: "example.test", NextProtos: []string{"h2"}})
	rec := binary.BigEndian.AppendUint16([]byte{22, 3, 1}, uint16(len(msg)))
	var got string
	cfg := &tls.Config{GetConfigForClient: func(info *tls.ClientHelloInfo) (*tls.Config, error) {
		got = FromClientHello(info).JA4()
		return nil, io.EOF
	}}
	tls.Server(scriptConn{bytes.NewReader(append(rec, msg...))}, cfg).Handshake()
	if got[:4] != "t13d" || got[8:10] != "h2" {
		t.Errorf("Go's hello read as %q, want t13d…h2", got)
	}
}
