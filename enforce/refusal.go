package enforce

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotsguard/robotsguard/policy"
)

// Refusals makes the responses to refused requests: the status, the
// headers that say why (X-Robots-Guard with the reason,
// X-Robots-Guard-Rule with the rule of a disallowed path, also by a
// departure, or the preference line of a content_usage refusal,
// Retry-After for a throttle or a block), Cache-Control: private, no-store
// and Vary: User-Agent (a refusal is for the client that asked, never for a
// shared cache), the configured body, and the error that a server's error routes can
// shape. Every text is made once (per reason, per rule, per second of
// Retry-After): a refusal formats nothing. It is safe for concurrent use.
type Refusals struct {
	denyStatus, throttleStatus int
	denyBody, throttleBody     []byte // nil: none

	errs  map[refusalKey]error
	rules atomic.Pointer[ruleTexts]
	// retry is the last Retry-After value above smallSeconds: blocks end
	// at the same second for all the requests of a flood.
	retry atomic.Pointer[retryText]
}

// RefusalOptions configure the responses of [Refusals].
type RefusalOptions struct {
	// DenyStatus and ThrottleStatus are the statuses of a refusal (deny,
	// tarpit) and of a throttle.
	DenyStatus, ThrottleStatus int
	// DenyBody and ThrottleBody are their bodies; "" for none.
	DenyBody, ThrottleBody string
}

// Refusal is the response to one refused request, as [Refusals.Refuse]
// made it.
type Refusal struct {
	// Status is the response's status.
	Status int
	// Body is the configured body, or nil: then the caller writes an
	// empty response, or hands Err to the server's error routes.
	Body []byte

	action Action
	reason Reason
	rule   *ruleText
	texts  *Refusals
}

