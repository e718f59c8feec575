package caddymodule

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsguard/robotsguard/internal/field"
)

// provisionJSON decodes a handler's JSON config as Caddy does and
// provisions it.
func provisionJSON(t testing.TB, js string) (*Handler, error) {
	t.Helper()
	var h Handler
	if err := caddy.StrictUnmarshalJSON([]byte(js), &h); err != nil {
		return nil, err
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	err := h.Provision(ctx)
	_ = h.Cleanup()
	return &h, err
}

// TestConfigErrors: every option with a bad value, in both config forms,
// fails with a message that names the option, and in the Caddyfile the
// line; the JSON form fails in Provision, before any value is used, and
// never panics. Where a form cannot express the bad value, its column is
// empty (a JSON type error is Caddy's own).
func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	badRanges := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(badRanges, []byte(`{"prefixes": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	testKey := filepath.Join(dir, "test-key.jwks") // the RFC 9421 example key
	if err := os.WriteFile(testKey, []byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	agentKey := newTestAgentKey(t).jwks
	robotsFile := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robotsFile, []byte("User-agent: *\nDisallow: /admin/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(dir, "wwww", "robots.txt")
	const classes = "(want one of browser, search, ai, seo, social, monitor, script, bad, bot, poser, unknown)"
	const parts = ", or a part of class ai: ai-training, ai-search, ai-user"
	covered := map[string]bool{}
	defer func() {
		for name := range caddyfileOptions {
			if !covered[name] {
				t.Errorf("option %s has no bad value in the table", name)
			}
		}
	}()
	for _, tc := range []struct {
		caddyfile, wantCaddyfile string
		json, wantJSON           string
	}{
		{"robots_guard robots.txt", "robots_guard: unexpected argument 'robots.txt' (name the robots.txt file with the robots option), at Testfile:1", "", ""},
		{"bogus 1", "robots_guard: unrecognized option 'bogus', at Testfile:2", `"bogus": 1`, `robots_guard: bogus: unknown field`},
		// Gone (issue 27): a verified user-triggered fetcher is held only to
		// the groups that name it, a claim to the "*" group.
		{"user_triggered_skip_global", "robots_guard: unrecognized option 'user_triggered_skip_global', at Testfile:2", `"user_triggered_skip_global": true`, `robots_guard: user_triggered_skip_global: unknown field`},
		{"tarpit_max 50", "robots_guard: unrecognized option 'tarpit_max' (did you mean 'tarpit <duration> <max held>'? tarpit_max is the JSON name), at Testfile:2", `"tarpit_max": "50"`, `robots_guard: tarpit_max: want a whole number, got a string ("50")`},
		{"block_classes ai", "robots_guard: unrecognized option 'block_classes' (did you mean 'block_class'? block_classes is the JSON name), at Testfile:2", `"block_class": ["ai"]`, `robots_guard: block_class: unknown field (did you mean 'block_classes'?)`},
		{"max_cooldown 1h", "robots_guard: unrecognized option 'max_cooldown' (did you mean 'cooldown <duration> <max>'? max_cooldown is the JSON name), at Testfile:2", "", ""},
		{"verify {\n  rangs x\n }", "robots_guard: verify: unrecognized option 'rangs' (did you mean 'ranges'?), at Testfile:3", "", ""},
		{"crawl_delay -1s\n tarpit_max 5\n burst -2\n trap private", "robots_guard: crawl_delay: must be above 0, got -1s, at Testfile:2\nrobots_guard: unrecognized option 'tarpit_max' (did you mean 'tarpit <duration> <max held>'? tarpit_max is the JSON name), at Testfile:3\nrobots_guard: burst: must be at least 1, got -2, at Testfile:4\nrobots_guard: trap: path \"private\" must start with '/' or '*', at Testfile:5",
			`"crawl_delay": -1, "burst": -2, "traps": ["/a/", "b", "/c/", "d"], "strikes": "x", "rates": {"ai": "1"}`,
			"robots_guard: traps[1]: path \"b\" must start with '/' or '*'\nrobots_guard: traps[3]: path \"d\" must start with '/' or '*'\nrobots_guard: crawl_delay: must be above 0, got -1ns\nrobots_guard: rates.ai: \"1\" has no unit: write \"1s\" for seconds, \"1ms\" for milliseconds\nrobots_guard: burst: must be at least 1, got -2\nrobots_guard: strikes: want a whole number, got a string (\"x\")"},
		{"robots http:///x\n robots_host example.com\n robots_refresh 1m", `robots_guard: robots: "http:///x" is not an absolute http(s) URL, at Testfile:2`, "", ""},
		{"store redis {\n  colour red\n  timeout 1s\n }\n burst 0", "robots_guard: store: unrecognized option 'colour' (want url, key_prefix, timeout or on_error), at Testfile:3\nrobots_guard: burst: must be at least 1, got 0, at Testfile:6", "", ""},
		{"verify {\n  wait forever\n  ttl 0s\n  lookup_timeout 1s\n }\n web_bot_auth {\n  nonce_cache 0\n }\n burst 0 1\n zone", "robots_guard: verify wait: 'forever' is not a duration, at Testfile:3\nrobots_guard: verify ttl: must be above 0, got 0s, at Testfile:4\nrobots_guard: web_bot_auth nonce_cache: must be at least 1, got 0, at Testfile:8\nrobots_guard: burst: want one argument, got 2, at Testfile:10\nrobots_guard: zone: want one argument, got 0, at Testfile:11", "", ""},
		{"crawl_delay 500us", "robots_guard: crawl_delay: must be at least 1ms, got 500µs, at Testfile:2", `"crawl_delay": 2`, `robots_guard: crawl_delay: must be at least 1ms, got 2ns (JSON numbers are nanoseconds; write "2s")`},
		{"cooldown 900ns", "robots_guard: cooldown: must be at least 1s, got 900ns, at Testfile:2", `"cooldown": 900`, `robots_guard: cooldown: must be at least 1s, got 900ns (JSON numbers are nanoseconds; write "900s")`},
		{"", "", `"rates": {"script": "1"}`, `robots_guard: rates.script: "1" has no unit: write "1s" for seconds, "1ms" for milliseconds`},
		{"", "", `"rates": {"script": 5, "ai": 0}, "window": 600, "state_ttl": "10ms", "verify": {"ttl": 60}`, "robots_guard: rates.script: must be at least 1ms, got 5ns (JSON numbers are nanoseconds; write \"5s\")\nrobots_guard: window: must be at least 1s, got 600ns (JSON numbers are nanoseconds; write \"600s\")\nrobots_guard: verify.ttl: must be at least 1s, got 60ns (JSON numbers are nanoseconds; write \"60s\")\nrobots_guard: state_ttl: must be at least 1s, got 10ms"},
		{"", "", `"store": "redis://127.0.0.1:6379"`, `robots_guard: store: want an object such as {"module": "redis", "url": "redis://127.0.0.1:6379"}, got "redis://127.0.0.1:6379"`},
		{"", "", `"store": {"module": "redis", "url": "redis://127.0.0.1:6379", "timeout": 250}`, `robots_guard: store.timeout: must be at least 1ms, got 250ns (JSON numbers are nanoseconds; write "250s")`},
		{"", "", `"verify": {"wait": "soon", "ranges": {"gptbot": 5}}, "bots": [{"token": "x", "class": "alien", "match": ["x"]}]`, "robots_guard: verify.wait: \"soon\" is not a duration (write e.g. \"2s\", \"500ms\", \"1h30m\" or \"2d\")\nrobots_guard: verify.ranges.gptbot: want a string, got a number (5)\nrobots_guard: bots[0].class: unknown class \"alien\" (want one of browser, search, ai, seo, social, monitor, script, bad, bot, poser, unknown)"},
		{"", "", `"log_repeats": 5, "web_bot_auth": {"max_validity": 3600}`, "robots_guard: web_bot_auth.max_validity: must be at least 1s, got 3.6µs (JSON numbers are nanoseconds; write \"3600s\")\nrobots_guard: log_repeats: must be at least 1ms, got 5ns (JSON numbers are nanoseconds; write \"5s\")"},
		{"strikess 3", "robots_guard: unrecognized option 'strikess' (did you mean 'strikes'?), at Testfile:2", "", ""},
		{"x_robot_tag /x noindex", "robots_guard: unrecognized option 'x_robot_tag' (did you mean 'x_robots_tag'?), at Testfile:2", "", ""},
		{"robots\n robots " + robotsFile, "robots_guard: robots: want one argument, got 0, at Testfile:2", "", ""},
		{"robots " + robotsFile + "\n robots /b", "robots_guard: option 'robots' already specified, at Testfile:3", "", ""},
		// Issue 26, mistake 2: a typo in the path was one warning at run time.
		{"robots " + typo, "robots_guard: robots: " + typo + " does not exist (a typo in the path?); to start without it on purpose, with no rules until it appears, add robots_optional, at Testfile:2", `"robots": "` + typo + `"`, "robots_guard: robots: " + typo + " does not exist (a typo in the path?); to start without it on purpose, with no rules until it appears, add robots_optional"},
		{"robots " + dir, "robots_guard: robots: " + dir + " is a folder; name the robots.txt file in it, at Testfile:2", "", ""},
		{"robots_optional", "robots_guard: robots_optional: only for a robots.txt file (robots /path/to/robots.txt), which may then be missing at start, at Testfile:2", `"robots": "http://127.0.0.1:3000/robots.txt", "robots_optional": true`, "robots_guard: robots_optional: only for a robots.txt file (robots /path/to/robots.txt), which may then be missing at start"},
		{"robots ftp://127.0.0.1/robots.txt", `robots_guard: robots: "ftp://127.0.0.1/robots.txt": only http and https URLs can be fetched, at Testfile:2`, `"robots": "ftp://127.0.0.1/robots.txt"`, `robots_guard: robots: "ftp://127.0.0.1/robots.txt": only http and https URLs can be fetched`},
		{"robots http:///robots.txt", `robots_guard: robots: "http:///robots.txt" is not an absolute http(s) URL, at Testfile:2`, `"robots": "https://:443/robots.txt"`, `robots_guard: robots: "https://:443/robots.txt" is not an absolute http(s) URL`},
		{`robots "http://127.0.0.1:3000/robots .txt"`, `robots_guard: robots: "http://127.0.0.1:3000/robots .txt" contains white space or control characters, at Testfile:2`, "", ""},
		{"robots_host example.com", "robots_guard: robots_host: only for a robots.txt read from a URL (robots http://... or https://...), at Testfile:2", `"robots": "` + robotsFile + `", "robots_host": "example.com"`, "robots_guard: robots_host: only for a robots.txt read from a URL (robots http://... or https://...)"},
		{"robots http://127.0.0.1:3000/robots.txt\n robots_host example.com/x", `robots_guard: robots_host: "example.com/x" is not a host name (want host or host:port), at Testfile:3`, `"robots": "http://127.0.0.1:3000/robots.txt", "robots_host": "example.com:"`, `robots_guard: robots_host: "example.com:" is not a host name (want host or host:port)`},
		{"robots_host", "robots_guard: robots_host: want one argument, got 0, at Testfile:2", "", ""},
		{"robots_header X-Forwarded-Proto", "robots_guard: robots_header: want <field> <value>, got 1 arguments, at Testfile:2", "", ""},
		{"robots_header X-Forwarded-Proto https", "robots_guard: robots_header: only for a robots.txt read from a URL (robots http://... or https://...), at Testfile:2", `"robots_headers": {"X-Forwarded-Proto": "https"}`, "robots_guard: robots_headers.X-Forwarded-Proto: only for a robots.txt read from a URL (robots http://... or https://...)"},
		{"robots http://127.0.0.1:3000/robots.txt\n robots_header host example.com", "robots_guard: robots_header: header Host: set the host with its own option, at Testfile:3", `"robots": "http://127.0.0.1:3000/robots.txt", "robots_headers": {"If-None-Match": "*"}`, "robots_guard: robots_headers.If-None-Match: header If-None-Match is set by the fetch itself"},
		{"robots http://127.0.0.1:3000/robots.txt\n robots_header X-A 1\n robots_header x-a 2", "robots_guard: robots_header: field 'X-A' already set, at Testfile:4", "", ""},
		{"robots_refresh soon", "robots_guard: robots_refresh: 'soon' is not a duration, at Testfile:2", "", ""},
		{"robots_refresh 0s", "robots_guard: robots_refresh: must be above 0, got 0s, at Testfile:2", "", ""},
		{"robots http://127.0.0.1:3000/robots.txt\n robots_refresh 100ms", "robots_guard: robots_refresh: must be at least 1s, got 100ms, at Testfile:3", `"robots": "http://127.0.0.1:3000/robots.txt", "robots_refresh": -1`, "robots_guard: robots_refresh: must be at least 1s, got -1ns"},
		{"robots " + robotsFile + "\n robots_refresh 1m", "robots_guard: robots_refresh: only for a robots.txt read from a URL (robots http://... or https://...), at Testfile:3", "", ""},
		{"serve_robots maybe", "robots_guard: serve_robots: want on or off, got 'maybe', at Testfile:2", `"serve_robots": "maybe"`, `robots_guard: serve_robots: want true or false, got a string ("maybe")`},
		{"mode loud", `robots_guard: mode: unknown mode "loud" (want enforce or dry_run), at Testfile:2`, `"mode": "loud"`, `robots_guard: mode: unknown mode "loud" (want enforce or dry_run)`},
		{"mode enforce\n mode dry_run", "robots_guard: option 'mode' already specified, at Testfile:3", "", ""},
		{"block_class ai\n block_class robots", `robots_guard: block_class: unknown class "robots" ` + classes + parts + `, at Testfile:3`, `"block_classes": ["ai", "robots"]`, `robots_guard: block_classes[1]: unknown class "robots" ` + classes + parts},
		{"block_class browser", "robots_guard: block_class: refusing to block browsers, at Testfile:2", `"block_classes": ["browser"]`, "robots_guard: block_classes[0]: refusing to block browsers"},
		{"block_class", "robots_guard: block_class: want at least one argument, got 0 arguments, at Testfile:2", "", ""},
		{"trap /ok/ private", `robots_guard: trap: path "private" must start with '/' or '*', at Testfile:2`, `"traps": ["/ok/", "private"]`, `robots_guard: traps[1]: path "private" must start with '/' or '*'`},
		{"sitemap /sitemap.xml", `robots_guard: sitemap: "/sitemap.xml" is not an absolute http(s) URL, at Testfile:2`, `"sitemaps": ["not-a-url"]`, `robots_guard: sitemaps[0]: "not-a-url" is not an absolute http(s) URL`},
		{"", "", `"sitemaps": ["https://example.com/a\nDisallow: /"]`, `robots_guard: sitemaps[0]: "https://example.com/a\nDisallow: /" contains white space or control characters`},
		{"crawl_delay soon", "robots_guard: crawl_delay: 'soon' is not a duration, at Testfile:2", `"crawl_delay": "soon"`, `robots_guard: crawl_delay: "soon" is not a duration (write e.g. "2s", "500ms", "1h30m" or "2d")`},
		{"crawl_delay 0s", "robots_guard: crawl_delay: must be above 0, got 0s, at Testfile:2", "", ""},
		{"crawl_delay -1s", "robots_guard: crawl_delay: must be above 0, got -1s, at Testfile:2", `"crawl_delay": -1000000000`, "robots_guard: crawl_delay: must be above 0, got -1s"},
		{"rate ai", "robots_guard: rate: want <class> <duration>, got 1 arguments, at Testfile:2", "", ""},
		{"rate alien 1s", `robots_guard: rate: unknown class "alien" ` + classes + `, at Testfile:2`, `"rates": {"alien": 1}`, `robots_guard: rates.alien: unknown class "alien" ` + classes},
		{"rate ai fast", "robots_guard: rate: 'fast' is not a duration, at Testfile:2", "", ""},
		{"rate ai -1s", "robots_guard: rate: must not be negative, got -1s, at Testfile:2", `"rates": {"ai": -1000000000}`, "robots_guard: rates.ai: must not be negative, got -1s"},
		{"rate ai 1s\n rate ai 2s", "robots_guard: rate: class 'ai' already has a rate, at Testfile:3", "", ""},
		{"burst 0", "robots_guard: burst: must be at least 1, got 0, at Testfile:2", "", ""},
		{"burst -2", "robots_guard: burst: must be at least 1, got -2, at Testfile:2", `"burst": -2`, "robots_guard: burst: must be at least 1, got -2"},
		{"grace -2", "robots_guard: grace: must be at least -1, got -2, at Testfile:2", `"grace": -2`, "robots_guard: grace: must be at least -1, got -2"},
		{"strikes many", "robots_guard: strikes: 'many' is not a whole number, at Testfile:2", `"strikes": "many"`, `robots_guard: strikes: want a whole number, got a string ("many")`},
		{"strikes 0", "robots_guard: strikes: must be at least 1, got 0, at Testfile:2", `"strikes": -1`, "robots_guard: strikes: must be at least 1, got -1"},
		{"strikes 5 0", "robots_guard: strikes <per address>: must be at least 1, got 0, at Testfile:2", `"address_strikes": -1`, "robots_guard: address_strikes: must be at least 1, got -1"},
		{"strikes 5 10 15", "robots_guard: strikes: want <n> [<per address>], got 3 arguments, at Testfile:2", "", ""},
		{"ipv4_prefix 33", "robots_guard: ipv4_prefix: 33 is not an IPv4 prefix length (1-32), at Testfile:2", `"ipv4_prefix": 40`, "robots_guard: ipv4_prefix: 40 is not an IPv4 prefix length (1-32)"},
		{"ipv6_prefix /64", "robots_guard: ipv6_prefix: '/64' is not a whole number, at Testfile:2", `"ipv6_prefix": 129`, "robots_guard: ipv6_prefix: 129 is not an IPv6 prefix length (1-128)"},
		{"ipv6_prefix 0", "robots_guard: ipv6_prefix: must be at least 1, got 0, at Testfile:2", `"ipv6_prefix": -1`, "robots_guard: ipv6_prefix: -1 is not an IPv6 prefix length (1-128)"},
		{"crawler_share -2", "robots_guard: crawler_share: -2 is not a share (at least 1; -1: off), at Testfile:2", `"crawler_share": -2`, "robots_guard: crawler_share: -2 is not a share (at least 1; -1: off)"},
		{"crawler_share all", "robots_guard: crawler_share: 'all' is not a whole number, at Testfile:2", "", ""},
		{"crawler_ipv6_prefix 129", "robots_guard: crawler_ipv6_prefix: 129 is not an IPv6 prefix length (1-128), at Testfile:2", "", ""},
		{"crawler_ipv4_prefix 33", "robots_guard: crawler_ipv4_prefix: 33 is not an IPv4 prefix length (1-32), at Testfile:2", `"crawler_ipv6_prefix": 129`, "robots_guard: crawler_ipv6_prefix: 129 is not an IPv6 prefix length (1-128)"},
		{"window 0s", "robots_guard: window: must be above 0, got 0s, at Testfile:2", `"window": -1000000000`, "robots_guard: window: must be above 0, got -1s"},
		{"cooldown", "robots_guard: cooldown: want <duration> [<max>], got 0 arguments, at Testfile:2", "", ""},
		{"cooldown x", "robots_guard: cooldown: 'x' is not a duration, at Testfile:2", "", ""},
		{"cooldown -1h", "robots_guard: cooldown: must be above 0, got -1h0m0s, at Testfile:2", `"cooldown": -3600000000000`, "robots_guard: cooldown: must be above 0, got -1h0m0s"},
		{"cooldown 1h 0s", "robots_guard: cooldown <max>: must be above 0, got 0s, at Testfile:2", `"max_cooldown": -1`, "robots_guard: max_cooldown: must be above 0, got -1ns"},
		{"cooldown 1h 1m", "robots_guard: cooldown <max>: 1m0s is shorter than cooldown 1h0m0s, at Testfile:2", `"cooldown": 3600000000000, "max_cooldown": 60000000000`, "robots_guard: max_cooldown: 1m0s is shorter than cooldown 1h0m0s"},
		{"cooldown 48h", "robots_guard: max cooldown 24h0m0s is shorter than cooldown 48h0m0s, at Testfile:1", `"cooldown": 172800000000000`, "robots_guard: max cooldown 24h0m0s is shorter than cooldown 48h0m0s"},
		{"tarpit", "robots_guard: tarpit: want <duration> [<max held>], got 0 arguments, at Testfile:2", "", ""},
		{"tarpit 0s", "robots_guard: tarpit: must be above 0, got 0s, at Testfile:2", `"tarpit": -1000000000`, "robots_guard: tarpit: must be above 0, got -1s"},
		{"tarpit 10s many", "robots_guard: tarpit <max held>: 'many' is not a whole number, at Testfile:2", "", ""},
		{"tarpit 10s 0", "robots_guard: tarpit <max held>: must be at least 1, got 0, at Testfile:2", `"tarpit_max": -1`, "robots_guard: tarpit_max: must be at least 1, got -1"},
		{"tarpit 10s -1", "robots_guard: tarpit <max held>: must be at least 1, got -1, at Testfile:2", `"tarpit": 10000000000, "tarpit_max": -1`, "robots_guard: tarpit_max: must be at least 1, got -1"},
		{"escalate_verified_search on", "robots_guard: escalate_verified_search: takes no arguments, got 'on', at Testfile:2", `"escalate_verified_search": "on"`, `robots_guard: escalate_verified_search: want true or false, got a string ("on")`},
		{"allow_bad_agents yes", "robots_guard: allow_bad_agents: takes no arguments, got 'yes', at Testfile:2", "", ""},
		{"allow_impostors yes", "robots_guard: allow_impostors: takes no arguments, got 'yes', at Testfile:2", "", ""},
		{"block_class ai-everything", `robots_guard: block_class: unknown class "ai-everything" ` + classes + parts + `, at Testfile:2`, `"block_classes": ["ai-everything"]`, `robots_guard: block_classes[0]: unknown class "ai-everything" ` + classes + parts},
		{"allow_ip 10.0.0.0/33", `robots_guard: allow_ip: invalid IP range "10.0.0.0/33", at Testfile:2`, `"allow_ips": ["10.0.0.0/33"]`, `robots_guard: allow_ips[0]: invalid IP range "10.0.0.0/33"`},
		{"allow_ip localhost", `robots_guard: allow_ip: invalid IP "localhost", at Testfile:2`, `"allow_ips": ["300.1.1.1"]`, `robots_guard: allow_ips[0]: invalid IP "300.1.1.1"`},
		{"posers strict", `robots_guard: posers: unknown mode "strict" (want enforce, log or off), at Testfile:2`, `"posers": "strict"`, `robots_guard: posers: unknown mode "strict" (want enforce, log or off)`},
		{"behaviour on", "robots_guard: behaviour: want 'off' or a block, got 'on', at Testfile:2", "", ""},
		{"behaviour {\n  pages 17\n }", "robots_guard: behaviour pages: must be between 1 and 16, got 17, at Testfile:3", `"behaviour": {"pages": 17}`, "robots_guard: behaviour.pages: must be between 1 and 16, got 17"},
		{"behaviour {\n  pages 3\n  disallowed 5\n }", "robots_guard: behaviour disallowed: must be between 1 and pages (3), got 5, at Testfile:4", `"behaviour": {"pages": 3, "disallowed": 5}`, "robots_guard: behaviour.disallowed: must be between 1 and pages (3), got 5"},
		{"behaviour {\n  window 10ms\n }", "robots_guard: behaviour window: must be between 100ms and 24h, got 10ms, at Testfile:3", `"behaviour": {"window": "10ms"}`, "robots_guard: behaviour.window: must be between 100ms and 24h, got 10ms"},
		{"behaviour {\n  hold 0s\n }", "robots_guard: behaviour hold: must be above 0, got 0s, at Testfile:3", `"behaviour": {"hold": "500ms"}`, "robots_guard: behaviour.hold: must be at least 1s, got 500ms"},
		{"allow_fingerprint t13d1516h2_8daaf6152771", `robots_guard: allow_fingerprint: "t13d1516h2_8daaf6152771" is not a JA4 fingerprint (like t13d1516h2_8daaf6152771_e5627efa2ab1), nor a framing one (like h2:1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p|1:0:256), at Testfile:2`, `"allow_fingerprints": ["t13d1516h2_8daaf6152771_e5627efa2ab1", "x"]`, `robots_guard: allow_fingerprints[1]: "x" is not a JA4 fingerprint (like t13d1516h2_8daaf6152771_e5627efa2ab1), nor a framing one (like h2:1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p|1:0:256)`},
		{"allow_token /x", `robots_guard: allow_token: "/x" is not a product token, at Testfile:2`, `"allow_tokens": ["/x"]`, `robots_guard: allow_tokens[0]: "/x" is not a product token`},
		{"verify on", "robots_guard: verify: want 'off' or a block, got 'on', at Testfile:2", "", ""},
		{"verify {\n  wait forever\n }", "robots_guard: verify wait: 'forever' is not a duration, at Testfile:3", "", ""},
		{"verify {\n  wait 0s\n }", "robots_guard: verify wait: must be above 0, got 0s, at Testfile:3", `"verify": {"wait": -1000000000}`, "robots_guard: verify.wait: must be above 0, got -1s"},
		{"verify {\n  lookup_timeout 0s\n }", "robots_guard: verify lookup_timeout: must be above 0, got 0s, at Testfile:3", `"verify": {"lookup_timeout": -1000000000}`, "robots_guard: verify.lookup_timeout: must be above 0, got -1s"},
		{"verify {\n  ttl 0s\n }", "robots_guard: verify ttl: must be above 0, got 0s, at Testfile:3", `"verify": {"ttl": -1000000000}`, "robots_guard: verify.ttl: must be above 0, got -1s"},
		{"verify {\n  ranges gptbot\n }", "robots_guard: verify ranges: want <token> <file or url>, or published, got 'gptbot' alone, at Testfile:3", "", ""},
		{"verify {\n  ranges gptbot ftp://openai.com/gptbot.json\n }", `robots_guard: verify ranges: "ftp://openai.com/gptbot.json": only http and https URLs can be fetched, at Testfile:3`, `"verify": {"ranges": {"gptbot": "https://"}}`, `robots_guard: verify.ranges.gptbot: "https://" is not an absolute http(s) URL`},
		{"verify {\n  ranges_refresh 10ms\n }", "robots_guard: verify ranges_refresh: must be at least 1s, got 10ms, at Testfile:3", `"verify": {"ranges_refresh": 1000}`, "robots_guard: verify.ranges_refresh: must be at least 1s, got 1µs"},
		{"verify {\n  wait 1s\n  ranges gptbot /nonexistent/gptbot.json\n }", "robots_guard: verify ranges: /nonexistent/gptbot.json: no such file or directory, at Testfile:4", `"verify": {"ranges": {"gptbot": "/nonexistent/gptbot.json"}}`, "robots_guard: verify.ranges.gptbot: /nonexistent/gptbot.json: no such file or directory"},
		{"verify {\n  ranges gptbot " + badRanges + "\n }", "robots_guard: verify ranges: " + badRanges + ": parsing IP ranges: no prefixes, at Testfile:3", `"verify": {"ranges": {"gptbot": "` + badRanges + `"}}`, "robots_guard: verify.ranges.gptbot: " + badRanges + ": parsing IP ranges: no prefixes"},
		{"verify {\n  ranges gptbot /dev/zero\n }", "robots_guard: verify ranges: /dev/zero is not a regular file, at Testfile:3", `"verify": {"ranges": {"gptbot": "/dev/zero"}}`, "robots_guard: verify.ranges.gptbot: /dev/zero is not a regular file"},
		{"verify {\n  ranges /x " + badRanges + "\n }", `robots_guard: verify ranges: "/x" is not a product token, at Testfile:3`, "", ""},
		{"verify {\n  dns 1.1.1.1\n }", "robots_guard: verify: unrecognized option 'dns', at Testfile:3", "", ""},
		{"verify {\n  wiat 1s\n }", "robots_guard: verify: unrecognized option 'wiat' (did you mean 'wait'?), at Testfile:3", "", ""},
		{"web_bot_auth on", "robots_guard: web_bot_auth: unexpected argument 'on' (options go in a block), at Testfile:2", "", ""},
		{"web_bot_auth {\n  trusted_agent https://a.example\n }", "robots_guard: web_bot_auth trusted_agent: want <agent-url> <jwks-file>, got 1 arguments, at Testfile:3", "", ""},
		{"web_bot_auth {\n  trusted_agent http://a.example /x\n }", `robots_guard: web_bot_auth trusted_agent: agent "http://a.example" is not an https URI, at Testfile:3`, `"web_bot_auth": {"trusted_agents": {"http://a.example": "/x"}}`, `robots_guard: web_bot_auth.trusted_agents.http://a.example: agent "http://a.example" is not an https URI`},
		{"web_bot_auth {\n  trusted_agent https://a.example/keys /x\n }", `robots_guard: web_bot_auth trusted_agent: agent "https://a.example/keys" is not an origin (https://host[:port]), at Testfile:3`, "", ""},
		{"web_bot_auth {\n  trusted_agent https://a.example /nonexistent/a.jwks\n }", "robots_guard: web_bot_auth trusted_agent: /nonexistent/a.jwks: no such file or directory, at Testfile:3", `"web_bot_auth": {"trusted_agents": {"https://a.example": "/nonexistent/a.jwks"}}`, "robots_guard: web_bot_auth.trusted_agents.https://a.example: /nonexistent/a.jwks: no such file or directory"},
		{"web_bot_auth {\n  trusted_agent https://a.example " + testKey + "\n }", "robots_guard: web_bot_auth trusted_agent: " + testKey + ": key 0: the RFC 9421 example key must not be trusted, at Testfile:3", `"web_bot_auth": {"trusted_agents": {"https://a.example": "` + testKey + `"}}`, "robots_guard: web_bot_auth.trusted_agents.https://a.example: " + testKey + ": key 0: the RFC 9421 example key must not be trusted"},
		{"web_bot_auth {\n  trusted_agent https://a.example /x\n  trusted_agent https://a.example /y\n }", "robots_guard: web_bot_auth trusted_agent: /x: no such file or directory, at Testfile:3\nrobots_guard: web_bot_auth trusted_agent: https://a.example is already pinned, at Testfile:4", `"web_bot_auth": {"trusted_agents": {"https://a.example": "` + agentKey + `", "https://A.example:443": "` + agentKey + `"}}`, "robots_guard: web_bot_auth.trusted_agents.https://a.example: https://a.example is already pinned"},
		{"web_bot_auth {\n  fetch_directories maybe\n }", "robots_guard: web_bot_auth fetch_directories: want on or off, got 'maybe', at Testfile:3", `"web_bot_auth": {"fetch_directories": "maybe"}`, `robots_guard: web_bot_auth.fetch_directories: want true or false, got a string ("maybe")`},
		{"web_bot_auth {\n  max_validity 0s\n }", "robots_guard: web_bot_auth max_validity: must be above 0, got 0s, at Testfile:3", `"web_bot_auth": {"max_validity": -1}`, "robots_guard: web_bot_auth.max_validity: must be above 0, got -1ns"},
		{"web_bot_auth {\n  clock_skew soon\n }", "robots_guard: web_bot_auth clock_skew: 'soon' is not a duration, at Testfile:3", `"web_bot_auth": {"clock_skew": -1}`, "robots_guard: web_bot_auth.clock_skew: must be above 0, got -1ns"},
		{"web_bot_auth {\n  nonce_cache 0\n }", "robots_guard: web_bot_auth nonce_cache: must be at least 1, got 0, at Testfile:3", `"web_bot_auth": {"nonce_cache": -5}`, "robots_guard: web_bot_auth.nonce_cache: must be at least 1, got -5"},
		{"web_bot_auth {\n  max_validity 1h\n  max_validity 2h\n }", "robots_guard: web_bot_auth: option 'max_validity' already specified, at Testfile:4", "", ""},
		{"web_bot_auth {\n  tag web-bot-auth\n }", "robots_guard: web_bot_auth: unrecognized option 'tag', at Testfile:3", "", ""},
		{"bot x ai", "robots_guard: bot: want <token> <class> <match phrase...>, got 2 arguments, at Testfile:2", "", ""},
		{"bot x alien X", `robots_guard: bot: unknown class "alien" ` + classes + `, at Testfile:2`, "", ""},
		{"bot X ai X", `robots_guard: bot: bot "X": token "X" is not a lower-case product token (want "x"), at Testfile:2`, `"bots": [{"token": "X", "class": "ai", "name": "X", "match": ["X"]}]`, `robots_guard: bots[0]: bot "X": token "X" is not a lower-case product token (want "x")`},
		{"max_clients 0", "robots_guard: max_clients: must be at least 1, got 0, at Testfile:2", `"max_clients": -5`, "robots_guard: max_clients: must be at least 1, got -5"},
		{"max_blocks 0", "robots_guard: max_blocks: must be at least 1, got 0, at Testfile:2", `"max_blocks": -5`, "robots_guard: max_blocks: must be at least 1, got -5"},
		{"state_ttl never", "robots_guard: state_ttl: 'never' is not a duration, at Testfile:2", "", ""},
		{"state_ttl 0s", "robots_guard: state_ttl: must be above 0, got 0s, at Testfile:2", `"state_ttl": -1000000000`, "robots_guard: state_ttl: must be above 0, got -1s"},
		{"store", "robots_guard: store: want memory, redis <url> or a redis block, got 0 arguments, at Testfile:2", "", ""},
		{"store mongodb x", "robots_guard: store: unknown store 'mongodb' (want memory or redis), at Testfile:2", `"store": {"module": "mongodb"}`, `robots_guard: store.module: unknown store "mongodb" (want redis)`},
		{"store memory x", "robots_guard: store: memory takes no arguments, at Testfile:2", `"store": {"url": "redis://127.0.0.1:6379"}`, `robots_guard: store.module: names no store module (want "redis")`},
		{"store redis", "robots_guard: store: no Redis URL (e.g. store redis redis://127.0.0.1:6379), at Testfile:2", `"store": {"module": "redis"}`, "robots_guard: store.url: no Redis URL (e.g. store redis redis://127.0.0.1:6379)"},
		{"store redis http://127.0.0.1:6379", `robots_guard: store: unknown scheme "http" (want redis://, rediss://, unix://, redis+cluster:// or redis+sentinel://), at Testfile:2`, `"store": {"module": "redis", "url": "http://127.0.0.1:6379"}`, `robots_guard: store.url: unknown scheme "http" (want redis://, rediss://, unix://, redis+cluster:// or redis+sentinel://)`},
		{"store redis {\n  url redis://127.0.0.1:6379?pool_size=x\n }", `robots_guard: store url: redis: invalid pool_size number: strconv.Atoi: parsing "x": invalid syntax, at Testfile:3`, "", ""},
		{"store redis {\n  url redis://127.0.0.1:6379\n  timeout 0s\n }", "robots_guard: store timeout: must be above 0, got 0s, at Testfile:4", `"store": {"module": "redis", "url": "redis://127.0.0.1:6379", "timeout": -1}`, "robots_guard: store.timeout: must be above 0, got -1ns"},
		{"store redis redis://127.0.0.1:6379 {\n  on_error maybe\n }", `robots_guard: store on_error: want local, allow or deny, got "maybe", at Testfile:3`, `"store": {"module": "redis", "url": "redis://127.0.0.1:6379", "on_error": "maybe"}`, `robots_guard: store.on_error: want local, allow or deny, got "maybe"`},
		{"store redis redis://127.0.0.1:6379 {\n  key_prefix rg{x}:\n }", `robots_guard: store key_prefix: "rg{x}:" has a brace, which would change the keys' cluster hash slots, at Testfile:3`, "", ""},
		{"store redis {\n  colour red\n }", "robots_guard: store: unrecognized option 'colour' (want url, key_prefix, timeout or on_error), at Testfile:3", `"store": {"module": "redis", "url": "redis://127.0.0.1:6379", "colour": "red"}`, `unknown field "colour"`},
		{"store redis redis://a:1 {\n  url redis://b:2\n }", "robots_guard: store url: the url is already given after 'redis', at Testfile:3", "", ""},
		{"ua_cache lots", "robots_guard: ua_cache: 'lots' is not a size (e.g. 4MiB), at Testfile:2", `"ua_cache": "4MiB"`, `robots_guard: ua_cache: want a whole number, got a string ("4MiB")`},
		{"ua_cache 0", "robots_guard: ua_cache: must be above 0, got 0, at Testfile:2", "", ""},
		{"zone", "robots_guard: zone: want one argument, got 0, at Testfile:2", "", ""},
		{"deny 200", "robots_guard: deny: 200 is not an error status (400-599), at Testfile:2", `"deny_status": 200`, "robots_guard: deny_status: 200 is not an error status (400-599)"},
		{"deny nope", "robots_guard: deny: 'nope' is not a whole number, at Testfile:2", "", ""},
		{"throttle", "robots_guard: throttle: want <status> [<body>], got 0 arguments, at Testfile:2", "", ""},
		{"throttle 600 slow", "robots_guard: throttle: 600 is not an error status (400-599), at Testfile:2", `"throttle_status": 600`, "robots_guard: throttle_status: 600 is not an error status (400-599)"},
		{"log_allowed 2", "robots_guard: log_allowed: 2 is not a fraction between 0 and 1, at Testfile:2", `"log_allowed": -0.5`, "robots_guard: log_allowed: -0.5 is not a fraction between 0 and 1"},
		{"log_allowed NaN", "robots_guard: log_allowed: 'NaN' is not a number, at Testfile:2", "", ""},
		{"log_repeats often", "robots_guard: log_repeats: 'often' is not a duration, at Testfile:2", `"log_repeats": "often"`, "often"},
		{"log_repeats -1s", "robots_guard: log_repeats: -1s is not an interval between 0 (log every request) and 1h0m0s, at Testfile:2", `"log_repeats": 7200000000000`, "robots_guard: log_repeats: 2h0m0s is not an interval between 0 (log every request) and 1h0m0s"},
		{"x_robots_tag /x", "robots_guard: x_robots_tag: want <pattern> [<agent>:] <directive...>, got 1 arguments, at Testfile:2", `"x_robots_tags": [{"pattern": "/x"}]`, "robots_guard: x_robots_tags[0]: no directives for /x"},
		{"x_robots_tag /a noindex\n x_robots_tag x noindex", `robots_guard: x_robots_tag: pattern "x" must start with '/' or '*', at Testfile:3`, `"x_robots_tags": [{"pattern": "/a", "directives": ["noindex"]}, {"pattern": "x", "directives": ["noindex"]}]`, `robots_guard: x_robots_tags[1]: pattern "x" must start with '/' or '*'`},
		{"x_robots_tag /x noindx", `robots_guard: x_robots_tag: unknown indexing directive "noindx", at Testfile:2`, `"x_robots_tags": [{"pattern": "/x", "directives": ["noindx"]}]`, `robots_guard: x_robots_tags[0]: unknown indexing directive "noindx"`},
		{"x_robots_tag /x max-snippet:lots", `robots_guard: x_robots_tag: invalid indexing directive "max-snippet:lots", at Testfile:2`, "", ""},
		{"x_robots_tag /x /bot: noindex", `robots_guard: x_robots_tag: agent "/bot" is not a product token, at Testfile:2`, `"x_robots_tags": [{"pattern": "/x", "agent": "/bot", "directives": ["noindex"]}]`, `robots_guard: x_robots_tags[0]: agent "/bot" is not a product token`},
		{"content_usage strict", `robots_guard: content_usage: unknown mode "strict" (want enforce, log or off), at Testfile:2`, `"content_usage": "strict"`, `robots_guard: content_usage: unknown mode "strict" (want enforce, log or off)`},
		{"content_usage enforce log", "robots_guard: content_usage: want one argument, got 2, at Testfile:2", "", ""},
		{"content_usage_header /blog/", "robots_guard: content_usage_header: want <pattern> <preferences...>, got 1 arguments, at Testfile:2", `"content_usage_headers": [{"pattern": "/blog/"}]`, `robots_guard: content_usage_headers[0]: preferences "": the line states no preference`},
		{"content_usage_header blog train-ai=n", `robots_guard: content_usage_header: pattern "blog" must start with '/' or '*', at Testfile:2`, `"content_usage_headers": [{"pattern": "blog", "preferences": "train-ai=n"}]`, `robots_guard: content_usage_headers[0]: pattern "blog" must start with '/' or '*'`},
		{"content_usage_header / train-ai=n\n content_usage_header /x ai-train=no", `robots_guard: content_usage_header: preferences "ai-train=no": unknown label "ai-train" is ignored (a Content Signals key: write it in a Content-Signal line, or use train-ai and search), at Testfile:3`, `"content_usage_headers": [{"pattern": "/", "preferences": "train-ai=n"}, {"pattern": "/x", "preferences": "ai-train=no"}]`, `robots_guard: content_usage_headers[1]: preferences "ai-train=no": unknown label "ai-train" is ignored (a Content Signals key: write it in a Content-Signal line, or use train-ai and search)`},
		{"content_usage_header /x train-ai=no", `robots_guard: content_usage_header: preferences "train-ai=no": train-ai=no: the value is y or n; the preference is unknown, at Testfile:2`, "", ""},
		{"content_usage_header /x Train-AI=n", `robots_guard: content_usage_header: preferences "Train-AI=n": "Train-AI=n" is not a structured-field dictionary (key starts with an upper-case letter (keys are lower case)): every preference of the line is unknown, at Testfile:2`, "", ""},
		{"content_usage_header /x /y train-ai=n", `robots_guard: content_usage_header: preferences "/y train-ai=n": a statement such as train-ai=n, not a path, at Testfile:2`, "", ""},
		{"canonical always", `robots_guard: canonical: unknown mode "always" (want redirect, header or off), at Testfile:2`, `"canonical": "always"`, `robots_guard: canonical: unknown mode "always" (want redirect, header or off)`},
		{"canonical_redirect_humans please", "robots_guard: canonical_redirect_humans: takes no arguments, got 'please', at Testfile:2", "", ""},
		{"ja4 maybe", `robots_guard: ja4: unknown mode "maybe" (want on or off), at Testfile:2`, `"ja4": "maybe"`, `robots_guard: ja4: unknown mode "maybe" (want on or off)`},
		{"quic maybe", `robots_guard: quic: unknown mode "maybe" (want on or off), at Testfile:2`, `"quic": "maybe"`, `robots_guard: quic: unknown mode "maybe" (want on or off)`},
		{"ja4_header \"X JA4\"", `robots_guard: ja4_header: "X JA4" is not a header name, at Testfile:2`, `"ja4_header": "X JA4"`, `robots_guard: ja4_header: "X JA4" is not a header name`},
	} {
		covered[strings.Fields(tc.caddyfile + " -")[0]] = true
		if tc.caddyfile != "" {
			input := tc.caddyfile
			if !strings.HasPrefix(input, "robots_guard") {
				input = "robots_guard {\n " + input + "\n}"
			}
			_, err := unmarshal(t, input)
			if err == nil || err.Error() != tc.wantCaddyfile {
				t.Errorf("Caddyfile %q:\n got error %v\nwant error %s", tc.caddyfile, err, tc.wantCaddyfile)
			}
		}
		if tc.json != "" {
			_, err := provisionJSON(t, "{"+tc.json+"}")
			if err == nil || !strings.Contains(err.Error(), tc.wantJSON) || strings.HasPrefix(tc.wantJSON, "robots_guard:") && err.Error() != tc.wantJSON {
				t.Errorf("JSON %s:\n got error %v\nwant error %s", tc.json, err, tc.wantJSON)
			}
		}
	}
}

// TestConfigDefaults: Provision writes the handler's own defaults into its
// fields, once, for an empty config; the Caddyfile adapter leaves them out
// of the JSON (TestCaddyfileOptions).
func TestConfigDefaults(t *testing.T) {
	h, err := provisionJSON(t, `{"verify": {"disabled": true}}`)
	if err != nil {
		t.Fatal(err)
	}
	if h.Mode != "enforce" || h.Canonical != "redirect" || h.Zone != "default" || h.DenyStatus != 403 || h.ThrottleStatus != 429 || !h.serve || h.TarpitMax != 0 {
		t.Errorf("defaults: mode %q, canonical %q, zone %q, deny %d, throttle %d, serve %v, tarpit_max %d",
			h.Mode, h.Canonical, h.Zone, h.DenyStatus, h.ThrottleStatus, h.serve, h.TarpitMax)
	}
	h, err = provisionJSON(t, `{"verify": {"disabled": true}, "tarpit": 1000000000, "serve_robots": false}`)
	if err != nil || h.TarpitMax != 100 || h.tarpit.Max() != 100 || h.serve {
		t.Errorf("tarpit_max default with a tarpit: %d (cap %d), serve %v, %v", h.TarpitMax, h.tarpit.Max(), h.serve, err)
	}
}

// TestConfigNamesAgree: the Caddyfile and JSON names of an option agree:
// the same name, or the plural of a repeatable option's name, or a field
// that field.CaddyfileSpellings gives the spelling of (an option that sets
// more than one field), which the hint to a JSON name in a Caddyfile uses.
func TestConfigNamesAgree(t *testing.T) {
	var jsonNames []string
	for f := range reflect.TypeFor[Handler]().Fields() {
		if tag, ok := f.Tag.Lookup("json"); ok {
			jsonNames = append(jsonNames, strings.Split(tag, ",")[0])
		}
	}
	spelled := map[string][]string{} // option -> the fields spelled with it
	for name, spelling := range field.CaddyfileSpellings {
		opt := strings.Fields(spelling)[0]
		if _, ok := caddyfileOptions[opt]; !ok {
			t.Errorf("the spelling of %s names no option: %s", name, spelling)
		}
		spelled[opt] = append(spelled[opt], name)
	}
	covered := map[string]bool{}
	for name, opt := range caddyfileOptions {
		var want []string
		switch {
		case opt.repeatable && strings.HasSuffix(name, "s"):
			want = []string{name + "es"}
		case opt.repeatable:
			want = []string{name + "s"}
		case slices.Contains(jsonNames, name) || spelled[name] == nil:
			want = []string{name}
		}
		want = append(want, spelled[name]...)
		for _, w := range want {
			if !slices.Contains(jsonNames, w) {
				t.Errorf("Caddyfile option %s: no JSON field %s", name, w)
			}
			covered[w] = true
		}
	}
	for _, n := range jsonNames {
		if !covered[n] {
			t.Errorf("JSON field %s has no Caddyfile option", n)
		}
	}
}

// TestConfigFieldsDocumented: every config field has a doc comment of its
// own that states its default, as Caddy's JSON docs show it.
func TestConfigFieldsDocumented(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "handler.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		ts, ok := node.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Handler" && ts.Name.Name != "VerifyConfig" {
			return true
		}
		for _, field := range ts.Type.(*ast.StructType).Fields.List {
			if field.Tag == nil || !field.Names[0].IsExported() {
				continue
			}
			n++
			name := field.Names[0].Name
			switch {
			case len(field.Names) > 1:
				t.Errorf("%s.%s shares its comment with %s", ts.Name.Name, name, field.Names[1].Name)
			case field.Doc == nil || !strings.HasPrefix(field.Doc.Text(), name+" "):
				t.Errorf("%s.%s has no doc comment of its own", ts.Name.Name, name)
			case !strings.Contains(field.Doc.Text(), "Default:"):
				t.Errorf("%s.%s: the doc comment does not state the default", ts.Name.Name, name)
			}
		}
		return false
	})
	if n < 40 {
		t.Errorf("checked only %d fields", n)
	}
}

