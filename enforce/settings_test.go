package enforce

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/uaclass"
)

// TestSettingsCheck: good settings become the engine's Config (crawl_delay
// for every bot class, a class rate over it, tokens in their normal form);
// each bad value is a *field.Error naming its field as the JSON does.
func TestSettingsCheck(t *testing.T) {
	cfg, err := Settings{
		Mode: "dry_run", BlockClasses: []string{"ai"}, CrawlDelay: 3 * time.Second,
		Rates: map[string]time.Duration{"seo": 0}, AllowIPs: []string{"192.0.2.0/24", "2001:db8::1"},
		AllowTokens: []string{"GPTBot"}, ContentUsage: "log",
	}.Check()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.DryRun || len(cfg.BlockClasses) != 1 || cfg.BlockClasses[0] != uaclass.AI || cfg.ContentUsage != UsageLog {
		t.Errorf("config %+v", cfg)
	}
	if cfg.ClassRates[uaclass.AI] != 3*time.Second || cfg.ClassRates[uaclass.SEO] != 0 || cfg.ClassRates[uaclass.Browser] != 0 {
		t.Errorf("class rates %v", cfg.ClassRates)
	}
	if len(cfg.AllowTokens) != 1 || cfg.AllowTokens[0] != "gptbot" || len(cfg.AllowCIDRs) != 2 || cfg.AllowCIDRs[1] != netip.MustParsePrefix("2001:db8::1/128") {
		t.Errorf("allowlists %v %v", cfg.AllowTokens, cfg.AllowCIDRs)
	}
	if DefaultClassRates[uaclass.AI] != time.Second {
		t.Errorf("Check changed the defaults: %v", DefaultClassRates)
	}
	if _, err := New(cfg, nil); err != nil {
		t.Errorf("New refuses a checked config: %v", err)
	}
	for _, tc := range []struct {
		field string
		s     Settings
	}{
		{"mode", Settings{Mode: "enforcing"}},
		{"block_classes[1]", Settings{BlockClasses: []string{"ai", "browser"}}},
		{"block_classes[0]", Settings{BlockClasses: []string{"robots"}}},
		{"traps[0]", Settings{Traps: []string{"trap/"}}},
		{"crawl_delay", Settings{CrawlDelay: -time.Second}},
		{"rates.ai", Settings{Rates: map[string]time.Duration{"ai": -1}}},
		{"rates.crawler", Settings{Rates: map[string]time.Duration{"crawler": time.Second}}},
		{"burst", Settings{Burst: -1}},
		{"grace", Settings{Grace: -2}},
		{"strikes", Settings{Strikes: -1}},
		{"address_strikes", Settings{AddressStrikes: -1}},
		{"max_clients", Settings{MaxClients: -1}},
		{"max_blocks", Settings{MaxBlocks: -1}},
		{"ipv4_prefix", Settings{IPv4Prefix: 33}},
		{"ipv6_prefix", Settings{IPv6Prefix: -1}},
		{"crawler_share", Settings{CrawlerShare: -2}},
		{"crawler_ipv4_prefix", Settings{CrawlerIPv4Prefix: 33}},
		{"crawler_ipv6_prefix", Settings{CrawlerIPv6Prefix: 129}},
		{"window", Settings{Window: -1}},
		{"tarpit", Settings{Tarpit: -1}},
		{"state_ttl", Settings{StateTTL: -1}},
		{"max_cooldown", Settings{Cooldown: time.Hour, MaxCooldown: time.Minute}},
		{"allow_ips[0]", Settings{AllowIPs: []string{"10.0.0.300"}}},
		{"allow_tokens[0]", Settings{AllowTokens: []string{"*"}}},
		{"content_usage", Settings{ContentUsage: "block"}},
		{"", Settings{Cooldown: 48 * time.Hour}}, // over the default maximum
		{"", Settings{Burst: 2_000_000}},
	} {
		_, err := tc.s.Check()
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Path != tc.field {
			t.Errorf("%+v: %v, want an error of field %q", tc.s, err, tc.field)
		}
	}
	if _, err := (Settings{Grace: -1}).Check(); err != nil {
		t.Errorf("grace -1 (none): %v", err)
	}
}

// TestCanonicalMode: the canonical option's modes, its default, and the
// error that names the option.
func TestCanonicalMode(t *testing.T) {
	for in, want := range map[string]string{"": "redirect", "redirect": "redirect", "header": "header", "off": "off"} {
		if got, err := CanonicalMode(in); err != nil || got != want {
			t.Errorf("CanonicalMode(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	_, err := CanonicalMode("Redirect")
	if fe := (*FieldError)(nil); !errors.As(err, &fe) || fe.Path != "canonical" || err.Error() != `canonical: unknown mode "Redirect" (want redirect, header or off)` {
		t.Errorf("CanonicalMode(Redirect): %v, want an error at canonical", err)
	}
}
