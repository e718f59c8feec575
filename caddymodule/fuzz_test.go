package caddymodule

import (
	"encoding/json"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// FuzzCaddyfile: any option block is either accepted, giving a handler that
// survives a JSON round trip and provisions, or refused with an error; it
// never panics.
func FuzzCaddyfile(f *testing.F) {
	for _, s := range []string{
		"robots /srv/robots.txt\ntrap /trap/ /*.bak$\ncooldown 1m 1h",
		"rate ai 5s\nrate bogus 1s",
		"verify {\n wait 1s\n ranges gptbot /x.json\n}",
		"bot acme monitor Acme \"Acme Check\"",
		"x_robots_tag /a googlebot: noindex \"max-snippet:0\"",
		"deny 404 \"gone\"\nthrottle 503\ntarpit 10s 5",
		"cooldown 48h\nua_cache 4MiB\ngrace 0\nsitemap https://example.com/s.xml",
		"verify off\nzone fuzz\nstrikes 2\nblock_class ai\nallow_token x\nallow_ip ::1",
		"strikes 5 10\nipv4_prefix 24\nipv6_prefix 64\nmax_blocks 10",
		"{\n}\n}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, block string) {
		var h Handler
		err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser("robots_guard {\n" + block + "\n}"))
		if err != nil {
			return
		}
		js, err := json.Marshal(&h)
		if err != nil {
			t.Fatalf("accepted config does not marshal: %v", err)
		}
		var back Handler
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatalf("accepted config does not unmarshal: %v\n%s", err, js)
		}
		if _, err := provisionJSON(t, string(js)); err != nil {
			t.Fatalf("the adapter accepted a config that Provision refuses: %v\n%s", err, js)
		}
	})
}
