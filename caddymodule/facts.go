package caddymodule

import (
	"net"
	"net/http"
	"net/netip"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
)

// facts returns what only Caddy knows of r (enforce.Facts), which
// enforce.Reader.Read reads the request with: the client IP after
// trusted_proxies, the target as the client sent it, the scheme and how
// the client saw the site, and the TLS, QUIC and framing fingerprints
// (tlsfingerprint.go, wrappers.go).
//
// The origin is HTTPS when Caddy terminated TLS; plain HTTP otherwise,
// even to a Host of localhost, which a proxy in front may send for a
// public plain-HTTP site (nginx's default Host is the upstream's), where
// browsers send no Fetch Metadata: a plain-HTTP origin only drops checks.
//
// vars are the request's variables (caddyhttp.VarsCtxKey), looked up once
// per request: the client IP and whether it came through a trusted proxy
// are there, and the placeholders go there (observe). w is the response's
// writer: over HTTP/3 the connection's SETTINGS are read through it.
func (h *Handler) facts(w http.ResponseWriter, r *http.Request, vars map[string]any) enforce.Facts {
	f := enforce.Facts{ClientIP: clientIPIn(r, vars), URI: requestURI(r), Scheme: "http", Origin: evidence.Insecure}
	if r.TLS != nil {
		f.Scheme, f.Origin = "https", evidence.Secure
	}
	h.requestTLSIn(w, r, vars, &f)
	return f
}

// varsOf returns the request's variables, or nil outside a Caddy server.
func varsOf(r *http.Request) map[string]any {
	vars, _ := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
	return vars
}

// clientIPIn returns the client IP Caddy determined (trusted_proxies
// honoured) from the request's variables, falling back to the connection's
// remote address. Headers such as X-Forwarded-For are never read here.
func clientIPIn(r *http.Request, vars map[string]any) netip.Addr {
	if s, ok := vars[caddyhttp.ClientIPVarKey].(string); ok && s != "" {
		if ip, err := netip.ParseAddr(s); err == nil {
			return ip.Unmap()
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, _ := netip.ParseAddr(host)
	return ip.WithZone("").Unmap()
}

// requestURI returns the request target as the client sent it, before any
// rewrite: policy.ParseTarget reads it as the backend will.
func requestURI(r *http.Request) string {
	if or, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok {
		r = &or
	}
	if r.RequestURI == "" && r.URL != nil {
		return r.URL.RequestURI()
	}
	return r.RequestURI
}
