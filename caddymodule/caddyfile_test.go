package caddymodule

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	// The standard modules, for adapting whole Caddyfiles.
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/robotsguard/robotsguard/uaclass"
)

func unmarshal(t *testing.T, input string) (*Handler, error) {
	t.Helper()
	var h Handler
	err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(input))
	return &h, err
}

// TestCaddyfileOptions: every option, valid, lands in the JSON field it
// documents.
func TestCaddyfileOptions(t *testing.T) {
	h, err := unmarshal(t, `robots_guard {
		robots /srv/robots.txt
		serve_robots off
		mode dry_run
		block_class ai seo
		block_class bad
		trap /trap/ /*.bak$
		sitemap https://example.com/sitemap.xml
		crawl_delay 2s
		rate ai 5s
		rate script 500ms
		burst 4
		grace 2
		strikes 7 12
		ipv4_prefix 24
		ipv6_prefix 56
		window 5m
		cooldown 10m 12h
		tarpit 20s 50
		escalate_verified_search
		allow_bad_agents
		allow_impostors
		user_triggered_skip_global
		allow_ip 10.0.0.0/8 192.0.2.1
		allow_token MyMonitor
		verify {
			wait 200ms
			lookup_timeout 2s
			ttl 30m
			ranges gptbot /etc/caddy/gptbot.json
		}
		bot acmebot monitor AcmeBot "Acme Check"
		max_clients 5000
		max_blocks 800
		state_ttl 2h
		ua_cache 1048576
		zone shop
		deny 404 "Not here"
		throttle 503
		log_allowed 0.01
		x_robots_tag /reports/*.pdf$ noindex nofollow
		x_robots_tag /images/ googlebot: noimageindex "max-image-preview:none"
		canonical header
		canonical_redirect_humans
	}`)
	if err != nil {
		t.Fatal(err)
	}
	want := &Handler{
		Robots: "/srv/robots.txt", DisableServe: true, Mode: "dry_run",
		BlockClasses: []string{"ai", "seo", "bad"},
		Traps:        []string{"/trap/", "/*.bak$"},
		Sitemaps:     []string{"https://example.com/sitemap.xml"},
		CrawlDelay:   caddy.Duration(2 * time.Second),
		Rates:        map[string]caddy.Duration{"ai": caddy.Duration(5 * time.Second), "script": caddy.Duration(500 * time.Millisecond)},
		Burst:        4, Grace: 2, Strikes: 7, AddressStrikes: 12, IPv4Prefix: 24, IPv6Prefix: 56,
		Window:   caddy.Duration(5 * time.Minute),
		Cooldown: caddy.Duration(10 * time.Minute), MaxCooldown: caddy.Duration(12 * time.Hour),
		Tarpit: caddy.Duration(20 * time.Second), TarpitMax: 50,
		EscalateVerifiedSearch: true, AllowBadAgents: true, AllowImpostors: true, UserTriggeredSkipGlobal: true,
		AllowIPs:    []string{"10.0.0.0/8", "192.0.2.1"},
		AllowTokens: []string{"MyMonitor"},
		Verify: &VerifyConfig{
			Wait: caddy.Duration(200 * time.Millisecond), LookupTimeout: caddy.Duration(2 * time.Second),
			TTL: caddy.Duration(30 * time.Minute), Ranges: map[string]string{"gptbot": "/etc/caddy/gptbot.json"},
		},
		Bots:       []uaclass.Bot{{Token: "acmebot", Class: uaclass.Monitor, Name: "acmebot", Match: []string{"AcmeBot", "Acme Check"}, Source: "config"}},
		MaxClients: 5000, MaxBlocks: 800, StateTTL: caddy.Duration(2 * time.Hour), UACacheBytes: 1 << 20, Zone: "shop",
		DenyStatus: 404, DenyBody: "Not here", ThrottleStatus: 503,
		LogAllowed: 0.01,
		IndexRules: []IndexRule{
			{Pattern: "/reports/*.pdf$", Directives: []string{"noindex", "nofollow"}},
			{Pattern: "/images/", Agent: "googlebot", Directives: []string{"noimageindex", "max-image-preview:none"}},
		},
		Canonical: "header", CanonicalRedirectHumans: true,
	}
	if !reflect.DeepEqual(h, want) {
		got, _ := json.MarshalIndent(h, "", "  ")
		exp, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("got\n%s\nwant\n%s", got, exp)
	}

	// Verification may be turned off.
	h, err = unmarshal(t, "robots_guard {\n robots /srv/robots.txt\n verify off\n serve_robots on\n}")
	if err != nil || h.Robots != "/srv/robots.txt" || h.Verify == nil || !h.Verify.Disabled || h.DisableServe {
		t.Errorf("short form: %+v, %v", h, err)
	}
	if h, err := unmarshal(t, "robots_guard"); err != nil || !reflect.DeepEqual(h, &Handler{}) {
		t.Errorf("bare directive: %+v, %v", h, err)
	}
}

