package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/robotsguard/robotsguard/internal/site"
)

// guardSite is one robots_guard handler of a config, where the doctor
// found it.
type guardSite struct {
	server string   // the server's name (srv0, ...)
	listen []string // its listen addresses as configured
	hosts  []string // the host matchers of the routes around it; none: any host
	// matchers describe the other matchers of the routes around it ("path
	// /blog/*"), which a request must pass to reach it; paths are the path
	// patterns among them, all of which must match.
	matchers []string
	paths    [][]string
	// after names the handler that answers every request before the guard
	// is reached ("file_server"), or "".
	after   string
	handler map[string]any // the handler's JSON, in the config the doctor runs
	config  guardConfig    // its settings, as configured
	store   bool           // it has a store of its own, which the doctor leaves out
	// at is the handler's JSON path (apps.http.servers.srv0.routes[0].
	// handle[1]...); while walking, the path of the routes being walked.
	at string
	// nth counts the guards of the same site before this one.
	nth int
}

// guardConfig are the settings of a robots_guard handler that the doctor
// reads.
type guardConfig struct {
	Robots      string   `json:"robots"`
	RobotsHost  string   `json:"robots_host"`
	Mode        string   `json:"mode"`
	Traps       []string `json:"traps"`
	AllowIPs    []string `json:"allow_ips"`
	AllowTokens []string `json:"allow_tokens"`
	ServeRobots *bool    `json:"serve_robots"`
}

// name is how the doctor names the site: as the module names it (its
// zone, blocked, the logs).
func (g *guardSite) name() string {
	if n := site.Name(g.hosts, g.listen); n != "" {
		return n
	}
	return strings.Join(g.listen, ", ")
}

// host is the Host header the doctor's requests send to reach the site.
func (g *guardSite) host() string {
	for _, h := range g.hosts {
		if !strings.Contains(h, "{") {
			return strings.Replace(h, "*", "doctor", 1)
		}
	}
	return "localhost"
}

// terminalHandlers answer a request without passing it on.
var terminalHandlers = []string{"file_server", "static_response", "reverse_proxy", "error", "acme_server"}

// server is the part of a server's JSON the doctor reads.
type server struct {
	name    string
	raw     map[string]any
	listen  []string
	routes  []any
	trusted []netip.Prefix // static trusted_proxies; nil: none
	dynamic bool           // trusted_proxies from a module the doctor cannot read
}

// servers returns the config's HTTP servers, by name.
func servers(cfg map[string]any) []*server {
	raw, _ := dig(cfg, "apps", "http", "servers").(map[string]any)
	var out []*server
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		m, _ := raw[name].(map[string]any)
		if m == nil {
			continue
		}
		s := &server{name: name, raw: m, listen: strs(m["listen"])}
		s.routes, _ = m["routes"].([]any)
		if tp, ok := m["trusted_proxies"].(map[string]any); ok {
			if tp["source"] == "static" {
				for _, r := range strs(tp["ranges"]) {
					if p, err := parsePrefix(r); err == nil {
						s.trusted = append(s.trusted, p)
					}
				}
			} else {
				s.dynamic = true
			}
		}
		out = append(out, s)
	}
	return out
}

