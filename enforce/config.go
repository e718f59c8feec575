package enforce

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Config tunes an [Engine]. The zero value of every field means its default,
// so Config{} is the recommended configuration.
type Config struct {
	// DryRun computes and reports every decision but never blocks, so that
	// operators can roll out safely. State evolves as it would when
	// enforcing, so the reported decisions are the ones enforcement would
	// take.
	DryRun bool

	// Traps are paths no human can reach (robots.txt pattern syntax,
	// e.g. "/private-archive/"). The served robots.txt disallows them and the
	// site links them only invisibly. Any client that requests one, whatever
	// its User-Agent, is blocked at once, by IP.
	Traps []string

	// BlockClasses are shut out entirely: every request from these classes is
	// refused.
	BlockClasses []uaclass.Class

	// AllowBadAgents lets known abusive agents (class bad) through to the
	// robots.txt rules instead of refusing them outright. Default: refused.
	AllowBadAgents bool
	// AllowImpostors lets clients that fail bot verification through to the
	// robots.txt rules instead of refusing them outright. Default: refused.
	AllowImpostors bool

	// UserTriggeredSkipGlobal makes the "*" group not apply to user-triggered
	// fetchers (ChatGPT-User, Claude-User, ...): only groups that name them
	// do. Default: the "*" group applies to them like to any bot.
	UserTriggeredSkipGlobal bool

	// ClassRates is the least interval between requests of one client (IP
	// and product token) of a class, enforced where robots.txt gives the
	// client no Crawl-delay. A zero interval means no limit. Default:
	// [DefaultClassRates].
	ClassRates map[uaclass.Class]time.Duration
	// Burst is how many requests a client may make at once before its
	// interval applies. Default: 3.
	Burst int

	// Grace is how many rate violations in a window are only logged before
	// the client is throttled: a good crawler that slips once is not
	// punished. Default: 1. Set -1 for none.
	Grace int
	// Strikes is how many violations in Window block a client. Default: 5.
	Strikes int
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

	// EscalateVerifiedSearch treats verified search crawlers like other
	// bots. By default they stay on the gentle end of the ladder: their rate
	// violations are only logged and they are never blocked, so a search
	// engine is never hit with a storm of 429s that would make it drop the
	// site. Disallowed paths are refused for them all the same.
	EscalateVerifiedSearch bool

	// AllowCIDRs and AllowTokens are never refused (allowlist by client IP
	// range and by robots.txt product token).
	AllowCIDRs  []netip.Prefix
	AllowTokens []string

	// Now returns the current time. Default: time.Now.
	Now func() time.Time
}

// DefaultClassRates are the default least intervals between requests per
// class where robots.txt sets no Crawl-delay. Search engines, link previews
// and monitors pace themselves; the others get a modest limit.
var DefaultClassRates = map[uaclass.Class]time.Duration{
	uaclass.AI:       time.Second,
	uaclass.SEO:      2 * time.Second,
	uaclass.Script:   500 * time.Millisecond,
	uaclass.OtherBot: time.Second,
	uaclass.Unknown:  500 * time.Millisecond,
}

// withDefaults returns c with defaults filled in, or an error naming the
// first bad field.
func (c Config) withDefaults() (Config, error) {
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
	if c.Grace == 0 {
		c.Grace = 1
	}
	if c.Grace < 0 {
		c.Grace = 0
	}
	if c.Strikes == 0 {
		c.Strikes = 5
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
	case c.Burst < 0:
		return c, fmt.Errorf("burst must be positive, got %d", c.Burst)
	case c.Strikes < 0:
		return c, fmt.Errorf("strikes must be positive, got %d", c.Strikes)
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
