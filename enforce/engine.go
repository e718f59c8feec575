package enforce

import (
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/robotsguard/robotsguard/evidence/behaviour"
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
	allowPrints map[string]bool
	// behaviours are the behaviour summaries (nil: behaviour off), with
	// the thresholds of a group and of a client of a group that behaves
	// as a crawler (behaviour.go).
	behaviours                      *behaviours
	behaviourGroup, behaviourMember behaviour.Config
	// shared is the store when it keeps the summaries for a fleet.
	shared BehaviourStore
}

// New returns an Engine with the given configuration and store. A nil store
// means a [MemoryStore] with default bounds.
func New(cfg Config, store Store) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if store == nil {
		store = NewMemoryStore(0, 0, 0)
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
	if _, ok := cfg.ClassRates[uaclass.Poser]; !ok {
		e.classRates[uaclass.Poser] = e.classRates[uaclass.OtherBot]
	}
	e.allowPrints = make(map[string]bool, len(cfg.AllowFingerprints))
	for _, f := range cfg.AllowFingerprints {
		e.allowPrints[f] = true
	}
	for _, t := range cfg.AllowTokens {
		e.allowTokens[t] = true
	}
	if len(cfg.Traps) > 0 {
		e.traps = policy.NewPathSet(cfg.Traps...)
	}
	if !cfg.BehaviourOff && cfg.Posers != PosersOff {
		e.behaviours = newBehaviours(cfg.BehaviourClients)
		e.behaviourGroup, e.behaviourMember = cfg.Behaviour.Group()
		e.shared, _ = store.(BehaviourStore)
	}
	return e, nil
}

