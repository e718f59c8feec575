package framing

import (
	"bytes"
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
