package framing

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"sync"

	"golang.org/x/net/http2/hpack"
)

// Budget is the most bytes of a connection that a Parser reads. A
// client's first request's headers come within it (a browser's first
// HTTP/2 flight is under 2 KiB, an HTTP/1.1 request with cookies a few);
// a connection whose first request ends later has no fingerprint.
const Budget = 16 << 10

// The most of each kind of thing recorded; more makes no fingerprint.
const (
	maxSettings   = 24 // SETTINGS parameters before the first HEADERS
	maxPriorities = 16 // PRIORITY frames before it
	maxNames      = 64 // header fields of the first request
	maxFrames     = 64 // frames before the end of the first HEADERS block
)

// preface is HTTP/2's client connection preface (RFC 9113 section 3.4).
const preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// HTTP/2 frame types and flags (RFC 9113 section 6, RFC 9218 section 7.1).
const (
	frameHeaders        = 0x1
	framePriority       = 0x2
	frameSettings       = 0x4
	frameWindowUpdate   = 0x8
	frameContinuation   = 0x9
	framePriorityUpdate = 0x10

	flagAck        = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20
)

// Setting is one HTTP/2 or HTTP/3 SETTINGS parameter.
type Setting struct {
	ID    uint64
	Value uint64
}

// Priority is an HTTP/2 priority (RFC 7540 section 5.3): of a PRIORITY
// frame, or of a HEADERS frame with the PRIORITY flag. Weight is the
// value sent plus one (1 to 256), as the Akamai fingerprint writes it.
type Priority struct {
	Stream    uint32
	Exclusive bool
	DependsOn uint32
	Weight    int
}

// Frames is what a client sent on a connection before and with its first
// request: for HTTP/2 the frames up to the end of the first HEADERS block,
// for HTTP/1.1 the request line's version and the header fields, for
// HTTP/3 its SETTINGS. Its String is the fingerprint.
type Frames struct {
	Proto Proto
	// Settings are the SETTINGS parameters in the order sent (HTTP/3: by
	// identifier, GREASE ones as 0x21).
	Settings []Setting
	// WindowUpdate is the increment of the first connection WINDOW_UPDATE
	// before the first HEADERS, 0 when none.
	WindowUpdate uint32
	// Priorities are the PRIORITY frames before the first HEADERS.
	Priorities []Priority
	// HeadersPriority is the priority of the first HEADERS frame (Weight 0:
	// none).
	HeadersPriority Priority
	// PriorityUpdates counts the PRIORITY_UPDATE frames (RFC 9218) before
	// the end of the first HEADERS block.
	PriorityUpdates int
	// Pseudo is the order of the first request's pseudo-header fields, a
	// letter each: m(ethod), a(uthority), s(cheme), p(ath), r (protocol),
	// x (another).
	Pseudo string
	// Names are the first request's header field names in the order sent
	// (HTTP/1.1: in the case sent; HTTP/2: the regular fields, lower case).
	Names []string
	// Version is HTTP/1.x's request-line version ("HTTP/1.1").
	Version string
}

// Proto is the HTTP version of a connection's fingerprint.
type Proto uint8

// The HTTP versions.
const (
	NoProto Proto = iota
	H1
	H2
	H3
)

var protoNames = [...]string{NoProto: "none", H1: "h1", H2: "h2", H3: "h3"}

// String returns "h1", "h2", "h3" or "none".
func (p Proto) String() string {
	if int(p) < len(protoNames) {
		return protoNames[p]
	}
	return "none"
}

// stage is where a Parser is.
type stage uint8

const (
	sniff     stage = iota // the preface or a request line
	h1Request              // HTTP/1.x: the request line
	h1Headers              // HTTP/1.x: header lines
	h2Frames               // HTTP/2: frames
	done                   // a fingerprint, or none
)

// Parser reads the first bytes of a decrypted connection and makes their
// Frames. Feed it what the connection reads, in order, until it reports
// done; its work is bounded by Budget. The zero Parser is ready. A Parser
// is not safe for concurrent use.
type Parser struct {
	stage   stage
	n       int     // bytes fed
	pending *[]byte // the bytes of an incomplete line or frame (pooled)
	f       Frames
	ok      bool // the fingerprint is complete
	// HTTP/2: the stream whose header block is open (0: none), the frames
	// read, the HPACK decoder of the first block.
	block   uint32
	frames  int
	dec     *hpack.Decoder
	regular bool // a regular field was decoded: no pseudo-header may follow
	bad     bool // the header block broke a rule
	// HTTP/1.x: how much of the pending line is known to hold no line
	// feed, so that a line that comes a byte at a time is scanned once.
	scanned int
}

