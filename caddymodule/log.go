package caddymodule

import (
	"net/http"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/signature"
	"github.com/robotsguard/robotsguard/source"
)

// log_repeats' default and bound (report.DefaultRepeats, MaxRepeats).
const (
	defaultLogRepeats = report.DefaultRepeats
	maxLogRepeats     = report.MaxRepeats
)

// logDecision writes one entry for a decision to the decision log
// (report.DecisionLog.Write: a report.Entry, or with log_repeats a count).
func (h *Handler) logDecision(req *enforce.Request, d *enforce.Decision, ua string, r *http.Request, snap *source.Snapshot, sig *signature.Result) {
	h.decisions.Write(req, d, ua, r.RequestURI, snap.Version, sig)
}