// Decide returns the decision for req under the robots.txt policy p (nil
// means no robots.txt: everything allowed to every bot). p is the policy
// of the robots.txt the handler serves, the site's file with its additions
// (the traps, a "Disallow: /" group for the blocked classes): a trap and a
// class block apply only where that file, read as a polite crawler reads
// it ([policy.Policy.Match], no departures), disallows the request for
// the client, so that nobody is refused, struck or blocked for what the
// served file allows (with p nil they apply as configured). Per-client
// state is kept by address prefix (IPv4Prefix, IPv6Prefix; a NAT64
// address is the IPv4 client it embeds) and product token, per address
// prefix as a whole, and for a bot per crawler across its addresses
// ([Engine.Crawler]: its verified identity, or its token or fingerprint
// within its network). In order:
//
//  1. /robots.txt is always served, and the fetch is recorded.
//  2. Allowlisted IP ranges are served.
//  3. A trap path blocks the client's address at once, whatever its
//     User-Agent. A request a browser made for another site (CrossSite)
//     is refused and blocks nobody.
//  4. Browsers are served unless their address is blocked (refused at
//     once, never tarpitted): robots.txt is not addressed to people.
//  5. Bad agents and impostors are refused (unless configured otherwise),
//     with a strike on the address; a blocked address is refused.
//  6. Allowlisted tokens are served unless their address is blocked: a
//     token is a claim, so it lifts none of the checks above.
//  7. Blocked classes (or parts of class ai, BlockAI) are refused; a
//     blocked client or address is refused; a path robots.txt disallows for
//     the bot is refused. Each of these is a strike, on the client and on
//     its address, but a refusal that only a departure of the enforcer's
//     reading makes (ReasonDeparture) is none. A crawler whose identity is
//     evidence gets the reference reading, and a user-triggered one only
//     the groups that name it ([Evidenced], reading.go); a feed reader's
//     GET or HEAD under the "*" group is served only a feed (UnlessFeed,
//     feed.go).
//  8. The group's Crawl-delay, or the class rate (a browser's allowance for
//     a BrowserLike request, and for a renderer's subresources in a bucket
//     of their own, render.go; class bot's for a claim whose verification
//     did not finish, where its own class has none), is enforced with a
//     token bucket per client, AddressShare times it per address and
//     CrawlerShare times it per crawler; see [Apply] for when a rate
//     violation is logged, throttled or a strike.
//  9. A bot whose purpose (uaclass.Purposes) the site's AI usage
//     preferences refuse for the path is refused (ContentUsage), naming
//     the Content-Usage or Content-Signal line. It is no strike: a crawler
//     that keeps to Allow and Disallow but does not read the newer lines
//     yet is not rogue, and a block would also cost it the paths the site
//     lets it use. Its requests count against its rate like any others.
//     Bots of unknown purpose are judged by Allow and Disallow only.
//
// Enough strikes in a window block the client (Strikes), its whole
// address (AddressStrikes, counted over all its tokens) or its crawler
// (AddressStrikes, counted over all its addresses; a trap hit is one) for
// a cooldown that doubles with each block; with a Tarpit configured, a blocked bot's
// further requests are held before they are refused. Verified search
// crawlers and agents signing with pinned keys are never blocked and never
// throttled unless EscalateVerifiedSearch is set. Each request is at most
// one store operation, but for a target longer than matchFirstBytes (it is
// first checked against the client's blocks, a peek, so that a blocked
// client never costs a match of its long target), a renderer's subresource
// (its client's block, then its bucket) and a feed reader's response that
// is no feed (its strike, in [Engine.FeedOutcome]).
//
// Whatever the action, a request whose User-Agent claims a browser (class
// browser, or a poser) for a path the "*" group disallows is marked
// BrowserDisallowed (claimWalk, claims.go).
func (e *Engine) Decide(req *Request, p *policy.Policy) Decision {
	now := e.cfg.Now()
	var peek Outcome
	peeked := false
	if e.behaviours != nil && req.UA.Class == uaclass.Browser {
		peek, peeked = e.behave(req, p, now.UnixNano()) // behaviour.go: may make it a poser
	}
	ua := &req.UA
	d := Decision{DryRun: e.cfg.DryRun, Person: ua.Class == uaclass.Browser, at: now.UnixNano()}
	if req.Evidence.Decisive() {
		d.Evidence = req.Evidence.Evidence
	}
	key := e.key(req.IP, ua.Token())
	key.Crawler = e.Crawler(req) // crawler.go
	d.Crawler = key.Crawler
	addr := AddrKey(key)
	long := longTarget(&req.Target)

	if policy.IsRobotsTxt(req.Target.Normal) {
		e.store.Apply(addr, now, Op{MarkRobots: true})
		d.Reason = ReasonRobotsTxt
		return d
	}
	if e.allowlistedIP(req.IP) {
		d.Reason = ReasonAllowlisted
		e.claimWalk(&d, req, p)
		return d
	}
	if e.traps != nil && e.traps.ContainsTarget(&req.Target) {
		if d, hit := e.trap(d, req, p, addr, now, long); hit {
			return d
		}
	}
	if ua.Class == uaclass.Browser {
		// robots.txt is not addressed to people: only an address block
		// applies, and a person is refused at once, never tarpitted.
		out := peek // a fleet's behaviour store peeked with the summaries
		if !peeked {
			out = e.store.Apply(addr, now, Op{Peek: true})
		}
		d.sawRobots(out.State.RobotsAt)
		if out.Blocked {
			d = e.refuse(d, ReasonBlockedClient, out)
			d.Action, d.Hold = Deny, 0
		}
		e.claimWalk(&d, req, p)
		return d
	}
	if ua.Class == uaclass.Bad && !e.cfg.AllowBadAgents || req.Verdict == uaclass.Impostor && !e.cfg.AllowImpostors {
		why := WhyImpostor
		if ua.Class == uaclass.Bad {
			why = WhyBadAgent
		}
		out := e.store.Apply(addr, now, e.op(Op{Strike: true, Blockable: true, CheckCrawler: true, Why: why}))
		d.sawRobots(out.State.RobotsAt)
		reason := ReasonImpostor
		switch {
		case out.Blocked:
			reason = ReasonBlockedClient
		case ua.Class == uaclass.Bad:
			reason = ReasonBadAgent
		}
		return e.refuse(d, reason, out)
	}
	if e.allowlistedToken(ua.Tokens) {
		out := e.store.Apply(addr, now, Op{Peek: true, CheckCrawler: true})
		d.sawRobots(out.State.RobotsAt)
		if out.Blocked {
			return e.refuse(d, ReasonBlockedClient, out)
		}
		d.Reason = ReasonAllowlisted
		return d
	}

	gentle := (ua.Class == uaclass.Search || req.Signed) && req.Verdict == uaclass.Verified && !e.cfg.EscalateVerifiedSearch
	unblockable := gentle
	if long {
		// Matching a long target may cost more than this peek: a blocked
		// client is refused before it is matched.
		if out := e.store.Apply(key, now, Op{Peek: true, CheckAddr: true, CheckCrawler: true}); out.Blocked {
			d.sawRobots(out.AddrRobotsAt)
			return e.refuse(d, ReasonBlockedClient, out)
		}
	}
	blocked := e.blocksClass(ua) // reading.go: the class, or its part of class ai
	classBlocked := blocked && req.Invalid
	if blocked && !req.Invalid {
		// Only where the served file disallows the request for the client:
		// the site's own rules may allow what the class block adds.
		if ref := reference(p, ua.Tokens, &req.Target); !ref.Allowed {
			classBlocked, d.Group, d.Rule = true, ref.Agent, ref.Rule
			d.BrowserDisallowed = ClaimsBrowser(ua) // a poser has no tokens: ref is the "*" group's
		}
	}
	if classBlocked || req.Invalid {
		reason, why := ReasonBlockedClass, WhyClass
		if !classBlocked {
			reason, why = ReasonInvalid, WhyInvalid
		}
		out := e.store.Apply(key, now, e.op(Op{Strike: true, Blockable: !unblockable, CheckAddr: true, CheckCrawler: true, Why: why}))
		d.sawRobots(out.AddrRobotsAt)
		if out.Blocked {
			reason = ReasonBlockedClient
		}
		return e.refuse(d, reason, out)
	}

	res := e.match(req, p) // reading.go
	d.Group, d.Rule = res.Agent, res.Rule
	if ua.Class == uaclass.Poser {
		e.claimWalk(&d, req, p) // the reference reading, which res is not
	}

	if !res.Allowed && unlessFeed(req, res) {
		d.UnlessFeed, d.Departure, res.Allowed = true, res.Departure, true
	}
	if !res.Allowed && res.Departure != policy.NoDeparture {
		return e.departure(d, res, key, now)
	}
	if !res.Allowed {
		out := e.store.Apply(key, now, e.op(Op{Strike: true, Blockable: !unblockable, CheckAddr: true, CheckCrawler: true, Why: WhyDisallowed}))
		d.sawRobots(out.AddrRobotsAt)
		reason := ReasonDisallowed
		if out.Blocked {
			reason = ReasonBlockedClient
		}
		return e.refuse(d, reason, out)
	}

	usage := e.usageRefusal(req, p)

	interval, burst, reason, crawled := res.CrawlDelay, e.cfg.Burst, ReasonCrawlDelay, true
	switch {
	case req.BrowserLike:
		interval, burst, reason = e.cfg.BrowserLikeInterval, e.cfg.BrowserLikeBurst, ReasonRate
	case renderedSubresource(req): // render.go: a bucket of its own, at a browser's rate
		sub, out, ok := e.subresourceKey(key, now)
		if !ok {
			return e.refuse(d, ReasonBlockedClient, out)
		}
		// The crawler's pages are paced as its own; its subresources,
		// at a browser's rate per client, are not.
		key, crawled = sub, false
		interval, burst, reason = e.cfg.BrowserLikeInterval, e.cfg.BrowserLikeBurst, ReasonRate
	case interval == 0:
		interval, reason = e.classRates[ua.Class], ReasonRate
		if interval == 0 && req.Verdict == uaclass.Unverified {
			// A claim that could not be checked lifts no limit: it is
			// paced like any bot.
			interval = e.classRates[uaclass.OtherBot]
		}
	}
	op := Op{Peek: true, CheckAddr: true, CheckCrawler: crawled}
	if interval > 0 {
		op = e.op(Op{Interval: interval, Burst: burst, AddrInterval: interval / AddressShare, AddrBurst: burst * AddressShare,
			Grace: e.cfg.Grace, Blockable: !unblockable, CheckAddr: true, Why: WhyRate})
		if crawled && key.Crawler.Kind != CrawlerNone {
			share := e.cfg.CrawlerShare
			op.CheckCrawler, op.CrawlerInterval, op.CrawlerBurst = true, interval/time.Duration(share), min(burst*share, maxBurst)
		}
		if gentle {
			// Every violation is only logged.
			op.Grace = math.MaxInt32
		}
	}
	out := e.store.Apply(key, now, op)
	d.sawRobots(out.AddrRobotsAt)
	d.Strikes, d.AddressStrikes = int(out.State.Strikes), out.AddrStrikes
	d.BlockDropped = out.BlockDropped
	if out.Blocked {
		return e.refuse(d, ReasonBlockedClient, out)
	}
	if interval == 0 || out.Took {
		return e.usageDecision(d, usage)
	}
	switch {
	case out.ByAddr:
		reason = ReasonAddressRate
	case out.ByCrawler:
		reason, d.ByCrawler = ReasonCrawlerRate, true
	}
	d.Reason, d.Violation, d.RetryAfter = reason, true, out.RetryAfter
	switch {
	case out.NewlyBlocked || out.AddrNewlyBlocked:
		d.RetryAfter = 0 // the block's end says when to come back
		d = e.refuse(d, reason, out)
	case out.Throttled:
		d.Action = Throttle
	case usage != nil:
		d.RetryAfter = 0
		d = e.usageDecision(d, usage)
	}
	return d
}

