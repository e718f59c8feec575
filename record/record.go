// Package record is the one record of each decision of robots_guard, and
// the one set of rules by which everything after the decision reads it.
// The handler makes a [Record] of each decision ([New]); from it the
// decision log writes its line (report.Entry), the metrics count it, and
// the review page's live statistics count it; "caddy robots report", its
// --html page and "caddy robots blocked" read the log's lines back into
// Records (report.Entry.Record). What a decision's outcome is, whether it
// broke the rules, whether its client read robots.txt and then ignored it,
// and how a browser's claim on a disallowed path is counted are methods
// of Record and nowhere else, so that the live page and the pages built
// from logs agree by construction. It does not import Caddy.
package record

import (
	"net/netip"
	"strings"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/signature"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Record is one decision on one request: who asked, for what, what was
// decided and why, and where. Made live ([New]) it points into the
// request, the decision and the policy, which it must not outlive beyond
// the request (the decision log and the statistics copy what they keep);
// read back from a log line it holds what the line says.
type Record struct {
	// Time is when the request was decided: a log line's time; zero live,
	// where the statistics keep a coarse clock of their own.
	Time time.Time
	// Zone is the handler's zone (its per-client state).
	Zone string
	// Site is the site the handler guards (its hosts, or ":PORT" for a
	// site of any host; package internal/site), which names every row of
	// the log, the report and the review page; "" in logs written before
	// it, where the zone stands for it (SiteName).
	Site string
	// Version identifies the robots.txt the request was judged against
	// (the first 12 hex digits of its SHA-256); VersionText is that file,
	// live only.
	Version     string
	VersionText []byte

	// ClientIP is the client's address as the server determined it.
	ClientIP netip.Addr
	// UserAgent is the User-Agent header as sent.
	UserAgent string
	// Class and Tokens classify the client (Tokens most specific first);
	// Bot and Operator name its bot-database entry, if any.
	Class         uaclass.Class
	Tokens        []string
	Bot, Operator string
	// Verdict is the verification of the client's bot claim.
	Verdict uaclass.Verdict
	// Signature is the outcome of Web Bot Auth ("verified", "invalid",
	// "unverified"; "" for an unsigned request), SignatureAgent the agent
	// it names and SignatureError, for a failure, why.
	Signature, SignatureAgent, SignatureError string
	// Evidence is what the request showed against its browser claim: live,
	// the whole verdict; from a log, its findings only (EvidenceReason
	// says them for a person).
	Evidence       evidence.Verdict
	EvidenceReason string
	// JA4 is the fingerprint of the client's TLS handshake, when known.
	JA4 string
	// QUIC is the fingerprint of the transport parameters of an HTTP/3
	// client's connection (tlsprint/quicprint), when known.
	QUIC string
	// Framing is the framing fingerprint of the client's connection (how
	// its HTTP stack opened it and wrote its first request; package
	// framing), when known; FramingStack the family the framing table
	// knows its stack as ("" when unknown), live only: the metrics count
	// requests by it.
	Framing, FramingStack string

	// Method, Host and URI are the request's, the URI as sent.
	Method, Host, URI string
	// Path is the target as judged: live its normal form
	// (policy.Target.Normal), from a log the URI as sent.
	Path string

	// Action and Reason are the decision.
	Action enforce.Action
	Reason enforce.Reason
	// Rule is the robots.txt rule that decided, if any, and Group the
	// group that applied.
	Rule  *policy.Rule
	Group string
	// Strikes is the client's strike count in the window, AddressStrikes
	// its address's (0: not known).
	Strikes, AddressStrikes int
	// ReadRobots reports that the client's address had fetched
	// robots.txt before, RobotsAt when it last did (zero: never, or a log
	// written before the field existed).
	ReadRobots bool
	RobotsAt   time.Time
	// DryRun marks a decision reported, not enforced.
	DryRun bool
	// RetryAfter is the wait asked of a throttled client.
	RetryAfter time.Duration
	// BlockedUntil is when the client's block ends, BlockReason what made
	// it.
	BlockedUntil time.Time
	BlockReason  string
	// Crawler names the crawler whose state across its addresses decided
	// (enforce.Decision.ByCrawler: its bucket, reason crawler_rate, or its
	// block): its Kind and Name, as a log line's crawler field says them
	// (enforce.ParseCrawler); the zero Crawler otherwise. Its ID, a hash,
	// is not kept.
	Crawler enforce.Crawler
	// BlockDropped reports that the block this request earned was not
	// stored (the store holds as many as it may); live only.
	BlockDropped bool
	// BrowserDisallowed marks a request whose User-Agent claims a browser
	// for a path the robots.txt "*" group disallows, served or refused.
	BrowserDisallowed bool
	// Noteworthy marks a decision that is always logged
	// (enforce.Decision.Noteworthy); every decision read from a log was.
	Noteworthy bool
	// Repeats is, for a summary line of log_repeats, the number of
	// further decisions like the one it follows up; 0 otherwise.
	Repeats int64
}

// New returns the record of the decision d on the request rd, judged
// against the robots.txt version whose text is given, in zone. It
// allocates nothing.
func New(rd *enforce.Reading, d *enforce.Decision, zone, version string, text []byte) Record {
	var r Record
	r.Set(rd, d, zone, version, text)
	return r
}

// Set makes r the record of decision d on the request rd read, in place:
// a Record returned by value is built in a frame of its own and copied, a
// deeper stack on every request (examples/bench/README.md, "The refusal's
// stack").
func (r *Record) Set(rd *enforce.Reading, d *enforce.Decision, zone, version string, text []byte) {
	req := &rd.Request
	*r = Record{} // field by field below: a literal would be built on the stack and copied
	r.Zone, r.Version, r.VersionText = zone, version, text
	r.ClientIP, r.UserAgent = req.IP, rd.UserAgent
	r.Class, r.Tokens, r.Verdict = req.UA.Class, req.UA.Tokens, req.Verdict
	r.Evidence, r.JA4, r.QUIC, r.Framing, r.FramingStack = req.Evidence, req.JA4, req.QUIC, req.Framing, req.FramingStack.Family
	r.Method, r.Host, r.URI, r.Path = req.Method, req.Host, rd.URI, req.Target.Normal
	r.Action, r.Reason, r.Rule, r.Group, r.Strikes, r.AddressStrikes = d.Action, d.Reason, d.Rule, d.Group, d.Strikes, d.AddressStrikes
	r.ReadRobots, r.RobotsAt, r.DryRun, r.RetryAfter = d.ReadRobots, d.RobotsAt, d.DryRun, d.RetryAfter
	r.BlockedUntil, r.BlockDropped = d.BlockedUntil, d.BlockDropped
	r.BrowserDisallowed, r.Noteworthy = d.BrowserDisallowed, d.Noteworthy()
	if !d.BlockedUntil.IsZero() {
		r.BlockReason = d.BlockReason.String()
	}
	if d.ByCrawler {
		r.Crawler = enforce.Crawler{Kind: d.Crawler.Kind, Name: d.Crawler.Name}
	}
	if b := req.UA.Bot; b != nil {
		r.Bot, r.Operator = b.Name, b.Operator
	}
	if sig := &rd.Signature; sig.Outcome != signature.None {
		r.Signature, r.SignatureAgent = sig.Outcome.String(), sig.Agent
		if sig.Err != nil && sig.Outcome != signature.Verified {
			r.SignatureError = sig.Err.Error()
		}
	}
}

// Token returns the most specific product token, or "".
func (r *Record) Token() string {
	if len(r.Tokens) == 0 {
		return ""
	}
	return r.Tokens[0]
}

// Weight is the number of decisions the record stands for: Repeats for a
// summary line of log_repeats, else 1.
func (r *Record) Weight() int {
	const most = 1<<31 - 1
	switch {
	case r.Repeats > most:
		return most
	case r.Repeats > 0:
		return int(r.Repeats)
	}
	return 1
}

// Outcome is what became of a request, as the pages and the report count
// it.
type Outcome uint8

// Outcomes.
const (
	// Allowed: served.
	Allowed Outcome = iota
	// Refused: refused for this request (a disallowed path, a blocked
	// class, a bad agent, an impostor).
	Refused
	// Throttled: answered 429 for going too fast.
	Throttled
	// Blocked: refused because the client is blocked (strikes or a trap),
	// or caught by a trap now.
	Blocked
	// NumOutcomes is the number of outcomes.
	NumOutcomes
)

var outcomeNames = [NumOutcomes]string{"allowed", "refused", "throttled", "blocked"}

// String returns "allowed", "refused", "throttled" or "blocked".
func (o Outcome) String() string {
	if o < NumOutcomes {
		return outcomeNames[o]
	}
	return "unknown"
}

// OutcomeOf returns the outcome of a decision's action and reason. A
// dry-run decision counts as what it would have been.
func OutcomeOf(action enforce.Action, reason enforce.Reason) Outcome {
	switch {
	case action == enforce.Allow:
		return Allowed
	case action == enforce.Throttle:
		return Throttled
	case action == enforce.Tarpit || reason == enforce.ReasonBlockedClient || reason == enforce.ReasonTrap:
		return Blocked
	}
	return Refused
}

// Outcome returns the record's outcome (OutcomeOf).
func (r *Record) Outcome() Outcome { return OutcomeOf(r.Action, r.Reason) }

// Violation reports whether a decision of action and reason broke the
// rules: every refusal (in dry run, what would have been one), and an
// allowed request with a reason other than robots.txt itself, an allowlist
// or a feed served, which is a first slip only logged (a rate, the AI
// usage preferences with content_usage log). It is what the engine marks
// (enforce.Decision.Violation), read from the action and reason alone, so
// that a log line says it too.
func Violation(action enforce.Action, reason enforce.Reason) bool {
	if action != enforce.Allow {
		return true
	}
	switch reason {
	case enforce.ReasonNone, enforce.ReasonRobotsTxt, enforce.ReasonAllowlisted, enforce.ReasonFeed:
		return false
	}
	return true
}

// Violation reports whether the record's decision broke the rules
// (Violation).
func (r *Record) Violation() bool { return Violation(r.Action, r.Reason) }

// ReadThenIgnored is the one definition of "read robots.txt, then ignored
// it", which the review page, "caddy robots report --html" and "caddy
// robots report" all use: a violation made after the client's address had
// fetched robots.txt. The address, not the product token: robots.txt is
// fetched per address (clients behind one address share it), which is why
// the pages show when the address read it in the same row.
func ReadThenIgnored(violation, readRobots bool) bool { return violation && readRobots }

// ReadThenIgnored reports whether the record's client read robots.txt,
// then broke it (ReadThenIgnored).
func (r *Record) ReadThenIgnored() bool { return ReadThenIgnored(r.Violation(), r.ReadRobots) }

// RobotsTxt reports a request for /robots.txt itself.
func (r *Record) RobotsTxt() bool { return r.Reason == enforce.ReasonRobotsTxt }

// Claim is how a request whose User-Agent claims a browser for a path the
// robots.txt "*" group disallows (BrowserDisallowed) is counted, on the
// pages, in the report and in the metrics alike: as Class
// (enforce.ClaimClass: uaclass.Poser with decisive evidence against the
// claim, else uaclass.Browser), Served or not, with its findings.
type Claim struct {
	Class    uaclass.Class
	Served   bool
	Evidence evidence.Evidence
}

// ClaimOf returns how a browser's claim on a disallowed path of a client
// of class, with the findings ev against its claim, whose request had
// outcome o, is counted.
func ClaimOf(class uaclass.Class, ev evidence.Evidence, o Outcome) Claim {
	return Claim{Class: enforce.ClaimClass(class, ev), Served: o == Allowed, Evidence: ev}
}

// Claim returns how the record counts as a browser's claim on a disallowed
// path (ClaimOf); ok is false for a record that is none (not
// BrowserDisallowed).
func (r *Record) Claim() (c Claim, ok bool) {
	if !r.BrowserDisallowed {
		return Claim{}, false
	}
	return ClaimOf(r.Class, r.Evidence.Evidence, r.Outcome()), true
}

// PathOnly returns the record's path without its query.
func (r *Record) PathOnly() string {
	path, _, _ := strings.Cut(r.Path, "?")
	return path
}

// Message is the message of the record's log line: what happened.
func (r *Record) Message() string {
	switch {
	case r.Action != enforce.Allow && r.DryRun:
		return "request would be refused (dry run)"
	case r.Action != enforce.Allow:
		return "request refused"
	case r.Violation():
		return "robots.txt violation logged"
	}
	return "request allowed"
}

// SiteName names the record's site: its Site, else (a log written before
// records named their site) its zone, the site's state by default; ""
// when the log says neither.
func (r *Record) SiteName() string {
	if r.Site != "" {
		return r.Site
	}
	return r.Zone
}
