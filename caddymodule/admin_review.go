package caddymodule

import (
	"fmt"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/review"
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
		for _, b := range s.store.Blocked(now) {
			zv.Blocked = append(zv.Blocked, review.BlockedClient{IP: b.IP.String(), Token: b.Token, Until: b.Until.UTC(), Offenses: b.Offenses, ReadRobots: b.ReadRobots})
		}
		v.Zones = append(v.Zones, zv)
	})
	return v
}

// observe is the handler's one call after a decision: it counts the
// decision in the zone's live statistics and sets the placeholders
// {http.robots_guard.action}, .reason, .rule, .class and .token for access
// logs and handle_errors routes. It does not allocate for a bot already
// tracked (see BenchmarkServeHTTP).
func (h *Handler) observe(r *http.Request, req *enforce.Request, d *enforce.Decision, snap *snapshot) {
	e := review.Event{
		Time:        time.Now(),
		Token:       req.UA.Token(),
		Class:       req.UA.Class,
		Verdict:     req.Verdict,
		Outcome:     review.OutcomeOf(d.Action, d.Reason),
		Violation:   d.Violation || d.Action != enforce.Allow,
		ReadRobots:  d.ReadRobots,
		RobotsTxt:   d.Reason == enforce.ReasonRobotsTxt,
		DryRun:      d.DryRun,
		Path:        req.Target,
		Rule:        d.Rule,
		Version:     snap.version,
		VersionText: snap.file,
	}
	if b := req.UA.Bot; b != nil {
		e.Name, e.Operator = b.Name, b.Operator
	}
	h.shared.stats.Record(&e)

	repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if !ok {
		return
	}
	// Values that are boxed without allocating: one-byte Stringers,
	// pre-boxed reasons, pointer-shaped Stringers.
	repl.Set("http.robots_guard.action", d.Action)
	repl.Set("http.robots_guard.reason", reasonValue(d.Reason))
	repl.Set("http.robots_guard.class", req.UA.Class)
	// Unset placeholders would stay as written in a respond body, so the
	// rule and token are "" when there are none.
	var rule, token any = "", ""
	if d.Rule != nil {
		rule = d.Rule
	}
	if len(req.UA.Tokens) > 0 {
		token = tokenRef{&req.UA.Tokens[0]}
	}
	repl.Set("http.robots_guard.rule", rule)
	repl.Set("http.robots_guard.token", token)
}

// reasonValues holds the reasons boxed once, so that setting a placeholder
// does not allocate; ReasonNone reads "none", as in the report.
var reasonValues = func() map[enforce.Reason]any {
	m := map[enforce.Reason]any{}
	for _, r := range cachedReasons {
		m[r] = string(r)
	}
	m[enforce.ReasonNone] = "none"
	return m
}()

func reasonValue(r enforce.Reason) any {
	if v, ok := reasonValues[r]; ok {
		return v
	}
	return string(r)
}

// tokenRef is a product token as a pointer-shaped Stringer: it boxes into
// an interface without allocating.
type tokenRef struct{ p *string }

// String returns the token.
func (t tokenRef) String() string { return *t.p }

// Interface guards
var (
	_ fmt.Stringer = tokenRef{}
	_ fmt.Stringer = uaclass.Class(0)
)
