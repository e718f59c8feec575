package enforce

import (
	"io"
	"net/http"
	"strings"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Feed readers fetch the feeds people subscribed to; they are not
// crawlers, and a "no crawlers" robots.txt ("User-agent: *" /
// "Disallow: /") must not cut a site's subscribers off (issue 27; Anubis
// #721 and #1737, miniflux #3340 and #4454). A feed reader's GET or HEAD
// of a path that the "*" group disallows is therefore decided on the
// response: a feed is served, anything else is refused as before, strike
// included. The reader's claim (its User-Agent) so buys nothing but feeds,
// and a group that names the reader's own token applies as written.
//
// The response is judged by its headers alone, never by buffering its
// body: [FeedGate] holds the response at WriteHeader (or the first Write or
// Flush) and lets it through only when its Content-Type is a feed type
// ([IsFeedType]), or when it is a 304 Not Modified without another type,
// which carries no body and is how a reader's conditional polls are
// answered. [Engine.FeedOutcome] then completes the decision.

// feedTypes are the media types of feeds: RSS (and the x- form that
// Debian's mime.types gives .rss), Atom and JSON Feed.
var feedTypes = []string{"application/rss+xml", "application/atom+xml", "application/feed+json", "application/x-rss+xml"}

// IsFeedType reports whether a Content-Type value names a feed: RSS, Atom
// or JSON Feed, parameters (a charset) ignored. Generic XML and JSON
// (text/xml, application/json) are no feed: a site that serves its feed so
// and disallows it under "*" should give it its own type.
func IsFeedType(contentType string) bool {
	t, _, _ := strings.Cut(contentType, ";")
	t = strings.TrimSpace(t)
	for _, f := range feedTypes {
		if strings.EqualFold(t, f) {
			return true
		}
	}
	return false
}

// FeedGate is the response writer of a request whose decision is marked
// UnlessFeed. It passes the response on if it is a feed; otherwise it
// holds it: the backend's status and body are discarded, its headers
// undone (those set before the gate stay), so that the caller can answer
// the refusal instead. A held body is read and dropped rather than failed:
// Caddy's reverse_proxy aborts the client's connection when a write fails,
// and the refusal would not be sent. Each held response costs the client a
// strike, so a client that asks for many is soon blocked. It offers Flush (which
// decides at once, as the response's headers then go out) and ReadFrom,
// but no Unwrap: a held response must not reach the connection through
// http.ResponseController (Hijack, an upgrade). In dry-run mode it passes
// every response and only reports whether it was a feed.
type FeedGate struct {
	w       http.ResponseWriter
	saved   http.Header // the headers before the gate
	scratch http.Header // the backend's headers once held
	state   uint8       // gateOpen, gatePassed or gateHeld
	feed    bool
	dryRun  bool
}

const (
	gateOpen uint8 = iota
	gatePassed
	gateHeld
)

// NewFeedGate returns a gate in front of w; dryRun passes every response.
func NewFeedGate(w http.ResponseWriter, dryRun bool) *FeedGate {
	return &FeedGate{w: w, saved: w.Header().Clone(), dryRun: dryRun}
}

// decide judges the response by status and the headers as they stand.
func (g *FeedGate) decide(status int) {
	if g.state != gateOpen {
		return
	}
	ct := g.w.Header().Get("Content-Type")
	g.feed = IsFeedType(ct) || status == http.StatusNotModified && ct == ""
	g.pass(g.feed)
}

// pass passes the response on, or holds it (undoing the backend's
// headers); in dry-run mode it always passes.
func (g *FeedGate) pass(ok bool) {
	if ok || g.dryRun {
		g.state = gatePassed
		return
	}
	g.state = gateHeld
	h := g.w.Header()
	clear(h)
	for k, v := range g.saved {
		h[k] = v
	}
}

// Header returns the response's headers; once the response is held, a
// map of the backend's own that is never sent.
func (g *FeedGate) Header() http.Header {
	if g.state == gateHeld {
		if g.scratch == nil {
			g.scratch = http.Header{}
		}
		return g.scratch
	}
	return g.w.Header()
}

// WriteHeader judges the response at its final status; an informational
// one (1xx) is passed only once the response passed.
func (g *FeedGate) WriteHeader(status int) {
	if status >= 200 || status == http.StatusSwitchingProtocols {
		g.decide(status)
	}
	if g.state == gatePassed {
		g.w.WriteHeader(status)
	}
}

// Write judges the response as a 200 if no status was written.
func (g *FeedGate) Write(p []byte) (int, error) {
	g.decide(http.StatusOK)
	if g.state == gateHeld {
		return len(p), nil
	}
	return g.w.Write(p)
}

// ReadFrom copies r into the response, with the underlying writer's own
// ReadFrom (sendfile) once the response passed.
func (g *FeedGate) ReadFrom(r io.Reader) (int64, error) {
	g.decide(http.StatusOK)
	if g.state == gateHeld {
		return io.Copy(io.Discard, r)
	}
	return io.Copy(g.w, r)
}

// FlushError judges the response as a 200 if no status was written, and
// flushes a response that passed.
func (g *FeedGate) FlushError() error {
	g.decide(http.StatusOK)
	if g.state == gateHeld {
		return nil
	}
	return http.NewResponseController(g.w).Flush()
}

// Flush is FlushError for callers that use http.Flusher.
func (g *FeedGate) Flush() { _ = g.FlushError() }

// Done completes the gate once the handler returned and reports whether
// the response was a feed. A handler that wrote nothing is judged as the
// empty 200 the server then sends, unless it failed (err): then there is
// no feed, and the caller answers the refusal. Whether the response was
// held ([FeedGate.Held]) follows.
func (g *FeedGate) Done(err error) bool {
	switch {
	case g.state != gateOpen:
	case err == nil:
		g.decide(http.StatusOK)
	default:
		g.pass(false)
	}
	return g.feed
}

// Held reports whether the response was held: nothing of it was written,
// and the caller must answer the refusal on [FeedGate.Writer].
func (g *FeedGate) Held() bool { return g.state != gatePassed }

// Writer returns the writer the gate writes to.
func (g *FeedGate) Writer() http.ResponseWriter { return g.w }

// FeedOutcome completes a decision marked UnlessFeed once the response is
// known (see [FeedGate]): with a feed, d served with ReasonFeed (unless it
// was a logged rate slip, which keeps its reason); otherwise the refusal
// the "*" group makes, as for any bot: a strike (one more store
// operation), or none where the refusal is only a departure
// (ReasonDeparture).
func (e *Engine) FeedOutcome(req *Request, d Decision, feed bool) Decision {
	d.UnlessFeed = false
	if feed {
		if d.Reason == ReasonNone {
			d.Reason = ReasonFeed
		}
		d.Departure = policy.NoDeparture
		return d
	}
	d.RetryAfter = 0
	if d.Departure != policy.NoDeparture {
		out := Outcome{}
		out.State.Strikes = int32(d.Strikes)
		return e.refuse(d, ReasonDeparture, out)
	}
	out := e.store.Apply(e.key(req.IP, req.UA.Token()), e.cfg.Now(), e.op(Op{Strike: true, Blockable: !e.unblockable(req), CheckAddr: true, Why: WhyDisallowed}))
	reason := ReasonDisallowed
	if out.Blocked {
		reason = ReasonBlockedClient
	}
	return e.refuse(d, reason, out)
}

// unblockable reports whether strikes never block the client, as Decide
// says: a verified search crawler or signed agent, unless
// EscalateVerifiedSearch.
func (e *Engine) unblockable(req *Request) bool {
	return (req.UA.Class == uaclass.Search || req.Signed) && req.Verdict == uaclass.Verified && !e.cfg.EscalateVerifiedSearch
}