// refusalKey is an action and a reason.
type refusalKey struct {
	action Action
	reason Reason
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
	// departure holds the errors of a departure's refusal by the rule.
	departure [4]error
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
var refusalActions = []Action{Throttle, Deny, Tarpit}

// NewRefusals returns the responses of refusals, with the errors of the
// reasons the engine gives made already.
func NewRefusals(o RefusalOptions) *Refusals {
	t := &Refusals{denyStatus: o.DenyStatus, throttleStatus: o.ThrottleStatus, errs: map[refusalKey]error{}}
	if o.DenyBody != "" {
		t.denyBody = []byte(o.DenyBody)
	}
	if o.ThrottleBody != "" {
		t.throttleBody = []byte(o.ThrottleBody)
	}
	for _, a := range refusalActions {
		for _, r := range Reasons {
			t.errs[refusalKey{a, r}] = refusalError(a, r, nil)
		}
	}
	return t
}

// Refuse sets the headers of d's refusal in hdr and returns its status and
// body. With a body, it sets Content-Type and X-Content-Type-Options too.
// p is the policy that decided, whose rule d names. A trap is reported as
// a block: no need to teach a scraper where the traps are.
func (t *Refusals) Refuse(hdr http.Header, d *Decision, p *policy.Policy) Refusal {
	rf := Refusal{Status: t.denyStatus, Body: t.denyBody, action: d.Action, texts: t}
	// One array for the header values: the header map takes slices of it,
	// so that a later handler that edits a value in place edits only this
	// response's.
	vals := new([6]string)
	// A refusal depends on who asks (its User-Agent, its address's
	// state): no shared cache may keep it, nor serve it to anyone else.
	vals[3], vals[4] = "private, no-store", "User-Agent"
	hdr["Cache-Control"] = vals[3:4:4]
	if v := hdr["Vary"]; len(v) > 0 {
		hdr["Vary"] = append(v, vals[4])
	} else {
		hdr["Vary"] = vals[4:5:5]
	}
	if d.Action == Throttle {
		rf.Status, rf.Body = t.throttleStatus, t.throttleBody
		secs := int((d.RetryAfter + time.Second - 1) / time.Second)
		vals[2] = t.seconds(max(secs, 1))
		hdr["Retry-After"] = vals[2:3:3]
	} else if !d.BlockedUntil.IsZero() {
		var now time.Time
		if d.at != 0 && d.Action != Tarpit { // a tarpit answers after its hold
			now = time.Unix(0, d.at)
		} else {
			now = time.Now()
		}
		if secs := int(d.BlockedUntil.Sub(now) / time.Second); secs > 0 {
			vals[2] = t.seconds(secs)
			hdr["Retry-After"] = vals[2:3:3]
		}
	}
	// Say why, for polite crawlers' operators and for error routes.
	rf.reason = d.Reason
	if rf.reason == ReasonTrap {
		rf.reason = ReasonBlockedClient
	}
	vals[0] = string(rf.reason)
	hdr["X-Robots-Guard"] = vals[0:1:1]
	if d.Rule != nil && (rf.reason == ReasonDisallowed || rf.reason == ReasonContentUsage || rf.reason == ReasonDeparture) {
		rf.rule = t.ruleText(p, d.Rule)
		vals[1] = rf.rule.header
		hdr["X-Robots-Guard-Rule"] = vals[1:2:2]
	}
	if d.Evidence != 0 {
		vals[5] = evidenceHeader(d.Evidence)
		hdr["X-Robots-Guard-Evidence"] = vals[5:6:6]
	}
	if rf.Body != nil {
		hdr["Content-Type"] = []string{"text/plain; charset=utf-8"}
		hdr["X-Content-Type-Options"] = []string{"nosniff"}
	} else if d.Person && rf.reason == ReasonBlockedClient {
		// A person behind a block (or refused a trap) is told what
		// happened, in a page, unless the site configured a body.
		rf.Body = personPage(d, rf.Status, time.Now())
		hdr["Content-Type"] = []string{"text/html; charset=utf-8"}
		hdr["X-Content-Type-Options"] = []string{"nosniff"}
	}
	return rf
}

// Err returns the error of the refusal, which says why: "robots_guard:
// deny: disallowed by robots.txt line 6: Disallow: /private/".
func (rf *Refusal) Err() error {
	if rt := rf.rule; rt != nil && int(rf.action) < len(rt.errs) {
		if rf.reason == ReasonDeparture {
			return rt.departure[rf.action]
		}
		return rt.errs[rf.action]
	}
	if e, ok := rf.texts.errs[refusalKey{rf.action, rf.reason}]; ok && rf.rule == nil {
		return e
	}
	return refusalError(rf.action, rf.reason, rf.rule)
}

// refusalError is the error of a refusal: "robots_guard: deny: disallowed
// by robots.txt line 6: Disallow: /private/".
func refusalError(a Action, r Reason, rt *ruleText) error {
	msg := "robots_guard: " + a.String() + ": " + string(r)
	if rt != nil {
		msg += " by " + rt.header
	}
	return errors.New(msg)
}

// ruleText returns the texts of a rule of policy p.
func (t *Refusals) ruleText(p *policy.Policy, rule *policy.Rule) *ruleText {
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
	reason := ReasonDisallowed
	if rule.Key != "" {
		reason = ReasonContentUsage // a preference line
	}
	for _, a := range refusalActions {
		rt.errs[a] = refusalError(a, reason, rt)
		rt.departure[a] = refusalError(a, ReasonDeparture, rt)
	}
	v, _ := rs.m.LoadOrStore(rule, rt)
	return v.(*ruleText)
}

// seconds returns a Retry-After value.
func (t *Refusals) seconds(secs int) string {
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

// Private marks a response whose content depends on who asks (a refusal, a
// redirect sent only to bots) as the client's own: Cache-Control: private,
// no-store, and User-Agent added to Vary, so that no shared cache serves
// it to anyone else.
func Private(hdr http.Header) {
	hdr["Cache-Control"] = []string{"private, no-store"}
	hdr["Vary"] = append(hdr["Vary"], "User-Agent")
}
