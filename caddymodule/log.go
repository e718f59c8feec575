package caddymodule

import (
	"net/http"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/signature"
	"github.com/robotsguard/robotsguard/source"
)

// logDecision writes one structured entry for a decision: a report.Entry,
// the one type that "caddy robots report" reads back. The message says
// what happened. Nothing is built unless the logger writes at info level;
// with log_repeats, a refusal or violation like one logged in the current
// interval is only counted (see repeatLog), at the cost of a hash and an
// atomic add.
func (h *Handler) logDecision(req *enforce.Request, d *enforce.Decision, ua string, r *http.Request, snap *source.Snapshot, sig *signature.Result) {
	if !h.logger.Core().Enabled(zapcore.InfoLevel) {
		return
	}
	rl := h.repeats
	var key repeatKey
	var hash uint64
	if rl != nil && d.Noteworthy() {
		key = repeatKey{
			prefix: h.engine.ClientPrefix(req.IP),
			token:  req.UA.Token(),
			class:  req.UA.Class,
			action: d.Action,
			reason: d.Reason,
			dryRun: d.DryRun,
		}
		if !incidentalRule(d.Reason) {
			key.rule = d.Rule
		}
		hash = rl.hash(&key)
		if rl.count(&key, hash) {
			return
		}
	} else {
		rl = nil // a sampled allowed request is never folded
	}
	ce := h.logger.Check(zap.InfoLevel, decisionMessage(d))
	if ce == nil {
		return
	}
	e := &report.Entry{
		ClientIP:      req.IP.String(),
		UserAgent:     ua,
		Class:         req.UA.Class.String(),
		Tokens:        req.UA.Tokens,
		Verification:  req.Verdict.String(),
		Method:        req.Method,
		Host:          req.Host,
		URI:           r.RequestURI,
		Action:        d.Action.String(),
		Reason:        string(d.Reason),
		Group:         d.Group,
		Strikes:       d.Strikes,
		ReadRobots:    d.ReadRobots,
		DryRun:        d.DryRun,
		Zone:          h.Zone,
		RobotsVersion: snap.Version,
		RetryAfter:    d.RetryAfter.Seconds(),
	}
	if b := req.UA.Bot; b != nil {
		e.Bot, e.Operator = b.Name, b.Operator
	}
	if sig != nil && sig.Outcome != signature.None {
		e.Signature, e.SignatureAgent = sig.Outcome.String(), sig.Agent
		if sig.Err != nil && sig.Outcome != signature.Verified {
			e.SignatureError = sig.Err.Error()
		}
	}
	if d.Rule != nil {
		e.RuleLine, e.Rule = d.Rule.Line, d.Rule.String()
	}
	if !d.BlockedUntil.IsZero() {
		e.BlockedUntil = &report.Time{Time: d.BlockedUntil.Truncate(time.Millisecond)}
	}
	ce.Write(zap.Inline(e))
	if rl != nil {
		rl.start(key, hash, e, time.Now())
	}
}

// decisionMessage is the message of a decision's log entry.
func decisionMessage(d *enforce.Decision) string {
	switch {
	case d.Action != enforce.Allow && d.DryRun:
		return "request would be refused (dry run)"
	case d.Action != enforce.Allow:
		return "request refused"
	case d.Violation:
		return "robots.txt violation logged"
	}
	return "request allowed"
}

// incidentalRule reports whether a decision's rule is incidental to its
// reason: the rule the path matched, where the refusal is for the client
// (a block, a rate). Repeats of such a decision are folded whatever rule
// the paths matched; for every other reason (disallowed, a trap, a reason
// added later) a different rule is a different kind of violation, logged
// at once.
func incidentalRule(r enforce.Reason) bool {
	switch r {
	case enforce.ReasonBlockedClient, enforce.ReasonRate, enforce.ReasonCrawlDelay, enforce.ReasonAddressRate:
		return true
	}
	return false
}

// logRepeats writes the summary line of a repeat group: the fields of the
// line it follows up (its first request's), the message "N more like this
// in 10s" and the count in the repeats field, which "caddy robots report"
// adds to its totals.
func (h *Handler) logRepeats(g *repeatGroup, n int64, span time.Duration) {
	ce := h.logger.Check(zap.InfoLevel, repeatMessage(n, span))
	if ce == nil {
		return
	}
	e := g.entry
	e.Repeats = n
	ce.Write(zap.Inline(&e))
}
