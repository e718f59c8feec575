package caddymodule

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/signature"
	"github.com/robotsguard/robotsguard/source"
	"github.com/robotsguard/robotsguard/uaclass"
	"github.com/robotsguard/robotsguard/upstream"
)

// configError is a bad configuration value: the option's JSON path (e.g.
// "tarpit_max", "verify.wait", "block_classes[1]") and what is wrong with
// it. The Caddyfile adapter maps the path back to the option and line that
// set it.
type configError struct {
	path string // "" for a problem of the configuration as a whole
	err  error
}

func (e *configError) Error() string {
	if e.path == "" {
		return "robots_guard: " + e.err.Error()
	}
	return "robots_guard: " + e.path + ": " + e.err.Error()
}

func (e *configError) Unwrap() error { return e.err }

// bad returns a configError for path.
func bad(path, format string, args ...any) error {
	return &configError{path: path, err: fmt.Errorf(format, args...)}
}

// The messages for out-of-range numbers, shared with the Caddyfile reader,
// which refuses an explicit zero where the JSON form reads zero as "the
// default".
func errAboveZero(d time.Duration) error { return fmt.Errorf("must be above 0, got %v", d) }
func errAtLeast(least, n int) error      { return fmt.Errorf("must be at least %d, got %d", least, n) }

// settings is what the checked configuration gives Provision, besides the
// defaults checkConfig writes into the Handler's own fields.
type settings struct {
	engine  enforce.Config
	blocked []uaclass.Class
	index   policy.RobotsTagRules
	usage   policy.UsageRules
	// verify is nil when verification is off.
	verify *uaclass.VerifierOptions
	// webBotAuth is nil when web_bot_auth is not configured.
	webBotAuth *signature.Config
	// fetcher fetches a robots URL; nil for a file.
	fetcher *upstream.Fetcher
	// logRepeats is LogRepeats resolved; 0 logs every decision.
	logRepeats time.Duration
}