// parsePrefix reads an address or a CIDR range, as trusted_proxies takes
// them.
func parsePrefix(s string) (netip.Prefix, error) {
	if s == "private_ranges" {
		return netip.Prefix{}, fmt.Errorf("a shorthand")
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return p, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// trusts reports whether the server takes X-Forwarded-For from addr.
func (s *server) trusts(addr netip.Addr) bool {
	if s.dynamic {
		return true // a module's list: the doctor gives it the benefit of the doubt
	}
	tp, _ := s.raw["trusted_proxies"].(map[string]any)
	if tp != nil && slices.Contains(strs(tp["ranges"]), "private_ranges") && (addr.IsPrivate() || addr.IsLoopback()) {
		return true
	}
	return slices.ContainsFunc(s.trusted, func(p netip.Prefix) bool { return p.Contains(addr.Unmap()) })
}

// findGuards returns the robots_guard handlers of the servers, with the
// routes around each.
func findGuards(srvs []*server) []*guardSite {
	var out []*guardSite
	for _, s := range srvs {
		base := guardSite{server: s.name, listen: s.listen, at: "apps.http.servers." + s.name + ".routes"}
		walkRoutes(s.routes, base, func(g guardSite) {
			for _, o := range out {
				if o.server == g.server && slices.Equal(o.hosts, g.hosts) {
					g.nth++
				}
			}
			out = append(out, &g)
		})
	}
	return out
}

// walkRoutes calls found for each robots_guard handler in routes (and
// their subroutes), with the context ctx of the routes around them.
func walkRoutes(routes []any, ctx guardSite, found func(guardSite)) {
	shadow := ctx.after // a terminal handler of an earlier, unconditional route
	for i, r := range routes {
		route, _ := r.(map[string]any)
		if route == nil {
			continue
		}
		rc := ctx
		rc.at = fmt.Sprintf("%s[%d]", ctx.at, i)
		rc.hosts, rc.matchers, rc.paths = slices.Clone(ctx.hosts), slices.Clone(ctx.matchers), slices.Clone(ctx.paths)
		// Only a route without matchers shadows the routes after it: the
		// top-level routes of sites match their own hosts.
		conditional := len(anyList(route["match"])) > 0
		for _, set := range anyList(route["match"]) {
			m, _ := set.(map[string]any)
			for _, key := range slices.Sorted(maps.Keys(m)) {
				switch key {
				case "host":
					rc.hosts = append(rc.hosts, strs(m[key])...)
				case "path":
					rc.paths = append(rc.paths, strs(m[key]))
					rc.matchers = append(rc.matchers, "path "+strings.Join(strs(m[key]), " "))
				default:
					b, _ := json.Marshal(m[key])
					rc.matchers = append(rc.matchers, key+" "+string(b))
				}
			}
		}
		rc.after = shadow
		for j, h := range anyList(route["handle"]) {
			hm, _ := h.(map[string]any)
			name, _ := hm["handler"].(string)
			hat := fmt.Sprintf("%s.handle[%d]", rc.at, j)
			switch {
			case name == "robots_guard":
				g := rc
				g.handler, g.at = hm, hat
				b, _ := json.Marshal(hm)
				_ = json.Unmarshal(b, &g.config)
				found(g)
			case name == "subroute":
				routes, _ := hm["routes"].([]any)
				sc := rc
				sc.at = hat + ".routes"
				walkRoutes(routes, sc, found)
			case slices.Contains(terminalHandlers, name) && rc.after == "":
				rc.after = name
			}
		}
		if !conditional && rc.after != "" && shadow == "" {
			shadow = rc.after
		}
	}
}

// matchPath reports whether a path matcher's pattern matches p, as Caddy's
// path matcher does: case-insensitively, '*' matching anything.
func matchPath(pattern, p string) bool {
	re := "(?is)^" + strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, ".*") + "$"
	ok, err := regexp.MatchString(re, p)
	return err == nil && ok
}

// covers reports whether the guard's path matchers let a request for p
// reach it.
func (g *guardSite) covers(p string) bool {
	for _, set := range g.paths {
		if !slices.ContainsFunc(set, func(pat string) bool { return matchPath(pat, p) }) {
			return false
		}
	}
	return true
}

// proxied is a reverse_proxy upstream of the guard's server, and what it
// sends as Host.
type proxied struct {
	dial string // the upstream, as configured
	host string // the Host it is sent, "" for the request's own
}

// upstreams returns the reverse_proxy upstreams in routes.
func upstreams(routes []any) []proxied {
	var out []proxied
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			if v["handler"] == "reverse_proxy" {
				host := ""
				if set, ok := dig(v, "headers", "request", "set").(map[string]any); ok {
					for k, vals := range set {
						if strings.EqualFold(k, "Host") && len(strs(vals)) > 0 {
							host = strs(vals)[0]
						}
					}
				}
				for _, u := range anyList(v["upstreams"]) {
					if m, ok := u.(map[string]any); ok {
						if d, ok := m["dial"].(string); ok {
							out = append(out, proxied{dial: d, host: host})
						}
					}
				}
			}
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		}
	}
	walk(routes)
	return out
}