// buffers hold the incomplete tails of connections being read.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// Feed reads the next bytes of the connection. It reports done once the
// first request's headers were read, the input broke a rule, or Budget
// bytes were fed; then Frames says what was read. It keeps no reference
// to p.
func (ps *Parser) Feed(p []byte) (finished bool) {
	if ps.stage == done {
		return true
	}
	over := false
	if ps.n+len(p) >= Budget {
		p, over = p[:Budget-ps.n], true
	}
	ps.n += len(p)
	data := p
	if ps.pending != nil {
		*ps.pending = append(*ps.pending, p...)
		data = *ps.pending
	}
	used := ps.parse(data)
	if ps.stage == done || over {
		ps.finish(ps.stage == done && ps.ok)
		return true
	}
	rest := data[used:]
	if ps.pending == nil {
		if len(rest) == 0 {
			return false
		}
		ps.pending = buffers.Get().(*[]byte)
		*ps.pending = append((*ps.pending)[:0], rest...)
	} else if used > 0 {
		*ps.pending = append((*ps.pending)[:0], rest...) // copy moves down: rest is a tail of the same array
	}
	return false
}

// Done reports that the reading ended.
func (ps *Parser) Done() bool { return ps.stage == done }

// Close ends the reading (the connection was closed or failed); an
// incomplete request has no fingerprint.
func (ps *Parser) Close() {
	if ps.stage != done {
		ps.finish(false)
	}
}

// Frames returns what was read, and whether it is complete: the first
// request's headers were read whole and broke no rule. Only complete
// Frames make a fingerprint.
func (ps *Parser) Frames() (*Frames, bool) { return &ps.f, ps.ok }

func (ps *Parser) finish(ok bool) {
	ps.stage, ps.ok = done, ok && !ps.bad
	if ps.pending != nil {
		if cap(*ps.pending) <= 2*Budget {
			*ps.pending = (*ps.pending)[:0]
			buffers.Put(ps.pending)
		}
		ps.pending = nil
	}
	ps.dec = nil
}

// parse reads what it can of data and returns how much it used; an
// incomplete line or frame is left for the next Feed.
func (ps *Parser) parse(data []byte) int {
	used := 0
	if ps.stage == sniff {
		k := min(len(data), len(preface))
		if string(data[:k]) == preface[:k] {
			if k < len(preface) {
				return 0
			}
			ps.stage, ps.f.Proto, used = h2Frames, H2, len(preface)
		} else {
			ps.stage, ps.f.Proto = h1Request, H1
		}
	}
	switch ps.stage {
	case h1Request, h1Headers:
		return used + ps.parseH1(data[used:])
	case h2Frames:
		return used + ps.parseH2(data[used:])
	}
	return used
}

