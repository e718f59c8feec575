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
	"github.com/robotsguard/robotsguard/tlsprint/quicprint"
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

// Match records the hello's JA4 and matches. A QUIC hello's is kept for
// its connection too (quic.go), where its requests find it.
func (JA4Matcher) Match(hello *tls.ClientHelloInfo) bool {
	ja4 := handshakes.Record(hello)
	if c := hello.Conn; c != nil && c.LocalAddr() != nil && c.LocalAddr().Network() == "udp" {
		initials.PutJA4(c.RemoteAddr(), ja4)
	}
	return true
}

// fingerprintHandshakes adds the matcher to each TLS connection policy of
// the server being provisioned (Caddy provisions the policies after the
// handlers) and forgets a TCP connection's entry when it closes.
func (h *Handler) fingerprintHandshakes(ctx caddy.Context) {
	srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if !ok || h.JA4 == "off" {
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

// requestTLS sets the request's JA4 and QUIC fingerprint and returns what
// the tables say of its TLS and QUIC stacks. Behind a trusted proxy, the
// JA4 is its ja4_header's (none without that option: the connection's
// handshake is the proxy's), and there is no QUIC fingerprint. Over
// HTTP/3, both are those of the request's own connection (quic.go): the
// hello the QUIC wrapper read, or without it the JA4 the matcher read,
// which no one's spoofed Initials can replace, as they could a record by
// address. It allocates nothing.
func (h *Handler) requestTLS(r *http.Request, req *enforce.Request) evidence.TLS {
	if trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool); trusted {
		if v := r.Header[h.JA4Header]; h.JA4 != "off" && len(v) > 0 && tlsprint.Valid(v[0]) {
			s := tlsprint.Lookup(v[0])
			req.JA4 = v[0]
			return evidence.TLS{Known: s.Known, Browser: s.Browser, Family: s.Family}
		}
		return evidence.TLS{}
	}
	if r.TLS == nil {
		return evidence.TLS{}
	}
	var q evidence.QUIC
	var s tlsprint.Stack
	var p *quicprint.Print
	if r.ProtoMajor == 3 {
		a, _ := r.Context().Value(http3.RemoteAddrContextKey).(net.Addr)
		p = initials.Get(a)
	} else if h.JA4 != "off" {
		req.JA4, s = handshakes.Get(r.RemoteAddr, false)
	}
	if p != nil && h.QUIC != "off" && p.String != "" {
		req.QUIC, q = p.String, evidence.QUIC(p.Stack)
	}
	if p != nil && h.JA4 != "off" {
		req.JA4, s = p.JA4, tlsprint.Lookup(p.JA4)
	}
	return evidence.TLS{Known: s.Known, Browser: s.Browser, Family: s.Family, QUIC: q}
}

// Interface guards
var _ caddytls.ConnectionMatcher = (*JA4Matcher)(nil)
