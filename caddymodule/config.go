package caddymodule

import (
	"cmp"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/signature"
	"github.com/robotsguard/robotsguard/source"
	"github.com/robotsguard/robotsguard/uaclass"
	"github.com/robotsguard/robotsguard/upstream"
)

// settings is what the checked configuration gives Provision, besides the
// defaults checkConfig writes into the Handler's own fields.
type settings struct {
	engine enforce.Config
	// verify is nil when verification is off.
	verify *uaclass.VerifierOptions
	// ranges are the ranges URLs to fetch.
	ranges source.RangeSources
	// webBotAuth is nil when web_bot_auth is not configured.
	webBotAuth *signature.Config
	// fetcher fetches a robots URL; nil for a file.
	fetcher *upstream.Fetcher
	// logRepeats is LogRepeats resolved; 0 logs every decision.
	logRepeats time.Duration
}

// checkConfig checks every value of the configuration and fills in the
// defaults the handler owns (robots_refresh, mode, canonical, serve_robots,
// tarpit_max, deny and throttle statuses; the zone's is Provision's, by the
// site) and resolves what Provision and the commands use as checked (the
// response header rules, the fingerprint options); the defaults of the engine, the
// store, the classifier and the verifier are theirs, applied to zero
// values. It is the one place where values are checked, for the Caddyfile
// and JSON alike: Provision calls it before it uses anything, and the
// Caddyfile adapter calls it on a copy, so that a bad value fails
// `caddy adapt` with its line. It writes only the Handler's top-level
// fields, never what they point to, so that a shallow copy protects the
// original. Its errors wrap a *field.Error.
//
// The engine's options are checked by the package that owns them
// (enforce.Settings.Check), as are the Redis store's, the robots URL's, the
// range files' and the pinned keys'; a new option gets its check there or
// here, next to the others.
//
// When a value is bad, checkConfig reports every bad value, not only the
// first (field.All), joined, each naming its field.
func (h *Handler) checkConfig() (*settings, error) {
	orig := *h
	s, err := h.check()
	if err != nil {
		return nil, field.Join("robots_guard: ", orig.allErrors())
	}
	return s, nil
}

// allErrors returns every bad value of the configuration (field.All).
func (h *Handler) allErrors() []error {
	return field.All(h, func(c *Handler) error { _, err := c.check(); return err }, field.Dependents)
}

// UnmarshalJSON decodes the handler's JSON config as Caddy does (unknown
// fields are errors) and, when a field does not decode, reports every
// field that does not, by its JSON path and in plain words
// (field.Decode), with the bad values of the others, in the order of the
// fields.
func (h *Handler) UnmarshalJSON(b []byte) error {
	type plain Handler
	err := field.Decode(b, (*plain)(h), caddy.StrictUnmarshalJSON)
	if err == nil {
		return nil
	}
	c := *h
	return field.Join("robots_guard: ", field.Sort[Handler](append(field.Split(err), c.allErrors()...)))
}

