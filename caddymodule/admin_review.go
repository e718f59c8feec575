package caddymodule

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/review"
	"github.com/robotsguard/robotsguard/source"
	"github.com/robotsguard/robotsguard/uaclass"
)

// serveReview serves the review endpoints of admin.api.robots_guard:
//
//	GET /robots_guard/                                   the review page (HTML)
//	GET /robots_guard/stats[?zone=NAME]                  the statistics (JSON, review.View)
//	GET /robots_guard/robots?zone=NAME&version=ID        a robots.txt version (text)
func (a adminAPI) serveReview(w http.ResponseWriter, r *http.Request) error {
	switch r.URL.Path {
	case "/robots_guard/", "/robots_guard/stats", "/robots_guard/robots":
	default:
		return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: fmt.Errorf("unknown endpoint %s (want /robots_guard/, /robots_guard/stats, /robots_guard/robots, /robots_guard/blocked or /robots_guard/unblock)", r.URL.Path)}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return methodNotAllowed(r, http.MethodGet)
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	switch r.URL.Path {
	case "/robots_guard/":
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", review.CSP)
		_, err := w.Write(review.LivePage())
		return err
	case "/robots_guard/stats":
		return writeJSON(w, liveView(r.URL.Query().Get("zone"), time.Now()))
	}
	zone, id := r.URL.Query().Get("zone"), r.URL.Query().Get("version")
	var text []byte
	found := false
	eachZone(zone, func(_ string, s *sharedState) {
		if !found {
			text, found = s.stats.VersionText(id)
		}
	})
	if zone == "" || !found {
		return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: fmt.Errorf("zone %q has no robots.txt version %q", zone, id)}
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	_, err := w.Write(text)
	return err
}

// liveView returns the statistics and blocks of every zone, or one.
func liveView(only string, now time.Time) review.View {
	v := review.View{Generated: now.UTC(), Source: "live", Zones: []review.ZoneView{}}
	eachZone(only, func(zone string, s *sharedState) {
		zv := s.stats.View(zone, now)
		zv.Blocked = []review.BlockedClient{}
		blocked, _ := zoneBlocked(zone, s, now) // store.go; on an error, the in-process list
		if blocked == nil {
			blocked = s.store.Blocked(now)
		}
		for _, b := range blocked {
			zv.Blocked = append(zv.Blocked, review.BlockedClient{IP: b.IP, Token: b.Token, Until: b.Until.UTC(), Reason: b.Reason.String(),
				Offenses: b.Offenses, ReadRobots: b.ReadRobots, DryRun: b.DryRun})
		}
		v.Zones = append(v.Zones, zv)
	})
	return v
}

// observe is the handler's one call after a decision: it counts the
// decision in the zone's live statistics and sets the placeholders
// {http.robots_guard.action}, .reason, .rule, .class and .token for access
// logs and handle_errors routes. The statistics do not allocate for a bot
// already tracked; the placeholders take two small allocations per request
// (see BenchmarkObserve).
func (h *Handler) observe(r *http.Request, req *enforce.Request, d *enforce.Decision, snap *source.Snapshot) {
	e := review.DecisionEvent(req, d, snap.Version, snap.Body)
	h.shared.stats.Record(&e)

	// The placeholders: one provider per request, registered by the first
	// robots_guard handler the request meets and found again in the
	// request's vars by the next, so the last decision is the one they
	// show. Setting five static values instead would take the replacer's
	// lock five times and grow its map on every request.
	ctx := r.Context()
	p, _ := caddyhttp.GetVar(ctx, placeholdersVar).(*placeholders)
	if p == nil {
		repl, ok := ctx.Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
		if !ok {
			return
		}
		p = new(placeholders)
		repl.Map(p.lookup)
		caddyhttp.SetVar(ctx, placeholdersVar, p)
	}
	p.action, p.reason, p.class, p.rule, p.token, p.ja4 = d.Action, d.Reason, req.UA.Class, d.Rule, req.UA.Token(), req.JA4
	p.framing = req.Framing
}

// placeholdersVar is the request variable that holds a request's
// placeholders.
const placeholdersVar = "robots_guard.placeholders"

// placeholders are the values of {http.robots_guard.action}, .reason,
// .rule, .class and .token for one request.
type placeholders struct {
	action  enforce.Action
	reason  enforce.Reason
	class   uaclass.Class
	rule    *policy.Rule
	token   string
	ja4     string
	framing string
}

// lookup is the replacer's provider of the placeholders. The reason of an
// ordinary request is "none", as in the report; the rule and the token
// are "" when there are none.
func (p *placeholders) lookup(key string) (any, bool) {
	name, ok := strings.CutPrefix(key, "http.robots_guard.")
	if !ok {
		return nil, false
	}
	switch name {
	case "action":
		return p.action.String(), true
	case "reason":
		if p.reason == enforce.ReasonNone {
			return "none", true
		}
		return string(p.reason), true
	case "rule":
		if p.rule == nil {
			return "", true
		}
		return p.rule.String(), true
	case "class":
		return p.class.String(), true
	case "token":
		return p.token, true
	case "ja4":
		return p.ja4, true
	case "framing":
		return p.framing, true
	}
	return nil, false
}

// String says what a request's robots_guard variable holds.
func (p *placeholders) String() string {
	return p.action.String() + " " + string(p.reason)
}
