package enforce

import (
	"net/http"
	"time"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// This file holds the rules by which the engine keeps the internet working
// (issue 27): whose identity is evidence, which reading of robots.txt each
// client gets, what a departure costs, and which parts of class ai an
// operator shuts out. Decide calls them at the points where they apply.

// Evidenced reports whether the client's identity is evidence, not a
// claim: a crawler verified by forward-confirmed reverse DNS or its
// operator's published ranges, or an agent whose Web Bot Auth signature
// verified with a key the operator pinned (Signed; a signature with keys
// from the agent's own directory leaves the verdict to reverse DNS and
// ranges). Such a crawler is judged by the reference reading of
// robots.txt, and a user-triggered fetcher among them is held only to the
// groups that name it.
func Evidenced(req *Request) bool {
	return req.Verdict == uaclass.Verified
}

// match returns the robots.txt answer for req under p (nil: no rules):
//
//   - a client whose identity is a claim gets [policy.Policy.MatchTarget],
//     the enforcer's reading, which refuses bypass spellings;
//   - an evidenced crawler (see [Evidenced]) gets the reference reading: a
//     refusal that only a departure makes is lifted;
//   - an evidenced user-triggered fetcher is held only to a group that
//     names it: the "*" group does not apply to it, as Google documents
//     for its own and as a person's browser is not bound either.
func (e *Engine) match(req *Request, p *policy.Policy) policy.Result {
	if p == nil {
		return policy.Result{Allowed: true}
	}
	res := p.MatchTarget(req.UA.Tokens, &req.Target)
	if !Evidenced(req) {
		return res
	}
	if res.Agent == "*" && req.UA.UserTriggered() {
		return policy.Result{Allowed: true}
	}
	if !res.Allowed && res.Departure != policy.NoDeparture {
		res.Allowed, res.Rule, res.Departure = true, nil, policy.NoDeparture
	}
	return res
}

// departure refuses a request that a robots.txt rule refuses only by a
// departure (ReasonDeparture): no strike, so that a crawler reading the
// file the reference way can lose the URL but never its access; a blocked
// client or address is still refused as blocked.
func (e *Engine) departure(d Decision, res policy.Result, key Key, now time.Time) Decision {
	out := e.store.Apply(key, now, Op{Peek: true, CheckAddr: true, CheckCrawler: true})
	d.sawRobots(out.AddrRobotsAt)
	if out.Blocked {
		return e.refuse(d, ReasonBlockedClient, out)
	}
	d.Departure = res.Departure
	return e.refuse(d, ReasonDeparture, out)
}

// unlessFeed reports whether a refusal res of req is lifted when the
// response is a feed: a feed reader's GET or HEAD under the "*" group. A
// group that names the reader's own token applies as written.
func unlessFeed(req *Request, res policy.Result) bool {
	return res.Agent == "*" && req.UA.FeedReader() && (req.Method == http.MethodGet || req.Method == http.MethodHead)
}

// blocksClass reports whether the operator shuts out the client's class or
// its part of class ai (BlockClasses, BlockAI).
func (e *Engine) blocksClass(ua *uaclass.Result) bool {
	return e.blockClass[ua.Class] || e.cfg.BlockAI != 0 && e.cfg.BlockAI&ua.AIParts() != 0
}
