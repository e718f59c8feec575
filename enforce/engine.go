package enforce

import (
	"fmt"
	"time"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Engine decides what to do with each request. It is safe for concurrent
// use; its configuration is fixed at creation, and the robots.txt policy is
// passed to each call, so that callers can swap policies atomically.
type Engine struct {
	cfg         Config
	store       Store
	traps       *policy.PathSet
	blockClass  [16]bool
	allowTokens map[string]bool
	classRates  [16]time.Duration
}

// New returns an Engine with the given configuration and store. A nil store
// means a [MemoryStore] with default bounds.
func New(cfg Config, store Store) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if store == nil {
		store = NewMemoryStore(0, 0)
	}
	e := &Engine{cfg: cfg, store: store, allowTokens: map[string]bool{}}
	for _, c := range cfg.BlockClasses {
		if int(c) >= len(e.blockClass) {
			return nil, fmt.Errorf("invalid class %d", c)
		}
		e.blockClass[c] = true
	}
	for c, d := range cfg.ClassRates {
		if int(c) >= len(e.classRates) {
			return nil, fmt.Errorf("invalid class %d", c)
		}
		e.classRates[c] = d
	}
	for _, t := range cfg.AllowTokens {
		e.allowTokens[t] = true
	}
	if len(cfg.Traps) > 0 {
		e.traps = policy.NewPathSet(cfg.Traps...)
	}
	return e, nil
}

// Decide returns the decision for req under the robots.txt policy p (nil
// means no robots.txt: everything allowed to every bot). In order:
//
//  1. /robots.txt is always served, and the fetch is recorded.
//  2. Allowlisted IPs and tokens are served.
//  3. A trap path blocks the client IP at once, whatever its User-Agent.
//  4. A blocked IP is refused.
//  5. Bad agents and impostors are refused (unless configured otherwise),
//     with a strike on the IP.
//  6. Browsers are served: robots.txt is not addressed to people.
//  7. Blocked classes are refused; a blocked client (IP and token) is
//     refused; a path robots.txt disallows for the bot is refused. Each of
//     these is a strike.
//  8. The group's Crawl-delay, or the class rate, is enforced with a token
//     bucket: a violation is a strike, only logged for the first Grace
//     violations in a window, then throttled with Retry-After.
//
// Enough strikes in a window block the client for a cooldown that doubles
// with each block; with a Tarpit configured, a blocked client's further
// requests are held before they are refused. Verified search crawlers are
// never blocked and never throttled unless EscalateVerifiedSearch is set.
func (e *Engine) Decide(req *Request, p *policy.Policy) Decision {
	now := e.cfg.Now()
	d := Decision{DryRun: e.cfg.DryRun}
	// Normalised once for every match below; this allocates only for the
	// rare targets that are not already in normal form.
	target := policy.NormalizeTarget(req.Target)

	if policy.IsRobotsTxt(target) {
		e.store.Apply(IPKey(req.IP), now, Op{MarkRobots: true})
		d.Reason = ReasonRobotsTxt
		return d
	}
	if e.allowlisted(req) {
		d.Reason = ReasonAllowlisted
		return d
	}
	ua := &req.UA
	if e.traps != nil && e.trapped(target, req.Variants) {
		out := e.store.Apply(IPKey(req.IP), now, e.op(Op{Block: true}))
		d.ReadRobots = out.State.RobotsAt != 0
		return e.refuse(d, ReasonTrap, out)
	}
	if ua.Class == uaclass.Browser {
		// robots.txt is not addressed to people: only an IP block applies.
		ipOut := e.store.Apply(IPKey(req.IP), now, Op{Peek: true})
		d.ReadRobots = ipOut.State.RobotsAt != 0
		if ipOut.Blocked {
			return e.refuse(d, ReasonBlockedClient, ipOut)
		}
		return d
	}
	if ua.Class == uaclass.Bad && !e.cfg.AllowBadAgents || req.Verdict == uaclass.Impostor && !e.cfg.AllowImpostors {
		out := e.store.Apply(IPKey(req.IP), now, e.op(Op{Strike: true, Blockable: true}))
		d.ReadRobots = out.State.RobotsAt != 0
		reason := ReasonImpostor
		switch {
		case out.Blocked:
			reason = ReasonBlockedClient
		case ua.Class == uaclass.Bad:
			reason = ReasonBadAgent
		}
		return e.refuse(d, reason, out)
	}

	key := Key{IP: req.IP, Token: ua.Token()}
	gentle := (ua.Class == uaclass.Search || req.Signed) && req.Verdict == uaclass.Verified && !e.cfg.EscalateVerifiedSearch
	// A claimed search crawler whose verification did not finish is never
	// blocked for it (issue 10, item 9); it is still refused and throttled.
	unblockable := gentle || ua.Class == uaclass.Search && req.Verdict == uaclass.Unverified
	if e.blockClass[ua.Class] || req.Invalid {
		reason := ReasonBlockedClass
		if !e.blockClass[ua.Class] {
			reason = ReasonInvalid
		}
		out := e.store.Apply(key, now, e.op(Op{Strike: true, Blockable: !unblockable, CheckIP: true}))
		d.ReadRobots = out.IPRobotsAt != 0
		if out.Blocked {
			reason = ReasonBlockedClient
		}
		return e.refuse(d, reason, out)
	}

	res := policy.Result{Allowed: true}
	if p != nil {
		res = p.MatchResource(ua.Tokens, target)
		// A rule that refuses another spelling of the same resource applies:
		// the backend would serve the disallowed resource under it.
		for i := 0; res.Allowed && i < len(req.Variants); i++ {
			res = p.MatchResource(ua.Tokens, policy.NormalizeTarget(req.Variants[i]))
		}
		if res.Agent == "*" && ua.UserTriggered() && e.cfg.UserTriggeredSkipGlobal {
			res = policy.Result{Allowed: true}
		}
	}
	d.Group, d.Rule = res.Agent, res.Rule

	if !res.Allowed {
		out := e.store.Apply(key, now, e.op(Op{Strike: true, Blockable: !unblockable, CheckIP: true}))
		d.ReadRobots = out.IPRobotsAt != 0
		reason := ReasonDisallowed
		if out.Blocked {
			reason = ReasonBlockedClient
		}
		return e.refuse(d, reason, out)
	}

	interval, reason := res.CrawlDelay, ReasonCrawlDelay
	if interval == 0 {
		interval, reason = e.classRates[ua.Class], ReasonRate
	}
	op := e.op(Op{Interval: interval, Burst: e.cfg.Burst, StrikeOnEmpty: true, Blockable: !unblockable, CheckIP: true})
	if interval == 0 {
		op = Op{Peek: true, CheckIP: true}
	}
	out := e.store.Apply(key, now, op)
	d.ReadRobots = out.IPRobotsAt != 0
	d.Strikes = int(out.State.Strikes)
	if out.Blocked {
		return e.refuse(d, ReasonBlockedClient, out)
	}
	if interval == 0 || out.Took {
		return d
	}
	d.Reason, d.Violation, d.RetryAfter = reason, true, out.Wait
	switch {
	case out.NewlyBlocked:
		d.Action = Deny
		d.BlockedUntil = time.Unix(0, out.State.BlockedUntil)
	case gentle || d.Strikes <= e.cfg.Grace:
		// Logged only: a first slip, or a verified search crawler.
	default:
		d.Action = Throttle
	}
	return d
}