// trap decides a request for a trap path: when the served file disallows
// it for the client (see [Engine.Decide]), the client's address is blocked
// at once and the request refused (hit is true); a request a browser made
// for another site (Request.CrossSite) is refused without a block or a
// strike, since anyone can make a visitor's browser fetch any URL. Where
// the file allows the request, it is no trap for this client: hit is
// false and the request is judged as any other. A long target is first
// checked against the address's block (see [Engine.Decide]).
func (e *Engine) trap(d Decision, req *Request, p *policy.Policy, addr Key, now time.Time, long bool) (_ Decision, hit bool) {
	// A trap hit is a strike on the crawler of a network (a token, a
	// fingerprint; AddressStrikes of them block it), not on a verified
	// identity: that one's address (kept apart, Crawler.Scopes) is
	// blocked, as anyone's.
	crawler := addr.Crawler.Networked()
	if long {
		if out := e.store.Apply(addr, now, Op{Peek: true, CheckCrawler: crawler}); out.Blocked {
			d.sawRobots(out.State.RobotsAt)
			return e.refuse(d, ReasonTrap, out), true
		}
	}
	ref := reference(p, req.UA.Tokens, &req.Target)
	if ref.Allowed {
		return d, false
	}
	d.Group, d.Rule = ref.Agent, ref.Rule
	d.BrowserDisallowed = ClaimsBrowser(&req.UA) // no tokens: ref is the "*" group's
	op := e.op(Op{Block: true, CheckCrawler: crawler, Why: WhyTrap})
	if req.CrossSite {
		op = Op{Peek: true}
	}
	out := e.store.Apply(addr, now, op)
	d.sawRobots(out.State.RobotsAt)
	return e.refuse(d, ReasonTrap, out), true
}

