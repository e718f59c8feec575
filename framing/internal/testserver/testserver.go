// Package testserver serves HTTP/1.1 and HTTP/2 over the decrypted
// connections of a framing.Listener as Caddy does: the connection's
// ConnectionState is hidden from net/http, which then reads the HTTP/2
// preface itself (unencrypted HTTP/2 over the TLS connection), and each
// request gets its TLS state back through the connection's context. For
// framing's tests and tools.
package testserver

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
)

// New returns a server of h over HTTP/1.1 and HTTP/2; serve it with
// Serve(ln) where ln is a framing.Listener of a TLS listener.
func New(h http.Handler) *Server {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	s := &Server{}
	s.Server = &http.Server{Protocols: p, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st, ok := r.Context().Value(stateKey{}).(func() tls.ConnectionState); ok && r.TLS == nil {
			cs := st()
			r.TLS = &cs
		}
		h.ServeHTTP(w, r)
	}), ConnContext: func(ctx context.Context, c net.Conn) context.Context {
		if h, ok := c.(hidden); ok {
			if st, ok := h.Conn.(interface{ ConnectionState() tls.ConnectionState }); ok {
				return context.WithValue(ctx, stateKey{}, st.ConnectionState)
			}
		}
		return ctx
	}}
	return s
}

// Server is an http.Server whose Serve hides the TLS state of the
// connections it accepts.
type Server struct{ *http.Server }

// Serve serves the connections of ln.
func (s *Server) Serve(ln net.Listener) error { return s.Server.Serve(hider{ln}) }

type stateKey struct{}

type hider struct{ net.Listener }

func (h hider) Accept() (net.Conn, error) {
	c, err := h.Listener.Accept()
	if err != nil {
		return c, err
	}
	return hidden{c}, nil
}

// hidden is a connection without its ConnectionState method.
type hidden struct{ net.Conn }