// trapped reports whether the target (in normal form) or one of its
// variants is a trap.
func (e *Engine) trapped(target string, variants []string) bool {
	if e.traps.Contains(target) {
		return true
	}
	for _, v := range variants {
		if e.traps.Contains(policy.NormalizeTarget(v)) {
			return true
		}
	}
	return false
}

// op fills in the escalation settings of o.
func (e *Engine) op(o Op) Op {
	o.Strikes, o.Window, o.Cooldown, o.MaxCooldown = e.cfg.Strikes, e.cfg.Window, e.cfg.Cooldown, e.cfg.MaxCooldown
	return o
}

// refuse completes a Deny decision from a store outcome.
func (e *Engine) refuse(d Decision, reason Reason, out Outcome) Decision {
	d.Action, d.Reason, d.Violation = Deny, reason, true
	if reason == ReasonBlockedClient && e.cfg.Tarpit > 0 {
		d.Action, d.Hold = Tarpit, e.cfg.Tarpit
	}
	d.Strikes = int(out.State.Strikes)
	switch {
	case out.IPBlocked:
		d.BlockedUntil = time.Unix(0, out.IPBlockedUntil)
	case out.State.BlockedUntil != 0 && (out.Blocked || out.NewlyBlocked):
		d.BlockedUntil = time.Unix(0, out.State.BlockedUntil)
	}
	return d
}

func (e *Engine) allowlisted(req *Request) bool {
	if len(e.cfg.AllowCIDRs) == 0 && len(e.allowTokens) == 0 {
		return false
	}
	for _, p := range e.cfg.AllowCIDRs {
		if p.Contains(req.IP.Unmap()) || p.Contains(req.IP) {
			return true
		}
	}
	for _, t := range req.UA.Tokens {
		if e.allowTokens[t] {
			return true
		}
	}
	return false
}
