package caddymodule

import (
	"net"
	"slices"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/cli"
	"github.com/robotsguard/robotsguard/framing"
	"github.com/robotsguard/robotsguard/tlsprint/quicprint"
)

// robots_guard's two wrappers of a server's listeners see what its clients
// send before Caddy's HTTP servers do: the listener wrapper
// caddy.listeners.robots_guard (the framing of each TLS connection) and
// the packet conn wrapper caddy.packetconns.robots_guard_quic (the QUIC
// Initials of each HTTP/3 connection). Caddy sets up a server's wrappers
// before its routes, so the handler cannot add them as it adds its TLS
// matcher: in a Caddyfile, the robots_guard directive of a site block adds
// both to its server (caddyfile.go); a servers block of the global options
// replaces them with its own listener_wrappers and packet_conn_wrappers,
// and Caddy applies only the first servers block that matches a server, so
// that block names both; in JSON, the server's "listener_wrappers" and
// "packet_conn_wrappers". A server with TLS that lacks one says so once at
// start-up (checkWrappers).

func init() {
	caddy.RegisterModule(FramingWrapper{})
	caddy.RegisterModule(QUICWrapper{})
}

// framedConns holds the framing fingerprint of each connection, for every
// server and across reloads: 32,768 slots (3 to 12 MiB when full), which
// a flood of connections cannot grow (framing.Conns).
var framedConns = framing.NewConns(32768)

// initials holds the QUIC fingerprint of each HTTP/3 connection, for every
// server and across reloads: 16,384 entries (about 3 MiB when full) and
// 64 hellos in reassembly, which a flood of Initials cannot grow
// (quicprint.Tracker).
var initials = quicprint.NewTracker(16384)

// FramingWrapper is the listener wrapper caddy.listeners.robots_guard. It
// reads how each client's HTTP stack opens its connection and writes its
// first request (the framing fingerprint: HTTP/2 SETTINGS, window,
// priorities and pseudo-header order; HTTP/1.1 header order and case,
// package framing), for robots_guard's poser check; every byte passes
// through unchanged. It goes after the tls placeholder, as every wrapper
// does by default: servers { listener_wrappers { robots_guard } }.
type FramingWrapper struct{ noOptions }

// CaddyModule returns the Caddy module information.
func (FramingWrapper) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "caddy.listeners.robots_guard", New: func() caddy.Module { return new(FramingWrapper) }}
}

// Provision notes that the server being provisioned reads framing.
func (*FramingWrapper) Provision(ctx caddy.Context) error { return framed.on(ctx) }

// WrapListener wraps the server's listener (once, however many wrappers
// the server has).
func (*FramingWrapper) WrapListener(ln net.Listener) net.Listener {
	return framing.Wrap(ln, framedConns)
}

// QUICWrapper is the packet conn wrapper caddy.packetconns.robots_guard_quic.
// It reads the Initial packets of every QUIC connection of its server's
// HTTP/3 listeners before quic-go does, so that robots_guard can judge the
// client's QUIC transport parameters:
// servers { packet_conn_wrappers { robots_guard_quic } }.
type QUICWrapper struct{ noOptions }

// CaddyModule returns the Caddy module information.
func (QUICWrapper) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "caddy.packetconns.robots_guard_quic", New: func() caddy.Module { return new(QUICWrapper) }}
}

// Provision notes the server the wrapper is configured on.
func (*QUICWrapper) Provision(ctx caddy.Context) error { return wrapped.on(ctx) }

// WrapPacketConn returns the conn that reads its Initials; a conn it
// already wraps (the wrapper listed twice) is returned as it is.
func (*QUICWrapper) WrapPacketConn(pc net.PacketConn) net.PacketConn { return initials.Wrap(pc) }

// noOptions is the Caddyfile of a wrapper that takes no options.
type noOptions struct{}

// UnmarshalCaddyfile reads the wrapper's name alone.
func (noOptions) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	if d.Next() && d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

// wrappedServers holds, while their config runs, the servers a wrapper is
// on (true: Caddy provisions a server's wrappers before its routes) and
// those already told that it is not (false).
type wrappedServers struct{ sync.Map }

// framed and wrapped are the servers of the listener wrapper and of the
// QUIC wrapper.
var framed, wrapped wrappedServers

// on notes that the wrapper is on the server being provisioned.
func (s *wrappedServers) on(ctx caddy.Context) error {
	srv := ctx.Value(caddyhttp.ServerCtxKey)
	s.Store(srv, true)
	ctx.OnCancel(func() { s.Delete(srv) })
	return nil
}

// missing reports, once per server and config, that the wrapper is not on
// srv.
func (s *wrappedServers) missing(ctx caddy.Context, srv *caddyhttp.Server) bool {
	if _, seen := s.LoadOrStore(srv, false); seen {
		return false
	}
	ctx.OnCancel(func() { s.Delete(srv) })
	return true
}

// checkWrappers says at start-up, once per server, that robots_guard
// guards a server with TLS that lacks a wrapper: without the listener
// wrapper its HTTP/1.1 and HTTP/2 clients' framing is not read (HTTP/3's
// comes from quic-go), and, when it speaks HTTP/3 (quic on), without the
// QUIC wrapper its HTTP/3 clients' transport parameters are not judged.
// Over plain HTTP neither is read, so neither is missing.
func (h *Handler) checkWrappers(ctx caddy.Context) {
	srv := h.server
	if srv == nil || len(srv.TLSConnPolicies) == 0 {
		return
	}
	if framed.missing(ctx, srv) {
		h.opsLogger.Warn(cli.FramingOff, zap.Strings("listen", srv.Listen), zap.String("fix", cli.WrappersFix))
	}
	if h.QUIC != "off" && slices.Contains(srv.Protocols, "h3") && wrapped.missing(ctx, srv) {
		h.opsLogger.Warn(cli.QUICOff, zap.Strings("listen", srv.Listen), zap.String("fix", cli.WrappersFix))
	}
}

// Interface guards
var (
	_ caddy.Provisioner       = (*FramingWrapper)(nil)
	_ caddy.ListenerWrapper   = (*FramingWrapper)(nil)
	_ caddyfile.Unmarshaler   = (*FramingWrapper)(nil)
	_ caddy.Provisioner       = (*QUICWrapper)(nil)
	_ caddy.PacketConnWrapper = (*QUICWrapper)(nil)
	_ caddyfile.Unmarshaler   = (*QUICWrapper)(nil)
)
