package caddymodule

import (
	"encoding/json"
	"net/http"
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

// FuzzRobotsTag: any X-Robots-Tag values are read without panicking, and
// merging directives into them never drops a value the backend sent.
func FuzzRobotsTag(f *testing.F) {
	f.Add("noindex, nofollow", "googlebot: noimageindex")
	f.Add("unavailable_after: 25 Jun 2010 15:00:00 PST", "max-snippet:-1")
	f.Fuzz(func(t *testing.T, a, b string) {
		h := http.Header{}
		h.Add("X-Robots-Tag", a)
		h.Add("X-Robots-Tag", b)
		before := append([]string{}, h.Values("X-Robots-Tag")...)
		mergeRobotsTag(h, map[string][]string{"": {"noindex"}, "googlebot": {"nosnippet"}})
		after := h.Values("X-Robots-Tag")
		if len(after) < len(before) {
			t.Fatalf("merge dropped values: %q -> %q", before, after)
		}
		for i := range before {
			if after[i] != before[i] {
				t.Fatalf("merge changed the backend's value %q to %q", before[i], after[i])
			}
		}
	})
}
