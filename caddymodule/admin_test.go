package caddymodule

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/spf13/cobra"
)

// TestIntegrationAdminUnblock: a trapped client shows in the admin API's
// list of blocks and in `caddy robots blocked`; `caddy robots unblock` lifts
// the block through the admin API, and the client is served again. Bad
// requests get clear errors.
func TestIntegrationAdminUnblock(t *testing.T) {
	s := newSite(t, siteRobots)
	tester := caddytest.NewTester(t)
	tester.InitServer(s.config("", "trap /trap/\n\t\tverify off"), "caddyfile")

	resp, body := get(t, tester, "GET", "/trap/", uaFirefox)
	expectStatus(t, "trap", resp, body, 403)
	resp, body = get(t, tester, "GET", "/", uaFirefox)
	expectStatus(t, "trapped client", resp, body, 403)

	// The admin API lists the block in the test's zone.
	var list struct {
		Zones map[string][]struct {
			IP    string `json:"ip"`
			Token string `json:"token"`
		} `json:"zones"`
	}
	adminJSON(t, "GET", "/robots_guard/blocked?zone="+s.zone, "", http.StatusOK, &list)
	if b := list.Zones[s.zone]; len(b) != 1 || b[0].IP != "127.0.0.1" || b[0].Token != "" {
		t.Fatalf("blocked list: %+v", list)
	}

	// The CLI shows it too.
	out := runCLI(t, blockedCommand(), "--address", "localhost:2999", "--zone", s.zone)
	if !strings.Contains(out, "localhost:9080 (zone "+s.zone+")  127.0.0.1  (whole IP)") || !strings.Contains(out, "1 blocked") {
		t.Errorf("caddy robots blocked:\n%s", out)
	}

	// Unblock through the CLI; the client is served again.
	out = runCLI(t, unblockCommand(), "127.0.0.1", "--address", "localhost:2999", "--zone", s.zone)
	if !strings.Contains(out, "127.0.0.1: 1 block lifted") {
		t.Errorf("caddy robots unblock: %s", out)
	}
	resp, body = get(t, tester, "GET", "/", uaFirefox)
	expectStatus(t, "after unblock", resp, body, 200)
	adminJSON(t, "GET", "/robots_guard/blocked?zone="+s.zone, "", http.StatusOK, &list)
	if b := list.Zones[s.zone]; len(b) != 0 {
		t.Errorf("still blocked after unblock: %+v", b)
	}

	// Errors name what is wrong.
	var apiErr struct {
		Error string `json:"error"`
	}
	for _, c := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/robots_guard/unblock", `{"ip": "not-an-ip"}`, 400, "ip: "},
		{"POST", "/robots_guard/unblock", `{"ip": "192.0.2.1", "zone": "nope"}`, 404, `zone "nope": no such zone`},
		{"GET", "/robots_guard/unblock", "", 405, "method GET not allowed (want POST)"},
		{"GET", "/robots_guard/other", "", 404, "unknown endpoint"},
	} {
		adminJSON(t, c.method, c.path, c.body, c.status, &apiErr)
		if !strings.Contains(apiErr.Error, c.want) {
			t.Errorf("%s %s: error %q, want it to contain %q", c.method, c.path, apiErr.Error, c.want)
		}
	}
}

// adminJSON sends a request to the test Caddy's admin API, checks the
// status and decodes the JSON answer into out.
func adminJSON(t *testing.T, method, path, body string, status int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, "http://localhost:2999"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, status, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, data)
	}
}

// runCLI runs a robots subcommand and returns its output.
func runCLI(t *testing.T, cmd *cobra.Command, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String()
}
