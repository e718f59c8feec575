package caddymodule

import (
	"net"
	"slices"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/tlsprint/quicprint"
)

func init() {
	caddy.RegisterModule(QUICWrapper{})
}

// initials holds the QUIC fingerprint of each HTTP/3 connection, for every
// server and across reloads: 16,384 entries (about 3 MiB when full) and
// 64 hellos in reassembly, which a flood of Initials cannot grow
// (quicprint.Tracker).
var initials = quicprint.NewTracker(16384)

// wrapped holds, while their config runs, the servers whose HTTP/3
// listeners the wrapper is configured on (true: Caddy loads a server's
// packet conn wrappers before its routes) and those already told that it
// is not (false).
var wrapped sync.Map

// QUICWrapper is the packet conn wrapper caddy.packetconns.robots_guard_quic.
// It reads the Initial packets of every QUIC connection of its server's
// HTTP/3 listeners before quic-go does, so that robots_guard can judge the
// client's QUIC transport parameters. In a Caddyfile, robots_guard adds it
// to its server itself, unless the global options have a servers block,
// whose packet_conn_wrappers replace the site's: list it there; in JSON,
// in the server's packet_conn_wrappers: [{"wrapper": "robots_guard_quic"}].
type QUICWrapper struct{}

// CaddyModule returns the Caddy module information.
func (QUICWrapper) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "caddy.packetconns.robots_guard_quic", New: func() caddy.Module { return new(QUICWrapper) }}
}

// Provision notes the server the wrapper is configured on.
func (*QUICWrapper) Provision(ctx caddy.Context) error {
	srv := ctx.Value(caddyhttp.ServerCtxKey)
	wrapped.Store(srv, true)
	ctx.OnCancel(func() { wrapped.Delete(srv) })
	return nil
}

// WrapPacketConn returns the conn that reads its Initials; a conn it
// already wraps (the wrapper listed twice) is returned as it is.
func (*QUICWrapper) WrapPacketConn(pc net.PacketConn) net.PacketConn { return initials.Wrap(pc) }

// UnmarshalCaddyfile reads "robots_guard_quic", which takes no options.
func (*QUICWrapper) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	if d.Next() && d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

// checkQUIC says once per server, at start-up, that robots_guard guards a
// server with HTTP/3 whose UDP listeners are not wrapped: its HTTP/3
// clients' QUIC transport parameters are then not judged.
func (h *Handler) checkQUIC(ctx caddy.Context) {
	srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if !ok || h.QUIC == "off" || len(srv.TLSConnPolicies) == 0 || !slices.Contains(srv.Protocols, "h3") {
		return
	}
	if _, seen := wrapped.LoadOrStore(srv, false); !seen {
		ctx.OnCancel(func() { wrapped.Delete(srv) })
		h.opsLogger.Warn("this server speaks HTTP/3 without the robots_guard_quic packet conn wrapper: the QUIC transport parameters of its HTTP/3 clients are not judged; "+
			`add it to the server: in the Caddyfile's global options, servers { packet_conn_wrappers { robots_guard_quic } } (a servers block replaces the wrapper robots_guard adds); in JSON, "packet_conn_wrappers": [{"wrapper": "robots_guard_quic"}]`,
			zap.Strings("listen", srv.Listen))
	}
}

var _ caddy.PacketConnWrapper = (*QUICWrapper)(nil)
