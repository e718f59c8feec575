package caddymodule

import (
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// A handler's site: the Caddy site it guards, the server that runs it and
// the host matchers of the top-level route that holds it ("example.com",
// "shop.example.com:8443", ":8080" for a site of any host). robots.txt is
// per origin (RFC 9309), and so is the state it earns: the default zone is
// the site's name, so that strikes, blocks and trap hits earned on one
// site apply there only, unless the operator shares a zone on purpose
// (zone). The name is stable across config reloads, so the state carries
// over.

// siteOf returns the name of the site whose handler ctx provisions, or ""
// outside an HTTP server (caddy robots check, unit tests).
//
// Caddy provisions a server's handlers route by route, in order, after
// the top-level routes' matchers: the route being provisioned is the
// first whose handlers are not loaded yet, and its host matchers are
// decoded already.
func siteOf(ctx caddy.Context) string {
	srv, _ := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if srv == nil {
		return ""
	}
	var hosts []string
	routes := srv.Routes
	if srv.Errors != nil && len(routes) > 0 && len(routes[len(routes)-1].Handlers) > 0 {
		routes = srv.Errors.Routes // the server's handle_errors routes come after
	}
	for _, r := range routes {
		if len(r.Handlers) == 0 && len(r.HandlersRaw) > 0 {
			hosts = routeHosts(r)
			break
		}
	}
	return siteName(hosts, srv.Listen)
}

// routeHosts returns the host matchers of a route.
func routeHosts(r caddyhttp.Route) []string {
	var hosts []string
	for _, set := range r.MatcherSets {
		for _, m := range set {
			switch m := m.(type) {
			case caddyhttp.MatchHost:
				hosts = append(hosts, m...)
			case *caddyhttp.MatchHost:
				hosts = append(hosts, *m...)
			}
		}
	}
	return hosts
}

// siteName names a site by its hosts and the ports its server listens on:
// "example.com" (on the default port 443 or 80), "shop.example.com:8443",
// "a.example,b.example"; ":8080" for a site of any host.
func siteName(hosts, listen []string) string {
	var ports []string
	for _, l := range listen {
		if a, err := caddy.ParseNetworkAddress(l); err == nil && a.StartPort != 0 {
			if p := strconv.FormatUint(uint64(a.StartPort), 10); !slices.Contains(ports, p) {
				ports = append(ports, p)
			}
		}
	}
	port := strings.Join(ports, ",")
	if len(hosts) == 0 {
		if port == "" {
			return ""
		}
		return ":" + port
	}
	var names []string
	for _, h := range hosts {
		h = strings.ToLower(h)
		if port != "" && port != "443" && port != "80" {
			h = net.JoinHostPort(h, port)
		}
		if !slices.Contains(names, h) {
			names = append(names, h)
		}
	}
	return strings.Join(names, ",")
}
