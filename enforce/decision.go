package enforce

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/evidence/behaviour"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Action is what to do with a request.
type Action uint8

// Actions.
const (
	// Allow serves the request.
	Allow Action = iota
	// Throttle answers 429 Too Many Requests with a Retry-After.
	Throttle
	// Deny answers 403 Forbidden.
	Deny
	// Tarpit holds the request for Decision.Hold, then answers like Deny:
	// the last rung of the ladder, for a blocked client that keeps asking.
	Tarpit
)

var actionNames = [...]string{Allow: "allow", Throttle: "throttle", Deny: "deny", Tarpit: "tarpit"}

// Actions are the actions the engine takes, in order; the decision log
// writes them by String.
var Actions = [...]Action{Allow, Throttle, Deny, Tarpit}

// String returns "allow", "throttle", "deny" or "tarpit".
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("action(%d)", int(a))
}

// Reason says why a decision was taken. Its values are stable: logs,
// metrics and the CLI report use them.
type Reason string

// Reasons.
const (
	// ReasonNone: an ordinary allowed request.
	ReasonNone Reason = ""
	// ReasonRobotsTxt: /robots.txt, always served.
	ReasonRobotsTxt Reason = "robots_txt"
	// ReasonAllowlisted: the client IP or (after the checks a token cannot
	// lift) its token is allowlisted.
	ReasonAllowlisted Reason = "allowlisted"
	// ReasonDisallowed: a robots.txt rule disallows the path for this bot.
	ReasonDisallowed Reason = "disallowed"
	// ReasonCrawlDelay: the bot ignores its group's Crawl-delay.
	ReasonCrawlDelay Reason = "crawl_delay"
	// ReasonRate: the bot exceeds the configured rate of its class.
	ReasonRate Reason = "rate"
	// ReasonAddressRate: the bots of the client's address prefix together
	// exceed the address's rate (a client rotating its User-Agent).
	ReasonAddressRate Reason = "address_rate"
	// ReasonCrawlerRate: the crawler's requests over all its addresses
	// together exceed CrawlerShare times one client's rate: by its
	// verified identity, or within its network by its token or its
	// fingerprint (see [Crawler]).
	ReasonCrawlerRate Reason = "crawler_rate"
	// ReasonBlockedClient: the client, or its whole address, collected too
	// many strikes (or hit a trap) and is blocked until its cooldown ends.
	ReasonBlockedClient Reason = "blocked_client"
	// ReasonTrap: the client requested a trap path.
	ReasonTrap Reason = "trap"
	// ReasonBadAgent: the User-Agent is a known abusive scraper.
	ReasonBadAgent Reason = "bad_agent"
	// ReasonImpostor: the client claims a verifiable bot and failed the
	// check.
	ReasonImpostor Reason = "impostor"
	// ReasonBlockedClass: the operator shuts the client's class out.
	ReasonBlockedClass Reason = "blocked_class"
	// ReasonInvalid: the request target could not be read; bots are refused
	// rather than passed unchecked.
	ReasonInvalid Reason = "invalid_request"
	// ReasonContentUsage: the site's AI usage preferences (a Content-Usage
	// or Content-Signal line, which the decision's Rule names) refuse the
	// bot's purpose for the path, which its Allow and Disallow rules let
	// it fetch.
	ReasonContentUsage Reason = "content_usage"
	// ReasonDeparture: a robots.txt rule refuses the request only by a
	// departure of the enforcer's reading (Decision.Departure: the query
	// or another spelling of the path), which the reference reading
	// (RFC 9309, Google's parser) allows. Only a client whose identity is
	// a claim gets it, and it is no strike: a polite crawler can lose a
	// URL but never its access.
	ReasonDeparture Reason = "departure"
	// ReasonFeed: a feed reader was served a feed that the robots.txt "*"
	// group disallows: feeds are what it fetches for the people who
	// subscribed (see [Decision].UnlessFeed).
	ReasonFeed Reason = "feed"
)

// Reasons are the reasons the engine gives, in a fixed order: a table
// indexed by a reason's place here (the metrics' counters, the refusal
// texts) needs no map.
var Reasons = [...]Reason{
	ReasonNone, ReasonRobotsTxt, ReasonAllowlisted, ReasonDisallowed,
	ReasonCrawlDelay, ReasonRate, ReasonAddressRate, ReasonBlockedClient, ReasonTrap,
	ReasonBadAgent, ReasonImpostor, ReasonBlockedClass, ReasonInvalid, ReasonContentUsage,
	ReasonDeparture, ReasonFeed, ReasonCrawlerRate,
}

