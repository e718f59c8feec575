package caddymodule

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	// The standard modules, for adapting whole Caddyfiles.
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/robotsguard/robotsguard/policy"
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
	ranges := filepath.Join(t.TempDir(), "gptbot.json")
	if err := os.WriteFile(ranges, []byte(`{"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := unmarshal(t, `robots_guard {
		robots /srv/robots.txt
		robots_optional
		serve_robots off
		mode dry_run
		block_class ai seo
		block_class bad
		trap /trap/ /*.bak$
		sitemap https://example.com/sitemap.xml
		crawl_delay 2s
		rate ai 5s
		rate script 500ms
		rate search 0s
		burst 4
		grace 2
		strikes 7 12
		ipv4_prefix 24
		ipv6_prefix 56
		crawler_share 2
		crawler_ipv4_prefix 22
		crawler_ipv6_prefix 40
		window 5m
		cooldown 10m 12h
		tarpit 20s 50
		escalate_verified_search
		allow_bad_agents
		allow_impostors
		allow_ip 10.0.0.0/8 192.0.2.1
		allow_token MyMonitor
		verify {
			wait 200ms
			lookup_timeout 2s
			ttl 30m
			ranges gptbot `+ranges+`
		}
		bot acmebot monitor AcmeBot "Acme Check"
		max_clients 5000
		max_blocks 800
		state_ttl 2h
		ua_cache 1MiB
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
	off := false
	want := &Handler{
		Robots: "/srv/robots.txt", RobotsOptional: true, ServeRobots: &off, Mode: "dry_run",
		BlockClasses: []string{"ai", "seo", "bad"},
		Traps:        []string{"/trap/", "/*.bak$"},
		Sitemaps:     []string{"https://example.com/sitemap.xml"},
		CrawlDelay:   caddy.Duration(2 * time.Second),
		Rates:        map[string]caddy.Duration{"ai": caddy.Duration(5 * time.Second), "script": caddy.Duration(500 * time.Millisecond), "search": 0},
		Burst:        4, Grace: 2, Strikes: 7, AddressStrikes: 12, IPv4Prefix: 24, IPv6Prefix: 56,
		CrawlerShare: 2, CrawlerIPv4Prefix: 22, CrawlerIPv6Prefix: 40,
		Window:   caddy.Duration(5 * time.Minute),
		Cooldown: caddy.Duration(10 * time.Minute), MaxCooldown: caddy.Duration(12 * time.Hour),
		Tarpit: caddy.Duration(20 * time.Second), TarpitMax: 50,
		EscalateVerifiedSearch: true, AllowBadAgents: true, AllowImpostors: true,
		AllowIPs:    []string{"10.0.0.0/8", "192.0.2.1"},
		AllowTokens: []string{"MyMonitor"},
		Verify: &VerifyConfig{
			Wait: caddy.Duration(200 * time.Millisecond), LookupTimeout: caddy.Duration(2 * time.Second),
			TTL: caddy.Duration(30 * time.Minute), Ranges: map[string]string{"gptbot": ranges},
		},
		Bots:       []uaclass.Bot{{Token: "acmebot", Class: uaclass.Monitor, Name: "acmebot", Match: []string{"AcmeBot", "Acme Check"}, Source: "config"}},
		MaxClients: 5000, MaxBlocks: 800, StateTTL: caddy.Duration(2 * time.Hour), UACache: 1 << 20, Zone: "shop",
		DenyStatus: 404, DenyBody: "Not here", ThrottleStatus: 503,
		LogAllowed: 0.01,
		XRobotsTags: []policy.IndexRule{
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

	// Verification may be turned off; grace 0 means none.
	h, err = unmarshal(t, "robots_guard {\n robots /srv/robots.txt\n robots_optional\n verify off\n serve_robots on\n grace 0\n}")
	if err != nil || h.Robots != "/srv/robots.txt" || h.Verify == nil || !h.Verify.Disabled || h.ServeRobots == nil || !*h.ServeRobots || h.Grace != -1 {
		t.Errorf("short form: %+v, %v", h, err)
	}
	// A robots.txt read from the application, with the fetch's options.
	h, err = unmarshal(t, "robots_guard {\n robots http://127.0.0.1:3000/robots.txt\n robots_host www.example.com\n robots_header x-forwarded-proto https\n robots_header X-Site shop\n robots_refresh 30s\n}")
	want = &Handler{
		Robots: "http://127.0.0.1:3000/robots.txt", RobotsHost: "www.example.com",
		RobotsHeaders: map[string]string{"X-Forwarded-Proto": "https", "X-Site": "shop"},
		RobotsRefresh: caddy.Duration(30 * time.Second),
	}
	if err != nil || !reflect.DeepEqual(h, want) {
		t.Errorf("robots URL: %+v, %v", h, err)
	}
	// The adapter checks a copy: the defaults stay out of the JSON.
	if h, err := unmarshal(t, "robots_guard"); err != nil || !reflect.DeepEqual(h, &Handler{}) {
		t.Errorf("bare directive: %+v, %v", h, err)
	}
	if h, err := unmarshal(t, "robots_guard {\n robots https://app.internal/robots.txt\n}"); err != nil || !reflect.DeepEqual(h, &Handler{Robots: "https://app.internal/robots.txt"}) {
		t.Errorf("robots URL alone: %+v, %v", h, err)
	}
	// Sizes take Caddy's units.
	for in, want := range map[string]int{"4MiB": 4 << 20, "512KB": 512000, "1048576": 1 << 20, "2mb": 2000000} {
		if h, err := unmarshal(t, "robots_guard {\n ua_cache "+in+"\n}"); err != nil || h.UACache != want {
			t.Errorf("ua_cache %s = %d, %v; want %d", in, h.UACache, err, want)
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
		robots_optional
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
	if !strings.Contains(js, `"robots":"/srv/robots.txt","robots_optional":true,"traps":["/trap/"]`) {
		t.Errorf("options not adapted: %s", js)
	}
	_, _, err = adapter.Adapt([]byte(":8080 {\n\trobots_guard {\n\t\tstrikes none\n\t}\n}"), nil)
	if err == nil || !strings.Contains(err.Error(), "robots_guard: strikes: 'none' is not a whole number, at Caddyfile:3") {
		t.Errorf("adapting a bad option: %v", err)
	}
}

// TestCaddyfileDirectiveLine: a robots.txt file on the directive line,
// which Caddy would read as a path matcher (issue 26, mistake 3), fails
// adaptation with the fix; a real matcher still scopes the guard.
func TestCaddyfileDirectiveLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.txt") // an existing file, not named robots.txt
	if err := os.WriteFile(file, []byte("User-agent: *\nDisallow: /x/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	adapter := caddyconfig.GetAdapter("caddyfile")
	for _, arg := range []string{"/srv/www/robots.txt", "/ROBOTS.TXT", file} {
		_, _, err := adapter.Adapt([]byte(":8080 {\n\trobots_guard "+arg+" {\n\t\ttrap /trap/\n\t}\n\tfile_server\n}"), nil)
		want := "robots_guard: '" + arg + "' would be read as a request matcher (only requests for that path would be guarded); name the robots.txt file in the block: robots_guard { robots " + arg + " }, at Caddyfile:2"
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("robots_guard %s: %v\nwant %s", arg, err, want)
		}
	}
	for _, matcher := range []string{"/blog/*", "@bots", "*"} {
		out, _, err := adapter.Adapt([]byte(":8080 {\n\t@bots header User-Agent *bot*\n\trobots_guard "+matcher+" {\n\t\ttrap /trap/\n\t}\n\tfile_server\n}"), nil)
		if err != nil {
			t.Errorf("robots_guard %s: %v", matcher, err)
			continue
		}
		want := map[string]string{"/blog/*": `"match":[{"path":["/blog/*"]}],"handle":[{"handler":"robots_guard","traps":["/trap/"]}]`,
			"@bots": `"match":[{"header":{"User-Agent":["*bot*"]}}],"handle":[{"handler":"robots_guard","traps":["/trap/"]}]`,
			"*":     `"routes":[{"handle":[{"handler":"robots_guard","traps":["/trap/"]},`}[matcher]
		if !strings.Contains(string(out), want) {
			t.Errorf("robots_guard %s adapted to %s\nwant %s", matcher, out, want)
		}
	}
}
