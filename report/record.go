package report

import (
	"net/netip"
	"strings"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/record"
	"github.com/robotsguard/robotsguard/uaclass"
)

// The decision log's line is a record.Record written out: EntryOf writes
// it, Entry.Record reads it back. TestEntryRecordRoundTrip checks that
// every field the line carries comes back.

// EntryOf returns the log line of a decision's record, without the
// envelope (ts, level, logger, msg) that the log encoder writes. It
// allocates only the evidence's reason, for a request with evidence.
func EntryOf(r *record.Record) Entry {
	e := Entry{
		ClientIP:       r.ClientIP.String(),
		UserAgent:      r.UserAgent,
		Class:          r.Class.String(),
		Tokens:         r.Tokens,
		Verification:   r.Verdict.String(),
		Method:         r.Method,
		Host:           r.Host,
		URI:            r.URI,
		Action:         r.Action.String(),
		Reason:         string(r.Reason),
		Group:          r.Group,
		Strikes:        r.Strikes,
		AddressStrikes: r.AddressStrikes,
		ReadRobots:     r.ReadRobots,
		DryRun:         r.DryRun,
		Bot:            r.Bot,
		Operator:       r.Operator,
		Site:           r.Site,
		Zone:           r.Zone,
		RobotsVersion:  r.Version,
		RetryAfter:     r.RetryAfter.Seconds(),
		JA4:            r.JA4,
		QUIC:           r.QUIC,
		Framing:        r.Framing,

		Signature:      r.Signature,
		SignatureAgent: r.SignatureAgent,
		SignatureError: r.SignatureError,

		BrowserDisallowed: r.BrowserDisallowed,
		Repeats:           r.Repeats,
	}
	if r.Rule != nil {
		e.RuleLine, e.Rule = r.Rule.Line, r.Rule.String()
	}
	if v := r.Evidence; !v.None() {
		e.Evidence, e.EvidenceReason = v.Evidence.String(), r.EvidenceReason
		if e.EvidenceReason == "" {
			e.EvidenceReason = v.Reason()
		}
	}
	if !r.RobotsAt.IsZero() {
		e.RobotsAt = &Time{Time: r.RobotsAt.Truncate(time.Millisecond)}
	}
	if !r.BlockedUntil.IsZero() {
		e.BlockedUntil = &Time{Time: r.BlockedUntil.Truncate(time.Millisecond)}
		e.BlockReason = r.BlockReason
	}
	e.Crawler = r.Crawler.Label()
	return e
}

// Record reads a decision's line back into its record: what the line
// says, by the same names and values. A value the line does not know (a
// class, verdict, action or finding of a later version) is left at its
// zero. Path is the URI as sent, the only target the line keeps.
func (e *Entry) Record() record.Record {
	r := record.Record{
		Time:           e.TS.Time,
		Zone:           e.Zone,
		Site:           e.Site,
		Version:        e.RobotsVersion,
		UserAgent:      e.UserAgent,
		Tokens:         e.Tokens,
		Bot:            e.Bot,
		Operator:       e.Operator,
		Signature:      e.Signature,
		SignatureAgent: e.SignatureAgent,
		SignatureError: e.SignatureError,
		EvidenceReason: e.EvidenceReason,
		JA4:            e.JA4,
		QUIC:           e.QUIC,
		Framing:        e.Framing,
		Method:         e.Method,
		Host:           e.Host,
		URI:            e.URI,
		Path:           e.URI,
		Reason:         enforce.Reason(e.Reason),
		Group:          e.Group,
		Strikes:        e.Strikes,
		AddressStrikes: e.AddressStrikes,
		ReadRobots:     e.ReadRobots,
		DryRun:         e.DryRun,
		RetryAfter:     time.Duration(e.RetryAfter * float64(time.Second)),
		BlockReason:    e.BlockReason,
		Crawler:        enforce.ParseCrawler(e.Crawler),

		BrowserDisallowed: e.BrowserDisallowed,
		Noteworthy:        true,
		Repeats:           e.Repeats,
	}
	if r.Reason == "none" {
		r.Reason = enforce.ReasonNone
	}
	r.ClientIP, _ = netip.ParseAddr(e.ClientIP)
	if c, err := uaclass.ParseClass(e.Class); err == nil {
		r.Class = c
	}
	for v := uaclass.NotClaimed; v <= uaclass.Unverified; v++ {
		if v.String() == e.Verification {
			r.Verdict = v
		}
	}
	for _, a := range enforce.Actions {
		if a.String() == e.Action {
			r.Action = a
		}
	}
	r.Evidence.Evidence = EntryEvidence(e)
	if e.Rule != "" {
		verb, pattern, _ := strings.Cut(e.Rule, ": ")
		r.Rule = &policy.Rule{Allow: verb == "Allow", Pattern: pattern, Line: e.RuleLine}
		if verb == policy.KeyContentUsage || verb == policy.KeyContentSignal {
			r.Rule.Key = verb // a preference line (reason content_usage)
		}
	}
	if e.RobotsAt != nil {
		r.RobotsAt = e.RobotsAt.Time
	}
	if e.BlockedUntil != nil {
		r.BlockedUntil = e.BlockedUntil.Time
	}
	return r
}

// EntryEvidence returns the findings an entry's evidence field names;
// codes it does not know are left out.
func EntryEvidence(e *Entry) evidence.Evidence {
	var ev evidence.Evidence
	for code := range strings.SplitSeq(e.Evidence, ",") {
		if f, ok := evidence.ParseEvidence(code); ok {
			ev |= f
		}
	}
	return ev
}
