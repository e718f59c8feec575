// Package caddymodule is robotsguard's Caddy module, and the only package of
// robotsguard that imports Caddy: glue only. It registers the
// http.handlers.robots_guard handler and its Caddyfile directive
// robots_guard, the TLS handshake matcher that records JA4 fingerprints,
// the listener and packet conn wrappers that read the framing and QUIC
// fingerprints (wrappers.go), the Redis store module, the admin endpoints (review.Admin) and the
// "caddy robots" commands (package cli); it gives the Caddy-free packages
// what only Caddy knows (the client IP after trusted_proxies, the TLS
// handshakes, the next handler, the storage, the loggers, the metrics
// registry) and keeps their state across config reloads. A request goes
// ServeHTTP -> enforce.Reader.Read -> enforce.Engine.Decide ->
// record.New (metrics, statistics, decision log) -> the response
// (docs/design.md, "A request's path").
package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/enforce/redisstore"
	"github.com/robotsguard/robotsguard/internal/benchstage"
	"github.com/robotsguard/robotsguard/metrics"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/record"
	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/review"
	"github.com/robotsguard/robotsguard/signature"
	"github.com/robotsguard/robotsguard/source"
	"github.com/robotsguard/robotsguard/uaclass"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Handler enforces a site's robots.txt: it classifies every request's
