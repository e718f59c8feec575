package enforce

import (
	"fmt"
	"github.com/robotsguard/robotsguard/evidence/behaviour"
	"net/netip"
	"time"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Config tunes an [Engine]. The zero value of every field means its default,
// so Config{} is the recommended configuration.
type Config struct {
	// DryRun computes and reports every decision but never refuses, so
	// that operators can roll out safely. Its state evolves as it would when
	// enforcing, so the reported decisions are the ones enforcement would
	// take, but it is kept apart ([Key].DryRun): an enforcing engine on the
	// same store never reads it, so nobody is refused for a dry-run block
	// after the switch to enforcement.
	DryRun bool

	// Traps are paths no human can reach (robots.txt pattern syntax,
	// e.g. "/private-archive/"). The served robots.txt disallows them and the
	// site links them only invisibly. Any client that requests one, whatever
	// its User-Agent, is blocked at once, by address prefix: where the
	// served robots.txt disallows the request for it (the site's own Allow
	// may open part of a trap), and but for a browser's fetch on behalf of
	// another site ([Request].CrossSite), which is refused only.
	Traps []string

	// BlockClasses are shut out entirely: every request from these classes is
	// refused that the served robots.txt (with its "Disallow: /" group for
	// the class's known tokens) disallows for the client; where the site's
	// own rules allow it, the request is judged as any other.
	BlockClasses []uaclass.Class
	// BlockAI shuts out parts of class ai by what their bots do
	// (uaclass.AIParts: ai-training, ai-search, ai-user), for an operator
	// who stops AI training and serves AI search or the fetchers a person
	// asks for. BlockClasses with uaclass.AI shuts out the whole class.
	// Default: none.
	BlockAI uaclass.AIParts

	// AllowBadAgents lets known abusive agents (class bad) through to the
	// robots.txt rules instead of refusing them outright. Default: refused.
	AllowBadAgents bool
	// AllowImpostors lets clients that fail bot verification through to the
	// robots.txt rules instead of refusing them outright. Default: refused.
	AllowImpostors bool

	// Posers is what becomes of a client whose User-Agent claims a browser
	// while how it speaks is decisive evidence that it is none (see
	// [Engine.Judge]). Default: [PosersEnforce].
	Posers PoserMode
	// AllowFingerprints are JA4 or framing fingerprints (Request.JA4,
	// Request.Framing) whose clients are not judged (a partner's monitor
	// that sends a browser's User-Agent). Default: none.
	AllowFingerprints []string
	// Behaviour says when a browser claim behaves as a crawler (package
	// evidence/behaviour; behaviour.go): zero fields take
	// behaviour.Default's. With BehaviourOff (or Posers off) nothing is
	// read. BehaviourClients bounds the summaries kept in process, of
	// clients and of groups each (default DefaultMaxClients/4).
	Behaviour        behaviour.Config
	BehaviourOff     bool
	BehaviourClients int

	// ClassRates is the least interval between requests of one client
	// (address prefix and product token) of a class, enforced where
	// robots.txt gives the client no Crawl-delay. A zero interval means no
	// limit. Default: [DefaultClassRates].
	ClassRates map[uaclass.Class]time.Duration
	// Burst is how many requests a client may make at once before its
	// interval applies. Default: 3. All the bots of one address prefix
	// together get [AddressShare] times one client's burst and rate, so
	// that rotating User-Agents gains nothing more.
	Burst int

	// BrowserLikeInterval and BrowserLikeBurst are the rate for a request
	// marked [Request].BrowserLike (an unrecognised client that looks like
	// a browser): a page load bursts to dozens of requests, so it gets a
	// browser's allowance instead of its class rate or the group's
	// Crawl-delay. Defaults: 100ms and 60.
	BrowserLikeInterval time.Duration
	BrowserLikeBurst    int

	// Grace is how many rate violations in a window are only logged before
	// the client is throttled: a good crawler that slips once is not
	// punished. Default: 1. Set -1 for none.
	Grace int
	// Strikes is how many strikes in Window block a client: each request
	// for a disallowed path (or from a blocked class, or unreadable) is
	// one, and so is each Retry-After window in which the client keeps
	// sending requests over its rate (see [Apply]: a burst of parallel
	// requests or immediate retries is one strike at most, and a client
	// that waits out its Retry-After gets none). Default: 5.
	Strikes int
	// AddressStrikes is how many strikes in Window, counted over all the
	// tokens of one address prefix, block the whole address: a client that
	// rotates its User-Agent still ends blocked. Default: twice Strikes.
	AddressStrikes int
	// Window is the span in which strikes count. Default: 10m.
	Window time.Duration
	// Cooldown is how long a first block lasts; each further block of the
	// same client doubles it, up to MaxCooldown. Default: 15m.
	Cooldown time.Duration
	// MaxCooldown caps the cooldown. Default: 24h.
	MaxCooldown time.Duration
	// Tarpit, when set, is the last rung of the ladder: a blocked client's
	// further requests are held this long before they are refused, which
	// slows a rogue crawler that keeps hammering instead of backing off.
	// The block that a request causes is still answered at once. Default:
	// zero, no tarpit.
	Tarpit time.Duration
	// TarpitMax bounds how many requests a tarpit holds at once (the
	// Holder's bound; see [NewHolder]). Default: 100 with a tarpit.
	TarpitMax int

	// EscalateVerifiedSearch treats verified search crawlers like other
	// bots. By default they stay on the gentle end of the ladder: their rate
	// violations are only logged and they are never blocked, so a search
	// engine is never hit with a storm of 429s that would make it drop the
	// site. Disallowed paths are refused for them all the same.
	EscalateVerifiedSearch bool

	// ContentUsage says what becomes of a bot whose purpose the site's AI
	// usage preferences (robots.txt Content-Usage and Content-Signal lines)
	// refuse for the requested path: refused with [ReasonContentUsage]
	// (UsageEnforce), only logged (UsageLog), or not checked (UsageOff).
	// Such a refusal is no strike. Default: UsageEnforce.
	ContentUsage UsageMode

	// AllowCIDRs are client IP ranges that are never refused.
	AllowCIDRs []netip.Prefix
	// AllowTokens are robots.txt product tokens that are exempt from the
	// robots.txt rules, rates and blocked classes. A token is a claim any
	// client can make, so it never lifts a trap, an address block, or a
	// bad-agent or impostor refusal: those are checked first.
	AllowTokens []string

	// IPv4Prefix and IPv6Prefix are the prefix lengths by which per-client
	// state is kept: clients within one prefix are one address, so a client
	// that is blocked or throttled cannot escape by moving within it. An
	// IPv6 host usually holds a whole /64. Defaults: 32 and 64.
	IPv4Prefix, IPv6Prefix int

	// CrawlerShare is how many clients' worth of rate and burst one
	// crawler gets across all its addresses (see [Crawler]): a verified
	// crawler across every address, a declared token or an undeclared
	// bot's fingerprint within its network (CrawlerIPv4Prefix,
	// CrawlerIPv6Prefix). Its strikes count on the crawler too (a trap
	// hit is one), and AddressStrikes of them block it. Browsers are never
	// held to it.
	// Default: 3. Negative: off (every address is a crawler of its own).
	CrawlerShare int

	// CrawlerIPv4Prefix and CrawlerIPv6Prefix are the prefix lengths of
	// the network within which a declared token or a fingerprint is one
	// crawler: /24 is the smallest IPv4 block routed on the internet, /48
	// the block a site is given in IPv6 (65,536 /64s). A prefix longer
	// than IPv4Prefix or IPv6Prefix is that prefix. Defaults: 24 and 48.
	CrawlerIPv4Prefix, CrawlerIPv6Prefix int

	// Now returns the current time. Default: time.Now.
	Now func() time.Time
}

// AddressShare is how many clients' worth of rate and burst all the bots
// of one address prefix get together.
const AddressShare = 4

// DefaultCrawlerShare is Config.CrawlerShare's default: a crawler spread
// over any number of addresses gets at most three times what one address
// gets.
const DefaultCrawlerShare = 3

// maxBurst bounds bursts, so that a bucket's tolerance is a sane duration.
const maxBurst = 1_000_000

// DefaultClassRates are the default least intervals between requests per
// class where robots.txt sets no Crawl-delay. Search engines and link
// previews pace themselves (and a verified search crawler is never
// throttled); the others get a modest limit. A monitor checks a page a
// minute or a feed an hour, so a second between requests never slows a
// real one, and a scraper that claims to be one gains nothing over an
// unknown bot. A claimed crawler whose verification did not finish
// (uaclass.Unverified) is paced at the bot rate where its class has none.
var DefaultClassRates = map[uaclass.Class]time.Duration{
	uaclass.AI:       time.Second,
	uaclass.SEO:      2 * time.Second,
	uaclass.Monitor:  time.Second,
	uaclass.Script:   500 * time.Millisecond,
	uaclass.OtherBot: time.Second,
	uaclass.Unknown:  500 * time.Millisecond,
}

// withDefaults returns c with defaults filled in, or an error naming the
// first bad field.
func (c Config) withDefaults() (Config, error) {
	if c.ContentUsage > UsageOff {
		return c, fmt.Errorf("invalid content usage mode %d", c.ContentUsage)
	}
	if c.Posers > PosersOff {
		return c, fmt.Errorf("invalid poser mode %d", c.Posers)
	}
	if !c.BehaviourOff {
		var err error
		if c.Behaviour, err = (BehaviourSettings{Window: c.Behaviour.Window, Hold: c.Behaviour.Hold,
			Pages: c.Behaviour.Pages, Disallowed: c.Behaviour.Disallowed}).check(); err != nil {
			return c, err
		}
	}
	if c.BehaviourClients <= 0 {
		c.BehaviourClients = DefaultMaxClients / 4
	}
	if c.ClassRates == nil {
		c.ClassRates = DefaultClassRates
	}
	for cl, d := range c.ClassRates {
		if d < 0 {
			return c, fmt.Errorf("class rate for %s: negative interval %v", cl, d)
		}
	}
	if c.Burst == 0 {
		c.Burst = 3
	}
	if c.BrowserLikeInterval == 0 {
		c.BrowserLikeInterval = 100 * time.Millisecond
	}
	if c.BrowserLikeBurst == 0 {
		c.BrowserLikeBurst = 60
	}
	if c.IPv4Prefix == 0 {
		c.IPv4Prefix = 32
	}
	if c.IPv6Prefix == 0 {
		c.IPv6Prefix = 64
	}
	if c.CrawlerShare == 0 {
		c.CrawlerShare = DefaultCrawlerShare
	}
	if c.CrawlerIPv4Prefix == 0 {
		c.CrawlerIPv4Prefix = 24
	}
	if c.CrawlerIPv6Prefix == 0 {
		c.CrawlerIPv6Prefix = 48
	}
	if c.Grace == 0 {
		c.Grace = 1
	}
	if c.Grace < 0 {
		c.Grace = 0
	}
	if c.Strikes == 0 {
		c.Strikes = 5
	}
	if c.AddressStrikes == 0 {
		c.AddressStrikes = 2 * c.Strikes
	}
	if c.Window == 0 {
		c.Window = 10 * time.Minute
	}
	if c.Cooldown == 0 {
		c.Cooldown = 15 * time.Minute
	}
	if c.MaxCooldown == 0 {
		c.MaxCooldown = 24 * time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	switch {
	case c.Burst < 0 || c.Burst > maxBurst:
		return c, fmt.Errorf("burst must be between 1 and %d, got %d", maxBurst, c.Burst)
	case c.BrowserLikeInterval < 0:
		return c, fmt.Errorf("browser-like interval must not be negative, got %v", c.BrowserLikeInterval)
	case c.BrowserLikeBurst < 0 || c.BrowserLikeBurst > maxBurst:
		return c, fmt.Errorf("browser-like burst must be between 1 and %d, got %d", maxBurst, c.BrowserLikeBurst)
	case c.Strikes < 0:
		return c, fmt.Errorf("strikes must be positive, got %d", c.Strikes)
	case c.AddressStrikes < 0:
		return c, fmt.Errorf("address strikes must be positive, got %d", c.AddressStrikes)
	case c.IPv4Prefix < 0 || c.IPv4Prefix > 32:
		return c, fmt.Errorf("ipv4 prefix must be between 1 and 32, got %d", c.IPv4Prefix)
	case c.IPv6Prefix < 0 || c.IPv6Prefix > 128:
		return c, fmt.Errorf("ipv6 prefix must be between 1 and 128, got %d", c.IPv6Prefix)
	case c.CrawlerShare > maxBurst:
		return c, fmt.Errorf("crawler share must be at most %d, got %d", maxBurst, c.CrawlerShare)
	case c.CrawlerIPv4Prefix < 0 || c.CrawlerIPv4Prefix > 32:
		return c, fmt.Errorf("crawler ipv4 prefix must be between 1 and 32, got %d", c.CrawlerIPv4Prefix)
	case c.CrawlerIPv6Prefix < 0 || c.CrawlerIPv6Prefix > 128:
		return c, fmt.Errorf("crawler ipv6 prefix must be between 1 and 128, got %d", c.CrawlerIPv6Prefix)
	case c.Window < 0:
		return c, fmt.Errorf("window must be positive, got %v", c.Window)
	case c.Cooldown < 0:
		return c, fmt.Errorf("cooldown must be positive, got %v", c.Cooldown)
	case c.Tarpit < 0:
		return c, fmt.Errorf("tarpit must not be negative, got %v", c.Tarpit)
	case c.MaxCooldown < c.Cooldown:
		return c, fmt.Errorf("max cooldown %v is shorter than cooldown %v", c.MaxCooldown, c.Cooldown)
	}
	for _, t := range c.Traps {
		if t == "" || t[0] != '/' && t[0] != '*' {
			return c, fmt.Errorf("trap %q must start with '/' or '*'", t)
		}
	}
	for _, t := range c.AllowTokens {
		if policy.ProductToken(t) != t {
			return c, fmt.Errorf("allowlisted token %q is not a lower-case product token (want %q)", t, policy.ProductToken(t))
		}
	}
	return c, nil
}
