package enforce

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Settings are the engine's options as a configuration writes them:
// classes and modes by name, addresses as text, and zero for "the
// default". [Settings.Check] is the one place where they are checked and
// turned into a [Config]; the Caddy module maps its JSON fields onto them
// and each error ([field.Error]) back to its option.
type Settings struct {
	Mode                    string // "enforce" (or "") or "dry_run"
	BlockClasses            []string
	Traps                   []string
	CrawlDelay              time.Duration // every bot class without a rate of its own
	Rates                   map[string]time.Duration
	Burst, Grace            int // Grace -1: none
	Strikes, AddressStrikes int
	IPv4Prefix, IPv6Prefix  int
	// CrawlerShare: 0 the default, -1 off (see Config.CrawlerShare).
	CrawlerShare                         int
	CrawlerIPv4Prefix, CrawlerIPv6Prefix int
	Window, Cooldown                     time.Duration
	MaxCooldown, Tarpit                  time.Duration
	TarpitMax                            int // requests held at once; 0: 100 with a tarpit
	EscalateVerifiedSearch               bool
	AllowBadAgents                       bool
	AllowImpostors                       bool
	AllowIPs, AllowTokens                []string
	ContentUsage                         string // "enforce" (or ""), "log" or "off"
	Posers                               string // "enforce" (or ""), "log" or "off"
	AllowFingerprints                    []string
	Behaviour                            BehaviourSettings
	// The in-process store's bounds ([NewMemoryStore]), checked here with
	// the rest.
	MaxClients, MaxBlocks int
	StateTTL              time.Duration
}

// FieldError is the error of a bad value, named by its JSON path: what
// [Settings.Check] and redisstore.Config.Check return, for callers outside
// this module to read with errors.As.
type FieldError = field.Error

