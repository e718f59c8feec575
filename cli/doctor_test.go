package cli

import (
	"net/netip"
	"reflect"
	"strconv"
	"testing"
)

// Adapted configs, as caddy adapt writes them.
const (
	routeConfig   = `{"apps":{"http":{"servers":{"srv0":{"listen":["127.0.0.1:18080"],"routes":[{"handle":[{"handler":"vars","root":"/site"},{"handler":"subroute","routes":[{"handle":[{"handler":"file_server"},{"handler":"robots_guard","robots":"/site/robots.txt"}]}]}]}]}}}}}`
	matcherConfig = `{"apps":{"http":{"servers":{"srv0":{"listen":["127.0.0.1:18080"],"routes":[{"handle":[{"handler":"vars","root":"/site"}]},{"match":[{"path":["/blog/*"]}],"handle":[{"handler":"robots_guard","robots":"/site/robots.txt","traps":["/trap/"]}]},{"handle":[{"handler":"file_server"}]}]}}}}}`
	emptyConfig   = `{"apps":{"http":{"servers":{"srv0":{"listen":["127.0.0.1:18080"],"trusted_proxies":{"source":"static","ranges":["10.0.0.0/8"]},"routes":[{"handle":[{"handler":"robots_guard","robots":"http://localhost:13000/robots.txt"},{"handler":"reverse_proxy","upstreams":[{"dial":"127.0.0.1:13000"},{"dial":"10.1.2.3:13000"}]}]}]},"srv1":{"listen":[":13000"],"routes":[{"match":[{"host":["127.0.0.1"]}],"handle":[{"handler":"subroute","routes":[{"handle":[{"handler":"file_server"}]}]}],"terminal":true}]}}}}}`
	// Two sites of one server: the first's file_server shadows nothing.
	sitesConfig = `{"apps":{"http":{"servers":{"srv0":{"listen":[":443"],"routes":[{"match":[{"host":["a.example"]}],"handle":[{"handler":"file_server"}],"terminal":true},{"match":[{"host":["*.b.example"]}],"handle":[{"handler":"subroute","routes":[{"handle":[{"handler":"robots_guard"}]},{"handle":[{"handler":"file_server"}]}]}],"terminal":true}]}}}}}`
)

