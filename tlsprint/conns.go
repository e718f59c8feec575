package tlsprint

import (
	"crypto/tls"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"net"
	"net/netip"

	"github.com/robotsguard/robotsguard/internal/conntable"
)

// Conns remembers the fingerprint of each connection's handshake by the
// client's address and port, for the requests that come over it: a fixed
// table (internal/conntable), where a flood of handshakes replaces older
// entries and never grows it, and an entry that is gone (replaced, or
// forgotten when its connection closed) reads as unknown, which is never
// evidence. Reads take no lock and allocate nothing.
type Conns struct {
	t *conntable.Table[connKey, handshake]
}

// connKey is a connection: its client's address and port, and whether it
// is QUIC.
type connKey struct {
	addr netip.AddrPort
	quic bool
}

// handshake is one connection's entry.
type handshake struct {
	ja4   string
	stack Stack
}

// NewConns returns a table of at least n slots (rounded up to a power of
// two, at least 4). An entry takes about 150 bytes, so a full table of
// 32,768 slots about 5 MiB.
func NewConns(n int) *Conns {
	seed := rand.Uint64()
	return &Conns{conntable.New[connKey, handshake](n, func(k connKey) uint64 { return hashAddr(seed, k.addr) })}
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
	c.t.Put(connKey{addr, h.QUIC}, handshake{ja4, stack})
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
	e, _ := c.t.Get(connKey{netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port()), quic})
	return e.ja4, e.stack
}

// Forget drops the entry of a closed connection, by its remote address.
func (c *Conns) Forget(remote net.Addr, quic bool) {
	if addr, ok := addrPort(remote); ok {
		c.t.Forget(connKey{addr, quic})
	}
}

// Len returns the number of entries.
func (c *Conns) Len() int { return c.t.Len() }

// Slots returns the table's size.
func (c *Conns) Slots() int { return c.t.Slots() }

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

// hashAddr is a keyed hash of an address and port: a client cannot aim
// its handshakes at another's bucket.
func hashAddr(seed uint64, a netip.AddrPort) uint64 {
	b := a.Addr().As16()
	h := mix(seed ^ binary.LittleEndian.Uint64(b[:8]))
	h = mix(h ^ binary.LittleEndian.Uint64(b[8:]))
	return mix(h ^ uint64(a.Port()))
}

// mix is a 64-bit finaliser (wyhash's multiply-fold).
func mix(x uint64) uint64 {
	hi, lo := bits.Mul64(x^0xa0761d6478bd642f, 0xe7037ed1a0b428db)
	return hi ^ lo
}