// TestCaddyfileErrors: each bad value fails with a message that names the
// option and the line.
func TestCaddyfileErrors(t *testing.T) {
	for _, tc := range []struct {
		input, want string
	}{
		{"robots_guard robots.txt", "robots_guard: unexpected argument 'robots.txt' (name the robots.txt file with the robots option), at Testfile:1"},
		{"robots_guard {\n bogus 1\n}", "robots_guard: unrecognized option 'bogus', at Testfile:2"},
		{"robots_guard {\n mode on\n}", "robots_guard: mode: unknown mode 'on' (want enforce or dry_run), at Testfile:2"},
		{"robots_guard {\n mode enforce\n mode dry_run\n}", "robots_guard: option 'mode' already specified, at Testfile:3"},
		{"robots_guard {\n robots /a\n robots /b\n}", "robots_guard: option 'robots' already specified, at Testfile:3"},
		{"robots_guard {\n robots\n}", "robots_guard: robots: want one argument, got 0, at Testfile:2"},
		{"robots_guard {\n serve_robots maybe\n}", "robots_guard: serve_robots: want on or off, got 'maybe', at Testfile:2"},
		{"robots_guard {\n block_class robots\n}", `robots_guard: block_class: unknown class "robots" (want one of browser, search, ai, seo, social, monitor, script, bad, bot, unknown), at Testfile:2`},
		{"robots_guard {\n block_class browser\n}", "robots_guard: block_class: refusing to block browsers, at Testfile:2"},
		{"robots_guard {\n block_class\n}", "robots_guard: block_class: want at least one argument, at Testfile:2"},
		{"robots_guard {\n trap private\n}", "robots_guard: trap: path 'private' must start with '/' or '*', at Testfile:2"},
		{"robots_guard {\n sitemap /sitemap.xml\n}", "robots_guard: sitemap: '/sitemap.xml' is not an absolute http(s) URL, at Testfile:2"},
		{"robots_guard {\n crawl_delay soon\n}", "robots_guard: crawl_delay: invalid duration 'soon', at Testfile:2"},
		{"robots_guard {\n crawl_delay -1s\n}", "robots_guard: crawl_delay: invalid duration '-1s', at Testfile:2"},
		{"robots_guard {\n rate ai\n}", "robots_guard: rate: want <class> <duration>, got 1 arguments, at Testfile:2"},
		{"robots_guard {\n rate alien 1s\n}", `robots_guard: rate: unknown class "alien" (want one of browser, search, ai, seo, social, monitor, script, bad, bot, unknown), at Testfile:2`},
		{"robots_guard {\n rate ai fast\n}", "robots_guard: rate: invalid duration 'fast', at Testfile:2"},
		{"robots_guard {\n rate ai 1s\n rate ai 2s\n}", "robots_guard: rate: class 'ai' already has a rate, at Testfile:3"},
		{"robots_guard {\n burst 0\n}", "robots_guard: burst: '0' is not a whole number of at least 1, at Testfile:2"},
		{"robots_guard {\n grace -2\n}", "robots_guard: grace: '-2' is not a whole number of at least -1, at Testfile:2"},
		{"robots_guard {\n strikes many\n}", "robots_guard: strikes: 'many' is not a whole number of at least 1, at Testfile:2"},
		{"robots_guard {\n strikes 5 0\n}", "robots_guard: strikes: '0' is not a whole number of at least 1, at Testfile:2"},
		{"robots_guard {\n strikes 5 10 15\n}", "robots_guard: strikes: want <n> [<per address>], got 3 arguments, at Testfile:2"},
		{"robots_guard {\n ipv4_prefix 33\n}", "robots_guard: ipv4_prefix: '33' is not a prefix length between 1 and 32, at Testfile:2"},
		{"robots_guard {\n ipv6_prefix /64\n}", "robots_guard: ipv6_prefix: '/64' is not a prefix length between 1 and 128, at Testfile:2"},
		{"robots_guard {\n max_blocks 0\n}", "robots_guard: max_blocks: '0' is not a whole number of at least 1, at Testfile:2"},
		{"robots_guard {\n window 0s\n}", "robots_guard: window: invalid duration '0s', at Testfile:2"},
		{"robots_guard {\n cooldown\n}", "robots_guard: cooldown: want <duration> [<max duration>], got 0 arguments, at Testfile:2"},
		{"robots_guard {\n cooldown 1h 1m\n}", "robots_guard: cooldown: max 1m is shorter than 1h, at Testfile:2"},
		{"robots_guard {\n cooldown x\n}", "robots_guard: cooldown: invalid duration 'x', at Testfile:2"},
		{"robots_guard {\n tarpit\n}", "robots_guard: tarpit: want <duration> [<max held>], got 0 arguments, at Testfile:2"},
		{"robots_guard {\n tarpit 0s\n}", "robots_guard: tarpit: invalid duration '0s', at Testfile:2"},
		{"robots_guard {\n tarpit 10s many\n}", "robots_guard: tarpit: max held must be a positive integer, got 'many', at Testfile:2"},
		{"robots_guard {\n allow_bad_agents yes\n}", "robots_guard: yes: takes no arguments, at Testfile:2"},
		{"robots_guard {\n allow_ip 10.0.0.0/33\n}", `robots_guard: allow_ip: invalid IP range "10.0.0.0/33": netip.ParsePrefix("10.0.0.0/33"): prefix length out of range, at Testfile:2`},
		{"robots_guard {\n allow_ip localhost\n}", `robots_guard: allow_ip: invalid IP "localhost": ParseAddr("localhost"): unable to parse IP, at Testfile:2`},
		{"robots_guard {\n allow_token /x\n}", "robots_guard: allow_token: '/x' is not a product token, at Testfile:2"},
		{"robots_guard {\n verify on\n}", "robots_guard: verify: want 'off' or a block, got 'on', at Testfile:2"},
		{"robots_guard {\n verify {\n  wait forever\n }\n}", "robots_guard: verify wait: invalid duration 'forever', at Testfile:3"},
		{"robots_guard {\n verify {\n  ranges gptbot\n }\n}", "robots_guard: verify ranges: want <token> <file>, got 1 arguments, at Testfile:3"},
		{"robots_guard {\n verify {\n  dns 1.1.1.1\n }\n}", "robots_guard: verify: unrecognized option 'dns', at Testfile:3"},
		{"robots_guard {\n bot x ai\n}", "robots_guard: bot: want <token> <class> <match phrase...>, got 2 arguments, at Testfile:2"},
		{"robots_guard {\n bot x alien X\n}", `robots_guard: bot: unknown class "alien" (want one of browser, search, ai, seo, social, monitor, script, bad, bot, unknown), at Testfile:2`},
		{"robots_guard {\n bot X ai X\n}", `robots_guard: bot "X": token "X" is not a lower-case product token (want "x"), at Testfile:2`},
		{"robots_guard {\n max_clients 0\n}", "robots_guard: max_clients: '0' is not a whole number of at least 1, at Testfile:2"},
		{"robots_guard {\n state_ttl never\n}", "robots_guard: state_ttl: invalid duration 'never', at Testfile:2"},
		{"robots_guard {\n ua_cache -5\n}", "robots_guard: ua_cache: '-5' is not a whole number of at least 0, at Testfile:2"},
		{"robots_guard {\n zone\n}", "robots_guard: zone: want one argument, got 0, at Testfile:2"},
		{"robots_guard {\n deny 200\n}", "robots_guard: deny: '200' is not an error status (400-599), at Testfile:2"},
		{"robots_guard {\n throttle\n}", "robots_guard: throttle: want <status> [<body>], got 0 arguments, at Testfile:2"},
		{"robots_guard {\n log_allowed 2\n}", "robots_guard: log_allowed: '2' is not a fraction between 0 and 1, at Testfile:2"},
		{"robots_guard {\n x_robots_tag /x\n}", "robots_guard: x_robots_tag: want <pattern> [<agent>:] <directive...>, got 1 arguments, at Testfile:2"},
		{"robots_guard {\n x_robots_tag x noindex\n}", `robots_guard: x_robots_tag: index rule 0: pattern "x" must start with '/' or '*', at Testfile:2`},
		{"robots_guard {\n x_robots_tag /x noindx\n}", `robots_guard: x_robots_tag: unknown indexing directive "noindx", at Testfile:2`},
		{"robots_guard {\n x_robots_tag /x max-snippet:lots\n}", `robots_guard: x_robots_tag: invalid indexing directive "max-snippet:lots", at Testfile:2`},
		{"robots_guard {\n x_robots_tag /x /bot: noindex\n}", `robots_guard: x_robots_tag: agent "/bot" is not a product token, at Testfile:2`},
		{"robots_guard {\n canonical always\n}", "robots_guard: canonical: unknown mode 'always' (want redirect, header or off), at Testfile:2"},
	} {
		_, err := unmarshal(t, tc.input)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got error %v\nwant error %s", tc.input, err, tc.want)
		}
	}
}