// User-Agent, evaluates the site's own robots.txt (reloaded when the file
// changes), refuses bots on disallowed paths, throttles bots that ignore
// Crawl-delay, escalates repeat offenders, and serves a generated
// robots.txt. Browsers are never bound by robots.txt.
type Handler struct {
	// Robots is where the site's robots.txt is: a file, or an http(s) URL
	// where the application serves it (usually the upstream,
	// "http://127.0.0.1:3000/robots.txt"). A file is watched and reloaded
	// once a change has settled (stayed the same for a second); an invalid
	// or cut-short edit keeps the last good rules. A file that does not
	// exist when the config loads is an error (see RobotsOptional). A URL is
	// fetched at start and every RobotsRefresh, straight from the
	// configured address (never through Caddy's routes), with conditional
	// requests; a 2xx installs the file as a file is installed, a 4xx
	// means no rules, and a 5xx, a timeout or a connection error keep the
	// last good rules and are retried with backoff (RFC 9309 section
	// 2.3.1). Only the first 500 KiB count (RFC 9309 section 2.5).
	// Default: the site's own robots.txt, what the handler after
	// robots_guard (file_server, reverse_proxy, an application) answers
	// for GET /robots.txt, asked in process at the first request and every
	// RobotsRefresh, and read as a URL is (a 4xx: none, no rules).
	Robots string `json:"robots,omitempty"`

	// RobotsOptional lets the Robots file be missing when the config
	// loads, on purpose (a file a deploy writes later): until it appears
	// no rules are enforced (RFC 9309: "unavailable" allows everything),
	// with a warning repeated while it lasts. Only with a Robots file.
	// Default: false, a missing file is an error naming the path.
	RobotsOptional bool `json:"robots_optional,omitempty"`

	// RobotsHost is the Host header of the fetches of a Robots URL: the
	// site's name, for an application that answers by name (WordPress,
	// Rails' host authorization, multi-site setups). Redirects to this
	// name are followed, and fetched from the configured address. Only
	// with a Robots URL. Default: the URL's host.
	RobotsHost string `json:"robots_host,omitempty"`

	// RobotsHeaders are header fields sent with the fetches of a Robots
	// URL, as the proxy would send them to the application, e.g.
	// "X-Forwarded-Proto": "https" for one that redirects plain HTTP to
	// HTTPS. Only with a Robots URL. Default: none.
	RobotsHeaders map[string]string `json:"robots_headers,omitempty"`

	// RobotsRefresh is how often a Robots URL is fetched again, at least
	// 1s. After a failed fetch the next comes sooner, from 1s doubling up
	// to this interval. Only with a Robots URL or none (the site's own).
	// Default: 1m.
	RobotsRefresh caddy.Duration `json:"robots_refresh,omitempty"`

	// ServeRobots makes the handler answer GET and HEAD /robots.txt itself
	// with the generated robots.txt (the site's file plus the additions
	// below); false passes those requests to the next handler. Default:
	// true.
	ServeRobots *bool `json:"serve_robots,omitempty"`

	// Mode is "enforce" or "dry_run": dry_run computes, logs and counts
	// every decision but never refuses a request. Its state is kept apart,
	// so that after a switch to enforce nobody is refused for what dry run
	// recorded. Default: "enforce".
	Mode string `json:"mode,omitempty"`

	// BlockClasses are User-Agent classes shut out entirely (e.g. "seo"),
	// or parts of class ai by what its bots do: "ai-training" (crawlers
	// whose documented purposes include training models, or are unknown),
	// "ai-search" (AI search and answers: OAI-SearchBot, PerplexityBot)
	// and "ai-user" (fetchers a person asks for in an AI assistant:
	// ChatGPT-User, Perplexity-User). "ai" is all three. Their known tokens
	// get a "Disallow: /" group in the served robots.txt, so polite
	// crawlers learn it; a request is refused for its class only where the
	// served robots.txt disallows it (the site's own "Allow: /" for a token
	// wins the tie). Browsers cannot be blocked. Default: none.
	BlockClasses []string `json:"block_classes,omitempty"`

	// Traps are paths no human can reach (robots.txt pattern syntax). The
	// served robots.txt disallows them for every agent; any client that
	// requests one where the served robots.txt disallows it is blocked by
	// IP at once. A browser's fetch for another site (Sec-Fetch-Site
	// cross-site or same-site, else a Referer of another host) is refused
	// without a block. Default: none.
	Traps []string `json:"traps,omitempty"`

	// Sitemaps are absolute http(s) URLs added to the served robots.txt.
	// Default: none.
	Sitemaps []string `json:"sitemaps,omitempty"`

	// CrawlDelay is the least interval between requests of one bot where
	// robots.txt sets no Crawl-delay, for every bot class without a rate of
	// its own in Rates. Default: the per-class defaults (ai 1s, seo 2s,
	// monitor 1s, script 500ms, bot 1s, unknown 500ms; search and social
	// unlimited, but a claim whose verification did not finish gets bot's).
	CrawlDelay caddy.Duration `json:"crawl_delay,omitempty"`

	// Rates sets the least interval per class ("ai", "seo", ...), where
	// robots.txt sets no Crawl-delay. Zero means unlimited. Default: as
	// CrawlDelay.
	Rates map[string]caddy.Duration `json:"rates,omitempty"`

	// Burst is how many requests a bot may make at once before its interval
	// applies. Default: 3.
	Burst int `json:"burst,omitempty"`

	// Grace is how many rate violations in a window are only logged before
	// 429s; -1 for none. Default: 1.
	Grace int `json:"grace,omitempty"`

	// Strikes is how many strikes within Window block a client (address
	// prefix and token): a request for a disallowed path is one, and so is
	// a Retry-After window through which the client keeps exceeding its
	// rate (parallel requests and immediate retries count once; a client
	// that waits out Retry-After gets none). Default: 5.
	Strikes int `json:"strikes,omitempty"`

	// AddressStrikes is how many strikes within Window, over all the tokens
	// of one address prefix, block the whole address, so that rotating
	// User-Agents does not dodge the ladder. Default: twice Strikes.
	AddressStrikes int `json:"address_strikes,omitempty"`

	// IPv4Prefix is the prefix length by which IPv4 clients are tracked, as
	// caddy-ratelimit does: a client blocked or throttled at one address
	// stays so anywhere in its prefix. Default: 32.
	IPv4Prefix int `json:"ipv4_prefix,omitempty"`

	// IPv6Prefix is the prefix length by which IPv6 clients are tracked: an
	// IPv6 host usually holds a whole /64, so a client trapped at one of its
	// addresses stays blocked at the others. Default: 64.
	IPv6Prefix int `json:"ipv6_prefix,omitempty"`

	// CrawlerShare is how many clients' worth of rate and burst one
	// crawler gets across all its addresses: a verified crawler by its
	// identity, across every address; a declared but unverified product
	// token, or an undeclared bot's or a poser's TLS fingerprint (JA4),
	// within its network (CrawlerIPv4Prefix, CrawlerIPv6Prefix). Spread
	// over 50 addresses, a crawler that ignores its Crawl-delay gets this
	// many times what one address gets. Its strikes count on the crawler
	// too (a trap hit is one), and AddressStrikes of them block it there.
	// Browsers are never held to it. -1 (in the
	// Caddyfile 0) turns it off: every address prefix is a crawler of its
	// own. See docs/how-it-decides.md. Default: 3.
	CrawlerShare int `json:"crawler_share,omitempty"`

	// CrawlerIPv4Prefix is the prefix length of the IPv4 network within
	// which a declared token or a fingerprint is one crawler: /24 is the
	// smallest block routed on the internet, so someone sending another
	// crawler's token from its own network never paces that crawler
	// elsewhere. Never longer than IPv4Prefix. Default: 24.
	CrawlerIPv4Prefix int `json:"crawler_ipv4_prefix,omitempty"`

	// CrawlerIPv6Prefix is the same for IPv6: a /48 is what a site is
	// given (65,536 /64s). Never longer than IPv6Prefix. Default: 48.
	CrawlerIPv6Prefix int `json:"crawler_ipv6_prefix,omitempty"`

	// Window is the span in which strikes count. Default: 10m.
	Window caddy.Duration `json:"window,omitempty"`

	// Cooldown is how long a first block lasts; it doubles for each repeat
	// offence up to MaxCooldown. Default: 15m.
	Cooldown caddy.Duration `json:"cooldown,omitempty"`

	// MaxCooldown caps the cooldown of repeat offenders; it must not be
	// shorter than Cooldown. Default: 24h.
	MaxCooldown caddy.Duration `json:"max_cooldown,omitempty"`

	// Tarpit is the last rung of the escalation ladder, when set: a
	// blocked client's further requests are held this long before the
	// refusal is sent (with Connection: close), so a rogue crawler that keeps
	// hammering instead of backing off is slowed down. The request that
	// causes a block is answered at once. Held requests end early when the
	// client gives up or the config is unloaded. Default: off.
	Tarpit caddy.Duration `json:"tarpit,omitempty"`

	// TarpitMax bounds how many requests are held at once; beyond it,
	// refusals are sent at once, so the tarpit can never tie up the server.
	// Default: 100 (when Tarpit is set).
	TarpitMax int `json:"tarpit_max,omitempty"`

	// EscalateVerifiedSearch treats verified search crawlers like other
	// bots. Default: they are never throttled or blocked (disallowed paths
	// are still refused).
	EscalateVerifiedSearch bool `json:"escalate_verified_search,omitempty"`

	// AllowBadAgents passes known abusive agents (class bad) to the
	// robots.txt rules instead of refusing them outright. Default: false,
	// refused.
	AllowBadAgents bool `json:"allow_bad_agents,omitempty"`

	// AllowImpostors passes clients that fail bot verification to the
	// robots.txt rules instead of refusing them outright. Default: false,
	// refused.
	AllowImpostors bool `json:"allow_impostors,omitempty"`

	// Posers is what becomes of a client whose User-Agent claims a browser
	// while how it speaks is decisive evidence that it is none (no
	// Sec-Fetch-* over HTTPS, a library's TLS stack, a Gecko token no
	// Firefox writes; see docs/posers.md): "enforce" holds it to robots.txt
	// as an undeclared bot (the "*" group, its Crawl-delay, bot's rate,
	// strikes; refusals carry X-Robots-Guard-Evidence), "log" serves it as
	// the browser it claims and logs and counts its evidence, "off" judges
	// nothing. Default: "enforce".
	Posers string `json:"posers,omitempty"`

	// AllowFingerprints are JA4 TLS fingerprints (as
	// {http.robots_guard.ja4} shows them) whose clients are never judged
	// posers: a partner's monitor that sends a browser's User-Agent is
	// then served as the browser it claims. Default: none.
	AllowFingerprints []string `json:"allow_fingerprints,omitempty"`

	// Behaviour configures the behaviour evidence (BehaviourConfig): a browser
	// claim that navigates as a crawler driving a browser is held to
	// robots.txt as a poser is. Default: on (window 10s, pages 8,
	// disallowed 4, hold 30m).
	Behaviour BehaviourConfig `json:"behaviour,omitzero"`

	// AllowIPs are IP ranges (CIDR or single IPs) that are never refused.
	// Default: none.
	AllowIPs []string `json:"allow_ips,omitempty"`

	// AllowTokens are robots.txt product tokens exempt from the robots.txt
	// rules and rates. A token is a claim any client can make: it never
	// lifts a trap, an address block, or a bad-agent or impostor refusal.
	// Default: none.
	AllowTokens []string `json:"allow_tokens,omitempty"`

	// Verify configures verification of clients that claim to be known
	// crawlers. Default: on, with forward-confirmed reverse DNS.
	Verify *VerifyConfig `json:"verify,omitempty"`

	// WebBotAuth verifies signed agents (Web Bot Auth). Default: off.
	WebBotAuth *WebBotAuthConfig `json:"web_bot_auth,omitempty"`

	// Bots adds entries to the bot database or overrides them by token.
	// Default: the built-in database only.
	Bots []uaclass.Bot `json:"bots,omitempty"`

	// MaxClients bounds the per-client state: the addresses (prefixes)
	// tracked, each with up to 4 tokens. Default: 100000.
	MaxClients int `json:"max_clients,omitempty"`

	// MaxBlocks bounds the blocked addresses, kept apart from the others so
	// that a flood of new addresses cannot evict blocks; beyond it, new
	// blocks are dropped and counted. Default: MaxClients.
	MaxBlocks int `json:"max_blocks,omitempty"`

	// StateTTL is how long an idle client is remembered. Default: 1h.
	StateTTL caddy.Duration `json:"state_ttl,omitempty"`

	// StoreRaw is where the per-client state lives, as a store module of
	// the http.handlers.robots_guard.stores namespace: {"module": "redis",
	// "url": "redis://..."} shares it across a fleet (see RedisStore).
	// max_clients and max_blocks bound the in-process store, which also
	// decides while Redis cannot be reached (on_error local); in Redis,
	// max_blocks bounds the zone's blocks fleet-wide, and state_ttl and
	// Redis's own memory the other records (docs/fleet.md). Default: in
	// the Caddy process, per instance.
	StoreRaw json.RawMessage `json:"store,omitempty" caddy:"namespace=http.handlers.robots_guard.stores inline_key=module"`

	// UACache bounds the User-Agent classification cache, in bytes; a
	// negative value disables the cache. Default: 4 MiB.
	UACache int `json:"ua_cache,omitempty"`

	// Zone names the per-client state, which survives config reloads.
	// Handlers with the same zone share it. Default: the site's name
	// (its hosts, or ":port" for a site of any host), so that what a
	// client earns on one site applies there only.
	Zone string `json:"zone,omitempty"`

	// DenyStatus is the status code of refusals (400-599). Default: 403.
	DenyStatus int `json:"deny_status,omitempty"`

	// DenyBody is the body of refusals. Default: empty, and then the
	// handler returns an error, so handle_errors routes can shape the
	// response.
	DenyBody string `json:"deny_body,omitempty"`

	// ThrottleStatus is the status code of throttled requests (400-599);
	// they always carry Retry-After. Default: 429.
	ThrottleStatus int `json:"throttle_status,omitempty"`

	// ThrottleBody is the body of throttled requests. Default: empty, and
	// then the handler returns an error, as for DenyBody.
	ThrottleBody string `json:"throttle_body,omitempty"`

	// LogAllowed is the fraction (0 to 1) of allowed requests that are
	// logged too. Default: 0; refusals and violations are always logged.
	LogAllowed float64 `json:"log_allowed,omitempty"`

	// LogRepeats is the interval over which repeated refusals and
	// violations are folded in the decision log: the first of a client
	// (address prefix, product token and class), action, reason and rule is
	// logged in full, and its repeats within the interval are counted and
	// written as one summary line ("N more like this in 10s", the count in
	// the repeats field, which "caddy robots report" adds to its totals). A
	// different reason or rule is logged at once. 0 logs every request.
	// At most 1h. Default: 10s.
	LogRepeats *caddy.Duration `json:"log_repeats,omitempty"`

	// XRobotsTags add X-Robots-Tag headers to matching responses, HTML or
	// not, merged with the backend's own. Default: none.
	XRobotsTags []policy.IndexRule `json:"x_robots_tags,omitempty"`

	// ContentUsage is what becomes of a bot whose purpose (from the bot
	// database: train-ai, search, ai-input, user-triggered) the robots.txt's
	// AI usage preferences (Content-Usage and Content-Signal lines) refuse
	// for the path: "enforce" refuses it (reason content_usage, no strike),
	// "log" serves it and logs the violation, "off" does not check. Bots of
	// unknown purpose are judged by Allow and Disallow only. Default:
	// "enforce".
	ContentUsage string `json:"content_usage,omitempty"`

	// ContentUsageHeaders add a Content-Usage header (AIPREF) to matching
	// responses, merged with the backend's own ("no" wins). Default: none.
	ContentUsageHeaders []policy.UsageHeader `json:"content_usage_headers,omitempty"`

	// Canonical applies the robots.txt's canonicalisation fields
	// (QueryParam, Domain, IndexPage): "redirect" (default) answers a bot's
	// request for an allowed URL that is not canonical with 301 to the
	// canonical URL; "header" only adds a Link rel="canonical" header; "off"
	// ignores the fields. Every response gets the Link header, and
	// robots.txt rules are also evaluated on the canonical URL, so a
	// parameter or a host alias does not dodge a Disallow. Without a Domain
	// field the canonical URL is a relative reference: the request's Host
	// is never echoed. Default: "redirect".
	Canonical string `json:"canonical,omitempty"`

	// CanonicalRedirectHumans also redirects browsers to canonical URLs.
	// Default: people are never redirected.
	CanonicalRedirectHumans bool `json:"canonical_redirect_humans,omitempty"`

	// JA4 turns the TLS fingerprint of each connection (its JA4, in the
	// decision log and {http.robots_guard.ja4}) "on" or "off". Default:
	// "on", for every TLS connection policy of the handler's server.
	JA4 string `json:"ja4,omitempty"`

	// JA4Header names the header that carries the client's JA4 when a CDN
	// or load balancer terminates TLS (CloudFront's
	// CloudFront-Viewer-JA4-Fingerprint, for one). It is read only from
	// requests that come from the server's trusted_proxies. Default: none,
	// and a request from a trusted proxy has no fingerprint.
	JA4Header string `json:"ja4_header,omitempty"`

	// QUIC turns the QUIC fingerprint of each HTTP/3 connection (its
	// transport parameters, in the decision log's quic and
	// {http.robots_guard.quic}) "on" or "off". It needs the packet conn
	// wrapper robots_guard_quic on the server's HTTP/3 listeners, which
	// robots_guard adds to its server in a Caddyfile. Default: "on".
	QUIC string `json:"quic,omitempty"`

	decisions  *report.DecisionLog
	server     *caddyhttp.Server    // the server provisioned in, or nil
	opsLogger  *zap.Logger          // reload and configuration problems, for Caddy's main log
	serve      bool                 // ServeRobots resolved
	prints     enforce.Fingerprints // ja4, ja4_header and quic resolved
	engine     *enforce.Engine
	reader     *enforce.Reader // the one reading of a request (enforce.Reader.Read)
	classifier *uaclass.Classifier
	verifier   *uaclass.Verifier
	// Their keys in kept.go's pool, released by Cleanup.
	classifierKey, verifierKey string
	rangeKeys                  []string          // the ranges feeds joined (ranges.go)
	agents                     *signature.Agents // nil without web_bot_auth
	source                     *source.Source
	metrics                    *metrics.Collectors
	shared                     *sharedState
	fleet                      *redisstore.Store  // the zone's Redis store, or nil
	headers                    policy.HeaderRules // x_robots_tags, content_usage_headers
	tarpit                     *enforce.Holder    // nil without a tarpit
	refusals                   *enforce.Refusals
	cancel                     func()
	next                       *nextRobots   // the site's own robots.txt's fetches, without a robots option
	site                       string        // the site it guards (state.go), the default zone
	stats                      *review.Stats // the site's live statistics in the zone
	siteCount                  *metrics.SiteDecisions
}

