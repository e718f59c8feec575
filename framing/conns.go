package framing

import (
	"hash/maphash"
	"sync/atomic"
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
// port, for the requests that come over it. It is a fixed table: a flood
// of connections replaces older entries and never grows it, and an entry
// that is gone (replaced, or forgotten when its connection closed) reads
// as no fingerprint, which is never evidence. Reads take no lock and
// allocate nothing.
type Conns struct {
	slots []atomic.Pointer[connEntry]
	mask  uint64
	seed  maphash.Seed
	seq   atomic.Uint64
}

// connEntry is one connection's entry.
type connEntry struct {
	addr  string // as net/http's Request.RemoteAddr gives it
	seq   uint64 // order of recording: the oldest of a bucket is replaced
	print *Print
	key   uint64 // HTTP/3: the digest of the settings Print was made of
}

// ways is the number of slots of a bucket: an entry is replaced only when
// the 4 slots of its bucket are taken.
const ways = 4

// NewConns returns a table of at least n slots (rounded up to a power of
// two, at least 4). An entry with a known fingerprint takes about 80
// bytes; one with an unknown fingerprint keeps its text too (at most a
// few hundred bytes), so a full table of 32,768 slots takes 3 MiB to
// about 12 MiB.
func NewConns(n int) *Conns {
	buckets := 1
	for buckets*ways < n {
		buckets <<= 1
	}
	return &Conns{slots: make([]atomic.Pointer[connEntry], buckets*ways), mask: uint64(buckets - 1), seed: maphash.MakeSeed()}
}

// Put keeps p for the connection from addr (its RemoteAddr's String),
// replacing what the address had.
func (c *Conns) Put(addr string, p *Print) { c.put(&connEntry{addr: addr, print: p}) }

func (c *Conns) put(e *connEntry) {
	e.seq = c.seq.Add(1)
	b := c.bucket(e.addr)
	victim := &b[0]
	for i := range b {
		if old := b[i].Load(); old == nil || old.addr == e.addr {
			victim = &b[i]
			if old != nil {
				break // its own entry first
			}
		} else if v := victim.Load(); v != nil && old.seq < v.seq {
			victim = &b[i]
		}
	}
	victim.Store(e)
}

// Get returns the Print kept for a connection, by the client's address and
// port as net/http gives them (http.Request.RemoteAddr), or nil.
func (c *Conns) Get(remoteAddr string) *Print {
	for i, b := 0, c.bucket(remoteAddr); i < ways; i++ {
		if e := b[i].Load(); e != nil && e.addr == remoteAddr {
			return e.print
		}
	}
	return nil
}

// Forget drops the entry of a closed connection.
func (c *Conns) Forget(addr string) {
	b := c.bucket(addr)
	for i := range b {
		if e := b[i].Load(); e != nil && e.addr == addr {
			b[i].CompareAndSwap(e, nil)
		}
	}
}

// Len returns the number of entries.
func (c *Conns) Len() int {
	n := 0
	for i := range c.slots {
		if c.slots[i].Load() != nil {
			n++
		}
	}
	return n
}

// Slots returns the table's size.
func (c *Conns) Slots() int { return len(c.slots) }

// bucket returns the slots an address may take, chosen by a keyed hash so
// that a client cannot aim its connections at another's bucket.
func (c *Conns) bucket(addr string) []atomic.Pointer[connEntry] {
	i := (maphash.String(c.seed, addr) & c.mask) * ways
	return c.slots[i : i+ways : i+ways]
}
