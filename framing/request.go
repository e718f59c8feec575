package framing

import (
	"net"
	"net/http"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// Wrap returns ln with its connections read through Conns (a Listener),
// or ln itself when it is one already: a second wrapper of the same
// listener changes nothing.
func Wrap(ln net.Listener, conns *Conns) net.Listener {
	if _, ok := ln.(*Listener); ok {
		return ln
	}
	return &Listener{Listener: ln, Conns: conns}
}

// H3Wait is how long a connection's first HTTP/3 request waits for the
// client's SETTINGS. A client sends them on its control stream as it
// opens the connection (RFC 9114 section 6.2.1), in the packets of its
// first request, but quic-go reads that stream on a goroutine of its own,
// which may come second; a client that withholds them loses this much
// time, and its request has no fingerprint.
const H3Wait = 25 * time.Millisecond

// settled reports that the SETTINGS came, waiting up to H3Wait (a timer
// only when they have not come yet).
func settled(received <-chan struct{}, r *http.Request) bool {
	select {
	case <-received:
		return true
	default:
	}
	t := time.NewTimer(H3Wait)
	defer t.Stop()
	select {
	case <-received:
		return true
	case <-t.C:
	case <-r.Context().Done():
	}
	return false
}

// none is the Print of a request without a fingerprint.
var none = &Print{}

// Request returns the Print of a request's connection: over HTTP/3, of
// the client's SETTINGS as quic-go's server gives them through w (under
// any wrappers with an Unwrap method), once they have come (see H3Wait);
// else the one a Conn kept. A request without one gets the zero Print. It allocates
// nothing once the connection's first request was read.
func (c *Conns) Request(w http.ResponseWriter, r *http.Request) *Print {
	if r.ProtoMajor != 3 {
		if p := c.Get(r.RemoteAddr); p != nil {
			return p
		}
		return none
	}
	for range 8 {
		if s, ok := w.(http3.Settingser); ok {
			if !settled(s.ReceivedSettings(), r) {
				return none
			}
			st := s.Settings()
			return c.H3(r.RemoteAddr, st.Other, st.EnableExtendedConnect, st.EnableDatagrams)
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	return none
}
