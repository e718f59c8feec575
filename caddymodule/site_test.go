package caddymodule

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"
)

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
