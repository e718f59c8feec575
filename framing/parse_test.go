package framing

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// flight is a client's first HTTP/2 flight: the preface, frames, the
// first HEADERS block.
type flight struct {
	settings []http2.Setting
	window   uint32
	prios    []http2.PriorityFrame
	headers  [][2]string
	hprio    *http2.PriorityParam
	fragment int // split the header block into CONTINUATION frames of this size (0: none)
	pad      uint8
}

// chromeFlight is what Chromium 156 sends (framing/internal/collect's
// observation).
var chromeFlight = flight{
	settings: []http2.Setting{{ID: 1, Val: 65536}, {ID: 2, Val: 0}, {ID: 4, Val: 6291456}, {ID: 6, Val: 262144}},
	window:   15663105,
	headers: [][2]string{{":method", "GET"}, {":authority", "example.com"}, {":scheme", "https"}, {":path", "/"},
		{"sec-ch-ua", `"Chromium";v="156"`}, {"user-agent", "Mozilla/5.0"}, {"accept", "text/html"}, {"priority", "u=0, i"}},
	hprio: &http2.PriorityParam{Exclusive: true, Weight: 255},
}

const chromePrint = "h2:1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p|1:0:256"

func (f flight) bytes(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&buf, nil)
	if err := fr.WriteSettings(f.settings...); err != nil {
		t.Fatal(err)
	}
	if f.window > 0 {
		fr.WriteWindowUpdate(0, f.window)
	}
	for _, p := range f.prios {
		fr.WritePriority(p.StreamID, p.PriorityParam)
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, h := range f.headers {
		enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	b := block.Bytes()
	first := b
	if f.fragment > 0 && len(b) > f.fragment {
		first = b[:f.fragment]
	}
	hp := http2.HeadersFrameParam{StreamID: 1, BlockFragment: first, EndStream: true, EndHeaders: len(first) == len(b), PadLength: f.pad}
	if f.hprio != nil {
		hp.Priority = *f.hprio
	}
	if err := fr.WriteHeaders(hp); err != nil {
		t.Fatal(err)
	}
	for rest := b[len(first):]; len(rest) > 0; {
		n := min(f.fragment, len(rest))
		fr.WriteContinuation(1, n == len(rest), rest[:n])
		rest = rest[n:]
	}
	return buf.Bytes()
}

// feed feeds data to a new Parser in chunks of the sizes next returns
// and returns its fingerprint ("" when none) and how many Feeds it took.
func feed(data []byte, next func() int) (string, int) {
	var p Parser
	n := 0
	for len(data) > 0 {
		k := min(next(), len(data))
		n++
		if p.Feed(data[:k]) {
			break
		}
		data = data[k:]
	}
	p.Close()
	f, ok := p.Frames()
	if !ok {
		return "", n
	}
	return f.String(), n
}

// TestParseH2: a first flight gives its fingerprint whatever the reads'
// sizes (one byte at a time, random, whole), with CONTINUATION frames and
// padding, and PRIORITY frames and PRIORITY_UPDATE are written as the
// Akamai format writes them.
func TestParseH2(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func() flight
		want string
	}{
		{"chrome", func() flight { return chromeFlight }, chromePrint},
		{"continuation", func() flight { f := chromeFlight; f.fragment = 7; return f }, chromePrint},
		{"padded", func() flight { f := chromeFlight; f.pad = 9; return f }, chromePrint},
		{"go", func() flight {
			return flight{settings: []http2.Setting{{ID: 2, Val: 0}, {ID: 4, Val: 4194304}, {ID: 5, Val: 16384}, {ID: 6, Val: 10485760}}, window: 1073741824,
				headers: [][2]string{{":authority", "x"}, {":method", "GET"}, {":path", "/"}, {":scheme", "https"}, {"user-agent", "Go"}}}
		}, "h2:2:0;4:4194304;5:16384;6:10485760|1073741824|0|a,m,p,s|0"},
		{"old firefox", func() flight {
			return flight{settings: []http2.Setting{{ID: 1, Val: 65536}, {ID: 4, Val: 131072}, {ID: 5, Val: 16384}}, window: 12517377,
				prios: []http2.PriorityFrame{{FrameHeader: http2.FrameHeader{StreamID: 3}, PriorityParam: http2.PriorityParam{Weight: 200}},
					{FrameHeader: http2.FrameHeader{StreamID: 9}, PriorityParam: http2.PriorityParam{StreamDep: 7}}},
				headers: [][2]string{{":method", "GET"}, {":path", "/"}, {":authority", "x"}, {":scheme", "https"}},
				hprio:   &http2.PriorityParam{StreamDep: 13, Weight: 41}}
		}, "h2:1:65536;4:131072;5:16384|12517377|3:0:0:201,9:0:7:1|m,p,a,s|0:13:42"},
	} {
		data := c.f().bytes(t)
		for _, split := range []struct {
			name string
			next func() int
		}{{"whole", func() int { return len(data) }}, {"bytes", func() int { return 1 }}, {"random", func() int { return 1 + rand.IntN(40) }}} {
			if got, _ := feed(data, split.next); got != c.want {
				t.Errorf("%s, %s: %q, want %q", c.name, split.name, got, c.want)
			}
		}
	}
}