func mustTree(t *testing.T, js string) map[string]any {
	t.Helper()
	m, err := decodeTree([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFindGuards: each guard is found with the routes around it: the
// terminal handler before it, its matchers, its hosts.
func TestFindGuards(t *testing.T) {
	for _, tc := range []struct {
		name, config       string
		after, host, named string
		matchers           []string
	}{
		{"route { file_server; robots_guard }", routeConfig, "file_server", "localhost", ":18080", nil},
		{"robots_guard /blog/*", matcherConfig, "", "localhost", ":18080", []string{"path /blog/*"}},
		{"two sites", sitesConfig, "", "doctor.b.example", "*.b.example", nil},
	} {
		gs := findGuards(servers(mustTree(t, tc.config)))
		if len(gs) != 1 {
			t.Errorf("%s: %d guards", tc.name, len(gs))
			continue
		}
		g := gs[0]
		if g.after != tc.after || g.host() != tc.host || g.name() != tc.named || !reflect.DeepEqual(g.matchers, tc.matchers) || g.handler["handler"] != "robots_guard" {
			t.Errorf("%s: after %q, host %q, name %q, matchers %q", tc.name, g.after, g.host(), g.name(), g.matchers)
		}
	}
	g := findGuards(servers(mustTree(t, matcherConfig)))[0]
	if !g.covers("/blog/x/y") || !g.covers("/BLOG/") || g.covers("/private/") || g.config.Traps[0] != "/trap/" {
		t.Errorf("the /blog/* matcher: %+v", g)
	}
}

// TestPrepareFollows: the doctor's copy moves every server to a free
// loopback port; loopback upstreams and robots URLs that pointed at one of
// the config's servers follow it; the guards log every decision, keep
// their state in process and do not verify by DNS; only the http app runs.
func TestPrepareFollows(t *testing.T) {
	run := mustTree(t, emptyConfig)
	run["apps"].(map[string]any)["tls"] = map[string]any{"automation": map[string]any{}}
	d := &doctor{srvs: servers(run)}
	guards := findGuards(d.srvs)
	guards[0].handler["store"] = map[string]any{"module": "redis"}
	if _, err := d.prepare(run, guards, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	back, _ := listenPort(d.server("srv1").listen[0])
	ups := upstreams(d.server("srv0").routes)
	if len(ups) != 2 || ups[0].dial != "127.0.0.1:"+itoa(back) || ups[1].dial != "10.1.2.3:13000" {
		t.Errorf("upstreams after the move to %d: %+v", back, ups)
	}
	h := guards[0].handler
	if h["robots"] != "http://127.0.0.1:"+itoa(back)+"/robots.txt" || h["log_allowed"] != 1 || h["log_repeats"] != 0 || h["store"] != nil || dig(h, "verify", "disabled") != true {
		t.Errorf("guard in the copy: %v", h)
	}
	if apps := run["apps"].(map[string]any); len(apps) != 1 || dig(run, "admin", "disabled") != true || dig(run, "admin", "config", "persist") != false {
		t.Errorf("copy: apps %v, admin %v", apps, run["admin"])
	}
	if dig(d.server("srv0").raw, "automatic_https", "disable") != true {
		t.Error("automatic HTTPS left on")
	}
}

// TestEmptyCause: a reverse_proxy to a site of the config that answers
// only other hosts is named, with the fix.
func TestEmptyCause(t *testing.T) {
	cfg := mustTree(t, emptyConfig)
	d := &doctor{orig: servers(cfg)}
	g := findGuards(d.orig)[0]
	got := d.emptyCause(g)
	want := "\nreverse_proxy sends Host: localhost to 127.0.0.1:13000, and the site there (server srv1) answers only host 127.0.0.1:\n" +
		"no route matches, and Caddy answers a request that no route handles with 200 and an empty body.\n" +
		"Fix: write the backend site by its port,\n    :13000 {\n        bind 127.0.0.1\n        ...\n    }\n" +
		"not as http://127.0.0.1:13000 { ... } (or have the proxy send the backend's name: header_up Host {upstream_hostport})."
	if got != want {
		t.Errorf("emptyCause:\n%s\nwant\n%s", got, want)
	}
	// With header_up Host, the backend gets its own name: another cause.
	cfg = mustTree(t, `{"apps":{"http":{"servers":{"srv0":{"listen":[":80"],"routes":[{"handle":[{"handler":"robots_guard"},{"handler":"reverse_proxy","headers":{"request":{"set":{"Host":["127.0.0.1"]}}},"upstreams":[{"dial":"127.0.0.1:13000"}]}]}]},"srv1":{"listen":[":13000"],"routes":[{"match":[{"host":["127.0.0.1"]}]}]}}}}}`)
	d = &doctor{orig: servers(cfg)}
	if got := d.emptyCause(findGuards(d.orig)[0]); got == want || got == "" {
		t.Errorf("with header_up Host: %q", got)
	}
}

// TestTrusts: static ranges and private_ranges are read as Caddy reads
// them; a module's list is given the benefit of the doubt.
func TestTrusts(t *testing.T) {
	s := servers(mustTree(t, emptyConfig))[0]
	for addr, want := range map[string]bool{"10.9.8.7": true, "127.0.0.1": false, "192.168.1.1": false} {
		if got := s.trusts(netip.MustParseAddr(addr)); got != want {
			t.Errorf("static 10.0.0.0/8 trusts %s: %v", addr, got)
		}
	}
	p := servers(mustTree(t, `{"apps":{"http":{"servers":{"s":{"trusted_proxies":{"source":"static","ranges":["private_ranges"]}}}}}}`))[0]
	if !p.trusts(netip.MustParseAddr("192.168.1.1")) || p.trusts(netip.MustParseAddr("203.0.113.1")) {
		t.Error("private_ranges")
	}
	c := servers(mustTree(t, `{"apps":{"http":{"servers":{"s":{"trusted_proxies":{"source":"cloudflare"}}}}}}`))[0]
	if !c.trusts(netip.MustParseAddr("203.0.113.1")) {
		t.Error("a module's list")
	}
}

// TestAddresses: loopback dial addresses and URLs, listen addresses and
// host matchers are read as Caddy reads them.
func TestAddresses(t *testing.T) {
	for s, want := range map[string]int{"127.0.0.1:3000": 3000, "localhost:3000": 3000, ":3000": 3000, "[::1]:8080": 8080, "http://127.0.0.1/robots.txt": 80, "https://localhost/x": 443, "10.0.0.1:3000": -1, "example.com:80": -1, "unix//run/app.sock": -1} {
		port, ok := loopbackPort(s)
		if !ok {
			port = -1
		}
		if port != want {
			t.Errorf("loopbackPort(%q) = %d, want %d", s, port, want)
		}
	}
	for l, want := range map[string]int{":443": 443, "tcp/:8080": 8080, "127.0.0.1:3000": 3000, ":8000-8010": 8000, "unix//run/caddy.sock": -1} {
		port, ok := listenPort(l)
		if !ok {
			port = -1
		}
		if port != want {
			t.Errorf("listenPort(%q) = %d, want %d", l, port, want)
		}
	}
	if !loopbackOnly([]string{"127.0.0.1:80", "[::1]:80", "localhost:81"}) || loopbackOnly([]string{":80"}) || loopbackOnly(nil) {
		t.Error("loopbackOnly")
	}
	for _, c := range []struct {
		pattern, host string
		want          bool
	}{{"example.com", "Example.COM:443", true}, {"*.example.com", "www.example.com", true}, {"*.example.com", "example.com", false}, {"127.0.0.1", "localhost", false}} {
		if got := hostMatches(c.pattern, c.host); got != c.want {
			t.Errorf("hostMatches(%q, %q) = %v", c.pattern, c.host, got)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