// UsageMode says what the engine does when the site's AI usage
// preferences refuse a bot's purpose.
type UsageMode uint8

// Usage modes.
const (
	// UsageEnforce refuses the request (the default).
	UsageEnforce UsageMode = iota
	// UsageLog serves it and logs the violation.
	UsageLog
	// UsageOff does not check the preferences.
	UsageOff
)

// Request holds the facts about one request that a decision needs.
type Request struct {
	// IP is the client IP, as Caddy determined it (trusted proxies
	// honoured).
	IP netip.Addr
	// UA is the classification of the User-Agent.
	UA uaclass.Result
	// Verdict is the outcome of verifying the client's bot claim.
	Verdict uaclass.Verdict
	// Signed marks a Verified agent whose Web Bot Auth signature verified
	// with keys the operator pinned for it (trusted_agent): it is treated
	// like a verified search crawler, whatever its class. A signature with
	// keys from the agent's own directory proves who signed, not that the
	// signer is trusted: it identifies the client and sets no Signed.
	Signed bool
	// CrossSite marks a request a browser made on behalf of another site
	// (see [CrossSiteFetch]): an image, a frame or a link on a page elsewhere.
	// Anyone can make a visitor's browser fetch any URL, so a trap it hits
	// is refused but blocks nobody; every other rule applies as usual.
	CrossSite bool
	// Method and Host are the request's method and host, for logs.
	Method, Host string
	// Target is the request target as policy.ParseTarget reads it: its
	// normal form and the other spellings under which a backend may serve
	// the same resource. A rule or trap that matches any of them applies.
	Target policy.Target
	// Invalid marks a request whose target could not be parsed.
	Invalid bool
	// BrowserLike marks an unrecognised client (not class browser) whose
	// User-Agent looks like a browser's: it stays bound by robots.txt's
	// rules, but gets a browser's rate ([Config].BrowserLikeInterval and
	// BrowserLikeBurst) instead of its class rate or the Crawl-delay, since
	// one page load is dozens of requests.
	BrowserLike bool
	// Dest and Accept are the request's Sec-Fetch-Dest and Accept header
	// values: for a client that renders (uaclass.Result.Renders) they
	// tell a page's subresources from its navigations (see [Subresource]).
	Dest, Accept string
	// JA4 is the JA4 fingerprint of the request's TLS handshake, or "".
	JA4 string
	// QUIC is the fingerprint of the transport parameters of an HTTP/3
	// request's connection (tlsprint/quicprint), or "".
	QUIC string
	// Framing is the framing fingerprint of the request's connection
	// (package framing: how its HTTP stack opened it and wrote its first
	// request), or "", and FramingStack what the framing table says of it
	// (Facts.TLS.Framing, which [Engine.Judge] held the claim to), which
	// the metrics count requests by.
	Framing      string
	FramingStack evidence.Framing
	// Evidence is what [Engine.Judge] found against a browser's claim: a
	// poser's decisive evidence (UA.Class is then uaclass.Poser), or a
	// mismatch that changed nothing; and what [Engine.Decide] found in
	// what the client did (evidence.Behaviour).
	Evidence evidence.Verdict
	// Behaviour is what the behaviour evidence reads of the request
	// (behaviour.go), which [Reader.Read] fills in through
	// [Engine.ReadBehaviour] for a document of a claim Judge judges;
	// behaviourRead says it did.
	Behaviour     behaviour.Request
	behaviourRead bool
	// star is the reference reading of the "*" group for Target, once
	// starDone: the behaviour evidence and the browser claims' mark
	// (claimWalk) read it for the same request.
	star     policy.Result
	starDone bool
}

// starReference returns the reference reading of the served file p's "*"
// group for req's target (see reference), matched once per request.
func starReference(req *Request, p *policy.Policy) policy.Result {
	if !req.starDone {
		req.star, req.starDone = reference(p, nil, &req.Target), true
	}
	return req.star
}

