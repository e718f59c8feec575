package caddymodule

import (
	"net/http"

	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/signature"
)

// logDecision writes one structured entry for a decision. The message says
// what happened; the fields carry everything "caddy robots report" reads.
func (h *Handler) logDecision(req *enforce.Request, d *enforce.Decision, ua string, r *http.Request, sig *signature.Result) {
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
	fields := []zap.Field{
		zap.String("client_ip", req.IP.String()),
		zap.String("user_agent", ua),
		zap.String("class", req.UA.Class.String()),
		zap.Strings("tokens", req.UA.Tokens),
		zap.String("verification", req.Verdict.String()),
		zap.String("method", req.Method),
		zap.String("host", req.Host),
		zap.String("uri", r.RequestURI),
		zap.String("action", d.Action.String()),
		zap.String("reason", string(d.Reason)),
		zap.String("group", d.Group),
		zap.Int("strikes", d.Strikes),
		zap.Bool("read_robots", d.ReadRobots),
		zap.Bool("dry_run", d.DryRun),
	}
	if b := req.UA.Bot; b != nil {
		fields = append(fields, zap.String("bot", b.Name))
		if b.Operator != "" {
			fields = append(fields, zap.String("operator", b.Operator))
		}
	}
	fields = appendSignatureFields(fields, sig)
	if d.Rule != nil {
		fields = append(fields, zap.Int("rule_line", d.Rule.Line), zap.String("rule", d.Rule.String()))
	}
	if d.RetryAfter > 0 {
		fields = append(fields, zap.Duration("retry_after", d.RetryAfter))
	}
	if !d.BlockedUntil.IsZero() {
		fields = append(fields, zap.Time("blocked_until", d.BlockedUntil))
	}
	ce.Write(fields...)
}
