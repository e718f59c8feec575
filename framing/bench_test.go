package framing

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
)

// BenchmarkParse is a connection's first request: Chromium's HTTP/2
// flight, and an HTTP/1.1 navigation.
func BenchmarkParse(b *testing.B) {
	h1 := []byte("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\nsec-ch-ua: \"Chromium\";v=\"156\"\r\nsec-ch-ua-mobile: ?0\r\nsec-ch-ua-platform: \"Linux\"\r\nUpgrade-Insecure-Requests: 1\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36\r\nAccept: text/html\r\nSec-Fetch-Site: none\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-User: ?1\r\nSec-Fetch-Dest: document\r\nAccept-Encoding: gzip, deflate, br, zstd\r\nAccept-Language: en-US,en;q=0.9\r\n\r\n")
	for _, c := range []struct {
		name string
		data []byte
	}{{"h2", chromeFlight.bytes(b)}, {"h1", h1}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p := parsers.get()
				p.Feed(c.data)
				f, _ := p.Frames()
				Builtin().Print(f)
				parsers.put(p)
			}
		})
	}
}

// BenchmarkParseTrickle is the worst a client can make of its first
// request: a header line that never ends, a byte a read, up to the budget.
func BenchmarkParseTrickle(b *testing.B) {
	data := append([]byte("GET / HTTP/1.1\r\nHost: x\r\nCookie: "), bytes.Repeat([]byte("a"), Budget)...)
	b.ReportAllocs()
	for b.Loop() {
		var p Parser
		for i := 0; i < len(data) && !p.Feed(data[i:i+1]); i++ {
		}
	}
}

// BenchmarkGet is a request's lookup of its connection's fingerprint.
func BenchmarkGet(b *testing.B) {
	c := NewConns(32768)
	c.Put("192.0.2.1:50000", &Print{Text: chromePrint})
	b.ReportAllocs()
	for b.Loop() {
		c.Get("192.0.2.1:50000")
	}
}

// BenchmarkListener measures an HTTPS server's requests with the
// connections read through a Listener (framed, as Caddy serves them with
// the robots_guard wrapper: ConnectionState hidden, HTTP/2 read from the
// preface) and without (plain: net/http's own TLS path, HTTP/2 by ALPN),
// in one run: kept-alive requests over HTTP/1.1 and HTTP/2, and a new
// connection with its TLS handshake per request. Client and server share
// the process; the difference between the two is the wrapper's.
func BenchmarkListener(b *testing.B) {
	cert, pool := testCert()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			panic("no TLS state")
		}
		w.Write([]byte("the site"))
	})
	for _, framed := range []bool{false, true} {
		conns := NewConns(1024)
		var url string
		if framed {
			url = newTLSServer(b, conns, cert, handler)
		} else {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv := &http.Server{Handler: handler, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
			go srv.ServeTLS(ln, "", "")
			b.Cleanup(func() { srv.Close() })
			url = "https://" + ln.Addr().String() + "/"
		}
		name := map[bool]string{false: "plain", true: "framed"}[framed]
		for _, c := range []struct {
			name string
			tr   *http.Transport
		}{
			{"h1-keep-alive", &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}},
			{"h2-keep-alive", &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}},
			{"h1-handshake", &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}},
		} {
			b.Run(c.name+"/"+name, func(b *testing.B) {
				client := &http.Client{Transport: c.tr}
				defer c.tr.CloseIdleConnections()
				b.ReportAllocs()
				for b.Loop() {
					resp, err := client.Get(url)
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
	}
}
