// Package site names a Caddy site, as robots_guard keeps its state and
// names its decisions by it: the site's hosts (its host matchers) and,
// off the default ports, the port its server listens on; ":PORT" for a
// site of any host. robots.txt is per origin (RFC 9309), and so is the
// state a client earns. The name is stable across config reloads.
//
// The Caddy module gives it what Caddy decoded; the commands give it what
// they read of a config's JSON. It needs no Caddy.
package site

import (
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Name names a site by its hosts and its server's listen addresses:
// "example.com" (on port 443 or 80), "shop.example.com:8443",
// "a.example,b.example"; ":8080" for a site of any host; "" when there is
// neither.
func Name(hosts, listen []string) string {
	var ports []string
	for _, l := range listen {
		if p, ok := Port(l); ok && !slices.Contains(ports, strconv.Itoa(p)) {
			ports = append(ports, strconv.Itoa(p))
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

// Port returns the port of a listen address (":443", "tcp/:8080",
// "127.0.0.1:3000", "[::1]:80"); a range ("8000-8010") gives its first
// port. A Unix socket or a UDP address has none.
func Port(listen string) (int, bool) {
	l := strings.TrimPrefix(listen, "tcp/")
	i := strings.LastIndexByte(l, ':')
	if i < 0 || strings.Contains(l, "/") {
		return 0, false
	}
	first, _, _ := strings.Cut(l[i+1:], "-")
	n, err := strconv.Atoi(first)
	return n, err == nil
}

// Hosts returns the hosts of the host matchers among a route's decoded
// matchers: values of Caddy's caddyhttp.MatchHost (a []string, or a
// pointer to one), which this package reads by type, not to import Caddy.
func Hosts(matchers []any) []string {
	var hosts []string
	for _, m := range matchers {
		v := reflect.Indirect(reflect.ValueOf(m))
		if v.IsValid() && v.Type().Name() == "MatchHost" && strings.HasSuffix(v.Type().PkgPath(), "/caddyhttp") && v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String {
			for i := range v.Len() {
				hosts = append(hosts, v.Index(i).String())
			}
		}
	}
	return hosts
}
