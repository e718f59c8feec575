package framing

import (
	"crypto/tls"
	"net"
)

// Listener wraps a listener of decrypted connections (after TLS): each
// connection it accepts reads through a [Conn], whose fingerprint goes to
// Conns. A connection that is not TLS (no ConnectionState method) is
// passed on untouched unless Plain is set.
type Listener struct {
	net.Listener
	Conns *Conns
	// Plain also reads connections that are not TLS (tests, tools).
	Plain bool
}

// connectionStater is what a TLS connection, or a wrapper of one that
// keeps its state, offers (crypto/tls.Conn, Caddy's wrappers).
type connectionStater interface {
	ConnectionState() tls.ConnectionState
}

// Accept accepts the next connection and wraps it.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	if _, ok := c.(connectionStater); ok {
		return &tlsConn{*NewConn(c, l.Conns)}, nil
	}
	if l.Plain {
		return NewConn(c, l.Conns), nil
	}
	return c, nil
}

// Conn reads a connection's first request through a Parser and keeps its
// fingerprint in a Conns table once the request's headers were read;
// every byte passes through unchanged, and after the first request's
// headers (or Budget bytes) a Read costs one comparison more than the
// connection's own. Close forgets the connection's entry.
type Conn struct {
	net.Conn
	conns *Conns
	p     *Parser // nil once done
	addr  string  // the client's address and port, the key of its entry
	began bool
}

// NewConn wraps c; its fingerprint goes to conns. What conns kept for the
// client's address and port before (a closed connection whose entry a
// race left behind) is forgotten now.
func NewConn(c net.Conn, conns *Conns) *Conn {
	w := &Conn{Conn: c, conns: conns, addr: c.RemoteAddr().String()}
	conns.Forget(w.addr)
	return w
}

// Read reads from the connection and, until the first request's headers
// were read, feeds the bytes to the parser.
func (c *Conn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if c.p != nil || !c.began {
		c.observe(b[:n], err != nil)
	}
	return n, err
}

// observe feeds the parser; at its end it keeps the fingerprint.
func (c *Conn) observe(b []byte, failed bool) {
	if !c.began {
		c.began, c.p = true, parsers.get()
	}
	if len(b) > 0 && !c.p.Feed(b) && !failed {
		return
	}
	c.p.Close()
	if f, ok := c.p.Frames(); ok {
		c.conns.Put(c.addr, Builtin().Print(f))
	}
	parsers.put(c.p)
	c.p = nil
}

// Close forgets the connection's fingerprint and closes it.
func (c *Conn) Close() error {
	c.conns.Forget(c.addr)
	return c.Conn.Close()
}

// NetConn returns the wrapped connection.
func (c *Conn) NetConn() net.Conn { return c.Conn }

// tlsConn is a Conn of a TLS connection: it keeps the ConnectionState
// (and CloseWrite) that servers look for.
type tlsConn struct{ Conn }

// ConnectionState returns the wrapped connection's TLS state.
func (c *tlsConn) ConnectionState() tls.ConnectionState {
	return c.Conn.Conn.(connectionStater).ConnectionState()
}

// CloseWrite shuts down the writing side, where the wrapped connection can.
func (c *tlsConn) CloseWrite() error {
	if cw, ok := c.Conn.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