// parseH1 reads the request line and header lines (RFC 9112 sections 3
// and 5): a field's name is what comes before its colon, as sent.
func (ps *Parser) parseH1(data []byte) int {
	used := 0
	for ps.stage != done {
		from := min(ps.scanned, len(data)-used)
		i := bytes.IndexByte(data[used+from:], '\n')
		if i < 0 {
			ps.scanned = len(data) - used
			return used
		}
		i += from
		ps.scanned = 0
		line := data[used : used+i]
		used += i + 1
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if ps.stage == h1Request {
			if len(line) == 0 && ps.frames < 2 {
				ps.frames++ // RFC 9112 section 2.2: a leading empty line is ignored
				continue
			}
			sp := bytes.LastIndexByte(line, ' ')
			if sp < 0 || bytes.IndexByte(line, ' ') == sp || !bytes.HasPrefix(line[sp+1:], []byte("HTTP/1.")) || len(line)-sp-1 != 8 {
				ps.bad = true
				ps.stage = done
				return used
			}
			ps.f.Version = string(line[sp+1:])
			ps.stage = h1Headers
			continue
		}
		if len(line) == 0 {
			ps.ok, ps.stage = true, done
			return used
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue // an obsolete line folding: the field goes on
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || len(ps.f.Names) == maxNames {
			ps.bad, ps.stage = true, done
			return used
		}
		ps.f.Names = append(ps.f.Names, string(line[:colon]))
	}
	return used
}

// parseH2 reads frames (RFC 9113 section 4) up to the end of the first
// HEADERS block: SETTINGS, the connection's WINDOW_UPDATE, PRIORITY and
// PRIORITY_UPDATE frames are recorded, and the block is HPACK-decoded for
// the order of its fields.
func (ps *Parser) parseH2(data []byte) int {
	used := 0
	for ps.stage != done && len(data)-used >= 9 {
		h := data[used:]
		length := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		typ, flags := h[3], h[4]
		stream := binary.BigEndian.Uint32(h[5:9]) & 0x7fffffff
		if length > Budget || ps.frames == maxFrames {
			ps.bad, ps.stage = true, done // it cannot end within the budget
			return used
		}
		if len(h)-9 < length {
			return used
		}
		payload := h[9 : 9+length]
		used += 9 + length
		ps.frames++
		if ps.block != 0 && (typ != frameContinuation || stream != ps.block) {
			ps.bad, ps.stage = true, done // RFC 9113 section 6.10
			return used
		}
		switch typ {
		case frameSettings:
			if flags&flagAck != 0 || stream != 0 {
				continue
			}
			if length%6 != 0 || len(ps.f.Settings)+length/6 > maxSettings {
				ps.bad, ps.stage = true, done
				return used
			}
			for i := 0; i < length; i += 6 {
				ps.f.Settings = append(ps.f.Settings, Setting{ID: uint64(binary.BigEndian.Uint16(payload[i:])), Value: uint64(binary.BigEndian.Uint32(payload[i+2:]))})
			}
		case frameWindowUpdate:
			if stream == 0 && length == 4 && ps.f.WindowUpdate == 0 {
				ps.f.WindowUpdate = binary.BigEndian.Uint32(payload) & 0x7fffffff
			}
		case framePriority:
			if length != 5 || len(ps.f.Priorities) == maxPriorities {
				ps.bad, ps.stage = true, done
				return used
			}
			p := readPriority(payload)
			p.Stream = stream
			ps.f.Priorities = append(ps.f.Priorities, p)
		case framePriorityUpdate:
			ps.f.PriorityUpdates++
		case frameHeaders:
			if stream == 0 {
				ps.bad, ps.stage = true, done
				return used
			}
			frag := payload
			pad := 0
			if flags&flagPadded != 0 {
				if len(frag) < 1 {
					ps.bad, ps.stage = true, done
					return used
				}
				pad, frag = int(frag[0]), frag[1:]
			}
			if flags&flagPriority != 0 {
				if len(frag) < 5 {
					ps.bad, ps.stage = true, done
					return used
				}
				ps.f.HeadersPriority = readPriority(frag)
				ps.f.HeadersPriority.Stream = stream
				frag = frag[5:]
			}
			if pad > len(frag) {
				ps.bad, ps.stage = true, done
				return used
			}
			ps.block = stream
			ps.decode(frag[:len(frag)-pad], flags&flagEndHeaders != 0)
		case frameContinuation:
			if ps.block == 0 {
				ps.bad, ps.stage = true, done
				return used
			}
			ps.decode(payload, flags&flagEndHeaders != 0)
		}
	}
	return used
}

// readPriority reads the 5 bytes of a priority: E, the stream dependency,
// the weight.
func readPriority(b []byte) Priority {
	dep := binary.BigEndian.Uint32(b)
	return Priority{Exclusive: dep>>31 == 1, DependsOn: dep & 0x7fffffff, Weight: int(b[4]) + 1}
}

// decode HPACK-decodes a fragment of the first header block; end closes
// the block.
func (ps *Parser) decode(frag []byte, end bool) {
	if ps.dec == nil {
		ps.dec = hpack.NewDecoder(4096, ps.field)
		ps.dec.SetMaxStringLength(Budget)
	}
	if _, err := ps.dec.Write(frag); err != nil {
		ps.bad, ps.stage = true, done
		return
	}
	if end {
		if err := ps.dec.Close(); err != nil {
			ps.bad = true
		}
		ps.ok, ps.stage = true, done
	}
}

// field records one decoded header field.
func (ps *Parser) field(f hpack.HeaderField) {
	if !f.IsPseudo() {
		ps.regular = true
		if len(ps.f.Names) == maxNames {
			ps.bad = true
			return
		}
		ps.f.Names = append(ps.f.Names, f.Name)
		return
	}
	if ps.regular || len(ps.f.Pseudo) >= 8 {
		ps.bad = true // RFC 9113 section 8.3: pseudo-header fields come first
		return
	}
	c := byte('x')
	switch f.Name {
	case ":method":
		c = 'm'
	case ":authority":
		c = 'a'
	case ":scheme":
		c = 's'
	case ":path":
		c = 'p'
	case ":protocol":
		c = 'r'
	}
	ps.f.Pseudo += string(c)
}

// String returns the fingerprint of the frames:
//
//   - HTTP/2, the Akamai format with "h2:" before it: the SETTINGS as
//     id:value joined with ";", "|", the connection WINDOW_UPDATE's
//     increment (0 for none), "|", the PRIORITY frames as
//     stream:exclusive:depends-on:weight joined with "," (0 for none), "|",
//     the pseudo-header order (m,a,s,p); then "|" and the first HEADERS
//     frame's priority as exclusive:depends-on:weight (0 for none), with
//     ";u" when PRIORITY_UPDATE frames came first. Chrome 143:
//     h2:1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p|1:0:256.
//   - HTTP/1.1: "h1:", the version's minor digit, ":", and the header field
//     names in the order and case sent, joined with ",".
//   - HTTP/3: "h3:" and the SETTINGS as id:value in hex by identifier,
//     joined with ";" (GREASE identifiers as 21 with no value).
func (f *Frames) String() string { return string(f.AppendText(make([]byte, 0, 128))) }

// AppendText appends the fingerprint (String) to b.
func (f *Frames) AppendText(b []byte) []byte {
	b = append(b, f.Proto.String()...)
	b = append(b, ':')
	switch f.Proto {
	case H1:
		if len(f.Version) == 8 {
			b = append(b, f.Version[7])
		}
		b = append(b, ':')
		for i, n := range f.Names {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, n...)
		}
	case H2:
		for i, s := range f.Settings {
			if i > 0 {
				b = append(b, ';')
			}
			b = strconv.AppendUint(b, s.ID, 10)
			b = append(b, ':')
			b = strconv.AppendUint(b, s.Value, 10)
		}
		b = append(b, '|')
		b = strconv.AppendUint(b, uint64(f.WindowUpdate), 10)
		b = append(b, '|')
		if len(f.Priorities) == 0 {
			b = append(b, '0')
		}
		for i, p := range f.Priorities {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendUint(b, uint64(p.Stream), 10)
			b = append(b, ':')
			b = appendPriority(b, p)
		}
		b = append(b, '|')
		for i := range len(f.Pseudo) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, f.Pseudo[i])
		}
		b = append(b, '|')
		if f.HeadersPriority.Weight == 0 {
			b = append(b, '0')
		} else {
			b = appendPriority(b, f.HeadersPriority)
		}
		if f.PriorityUpdates > 0 {
			b = append(b, ";u"...)
		}
	case H3:
		for i, s := range f.Settings {
			if i > 0 {
				b = append(b, ';')
			}
			b = strconv.AppendUint(b, s.ID, 16)
			if s.ID != greaseSetting {
				b = append(b, ':')
				b = strconv.AppendUint(b, s.Value, 16)
			}
		}
	}
	return b
}

func appendPriority(b []byte, p Priority) []byte {
	if p.Exclusive {
		b = append(b, '1')
	} else {
		b = append(b, '0')
	}
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(p.DependsOn), 10)
	b = append(b, ':')
	return strconv.AppendInt(b, int64(p.Weight), 10)
}

// parsers are the Parsers of connections being read.
var parsers = parserPool{sync.Pool{New: func() any { return new(Parser) }}}

type parserPool struct{ sync.Pool }

func (pp *parserPool) get() *Parser { return pp.Get().(*Parser) }

func (pp *parserPool) put(p *Parser) {
	p.Reset()
	pp.Put(p)
}

// Reset makes the Parser ready for another connection; the Frames it
// returned are no longer valid.
func (ps *Parser) Reset() {
	if ps.pending != nil {
		ps.finish(false)
	}
	f := ps.f
	*ps = Parser{}
	ps.f = Frames{Settings: f.Settings[:0], Priorities: f.Priorities[:0], Names: f.Names[:0]}
}