// Decision is the engine's verdict on one request.
type Decision struct {
	// Action is what to do. In dry-run mode it is what would be done.
	Action Action
	// Reason says why; ReasonNone for an ordinary allowed request.
	Reason Reason
	// Rule is the robots.txt rule that decided, or nil: an Allow or
	// Disallow line, or for ReasonContentUsage the Content-Usage or
	// Content-Signal line (Rule.Key says which). It points into the policy
	// and must not be modified.
	Rule *policy.Rule
	// Group is the robots.txt group that applied: a product token, "*", or
	// "" when none did or the client is not bound by robots.txt.
	Group string
	// Strikes is the client's strike count in the current window, and
	// AddressStrikes its address's (all its clients together: twice
	// Strikes of them block the whole address), when the store says it.
	Strikes, AddressStrikes int
	// RetryAfter is how long a throttled client should wait.
	RetryAfter time.Duration
	// Hold is how long a Tarpit decision holds the request before refusing
	// it.
	Hold time.Duration
	// ReadRobots reports whether the client IP fetched /robots.txt before
	// this request: a violation after that means it read the rules and
	// ignored them. RobotsAt is when it last did (zero: never), so that a
	// page can show the time beside the claim.
	ReadRobots bool
	RobotsAt   time.Time
	// BlockedUntil is set when the client is blocked, and BlockReason says
	// what made the block.
	BlockedUntil time.Time
	BlockReason  BlockReason
	// Violation marks a request that broke the rules even when the action
	// is Allow (a first slip that is only logged).
	Violation bool
	// Crawler is what identifies the client across its addresses (see
	// [Crawler]): the key its crawler's state is kept by; zero for a
	// browser. ByCrawler reports that the crawler's state decided: its
	// bucket (ReasonCrawlerRate) or its block.
	Crawler   Crawler
	ByCrawler bool
	// BlockDropped reports that the block this request earned was not
	// stored because the store holds as many blocks as it may; the
	// request itself is refused all the same.
	BlockDropped bool
	// Person marks a request of the browser class: a refusal of it that a
	// block makes is answered with a page a person can read (see
	// [Refusals.Refuse]).
	Person bool
	// DryRun marks a decision that is reported but not enforced.
	DryRun bool
	// UnlessFeed marks a decision for a feed reader's GET or HEAD of a
	// path that the robots.txt "*" group disallows for it (Rule names the
	// rule): the request is served only if the response is a feed. When
	// the decision serves it ([Decision.FeedOnly]; a rate, a block or a
	// usage preference may refuse it all the same), the caller passes it
	// on, holds the response at its headers ([FeedGate]) and completes the
	// decision with [Engine.FeedOutcome].
	UnlessFeed bool
	// Departure is the departure of the enforcer's reading by which Rule
	// refuses the path that the reference reading allows, for
	// ReasonDeparture and UnlessFeed decisions; policy.NoDeparture
	// otherwise.
	Departure policy.Departure
	// Evidence is the evidence of a request with decisive evidence against
	// its browser claim (Request.Evidence): a poser's, or with posers
	// "log" a browser's that is served. Refusals name it in
	// X-Robots-Guard-Evidence, and the decision is logged.
	Evidence evidence.Evidence
	// BrowserDisallowed marks a request whose User-Agent claims a browser
	// (class browser or poser, [ClaimsBrowser]) for a path the served
	// robots.txt's "*" group disallows in the reference reading, whether it
	// was served or refused: how much of the "browser" traffic walks where
	// robots may not. Rule and Group name the rule, unless the decision
	// names another (a poser's refusal under the enforcer's reading, a
	// trap). The decision is logged.
	BrowserDisallowed bool

	// at is when the engine decided (Unix nanoseconds; 0: not the
	// engine's decision), the time a refusal's Retry-After counts from:
	// one clock read per request, not two.
	at int64
}

// Enforced reports whether the decision must be carried out: a refusal
// outside dry-run mode.
func (d *Decision) Enforced() bool {
	return d.Action != Allow && !d.DryRun
}

// Noteworthy reports whether the decision should be logged: any refusal
// (also in dry-run mode) or violation, a feed served where the "*" group
// disallows it, a poser's request, and a browser's claim on a path the "*"
// group disallows (BrowserDisallowed).
func (d *Decision) Noteworthy() bool {
	return d.Action != Allow || d.Violation || d.Reason == ReasonTrap || d.Reason == ReasonFeed || d.Evidence != 0 || d.BrowserDisallowed
}

// sawRobots notes when the client's address last fetched /robots.txt
// (Unix nanoseconds; 0: never).
func (d *Decision) sawRobots(at int64) {
	d.ReadRobots = at != 0
	if at != 0 {
		d.RobotsAt = time.Unix(0, at).UTC()
	}
}

// FeedOnly reports whether the request is to be served only if the
// response is a feed: an UnlessFeed decision that serves it.
func (d *Decision) FeedOnly() bool {
	return d.UnlessFeed && d.Action == Allow
}

// ParseUsageMode reads a content usage mode: "enforce" (or ""), "log" or
// "off".
func ParseUsageMode(s string) (UsageMode, error) {
	switch s {
	case "", "enforce":
		return UsageEnforce, nil
	case "log":
		return UsageLog, nil
	case "off":
		return UsageOff, nil
	}
	return 0, fmt.Errorf("unknown mode %q (want enforce, log or off)", s)
}
