package caddymodule

import (
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddytls"
	"github.com/quic-go/quic-go/http3"
	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/tlsprint"
)

func init() {
	caddy.RegisterModule(JA4Matcher{})
}

// handshakes holds the JA4 of each connection's handshake, for every
// server and across reloads: 32,768 slots (about 5 MiB when full), which a
// flood of handshakes cannot grow (tlsprint.Conns).
var handshakes = tlsprint.NewConns(32768)

// JA4Matcher is the TLS handshake matcher tls.handshake_match.robots_guard_ja4.
// It records the JA4 of every ClientHello it sees (TCP and QUIC, resumed
// sessions too) and always matches. robots_guard adds it to its server's
// TLS connection policies: it is not configured by hand.
type JA4Matcher struct{}

// CaddyModule returns the Caddy module information.
func (JA4Matcher) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "tls.handshake_match.robots_guard_ja4",
		New: func() caddy.Module { return new(JA4Matcher) },
	}
}

// Match records the hello's JA4 and its stack's family and matches. A
// QUIC hello's are kept for its connection too (wrappers.go), where its
// requests find them.
func (JA4Matcher) Match(hello *tls.ClientHelloInfo) bool {
	ja4, stack := handshakes.Record(hello)
	if c := hello.Conn; c != nil && c.LocalAddr() != nil && c.LocalAddr().Network() == "udp" {
		initials.PutJA4(c.RemoteAddr(), ja4, stack)
	}
	return true
}

// fingerprintHandshakes adds the matcher to each TLS connection policy of
// the server being provisioned (Caddy provisions the policies after the
// handlers) and forgets a TCP connection's entry when it closes.
func (h *Handler) fingerprintHandshakes() {
	srv := h.server
	if srv == nil || h.JA4 == "off" {
		return
	}
	if h.JA4Header != "" && srv.TrustedProxiesRaw == nil {
		h.opsLogger.Warn("ja4_header is read from trusted proxies only, and this server has no trusted_proxies", zap.String("ja4_header", h.JA4Header))
	}
	added := false
	for _, p := range srv.TLSConnPolicies {
		if _, ok := p.MatchersRaw["robots_guard_ja4"]; !ok {
			if p.MatchersRaw == nil {
				p.MatchersRaw = caddy.ModuleMap{}
			}
			p.MatchersRaw["robots_guard_ja4"], added = json.RawMessage("{}"), true
		}
	}
	if added {
		srv.RegisterConnState(func(c net.Conn, s http.ConnState) {
			if s == http.StateClosed {
				handshakes.Forget(c.RemoteAddr(), false)
			}
		})
	}
}

// requestTLSIn sets the facts' fingerprints (enforce.Fingerprints) from
// where Caddy found them. Behind a trusted proxy, from its ja4_header
// (none without that option: the connection's handshake is the proxy's).
// Over HTTP/1.1 and HTTP/2, from what the matcher recorded for the
// connection's address and port. Over HTTP/3, from the request's own
// connection (wrappers.go): the hello the QUIC wrapper read, or without it
// the JA4 and family the matcher read, which no one's spoofed Initials can
// replace, as they could a record by address. Over TLS, the framing of
// the connection too (wrappers.go; over HTTP/3 its SETTINGS, through w).
// It allocates nothing once the connection's first request was read.
// vars are the request's variables (facts looks them up once per request).
func (h *Handler) requestTLSIn(w http.ResponseWriter, r *http.Request, vars map[string]any, f *enforce.Facts) {
	switch trusted, _ := vars[caddyhttp.TrustedProxyVarKey].(bool); {
	case trusted:
		h.prints.Proxied(f, r.Header)
		return
	case r.TLS == nil:
		return
	case r.ProtoMajor == 3:
		a, _ := r.Context().Value(http3.RemoteAddrContextKey).(net.Addr)
		h.prints.QUICConn(f, initials.Get(a))
	default:
		ja4, s := handshakes.Get(r.RemoteAddr, false)
		h.prints.Conn(f, ja4, s)
	}
	p := framedConns.Request(w, r)
	f.Framing, f.TLS.Framing = p.Text, evidence.Framing(p.Stack)
}

// Interface guards
var _ caddytls.ConnectionMatcher = (*JA4Matcher)(nil)
