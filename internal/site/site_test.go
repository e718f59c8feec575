package site

import "testing"

// Hosts reads Caddy's caddyhttp.MatchHost by its type: caddymodule's
// TestSiteZones runs it on Caddy's own decoded matchers.

// TestName: a site is named by its hosts and, off the default ports, its
// port; a site of any host by its port.
func TestName(t *testing.T) {
	for _, c := range []struct {
		hosts, listen []string
		want          string
	}{
		{[]string{"example.com"}, []string{":443"}, "example.com"},
		{[]string{"Example.com", "www.example.com"}, []string{":443"}, "example.com,www.example.com"},
		{[]string{"shop.example.com"}, []string{":8443"}, "shop.example.com:8443"},
		{[]string{"localhost"}, []string{"127.0.0.1:8080", "[::1]:8080"}, "localhost:8080"},
		{nil, []string{"127.0.0.1:8080"}, ":8080"},
		{nil, []string{"tcp/:9080"}, ":9080"},
		{nil, []string{"unix//run/caddy.sock"}, ""},
		{nil, nil, ""},
	} {
		if got := Name(c.hosts, c.listen); got != c.want {
			t.Errorf("Name(%q, %q) = %q, want %q", c.hosts, c.listen, got, c.want)
		}
	}
}
