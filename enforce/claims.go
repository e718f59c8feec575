package enforce

import (
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// ClaimsBrowser reports whether a request's User-Agent claims a browser:
// class browser (people, and with posers "log" the posers served as
// browsers), or a poser (uaclass.Poser: decisive evidence against the
// claim).
func ClaimsBrowser(ua *uaclass.Result) bool {
	return ua.Class == uaclass.Browser || ua.Class == uaclass.Poser
}

// claimWalk marks d BrowserDisallowed when req claims a browser
// ([ClaimsBrowser]) and the reference reading of the served file p (the
// "*" group, [policy.Policy.Match], no departures) disallows its target,
// whatever the action: a browser is still served, a poser is refused by
// its own rules. The rule is named in d.Rule and d.Group unless the
// decision already names one (a poser's refusal under the enforcer's
// reading). Nothing is marked for /robots.txt, without a policy, or for a
// blocked client's long target, which is never matched (see
// matchFirstBytes). [Engine.Decide] calls it where a browser's or a
// poser's decision is complete (a trap and a class block, which match the
// "*" group themselves, mark it there), so that a bot's decision costs
// nothing more. It allocates nothing.
func (e *Engine) claimWalk(d *Decision, req *Request, p *policy.Policy) {
	if p == nil || !ClaimsBrowser(&req.UA) || d.Reason == ReasonRobotsTxt ||
		d.Reason == ReasonBlockedClient && longTarget(&req.Target) {
		return
	}
	ref := starReference(req, p)
	if ref.Allowed {
		return
	}
	d.BrowserDisallowed = true
	if d.Rule == nil {
		d.Group, d.Rule = ref.Agent, ref.Rule
	}
}

// ClaimClass is the class under which a browser's claim on a disallowed
// path is counted (metrics, report, review page): uaclass.Poser for a
// poser, and for a client served as a browser with decisive evidence
// against its claim (posers "log"); uaclass.Browser otherwise.
func ClaimClass(class uaclass.Class, ev evidence.Evidence) uaclass.Class {
	if class == uaclass.Poser || ev&evidence.Decisive != 0 {
		return uaclass.Poser
	}
	return uaclass.Browser
}
