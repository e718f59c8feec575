package tlsprint

import (
	"crypto/tls"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync/atomic"
)

// Conns remembers the fingerprint of each connection's handshake by the
// client's address and port, for the requests that come over it. It is a
// fixed table: a flood of handshakes replaces older entries and never grows
// it, and an entry that is gone (replaced, or forgotten when its connection
// closed) reads as unknown, which is never evidence. Reads take no lock and
// allocate nothing.
type Conns struct {
	slots []atomic.Pointer[handshake]
	mask  uint64 // buckets - 1
	seed  uint64
	seq   atomic.Uint64
}

// handshake is one connection's entry.
type handshake struct {
	addr  netip.AddrPort
	quic  bool
	seq   uint64 // order of recording: the oldest of a bucket is replaced
	ja4   string
	stack Stack
}

// ways is the number of slots of a bucket: an entry is replaced only when
// the 4 slots of its bucket are taken.
const ways = 4

// NewConns returns a table of at least n slots (rounded up to a power of
// two, at least 4). An entry takes about 150 bytes, so a full table of
// 32,768 slots about 5 MiB.
func NewConns(n int) *Conns {
	buckets := 1
	for buckets*ways < n {
		buckets <<= 1
	}
	return &Conns{slots: make([]atomic.Pointer[handshake], buckets*ways), mask: uint64(buckets - 1), seed: rand.Uint64()}
}

// Record computes the JA4 of a ClientHello and its stack's family
// (Classify) and keeps both for the hello's connection, replacing what the
// same address had.
// It returns them both (a QUIC hello's are kept for its connection too:
// quicprint.Tracker.PutJA4). A hello without a connection or address is
// not kept.
func (c *Conns) Record(info *tls.ClientHelloInfo) (string, Stack) {
	h := FromClientHello(info)
	ja4, stack := h.JA4(), Classify(h)
	if info.Conn == nil {
		return ja4, stack
	}
	addr, ok := addrPort(info.Conn.RemoteAddr())
	if !ok {
		return ja4, stack
	}
	e := &handshake{addr: addr, quic: h.QUIC, seq: c.seq.Add(1), ja4: ja4, stack: stack}
	b := c.bucket(addr)
	victim := &b[0]
	for i := range b {
		if old := b[i].Load(); old == nil || old.addr == addr && old.quic == e.quic {
			victim = &b[i]
			if old != nil {
				break // its own entry first
			}
		} else if v := victim.Load(); v != nil && old.seq < v.seq {
			victim = &b[i]
		}
	}
	victim.Store(e)
	return ja4, stack
}

// Get returns the JA4 and stack recorded for a connection: the client's
// address and port as net/http gives them (http.Request.RemoteAddr) and
// whether it is QUIC (HTTP/3). It returns "" and the zero Stack when none
// is recorded.
func (c *Conns) Get(remoteAddr string, quic bool) (string, Stack) {
	addr, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return "", Stack{}
	}
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	for i, b := 0, c.bucket(addr); i < ways; i++ {
		if e := b[i].Load(); e != nil && e.addr == addr && e.quic == quic {
			return e.ja4, e.stack
		}
	}
	return "", Stack{}
}

// Forget drops the entry of a closed connection, by its remote address.
func (c *Conns) Forget(remote net.Addr, quic bool) {
	addr, ok := addrPort(remote)
	if !ok {
		return
	}
	b := c.bucket(addr)
	for i := range b {
		if e := b[i].Load(); e != nil && e.addr == addr && e.quic == quic {
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

// addrPort returns a TCP or UDP address as net/http's RemoteAddr would
// read, IPv4 unmapped.
func addrPort(a net.Addr) (netip.AddrPort, bool) {
	var ap netip.AddrPort
	switch a := a.(type) {
	case *net.TCPAddr:
		ap = a.AddrPort()
	case *net.UDPAddr:
		ap = a.AddrPort()
	case nil:
		return ap, false
	default:
		var err error
		if ap, err = netip.ParseAddrPort(a.String()); err != nil {
			return ap, false
		}
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), ap.IsValid()
}

// bucket returns the slots an address may take, chosen by a keyed hash
// so that a client cannot aim its handshakes at another's bucket.
func (c *Conns) bucket(a netip.AddrPort) []atomic.Pointer[handshake] {
	b := a.Addr().As16()
	h := mix(c.seed ^ binary.LittleEndian.Uint64(b[:8]))
	h = mix(h ^ binary.LittleEndian.Uint64(b[8:]))
	h = mix(h ^ uint64(a.Port()))
	i := (h & c.mask) * ways
	return c.slots[i : i+ways : i+ways]
}

// mix is a 64-bit finaliser (wyhash's multiply-fold).
func mix(x uint64) uint64 {
	hi, lo := bits.Mul64(x^0xa0761d6478bd642f, 0xe7037ed1a0b428db)
	return hi ^ lo
}