// reference returns how a polite crawler reads the served file p for the
// client's tokens and the target the backend receives: RFC 9309 and
// Google's reading ([policy.Policy.Match]), without the enforcer's
// departures. Without tokens (a browser, an unnamed client) the "*" group
// applies. Without a policy nothing contradicts the configuration: the
// result is a refusal.
func reference(p *policy.Policy, tokens []string, t *policy.Target) policy.Result {
	if p == nil {
		return policy.Result{}
	}
	return p.Match(tokens, t.Normal)
}

// matchFirstBytes is the target length (all its spellings together) above
// which a request is checked against the client's blocks before it is
// matched: matching such a target against a file of wildcard rules can
// cost many times a store operation, and an attacker chooses the length.
// Ordinary targets are far shorter and keep to one store operation.
const matchFirstBytes = 512

// longTarget reports whether t is longer than matchFirstBytes.
func longTarget(t *policy.Target) bool {
	n := len(t.Normal)
	for _, v := range t.Variants {
		n += len(v)
	}
	return n > matchFirstBytes
}

// usageRefusal returns the robots.txt line by which the site's AI usage
// preferences refuse the bot's purposes for the request, or nil: when
// ContentUsage is off, the file states no preference, the bot's purposes
// are unknown, or the "*" group does not bind the client (an evidenced
// user-triggered fetcher, see [Evidenced]).
func (e *Engine) usageRefusal(req *Request, p *policy.Policy) *policy.Rule {
	if e.cfg.ContentUsage == UsageOff || !p.HasUsage() {
		return nil
	}
	u := req.UA.Purposes().Usage()
	if u == 0 {
		return nil
	}
	r := p.MatchUsage(req.UA.Tokens, &req.Target, u)
	if r.Refused == 0 || r.Agent == "*" && req.UA.UserTriggered() && Evidenced(req) {
		return nil
	}
	return r.Rule
}

// usageDecision completes d for a request the AI usage preferences refuse
// (line is not nil): a refusal naming the line, or with UsageLog a logged
// violation; no strike either way.
func (e *Engine) usageDecision(d Decision, line *policy.Rule) Decision {
	if line == nil {
		return d
	}
	d.Reason, d.Rule, d.Violation = ReasonContentUsage, line, true
	if e.cfg.ContentUsage == UsageEnforce {
		d.Action = Deny
	}
	return d
}