// checkConfig checks every value of the configuration and fills in the
// defaults the handler owns (robots_refresh, mode, canonical, serve_robots,
// zone, tarpit_max, deny and throttle statuses); the defaults of the engine, the
// store, the classifier and the verifier are theirs, applied to zero
// values. It is the one place where values are checked, for the Caddyfile
// and JSON alike: Provision calls it before it uses anything, and the
// Caddyfile adapter calls it on a copy, so that a bad value fails
// `caddy adapt` with its line. It writes only the Handler's top-level
// fields, never what they point to, so that a shallow copy protects the
// original. Its errors are *configError.
//
// A new option gets its check here, next to the others, in the order of
// the Handler's fields.
func (h *Handler) checkConfig() (*settings, error) {
	s := &settings{}
	cfg := &s.engine
	switch h.Mode {
	case "":
		h.Mode = "enforce"
	case "enforce":
	case "dry_run":
		cfg.DryRun = true
	default:
		return nil, bad("mode", "unknown mode %q (want enforce or dry_run)", h.Mode)
	}
	if err := h.checkRobots(s); err != nil {
		return nil, err
	}
	h.serve = h.ServeRobots == nil || *h.ServeRobots
	for i, name := range h.BlockClasses {
		c, err := uaclass.ParseClass(name)
		if err != nil {
			return nil, &configError{fmt.Sprintf("block_classes[%d]", i), err}
		}
		if c == uaclass.Browser {
			return nil, bad(fmt.Sprintf("block_classes[%d]", i), "refusing to block browsers")
		}
		s.blocked = append(s.blocked, c)
	}
	cfg.BlockClasses = s.blocked
	for i, t := range h.Traps {
		if t == "" || t[0] != '/' && t[0] != '*' {
			return nil, bad(fmt.Sprintf("traps[%d]", i), "path %q must start with '/' or '*'", t)
		}
	}
	cfg.Traps = h.Traps
	for i, u := range h.Sitemaps {
		if err := policy.CheckSitemap(u); err != nil {
			return nil, &configError{fmt.Sprintf("sitemaps[%d]", i), err}
		}
	}
	if h.CrawlDelay < 0 {
		return nil, &configError{"crawl_delay", errAboveZero(time.Duration(h.CrawlDelay))}
	}
	if h.CrawlDelay != 0 || len(h.Rates) > 0 {
		cfg.ClassRates = map[uaclass.Class]time.Duration{}
		for c, d := range enforce.DefaultClassRates {
			cfg.ClassRates[c] = d
		}
		if h.CrawlDelay != 0 {
			for _, c := range uaclass.Classes() {
				if c != uaclass.Browser {
					cfg.ClassRates[c] = time.Duration(h.CrawlDelay)
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(h.Rates)) {
			c, err := uaclass.ParseClass(name)
			if err != nil {
				return nil, &configError{"rates." + name, err}
			}
			d := h.Rates[name]
			if d < 0 {
				return nil, bad("rates."+name, "must not be negative, got %v", time.Duration(d))
			}
			cfg.ClassRates[c] = time.Duration(d)
		}
	}
	if h.Burst < 0 {
		return nil, &configError{"burst", errAtLeast(1, h.Burst)}
	}
	if h.Grace < -1 {
		return nil, &configError{"grace", errAtLeast(-1, h.Grace)}
	}
	if h.Strikes < 0 {
		return nil, &configError{"strikes", errAtLeast(1, h.Strikes)}
	}
	if h.AddressStrikes < 0 {
		return nil, &configError{"address_strikes", errAtLeast(1, h.AddressStrikes)}
	}
	if h.IPv4Prefix < 0 || h.IPv4Prefix > 32 {
		return nil, bad("ipv4_prefix", "%d is not an IPv4 prefix length (1-32)", h.IPv4Prefix)
	}
	if h.IPv6Prefix < 0 || h.IPv6Prefix > 128 {
		return nil, bad("ipv6_prefix", "%d is not an IPv6 prefix length (1-128)", h.IPv6Prefix)
	}
	cfg.Burst, cfg.Grace, cfg.Strikes = h.Burst, h.Grace, h.Strikes
	cfg.AddressStrikes, cfg.IPv4Prefix, cfg.IPv6Prefix = h.AddressStrikes, h.IPv4Prefix, h.IPv6Prefix
	for _, d := range []struct {
		path string
		v    caddy.Duration
		to   *time.Duration
	}{
		{"window", h.Window, &cfg.Window},
		{"cooldown", h.Cooldown, &cfg.Cooldown},
		{"max_cooldown", h.MaxCooldown, &cfg.MaxCooldown},
		{"tarpit", h.Tarpit, &cfg.Tarpit},
		{"state_ttl", h.StateTTL, nil},
	} {
		if d.v < 0 {
			return nil, &configError{d.path, errAboveZero(time.Duration(d.v))}
		}
		if d.to != nil {
			*d.to = time.Duration(d.v)
		}
	}
	if h.MaxCooldown != 0 && h.MaxCooldown < h.Cooldown {
		return nil, bad("max_cooldown", "%v is shorter than cooldown %v", time.Duration(h.MaxCooldown), time.Duration(h.Cooldown))
	}
	if h.TarpitMax < 0 {
		return nil, &configError{"tarpit_max", errAtLeast(1, h.TarpitMax)}
	}
	if h.Tarpit > 0 && h.TarpitMax == 0 {
		h.TarpitMax = 100
	}
	cfg.EscalateVerifiedSearch = h.EscalateVerifiedSearch
	cfg.AllowBadAgents = h.AllowBadAgents
	cfg.AllowImpostors = h.AllowImpostors
	cfg.UserTriggeredSkipGlobal = h.UserTriggeredSkipGlobal
	for i, a := range h.AllowIPs {
		p, err := uaclass.ParsePrefix(a)
		if err != nil {
			return nil, &configError{fmt.Sprintf("allow_ips[%d]", i), err}
		}
		cfg.AllowCIDRs = append(cfg.AllowCIDRs, p)
	}
	for i, t := range h.AllowTokens {
		tok := policy.ProductToken(t)
		if tok == "" {
			return nil, bad(fmt.Sprintf("allow_tokens[%d]", i), "%q is not a product token", t)
		}
		cfg.AllowTokens = append(cfg.AllowTokens, tok)
	}
	if h.Verify == nil || !h.Verify.Disabled {
		opts, err := verifierOptions(h.Verify)
		if err != nil {
			return nil, err
		}
		s.verify = opts
	}
	wba, err := checkWebBotAuth(h.WebBotAuth)
	if err != nil {
		return nil, err
	}
	s.webBotAuth = wba
	for i := range h.Bots {
		if err := h.Bots[i].Validate(); err != nil {
			return nil, &configError{fmt.Sprintf("bots[%d]", i), err}
		}
	}
	if h.MaxClients < 0 {
		return nil, &configError{"max_clients", errAtLeast(1, h.MaxClients)}
	}
	if h.MaxBlocks < 0 {
		return nil, &configError{"max_blocks", errAtLeast(1, h.MaxBlocks)}
	}
	if len(h.StoreRaw) > 0 {
		if err := checkStore(h.StoreRaw); err != nil { // store.go
			return nil, err
		}
	}
	if h.Zone == "" {
		h.Zone = "default"
	}
	for _, st := range []struct {
		path string
		code *int
		def  int
	}{
		{"deny_status", &h.DenyStatus, 403},
		{"throttle_status", &h.ThrottleStatus, 429},
	} {
		if *st.code == 0 {
			*st.code = st.def
		}
		if *st.code < 400 || *st.code > 599 {
			return nil, bad(st.path, "%d is not an error status (400-599)", *st.code)
		}
	}
	if !(h.LogAllowed >= 0 && h.LogAllowed <= 1) {
		return nil, bad("log_allowed", "%v is not a fraction between 0 and 1", h.LogAllowed)
	}
	s.logRepeats = defaultLogRepeats
	if h.LogRepeats != nil {
		s.logRepeats = time.Duration(*h.LogRepeats)
	}
	if s.logRepeats < 0 || s.logRepeats > maxLogRepeats {
		return nil, bad("log_repeats", "%v is not an interval between 0 (log every request) and %v", s.logRepeats, maxLogRepeats)
	}
	for i, r := range h.XRobotsTags {
		c, err := policy.CompileRobotsTagRule(r.Pattern, r.Agent, r.Directives)
		if err != nil {
			return nil, &configError{fmt.Sprintf("x_robots_tags[%d]", i), err}
		}
		s.index = append(s.index, c)
	}
	mode, err := enforce.ParseUsageMode(h.ContentUsage)
	if err != nil {
		return nil, &configError{"content_usage", err}
	}
	cfg.ContentUsage = mode
	for i, u := range h.ContentUsageHeaders {
		c, err := policy.CompileUsageRule(u.Pattern, u.Preferences)
		if err != nil {
			return nil, &configError{fmt.Sprintf("content_usage_headers[%d]", i), err}
		}
		s.usage = append(s.usage, c)
	}
	switch h.Canonical {
	case "":
		h.Canonical = "redirect"
	case "redirect", "header", "off":
	default:
		return nil, bad("canonical", "unknown mode %q (want redirect, header or off)", h.Canonical)
	}
	// What the engine checks beyond the values above (a cooldown longer
	// than the default maximum, for one), so that it fails here too.
	if _, err := enforce.New(*cfg, nil); err != nil {
		return nil, &configError{"", err}
	}
	return s, nil
}

// checkRobots checks the robots option and, for a URL, the options of its
// fetches, and fills in the refresh default.
func (h *Handler) checkRobots(s *settings) error {
	if !upstream.IsURL(h.Robots) {
		if scheme, _, ok := strings.Cut(h.Robots, "://"); ok && !strings.ContainsAny(scheme, "/.") {
			return bad("robots", "%q: only http and https URLs can be fetched", h.Robots)
		}
		headers := "robots_headers"
		if len(h.RobotsHeaders) > 0 {
			headers += "." + slices.Sorted(maps.Keys(h.RobotsHeaders))[0]
		}
		for _, o := range []struct {
			path string
			set  bool
		}{
			{"robots_host", h.RobotsHost != ""},
			{headers, len(h.RobotsHeaders) > 0},
			{"robots_refresh", h.RobotsRefresh != 0},
		} {
			if o.set {
				return bad(o.path, "only for a robots.txt read from a URL (robots http://... or https://...)")
			}
		}
		return nil
	}
	if _, err := upstream.ParseURL(h.Robots); err != nil {
		return &configError{"robots", err}
	}
	if h.RobotsHost != "" {
		if err := upstream.CheckHost(h.RobotsHost); err != nil {
			return &configError{"robots_host", err}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(h.RobotsHeaders)) {
		if err := upstream.CheckHeader(name, h.RobotsHeaders[name]); err != nil {
			return &configError{"robots_headers." + name, err}
		}
	}
	switch {
	case h.RobotsRefresh == 0:
		h.RobotsRefresh = caddy.Duration(DefaultRobotsRefresh)
	case h.RobotsRefresh < caddy.Duration(time.Second):
		return bad("robots_refresh", "must be at least 1s, got %v", time.Duration(h.RobotsRefresh))
	}
	f, err := upstream.New(source.FetchOptions(h.Robots, h.RobotsHost, h.RobotsHeaders))
	if err != nil {
		return &configError{"robots", err}
	}
	s.fetcher = f
	return nil
}

// verifierOptions checks the verify block and reads its range files.
func verifierOptions(v *VerifyConfig) (*uaclass.VerifierOptions, error) {
	opts := &uaclass.VerifierOptions{Ranges: map[string][]netip.Prefix{}}
	if v == nil {
		return opts, nil
	}
	for _, d := range []struct {
		path string
		v    caddy.Duration
		to   *time.Duration
	}{
		{"verify.wait", v.Wait, &opts.Wait},
		{"verify.lookup_timeout", v.LookupTimeout, &opts.LookupTimeout},
		{"verify.ttl", v.TTL, &opts.TTL},
	} {
		if d.v < 0 {
			return nil, &configError{d.path, errAboveZero(time.Duration(d.v))}
		}
		*d.to = time.Duration(d.v)
	}
	ranges, err := uaclass.ReadRanges(v.Ranges, maxRangesFile)
	if err != nil {
		var te *uaclass.TokenError
		if errors.As(err, &te) {
			return nil, &configError{"verify.ranges." + te.Token, te.Err}
		}
		return nil, &configError{"verify.ranges", err}
	}
	opts.Ranges = ranges
	return opts, nil
}