// check is checkConfig without the "robots_guard: " its errors get.
func (h *Handler) check() (*settings, error) {
	s := &settings{}
	rates := map[string]time.Duration{}
	for name, d := range h.Rates {
		rates[name] = time.Duration(d)
	}
	cfg, err := enforce.Settings{
		Mode: h.Mode, BlockClasses: h.BlockClasses, Traps: h.Traps,
		CrawlDelay: time.Duration(h.CrawlDelay), Rates: rates,
		Burst: h.Burst, Grace: h.Grace, Strikes: h.Strikes, AddressStrikes: h.AddressStrikes,
		IPv4Prefix: h.IPv4Prefix, IPv6Prefix: h.IPv6Prefix,
		CrawlerShare: h.CrawlerShare, CrawlerIPv4Prefix: h.CrawlerIPv4Prefix, CrawlerIPv6Prefix: h.CrawlerIPv6Prefix,
		Window: time.Duration(h.Window), Cooldown: time.Duration(h.Cooldown),
		MaxCooldown: time.Duration(h.MaxCooldown), Tarpit: time.Duration(h.Tarpit), TarpitMax: h.TarpitMax,
		EscalateVerifiedSearch: h.EscalateVerifiedSearch, AllowBadAgents: h.AllowBadAgents,
		AllowImpostors: h.AllowImpostors,
		AllowIPs:       h.AllowIPs, AllowTokens: h.AllowTokens, ContentUsage: h.ContentUsage,
		Posers: h.Posers, AllowFingerprints: h.AllowFingerprints, Behaviour: enforce.BehaviourSettings{Off: h.Behaviour.Disabled, Window: time.Duration(h.Behaviour.Window),
			Hold: time.Duration(h.Behaviour.Hold), Pages: h.Behaviour.Pages, Disallowed: h.Behaviour.Disallowed},
		MaxClients: h.MaxClients, MaxBlocks: h.MaxBlocks, StateTTL: time.Duration(h.StateTTL),
	}.Check()
	if err != nil {
		return nil, err
	}
	s.engine, h.TarpitMax = cfg, cfg.TarpitMax // its default written back, as the others
	h.Mode = cmp.Or(h.Mode, "enforce")
	fetcher, refresh, err := source.Settings{Robots: h.Robots, Optional: h.RobotsOptional, Host: h.RobotsHost, Headers: h.RobotsHeaders, Refresh: time.Duration(h.RobotsRefresh)}.Check()
	if err != nil {
		return nil, err
	}
	s.fetcher, h.RobotsRefresh = fetcher, caddy.Duration(refresh)
	h.serve = h.ServeRobots == nil || *h.ServeRobots
	if err := field.Each("sitemaps", h.Sitemaps, policy.CheckSitemap); err != nil {
		return nil, err
	}
	if h.Verify == nil || !h.Verify.Disabled {
		opts, ranges, err := verifierOptions(h.Verify, h.Bots)
		if err != nil {
			return nil, err
		}
		s.verify, s.ranges = opts, ranges
	}
	wba, err := checkWebBotAuth(h.WebBotAuth)
	if err != nil {
		return nil, err
	}
	s.webBotAuth = wba
	if err := field.Each("bots", h.Bots, func(b uaclass.Bot) error { return b.Validate() }); err != nil {
		return nil, err
	}
	if err := checkStore(h.StoreRaw); err != nil { // store.go
		return nil, err
	}
	if h.DenyStatus, err = field.ErrorStatus("deny_status", h.DenyStatus, 403); err != nil {
		return nil, err
	}
	if h.ThrottleStatus, err = field.ErrorStatus("throttle_status", h.ThrottleStatus, 429); err != nil {
		return nil, err
	}
	if s.logRepeats, err = report.CheckLogSettings(h.LogAllowed, (*time.Duration)(h.LogRepeats)); err != nil {
		return nil, err
	}
	if h.headers.RobotsTag, err = field.Map("x_robots_tags", h.XRobotsTags, policy.IndexRule.Compile); err != nil {
		return nil, err
	}
	if h.headers.Usage, err = field.Map("content_usage_headers", h.ContentUsageHeaders, policy.UsageHeader.Compile); err != nil {
		return nil, err
	}
	if h.Canonical, err = enforce.CanonicalMode(h.Canonical); err != nil {
		return nil, err
	}
	if h.prints, err = (enforce.FingerprintSettings{JA4: h.JA4, QUIC: h.QUIC, Header: h.JA4Header}).Check(); err != nil {
		return nil, err
	}
	h.JA4Header = h.prints.Header
	if err := field.Floors(h, field.DurationFloors); err != nil {
		return nil, err
	}
	return s, nil
}

// verifierOptions checks the verify block, reads its range files and
// returns its ranges URLs (source.VerifySettings).
func verifierOptions(v *VerifyConfig, bots []uaclass.Bot) (*uaclass.VerifierOptions, source.RangeSources, error) {
	if v == nil {
		return &uaclass.VerifierOptions{Lists: map[string][]*uaclass.Ranges{}}, source.RangeSources{}, nil
	}
	return source.VerifySettings{Wait: time.Duration(v.Wait), LookupTimeout: time.Duration(v.LookupTimeout), TTL: time.Duration(v.TTL),
		RangeSettings: source.RangeSettings{Ranges: v.Ranges, Published: v.PublishedRanges, Bots: append(uaclass.DefaultBots(), bots...),
			Refresh: time.Duration(v.RangesRefresh), MaxFile: maxRangesFile}}.Check()
}