// key returns the store key of a client: its address prefix, its network
// and its token, in the engine's mode.
func (e *Engine) key(ip netip.Addr, token string) Key {
	ip = clientAddr(ip)
	bits, net := e.cfg.IPv6Prefix, e.cfg.CrawlerIPv6Prefix
	if ip.Is4() {
		bits, net = e.cfg.IPv4Prefix, e.cfg.CrawlerIPv4Prefix
	}
	p, _ := ip.Prefix(bits) // the zero Addr gives the zero Prefix
	n, _ := ip.Prefix(min(bits, net))
	return Key{Prefix: p, Net: n, Token: token, DryRun: e.cfg.DryRun}
}

// Network returns the network of p within which a crawler's key holds:
// p's address masked to bits (v4 or v6, as the address is), or p itself
// when it is the shorter. A fleet store keeps the records of one network
// together.
func Network(p netip.Prefix, v4, v6 int) netip.Prefix {
	if !p.IsValid() {
		return netip.Prefix{}
	}
	bits := v6
	if p.Addr().Is4() {
		bits = v4
	}
	n, _ := p.Addr().Prefix(min(p.Bits(), bits))
	return n
}

// nat64 is the NAT64 well-known prefix (RFC 6052): an address in it is an
// IPv4 client seen through a translator, in its last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// clientAddr returns the address by which ip is tracked: an IPv4-mapped
// address as IPv4, and a NAT64 address as the IPv4 address it embeds, so
// that the IPv4 clients behind a translator are not one IPv6 /64.
func clientAddr(ip netip.Addr) netip.Addr {
	ip = ip.Unmap()
	if nat64.Contains(ip) {
		b := ip.As16()
		return netip.AddrFrom4([4]byte(b[12:]))
	}
	return ip
}

// ClientPrefix returns the address prefix by which the engine tracks ip
// (IPv4Prefix or IPv6Prefix bits; a NAT64 address by the IPv4 address it
// embeds): the address part of its state keys.
func (e *Engine) ClientPrefix(ip netip.Addr) netip.Prefix { return e.key(ip, "").Prefix }

// op fills in the escalation settings of o.
func (e *Engine) op(o Op) Op {
	o.Strikes, o.AddrStrikes, o.CrawlerStrikes, o.Window = e.cfg.Strikes, e.cfg.AddressStrikes, e.cfg.AddressStrikes, e.cfg.Window
	o.Cooldown, o.MaxCooldown = e.cfg.Cooldown, e.cfg.MaxCooldown
	return o
}

// refuse completes a Deny decision from a store outcome.
func (e *Engine) refuse(d Decision, reason Reason, out Outcome) Decision {
	d.Action, d.Reason, d.Violation = Deny, reason, true
	if reason == ReasonBlockedClient && e.cfg.Tarpit > 0 {
		d.Action, d.Hold = Tarpit, e.cfg.Tarpit
	}
	d.Strikes, d.AddressStrikes = int(out.State.Strikes), out.AddrStrikes
	d.BlockDropped = out.BlockDropped
	switch {
	case out.AddrBlocked:
		d.BlockedUntil, d.BlockReason = time.Unix(0, out.AddrBlockedUntil), out.AddrWhy
	case out.CrawlerBlocked && !out.NewlyBlocked:
		d.BlockedUntil, d.BlockReason, d.ByCrawler = time.Unix(0, out.CrawlerBlockedUntil), out.CrawlerWhy, true
	case out.State.BlockedUntil != 0 && (out.Blocked || out.NewlyBlocked):
		d.BlockedUntil, d.BlockReason = time.Unix(0, out.State.BlockedUntil), out.State.Why
	}
	return d
}

// allowlistedIP reports whether ip, or the IPv4 client it stands for
// (clientAddr), is in an allowlisted range.
func (e *Engine) allowlistedIP(ip netip.Addr) bool {
	c := clientAddr(ip)
	for _, p := range e.cfg.AllowCIDRs {
		if p.Contains(c) || p.Contains(ip) {
			return true
		}
	}
	return false
}

// allowlistedToken reports whether one of the tokens is allowlisted.
func (e *Engine) allowlistedToken(tokens []string) bool {
	if len(e.allowTokens) == 0 {
		return false
	}
	for _, t := range tokens {
		if e.allowTokens[t] {
			return true
		}
	}
	return false
}
