package framing

import (
	"hash/maphash"

	"github.com/robotsguard/robotsguard/internal/conntable"
)

// Print is a connection's framing fingerprint and what the table says of
// the stack that sent it. The zero Print is no fingerprint.
type Print struct {
	// Text is the fingerprint (Frames.String).
	Text string
	// Proto is the HTTP version it was read from.
	Proto Proto
	// Stack is what the table says of it.
	Stack Stack
}

// Conns remembers each connection's Print by the client's address and
// port, for the requests that come over it: a fixed table
// (internal/conntable), where a flood of connections replaces older
// entries and never grows it, and an entry that is gone (replaced, or
// forgotten when its connection closed) reads as no fingerprint, which is
// never evidence. Reads take no lock and allocate nothing.
type Conns struct {
	t *conntable.Table[string, connEntry] // by the address as net/http's Request.RemoteAddr gives it
}

// connEntry is one connection's entry.
type connEntry struct {
	print *Print
	key   uint64 // HTTP/3: the digest of the settings Print was made of
}

// NewConns returns a table of at least n slots (rounded up to a power of
// two, at least 4). An entry with a known fingerprint takes about 80
// bytes; one with an unknown fingerprint keeps its text too (at most a
// few hundred bytes), so a full table of 32,768 slots takes 3 MiB to
// about 12 MiB.
func NewConns(n int) *Conns {
	seed := maphash.MakeSeed()
	return &Conns{conntable.New[string, connEntry](n, func(addr string) uint64 { return maphash.String(seed, addr) })}
}

// Put keeps p for the connection from addr (its RemoteAddr's String),
// replacing what the address had.
func (c *Conns) Put(addr string, p *Print) { c.t.Put(addr, connEntry{print: p}) }

// Get returns the Print kept for a connection, by the client's address and
// port as net/http gives them (http.Request.RemoteAddr), or nil.
func (c *Conns) Get(remoteAddr string) *Print {
	e, _ := c.t.Get(remoteAddr)
	return e.print
}

// Forget drops the entry of a closed connection.
func (c *Conns) Forget(addr string) { c.t.Forget(addr) }

// Len returns the number of entries.
func (c *Conns) Len() int { return c.t.Len() }

// Slots returns the table's size.
func (c *Conns) Slots() int { return c.t.Slots() }
