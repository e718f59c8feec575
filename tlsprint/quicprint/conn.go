package quicprint

import (
	"net"
	"net/netip"
	"syscall"
)

// Wrap returns a net.PacketConn that reads and writes through pc and
// passes each datagram it reads, with its address, to Received. A QUIC
// server (quic-go's Transport) then uses it in place of pc. It reads only
// the first byte of a datagram that starts with a short header, which is
// nearly every datagram of a connection after its handshake, and nothing
// of what is written. Wrapping a conn the Tracker already wraps returns it
// as it is.
//
// The conn is a plain net.PacketConn, whose reads and writes quic-go
// makes one datagram at a time: quic-go reads batches and sends with
// segmentation offload only from a *net.UDPConn, whose reads could not be
// seen. Its SetReadBuffer, SetWriteBuffer and SyscallConn are the
// socket's, so that quic-go still sizes the socket's buffers and sets
// Don't Fragment for its path MTU discovery.
func (t *Tracker) Wrap(pc net.PacketConn) net.PacketConn {
	switch c := pc.(type) {
	case *packetConn:
		if c.t == t {
			return pc
		}
	case *socketConn:
		if c.t == t {
			return pc
		}
	}
	c := &packetConn{PacketConn: pc, t: t}
	if s, ok := innermost(pc).(socket); ok {
		return &socketConn{packetConn: c, s: s}
	}
	return c
}

type packetConn struct {
	net.PacketConn
	t *Tracker
}

func (c *packetConn) ReadFrom(b []byte) (int, net.Addr, error) {
	n, addr, err := c.PacketConn.ReadFrom(b)
	if n > 0 && b[0]&0x80 != 0 {
		c.t.Received(b[:n], addr)
	}
	return n, addr, err
}

// socket is what quic-go sets on a UDP socket: its buffers, and Don't
// Fragment through the raw connection.
type socket interface {
	SetReadBuffer(int) error
	SetWriteBuffer(int) error
	SyscallConn() (syscall.RawConn, error)
}

// socketConn is a packetConn over a socket, whose options it sets.
type socketConn struct {
	*packetConn
	s socket
}

func (c *socketConn) SetReadBuffer(n int) error             { return c.s.SetReadBuffer(n) }
func (c *socketConn) SetWriteBuffer(n int) error            { return c.s.SetWriteBuffer(n) }
func (c *socketConn) SyscallConn() (syscall.RawConn, error) { return c.s.SyscallConn() }

// innermost returns the conn under pc, through the Unwrap methods of the
// wrappers between (Caddy's own).
func innermost(pc net.PacketConn) net.PacketConn {
	for range 8 {
		u, ok := pc.(interface{ Unwrap() net.PacketConn })
		if !ok {
			break
		}
		pc = u.Unwrap()
	}
	return pc
}

// addrPort returns a UDP address as an AddrPort, IPv4 unmapped.
func addrPort(a net.Addr) (netip.AddrPort, bool) {
	u, ok := a.(*net.UDPAddr)
	if !ok || u == nil {
		return netip.AddrPort{}, false
	}
	ap := u.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), ap.IsValid()
}