// TestReferenceListsOptions: the reference page (docs/reference.md) names
// every option.
func TestReferenceListsOptions(t *testing.T) {
	readme, err := os.ReadFile("../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range caddyfileOptions {
		if !strings.Contains(string(readme), "| `"+name) {
			t.Errorf("docs/reference.md's option table lacks %s", name)
		}
	}
	for name := range verifyOptions {
		if !strings.Contains(string(readme), "        "+name) && !strings.Contains(string(readme), "\t\t"+name) {
			t.Errorf("docs/reference.md's verify block lacks %s", name)
		}
	}
}

// FuzzConfigJSON: any JSON config is refused with an error or provisioned;
// Provision never panics on a value.
func FuzzConfigJSON(f *testing.F) {
	for _, s := range []string{
		`{"tarpit_max": -1}`,
		`{"tarpit": 1, "tarpit_max": 9223372036854775807}`,
		`{"sitemaps": ["not-a-url"], "verify": {"disabled": true}}`,
		`{"rates": {"ai": -1, "bogus": 1}, "crawl_delay": -5}`,
		`{"max_clients": 9223372036854775807, "ua_cache": -1, "state_ttl": 1, "verify": {"disabled": true}}`,
		`{"cooldown": 9223372036854775807, "max_cooldown": 1, "window": -1}`,
		`{"x_robots_tags": [{"pattern": "", "directives": []}], "bots": [{"token": "", "match": []}]}`,
		`{"content_usage": "bogus", "content_usage_headers": [{"pattern": "/x", "preferences": "(train-ai"}], "bots": [{"token": "x", "match": ["x"], "purposes": ["train-ai"]}]}`,
		`{"robots": "/dev/zero", "verify": {"ranges": {"x": "/dev/stdin"}, "wait": -1}}`,
		`{"robots": "/", "zone": "", "deny_status": 99, "log_allowed": 1e308, "canonical": "off", "serve_robots": false, "verify": {"disabled": true}}`,
		`{"block_classes": ["browser", "ai"], "allow_ips": ["::/0", "1.2.3.4/40"], "allow_tokens": [""]}`,
		`{"robots": "http://127.0.0.1:1/robots.txt", "robots_host": "x:", "robots_headers": {"Host": "y", "": "z"}, "robots_refresh": 5}`,
		`{"robots": "http://127.0.0.1:1/robots.txt", "robots_refresh": 1000000000, "verify": {"disabled": true}}`,
		`{"crawl_delay": 2, "cooldown": 900, "rates": {"script": "1", "ai": 1e3, "": -1}, "window": "9223372036854775807ns"}`,
		`{"store": "redis://127.0.0.1:6379", "verify": [], "web_bot_auth": {"trusted_agents": {"a.b": 5}}, "bots": [{"class": 99}, null]}`,
		`{"store": 5, "traps": [1, null, "/x"], "block_classes": "ai", "log_repeats": null, "serve_robots": null, "Mode": "x", "mode": 1}`,
		`{"store": {"module": "redis", "url": "redis://127.0.0.1:1", "timeout": 1}, "x_robots_tags": [{"pattern": 1}], "content_usage_headers": {}}`,
		`{"tarpit_max": 5, "max_cooldown": 1, "deny_status": 99999999999999999999, "bogus": {"a": [1, {"b": "c"}]}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		_, _ = provisionJSON(t, js)
	})
}
