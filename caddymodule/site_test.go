package caddymodule

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// TestSiteName: a site is named by its hosts and, off the default ports,
// its port; a site of any host by its port.
func TestSiteName(t *testing.T) {
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
		{nil, nil, ""},
	} {
		if got := siteName(c.hosts, c.listen); got != c.want {
			t.Errorf("siteName(%q, %q) = %q, want %q", c.hosts, c.listen, got, c.want)
		}
	}
}

// TestSiteZones (issue 39): two sites without a zone each get their own
// state, named by the site; a site that sets a zone keeps it; a handler
// in a handle block is its site's.
func TestSiteZones(t *testing.T) {
	dir := t.TempDir()
	robots := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /private/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tester := caddytest.NewTester(t)
	tester.InitServer(fmt.Sprintf(`{
	skip_install_trust
	admin localhost:2999
	http_port 9080
	https_port 9443
	grace_period 1ns
}
http://a.localhost:9080 {
	robots_guard {
		robots %[1]s
		verify off
	}
	respond "a"
}
http://b.localhost:9080 {
	handle /x/* {
		respond "x"
	}
	handle {
		robots_guard {
			robots %[1]s
			verify off
		}
		respond "b"
	}
}
:9081 {
	robots_guard {
		robots %[1]s
		verify off
	}
	respond "any"
}
http://c.localhost:9080 {
	robots_guard {
		robots %[1]s
		zone shared-test
		verify off
	}
	respond "c"
}
`, robots), "caddyfile")
	var list struct {
		Zones map[string][]any `json:"zones"`
	}
	adminJSON(t, http.MethodGet, "/robots_guard/blocked", "", http.StatusOK, &list)
	for _, z := range []string{"a.localhost:9080", "b.localhost:9080", ":9081", "shared-test"} {
		if _, ok := list.Zones[z]; !ok {
			t.Errorf("no zone %q: %v", z, list.Zones)
		}
	}
	if _, ok := list.Zones["default"]; ok {
		t.Errorf("a default zone: %v", list.Zones)
	}
}