// serverAt returns the server of srvs that listens where a loopback dial
// address or URL goes, or nil.
func serverAt(srvs []*server, dial string) *server {
	port, ok := loopbackPort(dial)
	if !ok {
		return nil
	}
	for _, s := range srvs {
		for _, l := range s.listen {
			if p, ok := listenPort(l); ok && p == port {
				return s
			}
		}
	}
	return nil
}

// siteHosts returns the host matchers of a server's top-level routes, and
// whether every route has one (no route answers other hosts).
func siteHosts(s *server) ([]string, bool) {
	var hosts []string
	all := len(s.routes) > 0
	for _, r := range s.routes {
		route, _ := r.(map[string]any)
		var rh []string
		for _, set := range anyList(route["match"]) {
			m, _ := set.(map[string]any)
			rh = append(rh, strs(m["host"])...)
		}
		if len(rh) == 0 {
			all = false
		}
		hosts = append(hosts, rh...)
	}
	return hosts, all
}

// hostMatches reports whether a host matcher's pattern matches host, as
// Caddy's does (case-insensitively, "*" standing for one label).
func hostMatches(pattern, host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	pl, hl := strings.Split(strings.ToLower(pattern), "."), strings.Split(strings.ToLower(host), ".")
	if len(pl) != len(hl) {
		return false
	}
	for i := range pl {
		if pl[i] != "*" && pl[i] != hl[i] {
			return false
		}
	}
	return true
}

// loopbackPort returns the port of a dial address or URL on a loopback or
// unspecified host ("127.0.0.1:3000", "localhost:3000", ":3000",
// "http://[::1]:3000/robots.txt").
func loopbackPort(s string) (int, bool) {
	hostport := s
	if u, err := url.Parse(s); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		hostport = u.Host
		if u.Port() == "" {
			hostport += map[string]string{"http": ":80", "https": ":443"}[u.Scheme]
		}
	}
	host, port, err := net.SplitHostPort(strings.TrimPrefix(hostport, "tcp/"))
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return 0, false
	}
	if host == "" || host == "localhost" {
		return n, true
	}
	a, err := netip.ParseAddr(host)
	return n, err == nil && (a.IsLoopback() || a.IsUnspecified())
}

// listenPort returns the port of a listen address (":443", "tcp/:8080",
// "127.0.0.1:3000"); a range ("8000-8010") gives its first port.
func listenPort(l string) (int, bool) {
	l = strings.TrimPrefix(l, "tcp/")
	i := strings.LastIndexByte(l, ':')
	if i < 0 || strings.HasPrefix(l, "unix/") || strings.HasPrefix(l, "udp/") {
		return 0, false
	}
	first, _, _ := strings.Cut(l[i+1:], "-")
	n, err := strconv.Atoi(first)
	return n, err == nil
}

// loopbackOnly reports whether every listen address is a loopback one.
func loopbackOnly(listen []string) bool {
	for _, l := range listen {
		l = strings.TrimPrefix(l, "tcp/")
		i := strings.LastIndexByte(l, ':')
		if i < 0 {
			return false
		}
		host := strings.Trim(l[:i], "[]")
		a, err := netip.ParseAddr(host)
		if host != "localhost" && (err != nil || !a.IsLoopback()) {
			return false
		}
	}
	return len(listen) > 0
}

// dig returns the value at keys below v, or nil.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

// strs returns the strings of a JSON list.
func strs(v any) []string {
	var out []string
	for _, x := range anyList(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
