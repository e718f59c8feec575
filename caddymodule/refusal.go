package caddymodule

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
)

// refuse answers a refused request: the status, X-Robots-Guard with the
// reason, X-Robots-Guard-Rule with the rule of a disallowed path or the
// preference line of a content_usage refusal, and
// Retry-After for a throttle or a block. With a body (deny or throttle
// <status> <body>) it writes the body. Without one, it returns an error
// for the server's handle_errors routes to shape ({err.message} says why),
// or, where the server has no such routes, writes the empty response that
// Caddy would write for the error, without the error machinery (an error
// ID, a stack trace, and a request logger built even when no log is
// written), which costs a flood of refusals more than the rest of the
// handler. Every text is made once (per reason, per rule, per second of
// Retry-After): a refusal formats nothing.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, d *enforce.Decision, p *policy.Policy) error {
	status, body := h.DenyStatus, h.denyBody
	// One array for the header values: the header map takes slices of it,
	// so that a later handler that edits a value in place edits only this
	// response's.
	vals := new([3]string)
	hdr := w.Header()
	if d.Action == enforce.Throttle {
		status, body = h.ThrottleStatus, h.throttleBody
		secs := int((d.RetryAfter + time.Second - 1) / time.Second)
		vals[2] = h.texts.seconds(max(secs, 1))
		hdr["Retry-After"] = vals[2:3:3]
	} else if !d.BlockedUntil.IsZero() {
		if secs := int(time.Until(d.BlockedUntil) / time.Second); secs > 0 {
			vals[2] = h.texts.seconds(secs)
			hdr["Retry-After"] = vals[2:3:3]
		}
	}
	// Say why, for polite crawlers' operators and for handle_errors routes
	// ({err.message}). A trap is reported as a block: no need to teach a
	// scraper where the traps are.
	reason := d.Reason
	if reason == enforce.ReasonTrap {
		reason = enforce.ReasonBlockedClient
	}
	vals[0] = string(reason)
	hdr["X-Robots-Guard"] = vals[0:1:1]
	var rt *ruleText
	if d.Rule != nil && (reason == enforce.ReasonDisallowed || reason == enforce.ReasonContentUsage) {
		rt = h.texts.rule(p, d.Rule)
		vals[1] = rt.header
		hdr["X-Robots-Guard-Rule"] = vals[1:2:2]
	}
	if body != nil {
		hdr["Content-Type"] = []string{"text/plain; charset=utf-8"}
		hdr["X-Content-Type-Options"] = []string{"nosniff"}
		w.WriteHeader(status)
		_, err := w.Write(body)
		return err
	}
	if !hasErrorRoutes(r) {
		w.WriteHeader(status)
		return nil
	}
	return caddyhttp.Error(status, h.texts.err(d.Action, reason, rt))
}

// hasErrorRoutes reports whether the request's server has handle_errors
// routes, or may have: outside a Caddy server (a test calling ServeHTTP)
// the refusal is returned as an error, as it always was.
func hasErrorRoutes(r *http.Request) bool {
	srv, ok := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	return !ok || srv == nil || srv.Errors != nil && len(srv.Errors.Routes) > 0
}

// refusalTexts holds the texts of refusals, each made once: the errors
// per action and reason, the header and errors per robots.txt rule (for
// the policy in force), and Retry-After values.
type refusalTexts struct {
	errs  map[refusalKey]error
	rules atomic.Pointer[ruleTexts]
	// retry is the last Retry-After value above smallSeconds: blocks end
	// at the same second for all the requests of a flood.
	retry atomic.Pointer[retryText]
}

// refusalKey is an action and a reason.
type refusalKey struct {
	action enforce.Action
	reason enforce.Reason
}

// ruleTexts are the texts of the rules of one policy, made on first use.
type ruleTexts struct {
	policy *policy.Policy
	m      sync.Map // *policy.Rule -> *ruleText
}

// ruleText is a rule's X-Robots-Guard-Rule value ("robots.txt line 6:
// Disallow: /private/", or a preference line) and its errors, by action.
type ruleText struct {
	header string
	errs   [4]error
}

// retryText is a Retry-After value.
type retryText struct {
	secs int
	text string
}

// smallSeconds are the Retry-After values of throttles (a Crawl-delay
// rarely exceeds a minute or two).
var smallSeconds = func() (s [256]string) {
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

// refusalActions are the actions of refusals.
var refusalActions = []enforce.Action{enforce.Throttle, enforce.Deny, enforce.Tarpit}

// newRefusalTexts makes the errors of the reasons the engine gives.
func newRefusalTexts() *refusalTexts {
	t := &refusalTexts{errs: map[refusalKey]error{}}
	for _, a := range refusalActions {
		for _, r := range cachedReasons {
			t.errs[refusalKey{a, r}] = refusalError(a, r, nil)
		}
	}
	return t
}

// refusalError is the error of a refusal: "robots_guard: deny: disallowed
// by robots.txt line 6: Disallow: /private/".
func refusalError(a enforce.Action, r enforce.Reason, rt *ruleText) error {
	msg := "robots_guard: " + a.String() + ": " + string(r)
	if rt != nil {
		msg += " by " + rt.header
	}
	return errors.New(msg)
}

// err returns the error of a refusal.
func (t *refusalTexts) err(a enforce.Action, r enforce.Reason, rt *ruleText) error {
	if rt != nil && int(a) < len(rt.errs) {
		return rt.errs[a]
	}
	if e, ok := t.errs[refusalKey{a, r}]; ok && rt == nil {
		return e
	}
	return refusalError(a, r, rt)
}

// rule returns the texts of a rule of policy p.
func (t *refusalTexts) rule(p *policy.Policy, rule *policy.Rule) *ruleText {
	rs := t.rules.Load()
	if rs == nil || rs.policy != p {
		// The policy was reloaded: the rules of the old one are dropped.
		fresh := &ruleTexts{policy: p}
		if t.rules.CompareAndSwap(rs, fresh) {
			rs = fresh
		} else if rs = t.rules.Load(); rs.policy != p {
			rs = fresh // a concurrent reload: use a private table this once
		}
	}
	if v, ok := rs.m.Load(rule); ok {
		return v.(*ruleText)
	}
	rt := &ruleText{header: "robots.txt line " + strconv.Itoa(rule.Line) + ": " + rule.String()}
	reason := enforce.ReasonDisallowed
	if rule.Key != "" {
		reason = enforce.ReasonContentUsage // a preference line
	}
	for _, a := range refusalActions {
		rt.errs[a] = refusalError(a, reason, rt)
	}
	v, _ := rs.m.LoadOrStore(rule, rt)
	return v.(*ruleText)
}

// seconds returns a Retry-After value.
func (t *refusalTexts) seconds(secs int) string {
	if secs < len(smallSeconds) {
		return smallSeconds[secs]
	}
	if last := t.retry.Load(); last != nil && last.secs == secs {
		return last.text
	}
	rt := &retryText{secs, strconv.Itoa(secs)}
	t.retry.Store(rt)
	return rt.text
}