// BehaviourConfig configures the behaviour evidence (docs/posers.md,
// "Behaviour"): a browser claim whose navigations start as a crawler's
// that drives a browser (many pages within seconds with no page of the
// site behind them) is held to robots.txt as an undeclared bot, as a
// poser is. Posers "log" and "off", and dry run, apply to it.
type BehaviourConfig struct {
	// Disabled turns the behaviour evidence off. Default: false, on.
	Disabled bool `json:"disabled,omitempty"`
	// Window is how far back it looks. Default: 10s.
	Window caddy.Duration `json:"window,omitempty"`
	// Pages is how many such navigations to distinct pages in the window
	// make a crawler. Default: 8.
	Pages int `json:"pages,omitempty"`
	// Disallowed is how many such navigations to distinct pages the "*"
	// group disallows make one. Default: 4, at most Pages.
	Disallowed int `json:"disallowed,omitempty"`
	// Hold is how long the client is held after its last such navigation.
	// Default: 30m.
	Hold caddy.Duration `json:"hold,omitempty"`
}

// VerifyConfig configures bot verification.
type VerifyConfig struct {
	// Disabled turns verification off: claims are taken at face value, and
	// no search crawler gets the gentle treatment reserved for verified ones.
	// Default: false, verification on.
	Disabled bool `json:"disabled,omitempty"`

	// Wait is the longest a request waits for a DNS answer; the lookup goes
	// on in the background and serves later requests. Default: 500ms.
	Wait caddy.Duration `json:"wait,omitempty"`

	// LookupTimeout bounds one verification's DNS lookups. Default: 5s.
	LookupTimeout caddy.Duration `json:"lookup_timeout,omitempty"`

	// TTL is how long a verdict is cached. Default: 1h.
	TTL caddy.Duration `json:"ttl,omitempty"`

	// Ranges maps a product token to a file or an http(s) URL of the IP
	// ranges its operator publishes, in the JSON formats of Google,
	// OpenAI, Bing and the JAFAR draft, or one range a line (e.g.
	// "gptbot": "https://openai.com/gptbot.json"). A file is read when the
	// config is loaded (at most 16 MiB); a URL is fetched then (at most 4
	// MiB, 10s) and every ranges_refresh, and a failed fetch keeps the last
	// good list, which Caddy's storage keeps across restarts. Default: none.
	Ranges map[string]string `json:"ranges,omitempty"`

	// PublishedRanges verifies every crawler of the bot database whose
	// operator publishes its ranges against its official URLs, as Ranges
	// does for a URL; a token in Ranges keeps its own. Default: false.
	PublishedRanges bool `json:"published_ranges,omitempty"`

	// RangesRefresh is how often a ranges URL is fetched again (a
	// Cache-Control max-age can delay it, up to a week). Default: 24h.
	RangesRefresh caddy.Duration `json:"ranges_refresh,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.robots_guard",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision sets up the handler: it checks the configuration (Caddy calls
// Validate only after Provision, so the values are checked here, before any
// is used), builds the classifier, verifier and decision engine, joins the
// per-client state of its zone, loads the robots.txt and starts watching
// it (a file) or refreshing it (a URL).
func (h *Handler) Provision(ctx caddy.Context) error {
	h.opsLogger = ctx.Logger(opsLog{})
	h.server, _ = ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server) // nil outside a Caddy server (tests)
	h.nameSite(ctx)                                                     // state.go: state per site by default
	set, err := h.checkConfig()
	if err != nil {
		return err
	}
	h.metrics = metrics.Process() // the process's collectors, registered on this config's registry
	if err = h.metrics.Register(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("robots_guard: registering metrics: %v", err)
	}
	// The classifier and the verifier are kept across reloads (kept.go).
	if h.classifier, h.classifierKey, err = keepClassifier(h.Bots, h.UACache); err != nil {
		return fmt.Errorf("robots_guard: bots: %v", err)
	}
	if set.verify != nil {
		h.startRanges(ctx, set.verify, set.ranges)
		if h.verifier, h.verifierKey, err = keepVerifier(*set.verify); err != nil {
			return err
		}
	}
	if h.agents, err = signature.NewAgents(set.webBotAuth, h.metrics.Signatures()); err != nil {
		return fmt.Errorf("robots_guard: %v", err)
	}
	h.shared, err = joinState(h.Zone, h.MaxClients, h.MaxBlocks, time.Duration(h.StateTTL))
	if err != nil {
		return err
	}
	h.stats, h.siteCount = h.shared.sites.Of(h.site), h.metrics.Site(h.site)
	store, err := h.openStore(ctx) // store.go
	if err != nil {
		return err
	}
	h.engine, err = enforce.New(set.engine, store)
	if err != nil {
		return fmt.Errorf("robots_guard: %v", err)
	}
	h.reader = &enforce.Reader{Classifier: h.classifier, Agents: h.agents, Verifier: h.verifier, Engine: h.engine, Canonical: h.Canonical != "off"}
	h.refusals = enforce.NewRefusals(enforce.RefusalOptions{DenyStatus: h.DenyStatus, DenyBody: h.DenyBody, ThrottleStatus: h.ThrottleStatus, ThrottleBody: h.ThrottleBody})
	watchCtx, cancel := context.WithCancel(ctx)
	h.cancel = cancel
	if h.Tarpit > 0 {
		h.tarpit = enforce.NewHolder(set.engine.TarpitMax, watchCtx.Done(), h.metrics.Tarpit)
	}
	if set.fetcher != nil {
		// A URL: fetched now and every robots_refresh (package source).
		key := carriedShare(source.Key(h.Robots, h.RobotsHost, h.RobotsHeaders))
		h.source = source.NewRemote(set.fetcher, time.Duration(h.RobotsRefresh), key, h.sourceOptions())
		h.source.Start(watchCtx)
	} else if h.Robots == "" {
		// The site's own robots.txt, fetched once a request has come in
		// (next.go).
		h.next = &nextRobots{start: func() { h.source.Run(watchCtx, true) }}
		h.source = source.NewOwn(h.next, time.Duration(h.RobotsRefresh), h.sourceOptions())
	} else if h.source, err = source.OpenFile(watchCtx, h.Robots, h.sourceOptions()); err != nil {
		return err // a file: loaded, watched and polled
	}
	var fleet enforce.Fleet // the Redis store's counts, if any
	if h.fleet != nil {
		fleet = h.fleet
	}
	go h.shared.store.SweepEvery(watchCtx, time.Minute, fleet, func(tracked, blocked int) { h.metrics.SetTracked(h.Zone, tracked, blocked) })
	h.fingerprintHandshakes() // tlsfingerprint.go
	h.checkWrappers(ctx)      // wrappers.go
	h.decisions = report.NewDecisionLog(watchCtx, ctx.Logger(), report.DecisionLogOptions{Zone: h.Zone, Repeats: set.logRepeats, ClientPrefix: h.engine.ClientPrefix})
	return nil
}

// opsLog names the logger of reload and configuration problems. It is not
// under the decision logger's name (http.handlers.robots_guard), so that an
// operator who routes the decisions to a file of their own still sees these
// in Caddy's main log.
type opsLog struct{}

// CaddyModule gives the logger its name; opsLog is not a registered module.
func (opsLog) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: caddy.ModuleID(report.OpsLoggerName)}
}

// additions returns what the served robots.txt adds to the site's file
// owner (source.Added): the blocked classes' groups, the traps, the
// sitemaps.
func (h *Handler) additions(owner *policy.Robots) policy.Added {
	return source.Added(owner, h.classifier, h.BlockClasses, h.Traps, h.Sitemaps)
}

// Validate has nothing left to check: Caddy validates after provisioning,
// so Provision checks every value before it uses any (see checkConfig).
func (h *Handler) Validate() error { return nil }

// Cleanup stops the watcher and releases the shared state. It is safe after
// a failed Provision.
func (h *Handler) Cleanup() error {
	if h.cancel != nil {
		h.cancel()
	}
	h.decisions.Close() // no count is lost: the repeats are written now
	h.agents.Close()
	release(h.classifierKey)
	release(h.verifierKey)
	h.classifierKey, h.verifierKey = "", ""
	h.leaveRanges()
	if h.source != nil {
		h.source.Close()
	}
	if h.shared != nil {
		err := leaveState(h.Zone)
		h.zoneLeft()
		return err
	}
	return nil
}

// ServeHTTP reads the request (enforce.Reader.Read, with the facts only
// Caddy knows), decides, records the decision, and serves, refuses or
// passes the request on.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if h.next != nil { // the site's own robots.txt: fetched once a request has come in, then kept fresh
		h.next.reached(next, r)
	}
	snap := h.source.Snapshot()
	vars := varsOf(r)
	f := h.facts(w, r, vars)
	var rd enforce.Reading
	if err := h.reader.Read(r, &f, snap.Policy, &rd); err != nil {
		// No client sends a fragment; servers read "/#/../x" as "/x".
		return caddyhttp.Error(http.StatusBadRequest, err)
	}
	req := &rd.Request
	if benchstage.Stop(w, benchstage.Read) { // stops only in a robotsguard_stages build (internal/benchstage)
		return nil
	}
	d := h.engine.Decide(req, snap.Policy)
	if benchstage.Stop(w, benchstage.Decide) {
		return nil
	}
	if !d.FeedOnly() { // else recorded once the response is known (serveFeed)
		h.record(r, vars, &rd, &d, snap)
	}
	if benchstage.Stop(w, benchstage.Record) {
		return nil
	}
	if d.Enforced() {
		if d.Action == enforce.Tarpit {
			h.tarpit.Hold(r.Context(), d.Hold)
			w.Header().Set("Connection", "close")
		}
		return h.refuse(w, r, &d, snap.Policy)
	}
	enforce.DropRewriteHeaders(r.Header) // the target judged is the one served
	getOrHead := r.Method == http.MethodGet || r.Method == http.MethodHead
	if d.Reason == enforce.ReasonRobotsTxt {
		if h.serve && getOrHead {
			snap.Serve(w, r)
			return nil
		}
		return next.ServeHTTP(w, r)
	}
	if enforce.Canonicalize(w, r, &rd, &d, h.Canonical != "header", h.CanonicalRedirectHumans) {
		return nil // a bot redirected to the canonical URL
	}
	var gate *enforce.FeedGate
	if d.FeedOnly() {
		gate = enforce.NewFeedGate(w, d.DryRun)
		w = gate
	}
	w = h.headers.Wrap(w, req.Target.Normal) // X-Robots-Tag, Content-Usage
	if gate != nil {
		return h.serveFeed(gate, w, r, vars, next, &rd, d, snap)
	}
	return next.ServeHTTP(w, r)
}

// serveFeed passes on a feed reader's request that the "*" group
// disallows (a decision marked UnlessFeed) through w, which writes to gate:
// the gate holds the response at its headers unless it is a feed
// (enforce.FeedGate, which needs no Caddy). The decision is completed,
// counted and logged once the response is known, and a held response is
// answered with the refusal.
func (h *Handler) serveFeed(gate *enforce.FeedGate, w http.ResponseWriter, r *http.Request, vars map[string]any, next caddyhttp.Handler, rd *enforce.Reading, d enforce.Decision, snap *source.Snapshot) error {
	err := next.ServeHTTP(w, r)
	d = h.engine.FeedOutcome(&rd.Request, d, gate.Done(err))
	h.record(r, vars, rd, &d, snap)
	if !gate.Held() {
		return err
	}
	return h.refuse(gate.Writer(), r, &d, snap.Policy)
}

// record makes the one record of a decision (record.New) and hands it to
// the metrics, the live statistics, the placeholders and (when
// noteworthy or sampled) the decision log.
func (h *Handler) record(r *http.Request, vars map[string]any, rd *enforce.Reading, d *enforce.Decision, snap *source.Snapshot) {
	rec := new(record.Record) // on the stack: nothing below keeps it
	rec.Set(rd, d, h.Zone, snap.Version, snap.Body)
	rec.Site = h.site
	if !rec.BlockedUntil.IsZero() && rec.Reason != enforce.ReasonBlockedClient {
		h.shared.sites.BlockedOn(h.engine.ClientPrefix(rec.ClientIP), rec.Token(), rec.SiteName()) // the site of the block
	}
	h.metrics.Record(rec)
	h.siteCount.Count(rec.Action)
	h.observe(r, vars, rec) // observe.go: live statistics, placeholders
	if rec.Noteworthy || h.LogAllowed > 0 && rand.Float64() < h.LogAllowed {
		h.decisions.Write(rec)
	}
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