// TestParseH1: the request line's version and the names in order and case,
// in any split; a leading empty line is read past; bare LF ends lines.
func TestParseH1(t *testing.T) {
	req := "GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nsec-ch-ua: \"C\"\r\nUser-Agent: Mozilla/5.0\r\n X-folded: on\r\nAccept: */*\r\n\r\nGET /next HTTP/1.1\r\n"
	want := "h1:1:Host,Connection,sec-ch-ua,User-Agent,Accept"
	for _, data := range []string{req, "\r\n" + req, strings.ReplaceAll(req, "\r\n", "\n")} {
		for _, k := range []int{1, 3, 1000} {
			if got, _ := feed([]byte(data), func() int { return k }); got != want {
				t.Errorf("chunks of %d of %q: %q, want %q", k, data[:20], got, want)
			}
		}
	}
	if got, _ := feed([]byte("GET / HTTP/1.0\r\nUser-Agent: a\r\n\r\n"), func() int { return 99 }); got != "h1:0:User-Agent" {
		t.Errorf("HTTP/1.0: %q", got)
	}
}

// TestParseBad: input that breaks a rule, never ends within the budget, or
// ends too soon makes no fingerprint, and the parser stops reading at the
// budget at the latest.
func TestParseBad(t *testing.T) {
	frame := func(typ, flags byte, stream uint32, payload []byte) []byte {
		h := []byte{byte(len(payload) >> 16), byte(len(payload) >> 8), byte(len(payload)), typ, flags, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(h[5:], stream)
		return append(h, payload...)
	}
	chrome := chromeFlight.bytes(t)
	endless := []byte(http2.ClientPreface)
	endless = append(endless, frame(frameHeaders, 0, 1, []byte{0x82})...) // :method GET, no END_HEADERS
	for len(endless) < 4*Budget {
		endless = append(endless, frame(frameContinuation, 0, 1, []byte{0x84})...)
	}
	manySettings := []byte(http2.ClientPreface)
	for len(manySettings) < 2*Budget {
		manySettings = append(manySettings, frame(frameSettings, 0, 0, make([]byte, 6))...)
	}
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"truncated", chrome[:len(chrome)-3]},
		{"huge frame", append([]byte(http2.ClientPreface), frame(frameHeaders, flagEndHeaders, 1, make([]byte, Budget+1))[:30]...)},
		{"endless continuation", endless},
		{"settings flood", manySettings},
		{"settings of 5 bytes", append([]byte(http2.ClientPreface), frame(frameSettings, 0, 0, make([]byte, 5))...)},
		{"headers on stream 0", append([]byte(http2.ClientPreface), frame(frameHeaders, flagEndHeaders, 0, []byte{0x82})...)},
		{"continuation first", append([]byte(http2.ClientPreface), frame(frameContinuation, flagEndHeaders, 1, []byte{0x82})...)},
		{"bad hpack", append([]byte(http2.ClientPreface), frame(frameHeaders, flagEndHeaders, 1, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})...)},
		{"pseudo after regular", append([]byte(http2.ClientPreface), frame(frameHeaders, flagEndHeaders, 1, []byte{0x40, 1, 'x', 1, 'y', 0x82})...)},
		{"padding too long", append([]byte(http2.ClientPreface), frame(frameHeaders, flagEndHeaders|flagPadded, 1, []byte{9, 0x82})...)},
		{"h1 endless header", append([]byte("GET / HTTP/1.1\r\nHost: x\r\nCookie: "), bytes.Repeat([]byte("a"), 2*Budget)...)},
		{"h1 no colon", []byte("GET / HTTP/1.1\r\nHost x\r\n\r\n")},
		{"h1 bad request line", []byte("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n")},
		{"h1 too many fields", []byte("GET / HTTP/1.1\r\n" + strings.Repeat("A: b\r\n", maxNames+1) + "\r\n")},
	} {
		start := time.Now()
		got, feeds := feed(c.data, func() int { return 1 + rand.IntN(500) })
		if got != "" {
			t.Errorf("%s: fingerprint %q, want none", c.name, got)
		}
		var p Parser
		for range 2 * len(c.data) / 100 {
			p.Feed(c.data[:min(100, len(c.data))])
		}
		if p.n > Budget {
			t.Errorf("%s: read %d bytes, past the budget", c.name, p.n)
		}
		t.Logf("%s: %d bytes in %d reads, %v", c.name, len(c.data), feeds, time.Since(start))
	}
}

// TestParseAllocs: a known client's HTTP/1.1 connection costs its parser
// no allocation beyond its names; the Parser is reused.
func TestParseReuse(t *testing.T) {
	p := parsers.get()
	p.Feed([]byte("GET / HTTP/1.1\r\nHost: x\r\n"))
	parsers.put(p)
	p = parsers.get()
	if p.Feed(chromeFlight.bytes(t)); true {
		f, ok := p.Frames()
		if !ok || f.String() != chromePrint {
			t.Errorf("a reused parser: %q %v", f.String(), ok)
		}
	}
	parsers.put(p)
}

// FuzzParse: no input panics, reads past the budget or takes more than a
// pass over it; a fingerprint is made only of input that ended its first
// request, and it is the same in any split.
func FuzzParse(f *testing.F) {
	f.Add(chromeFlight.bytes(f), 7)
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: y\r\n\r\n"), 3)
	f.Add([]byte(http2.ClientPreface+"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x01\x00\x00\x10\x00"), 1)
	cont := chromeFlight
	cont.fragment = 3
	f.Add(cont.bytes(f), 11)
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		chunk = 1 + abs(chunk)%64
		whole, _ := feed(data, func() int { return len(data) + 1 })
		split, _ := feed(data, func() int { return chunk })
		if whole != split {
			t.Fatalf("whole %q, in chunks of %d %q", whole, chunk, split)
		}
		if whole != "" {
			Lookup(whole)
			Shape(whole)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
