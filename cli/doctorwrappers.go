package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The messages robots_guard logs at start-up, once per server, when a
// server with TLS lacks one of its wrappers, and how to add them, which
// the doctor says too.
const (
	// FramingOff: the server has no robots_guard listener wrapper.
	FramingOff = "this server reads no HTTP framing (no robots_guard listener wrapper): a client that copies a browser's TLS hello over a library's HTTP/1.1 or HTTP/2 stack is not caught"
	// QUICOff: the server speaks HTTP/3 without the robots_guard_quic
	// packet conn wrapper.
	QUICOff = "this server speaks HTTP/3 without the robots_guard_quic packet conn wrapper: the QUIC transport parameters of its HTTP/3 clients are not judged"
	// WrappersFix says how to add both wrappers: in one servers block,
	// since a servers block replaces the wrappers the directive adds and
	// only the first that matches a server applies.
	WrappersFix = `in the Caddyfile's global options, both in the one servers block: servers { listener_wrappers { robots_guard } packet_conn_wrappers { robots_guard_quic } } (a servers block replaces the wrappers robots_guard adds); in JSON, the server's "listener_wrappers": [{"wrapper": "robots_guard"}] and "packet_conn_wrappers": [{"wrapper": "robots_guard_quic"}]`
)

// checkWrappers names, for each server of a guard that serves HTTPS,
// whether robots_guard reads how its clients speak under the headers: the
// listener wrapper robots_guard in its listener_wrappers (the framing of
// HTTP/1.1 and HTTP/2) and, where it speaks HTTP/3 and a guard has quic
// on, the packet conn wrapper robots_guard_quic in its
// packet_conn_wrappers (the QUIC transport parameters). The Caddyfile
// directive adds both; a servers block's lists replace what it adds. The
// doctor's own copy of the config runs without TLS or wrappers, so the
// module's start-up messages of a missing wrapper (FramingOff, QUICOff)
// are this check's, not findings of their own. httpPort and httpsPort are
// the config's (0: Caddy's defaults).
func (d *doctor) checkWrappers(guards []*guardSite, httpPort, httpsPort int) {
	fmt.Fprintln(d.out, "wrappers")
	for _, s := range d.orig {
		var on []*guardSite
		for _, g := range guards {
			if g.server == s.name {
				on = append(on, g)
			}
		}
		if len(on) == 0 {
			continue
		}
		if !servesTLS(s, on, httpPort, httpsPort) {
			d.ok("server %s serves plain HTTP, where only the headers are read: it needs no wrapper", s.name)
			continue
		}
		protocols := strs(s.raw["protocols"])
		quic := (len(protocols) == 0 || slices.Contains(protocols, "h3")) && slices.ContainsFunc(on, func(g *guardSite) bool { return g.handler["quic"] != "off" })
		var ok, missing []string
		if hasWrapper(s.raw["listener_wrappers"], "robots_guard") {
			ok = append(ok, "how clients speak HTTP/1.1 and HTTP/2 (listener wrapper robots_guard)")
		} else {
			missing = append(missing, "the listener wrapper robots_guard: a client that copies a browser's TLS hello over a library's HTTP stack (uTLS, ...) is caught only over HTTP/3")
		}
		switch {
		case !quic:
		case hasWrapper(s.raw["packet_conn_wrappers"], "robots_guard_quic"):
			ok = append(ok, "its HTTP/3 clients' QUIC stacks (packet conn wrapper robots_guard_quic)")
		default:
			missing = append(missing, "the packet conn wrapper robots_guard_quic: its HTTP/3 clients' QUIC transport parameters are not judged")
		}
		if len(missing) == 0 {
			d.ok("server %s reads %s", s.name, strings.Join(ok, " and "))
			continue
		}
		d.note("server %s lacks %s.\nFix: %s", s.name, strings.Join(missing, ";\nand "), WrappersFix)
	}
}

// hasWrapper reports whether a server's list of wrappers (JSON) names one.
func hasWrapper(list any, name string) bool {
	return slices.ContainsFunc(anyList(list), func(w any) bool { m, _ := w.(map[string]any); return m["wrapper"] == name })
}

// servesTLS reports whether a server may answer over TLS, as Caddy sets it
// up: it has TLS connection policies, or automatic HTTPS (not disabled)
// covers it: a listener on the HTTPS port, or one on another port than
// the HTTP port for a site with a host name it does not skip.
func servesTLS(s *server, guards []*guardSite, httpPort, httpsPort int) bool {
	if s.raw["tls_connection_policies"] != nil {
		return true
	}
	auto, _ := s.raw["automatic_https"].(map[string]any)
	if auto["disable"] == true {
		return false
	}
	httpPort, httpsPort = cmp.Or(httpPort, 80), cmp.Or(httpsPort, 443)
	skip := strs(auto["skip"])
	for _, l := range s.listen {
		port, ok := listenPort(l)
		switch {
		case !ok:
		case port == httpsPort:
			return true
		case port != httpPort && slices.ContainsFunc(guards, func(g *guardSite) bool {
			return slices.ContainsFunc(g.hosts, func(h string) bool { return !slices.Contains(skip, h) })
		}):
			return true
		}
	}
	return false
}

// intOf returns a JSON number (decodeTree's) as an int; 0 for none.
func intOf(v any) int {
	n, _ := v.(json.Number)
	i, _ := n.Int64()
	return int(i)
}