// Check checks every value and returns the engine's Config (defaults are
// the engine's, applied to zero values by [New]). Its errors are
// *FieldError.
func (s Settings) Check() (Config, error) {
	var cfg Config
	switch s.Mode {
	case "", "enforce":
	case "dry_run":
		cfg.DryRun = true
	default:
		return cfg, field.Errorf("mode", "unknown mode %q (want enforce or dry_run)", s.Mode)
	}
	for i, name := range s.BlockClasses {
		if part, err := uaclass.ParseAIPart(name); err == nil {
			cfg.BlockAI |= part
			continue
		}
		c, err := uaclass.ParseClass(name)
		if err != nil {
			return cfg, field.Errorf(fmt.Sprintf("block_classes[%d]", i), "%v, or a part of class ai: ai-training, ai-search, ai-user", err)
		}
		if c == uaclass.Browser {
			return cfg, field.Errorf(fmt.Sprintf("block_classes[%d]", i), "refusing to block browsers")
		}
		cfg.BlockClasses = append(cfg.BlockClasses, c)
	}
	for i, t := range s.Traps {
		if t == "" || t[0] != '/' && t[0] != '*' {
			return cfg, field.Errorf(fmt.Sprintf("traps[%d]", i), "path %q must start with '/' or '*'", t)
		}
	}
	cfg.Traps = s.Traps
	if s.CrawlDelay < 0 {
		return cfg, field.Wrap("crawl_delay", field.AboveZero(s.CrawlDelay))
	}
	if s.CrawlDelay != 0 || len(s.Rates) > 0 {
		cfg.ClassRates = maps.Clone(DefaultClassRates)
		if s.CrawlDelay != 0 {
			for _, c := range uaclass.Classes() {
				if c != uaclass.Browser {
					cfg.ClassRates[c] = s.CrawlDelay
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(s.Rates)) {
			c, err := uaclass.ParseClass(name)
			if err != nil {
				return cfg, field.Wrap("rates."+name, err)
			}
			d := s.Rates[name]
			if d < 0 {
				return cfg, field.Errorf("rates."+name, "must not be negative, got %v", d)
			}
			cfg.ClassRates[c] = d
		}
	}
	// Zero means the default, so a count is refused only below zero (grace,
	// whose -1 means none: below -1); the message names the least value.
	for _, n := range []struct {
		path     string
		v, least int
	}{
		{"burst", s.Burst, 1}, {"grace", s.Grace, -1}, {"strikes", s.Strikes, 1},
		{"address_strikes", s.AddressStrikes, 1}, {"max_clients", s.MaxClients, 1}, {"max_blocks", s.MaxBlocks, 1},
		{"tarpit_max", s.TarpitMax, 1},
	} {
		if n.v < min(n.least, 0) {
			return cfg, field.Wrap(n.path, field.AtLeast(n.least, n.v))
		}
	}
	if s.IPv4Prefix < 0 || s.IPv4Prefix > 32 {
		return cfg, field.Errorf("ipv4_prefix", "%d is not an IPv4 prefix length (1-32)", s.IPv4Prefix)
	}
	if s.IPv6Prefix < 0 || s.IPv6Prefix > 128 {
		return cfg, field.Errorf("ipv6_prefix", "%d is not an IPv6 prefix length (1-128)", s.IPv6Prefix)
	}
	if s.CrawlerShare < -1 {
		return cfg, field.Errorf("crawler_share", "%d is not a share (at least 1; -1: off)", s.CrawlerShare)
	}
	if s.CrawlerIPv4Prefix < 0 || s.CrawlerIPv4Prefix > 32 {
		return cfg, field.Errorf("crawler_ipv4_prefix", "%d is not an IPv4 prefix length (1-32)", s.CrawlerIPv4Prefix)
	}
	if s.CrawlerIPv6Prefix < 0 || s.CrawlerIPv6Prefix > 128 {
		return cfg, field.Errorf("crawler_ipv6_prefix", "%d is not an IPv6 prefix length (1-128)", s.CrawlerIPv6Prefix)
	}
	cfg.CrawlerShare, cfg.CrawlerIPv4Prefix, cfg.CrawlerIPv6Prefix = s.CrawlerShare, s.CrawlerIPv4Prefix, s.CrawlerIPv6Prefix
	cfg.Burst, cfg.Grace, cfg.Strikes = s.Burst, s.Grace, s.Strikes
	cfg.AddressStrikes, cfg.IPv4Prefix, cfg.IPv6Prefix = s.AddressStrikes, s.IPv4Prefix, s.IPv6Prefix
	for _, d := range []struct {
		path string
		v    time.Duration
	}{
		{"window", s.Window}, {"cooldown", s.Cooldown}, {"max_cooldown", s.MaxCooldown},
		{"tarpit", s.Tarpit}, {"state_ttl", s.StateTTL},
	} {
		if d.v < 0 {
			return cfg, field.Wrap(d.path, field.AboveZero(d.v))
		}
	}
	if s.MaxCooldown != 0 && s.MaxCooldown < s.Cooldown {
		return cfg, field.Errorf("max_cooldown", "%v is shorter than cooldown %v", s.MaxCooldown, s.Cooldown)
	}
	cfg.Window, cfg.Cooldown, cfg.MaxCooldown, cfg.Tarpit = s.Window, s.Cooldown, s.MaxCooldown, s.Tarpit
	if cfg.TarpitMax = s.TarpitMax; s.Tarpit > 0 && s.TarpitMax == 0 {
		cfg.TarpitMax = 100
	}
	cfg.EscalateVerifiedSearch, cfg.AllowBadAgents = s.EscalateVerifiedSearch, s.AllowBadAgents
	cfg.AllowImpostors = s.AllowImpostors
	for i, a := range s.AllowIPs {
		p, err := uaclass.ParsePrefix(a)
		if err != nil {
			return cfg, field.Wrap(fmt.Sprintf("allow_ips[%d]", i), err)
		}
		cfg.AllowCIDRs = append(cfg.AllowCIDRs, p)
	}
	for i, t := range s.AllowTokens {
		tok := policy.ProductToken(t)
		if tok == "" {
			return cfg, field.Errorf(fmt.Sprintf("allow_tokens[%d]", i), "%q is not a product token", t)
		}
		cfg.AllowTokens = append(cfg.AllowTokens, tok)
	}
	mode, err := ParseUsageMode(s.ContentUsage)
	if err != nil {
		return cfg, field.Wrap("content_usage", err)
	}
	cfg.ContentUsage = mode
	if cfg.Posers, err = ParsePoserMode(s.Posers); err != nil {
		return cfg, field.Wrap("posers", err)
	}
	for i, f := range s.AllowFingerprints {
		if !validJA4(f) && !validFraming(f) {
			return cfg, field.Errorf(fmt.Sprintf("allow_fingerprints[%d]", i), "%q is not a JA4 fingerprint (like t13d1516h2_8daaf6152771_e5627efa2ab1), nor a framing one (like h2:1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p|1:0:256)", f)
		}
		cfg.AllowFingerprints = append(cfg.AllowFingerprints, f)
	}
	if cfg.BehaviourOff = s.Behaviour.Off; !cfg.BehaviourOff {
		if cfg.Behaviour, err = s.Behaviour.check(); err != nil {
			return cfg, err
		}
	}
	if s.MaxClients > 0 {
		cfg.BehaviourClients = max(1, s.MaxClients/4)
	}
	// What New checks beyond the values above (a cooldown longer than the
	// default maximum, for one).
	if _, err := cfg.withDefaults(); err != nil {
		return cfg, field.Wrap("", err)
	}
	return cfg, nil
}
