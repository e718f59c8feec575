// Package configs holds example Caddyfiles for common deployments; its test
// keeps them valid.
package configs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/robotsguard/robotsguard"
)

// TestExampleConfigs: every example Caddyfile is formatted, adapts without
// warnings, and passes Caddy's validation (every module provisioned, as
// `caddy validate` does), with its absolute paths moved to a temporary
// directory; a server that trusts proxies reads them strictly; every
// server with robots_guard has both its wrappers.
func TestExampleConfigs(t *testing.T) {
	files, err := filepath.Glob("*.Caddyfile")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example configs: %v", err)
	}
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			checkCaddyfile(t, file, body)
		})
	}
}

// TestReadmeCaddyfiles: the README's deploy Caddyfiles work as written:
// each caddyfile block of README.md is checked as the example files are.
func TestReadmeCaddyfiles(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for rest := string(readme); ; {
		_, after, ok := strings.Cut(rest, "```caddyfile\n")
		if !ok {
			break
		}
		block, tail, _ := strings.Cut(after, "```")
		rest = tail
		blocks++
		t.Run(strconv.Itoa(blocks), func(t *testing.T) { checkCaddyfile(t, "README.md", []byte(block)) })
	}
	if blocks < 2 {
		t.Errorf("the README shows %d Caddyfiles, want the deploy section's two", blocks)
	}
}

// checkCaddyfile: body is formatted, adapts without warnings and passes
// Caddy's validation, with its absolute paths moved to a temporary
// directory; a server that trusts proxies reads them strictly.
func checkCaddyfile(t *testing.T, file string, body []byte) {
	t.Helper()
	adapter := caddyconfig.GetAdapter("caddyfile")
	dir := t.TempDir()
	for _, sub := range []string{"www", "robots", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, sub := range []string{"www", "robots"} { // a robots file must exist when the config loads
		if err := os.WriteFile(filepath.Join(dir, sub, "robots.txt"), []byte("User-agent: *\nDisallow: /private/\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text := strings.NewReplacer(
		"/srv/www", filepath.Join(dir, "www"),
		"/etc/robots", filepath.Join(dir, "robots"),
		"/var/log/caddy", filepath.Join(dir, "log"),
	).Replace(string(body))
	out, warnings, err := adapter.Adapt([]byte(text), map[string]any{"filename": file})
	if err != nil {
		t.Fatalf("adapt: %v", err)
	}
	for _, w := range warnings {
		t.Errorf("adapt warning: %s", w)
	}
	if !strings.Contains(string(out), `"handler":"robots_guard"`) {
		t.Errorf("no robots_guard handler in %s", out)
	}
	var cfg caddy.Config
	if err := json.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := caddy.Validate(&cfg); err != nil {
		t.Errorf("validate: %v", err)
	}
	checkStrictProxies(t, out)
	checkWrappers(t, out)
}

// checkWrappers: every server with robots_guard reads how its clients'
// HTTP stacks speak and, over HTTP/3, their QUIC stacks: its
// listener_wrappers have robots_guard and its packet_conn_wrappers
// robots_guard_quic. The directive adds both; a servers block replaces
// both, and Caddy applies only the first servers block that matches a
// server, so the one block must name both.
func checkWrappers(t *testing.T, adapted []byte) {
	t.Helper()
	var cfg struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Routes             json.RawMessage   `json:"routes"`
					ListenerWrappers   []json.RawMessage `json:"listener_wrappers"`
					PacketConnWrappers []json.RawMessage `json:"packet_conn_wrappers"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(adapted, &cfg); err != nil {
		t.Fatal(err)
	}
	has := func(wrappers []json.RawMessage, name string) bool {
		for _, w := range wrappers {
			var m struct{ Wrapper string }
			if json.Unmarshal(w, &m) == nil && m.Wrapper == name {
				return true
			}
		}
		return false
	}
	for name, srv := range cfg.Apps.HTTP.Servers {
		if !strings.Contains(string(srv.Routes), `"handler":"robots_guard"`) {
			continue
		}
		if !has(srv.ListenerWrappers, "robots_guard") {
			t.Errorf("server %s has robots_guard but not its listener wrapper: add listener_wrappers { robots_guard } to the servers block", name)
		}
		if !has(srv.PacketConnWrappers, "robots_guard_quic") {
			t.Errorf("server %s has robots_guard but not its QUIC wrapper: add packet_conn_wrappers { robots_guard_quic } to the servers block", name)
		}
	}
}

// checkStrictProxies: a server that trusts proxies reads X-Forwarded-For
// strictly, from the right. Proxies append to the header, so the left-most
// address is the client's own claim: without strict mode any client could
// get any address blocked by robots_guard and dodge its own block.
func checkStrictProxies(t *testing.T, adapted []byte) {
	t.Helper()
	var cfg struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					TrustedProxies       json.RawMessage `json:"trusted_proxies"`
					TrustedProxiesStrict int             `json:"trusted_proxies_strict"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(adapted, &cfg); err != nil {
		t.Fatal(err)
	}
	for name, srv := range cfg.Apps.HTTP.Servers {
		if srv.TrustedProxies != nil && srv.TrustedProxiesStrict == 0 {
			t.Errorf("server %s trusts proxies without trusted_proxies_strict", name)
		}
	}
}