// TestCaddyfileAdapt: the directive works without a global order line and
// runs before reverse_proxy, respond and file_server; a bad option makes
// adaptation fail with a message naming the option and the line.
func TestCaddyfileAdapt(t *testing.T) {
	adapter := caddyconfig.GetAdapter("caddyfile")
	out, _, err := adapter.Adapt([]byte(`:8080 {
	file_server
	respond /hello "hi"
	reverse_proxy /api/* localhost:9000
	robots_guard {
		robots /srv/robots.txt
		trap /trap/
	}
}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	js := string(out)
	rg := strings.Index(js, `"handler":"robots_guard"`)
	if rg < 0 {
		t.Fatalf("no robots_guard handler in %s", js)
	}
	for _, other := range []string{`"handler":"static_response"`, `"handler":"reverse_proxy"`, `"handler":"file_server"`} {
		if i := strings.Index(js, other); i < 0 || i < rg {
			t.Errorf("%s does not come after robots_guard in %s", other, js)
		}
	}
	if !strings.Contains(js, `"robots":"/srv/robots.txt","traps":["/trap/"]`) {
		t.Errorf("options not adapted: %s", js)
	}
	_, _, err = adapter.Adapt([]byte(":8080 {\n\trobots_guard {\n\t\tstrikes none\n\t}\n}"), nil)
	if err == nil || !strings.Contains(err.Error(), "robots_guard: strikes: 'none' is not a whole number of at least 1, at Caddyfile:3") {
		t.Errorf("adapting a bad option: %v", err)
	}
}
