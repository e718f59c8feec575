package caddymodule

import (
	"net"
	"net/http"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/cli"
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/framing"
)

func init() {
	caddy.RegisterModule(FramingWrapper{})
}

// framedConns holds the framing fingerprint of each connection, for every
// server and across reloads: 32,768 slots (3 to 12 MiB when full), which
// a flood of connections cannot grow (framing.Conns).
var framedConns = framing.NewConns(32768)

// framed maps each server of the loaded configs that has the wrapper to
// true, and one whose handler said at start-up that it has none to false.
var framed sync.Map // *caddyhttp.Server -> bool

// FramingWrapper is the listener wrapper caddy.listeners.robots_guard. It
// reads how each client's HTTP stack opens its connection and writes its
// first request (the framing fingerprint: HTTP/2 SETTINGS, window,
// priorities and pseudo-header order; HTTP/1.1 header order and case,
// package framing), for robots_guard's poser check; every byte passes
// through unchanged. It goes after the tls placeholder, as every wrapper
// does by default. The Caddyfile's robots_guard directive adds it to its
// server; a global servers block's listener_wrappers replace what
// directives add, so name it there: servers { listener_wrappers {
// robots_guard } }.
type FramingWrapper struct{}

// CaddyModule returns the Caddy module information.
func (FramingWrapper) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "caddy.listeners.robots_guard", New: func() caddy.Module { return new(FramingWrapper) }}
}

// Provision notes that the server being provisioned reads framing.
func (*FramingWrapper) Provision(ctx caddy.Context) error {
	if srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok {
		framed.Store(srv, true)
		ctx.OnCancel(func() { framed.Delete(srv) })
	}
	return nil
}

// WrapListener wraps the server's listener (once, however many wrappers
// the server has).
func (*FramingWrapper) WrapListener(ln net.Listener) net.Listener {
	return framing.Wrap(ln, framedConns)
}

// UnmarshalCaddyfile reads "robots_guard", which takes no options.
func (*FramingWrapper) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	if d.Next() && d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

// frameConnections says at start-up, once per server, when the server
// being provisioned has no robots_guard listener wrapper: its HTTP/1.1 and
// HTTP/2 clients then have no framing fingerprint (HTTP/3's comes from
// quic-go). Listener wrappers are provisioned before the routes.
func (h *Handler) frameConnections(ctx caddy.Context) {
	srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if _, seen := framed.LoadOrStore(srv, false); ok && !seen {
		h.opsLogger.Warn(cli.FramingOff, zap.String("server", srv.Name()), zap.String("fix", cli.FramingFix))
		ctx.OnCancel(func() { framed.Delete(srv) })
	}
}

// requestFraming returns the framing fingerprint of the request's
// connection and what the table says of its stack; none for a request
// from a trusted proxy or over plain HTTP, whose connection is not the
// client's or whose framing nothing judges. It allocates nothing once the
// connection's first request was read.
func requestFraming(w http.ResponseWriter, r *http.Request) (string, evidence.Framing) {
	if trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool); r.TLS == nil || trusted {
		return "", evidence.Framing{}
	}
	p := framedConns.Request(w, r)
	return p.Text, evidence.Framing(p.Stack)
}

// Interface guards
var (
	_ caddy.Provisioner     = (*FramingWrapper)(nil)
	_ caddy.ListenerWrapper = (*FramingWrapper)(nil)
	_ caddyfile.Unmarshaler = (*FramingWrapper)(nil)
)
