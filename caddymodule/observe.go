package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsguard/robotsguard/record"
)

// observe counts a decision's record in the zone's live statistics and
// sets the placeholders {http.robots_guard.action}, .reason, .rule,
// .class, .token, .ja4 and .quic (record.Placeholders) for access logs and
// handle_errors routes. The statistics do not allocate for a bot already
// tracked; the placeholders take two small allocations per request (see
// BenchmarkObserve).
//
// The placeholders: one provider per request, registered by the first
// robots_guard handler the request meets and found again in the request's
// vars by the next, so the last decision is the one they show. Setting
// static values instead would take the replacer's lock once per value and
// grow its map on every request.
// vars are the request's variables (nil outside a Caddy server).
func (h *Handler) observe(r *http.Request, vars map[string]any, rec *record.Record) {
	h.stats.Add(rec)
	p, _ := vars[placeholdersVar].(*record.Placeholders)
	if p == nil {
		repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
		if !ok {
			return
		}
		p = new(record.Placeholders)
		repl.Map(p.Lookup)
		if vars != nil {
			vars[placeholdersVar] = p
		}
	}
	p.Set(rec)
}

// placeholdersVar is the request variable that holds a request's
// placeholders.
const placeholdersVar = "robots_guard.placeholders"
