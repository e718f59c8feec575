package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

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
func (h *Handler) observe(r *http.Request, rec *record.Record) {
	h.stats.Add(rec)
	ctx := r.Context()
	p, _ := caddyhttp.GetVar(ctx, placeholdersVar).(*record.Placeholders)
	if p == nil {
		repl, ok := ctx.Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
		if !ok {
			return
		}
		p = new(record.Placeholders)
		repl.Map(p.Lookup)
		caddyhttp.SetVar(ctx, placeholdersVar, p)
	}
	p.Set(rec)
}

// placeholdersVar is the request variable that holds a request's
// placeholders.
const placeholdersVar = "robots_guard.placeholders"
