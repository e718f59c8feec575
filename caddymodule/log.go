package caddymodule

import (
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/signature"
)

// logDecision writes one structured entry for a decision: a report.Entry,
// the one type that "caddy robots report" reads back. The message says
// what happened.
func (h *Handler) logDecision(req *enforce.Request, d *enforce.Decision, ua string, r *http.Request, snap *snapshot, sig *signature.Result) {
	msg := "request allowed"
	switch {
	case d.Action != enforce.Allow && d.DryRun:
		msg = "request would be refused (dry run)"
	case d.Action != enforce.Allow:
		msg = "request refused"
	case d.Violation:
		msg = "robots.txt violation logged"
	}
	ce := h.logger.Check(zap.InfoLevel, msg)
	if ce == nil {
		return
	}
	e := report.Entry{
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
		RobotsVersion: snap.version,
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
	ce.Write(zap.Inline(&e))
}
