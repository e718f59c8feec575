// Package behaviour is evidence from what a client does over time: whether
// a browser claim navigates a site as a person does, or as a crawler that
// drives a real browser does.
//
// A real browser driven by a script speaks exactly as the browser it is
// (its TLS handshake, its frames and headers are the browser's), so nothing
// in one request tells it from a person. How its navigations start does,
// over a few seconds. A person reaches most pages through a page of the
// site: a click, a form, a reload, with Sec-Fetch-Site same-origin and
// Sec-Fetch-User ?1. A crawler that loads URLs from a queue (Puppeteer's,
// Playwright's or Selenium's navigate, DevTools' Page.navigate, WebDriver
// BiDi's browsingContext.navigate) starts every navigation as a typed
// address: Sec-Fetch-Site none, Sec-Fetch-User ?1. One that sets
// location.href from the page starts them without ?1, which a person's
// click always has (in the browsers that send the header at all). The
// suites of examples/e2e (TestBehaviourPeople, TestBehaviourCrawlers)
// measured it: every person there started at most 1 such navigation to a
// distinct page in any 10 s, every crawler that loads URLs 27 to 36.
//
// A [Summary] is one client's: a small, fixed-size, pointer-free record
// of the self-started navigations it made to distinct targets in the
// last [Config].Window, which of them robots.txt disallows, and how many
// navigations it made in all. [Summary.Observe] adds one request and says
// whether the client behaves as a crawler ([Verdict]); the caller then
// holds it to robots.txt as an undeclared bot for [Config].Hold. The
// package uses the standard library only, does no I/O and allocates
// nothing.
//
// What it never counts, so that no person's browser is held for it:
// navigations a page of the site (or another site) led to with a
// person's gesture; revalidations (a reload, a return visit with a warm
// cache: If-None-Match or If-Modified-Since); prefetches and prerenders
// (Sec-Purpose); frames and subresources; a second navigation to the same
// target in the window; navigations without a gesture from a browser
// that never sends Sec-Fetch-User (Safari), and a Chromium or Firefox
// navigation that starts with no page behind it and without a gesture (a
// restored session). And a client's first burst in a hold, pages opened
// at once (a bookmarks folder's "Open all": [BurstGap]), counts as one
// page.
package behaviour

import (
	"fmt"
	"strings"
	"time"
)

// Config says when a client behaves as a crawler. The zero Config is not
// valid: use [Default] or fill every field.
type Config struct {
	// Window is how far back a summary looks (default 10 s): long enough
	// for a crawler's first seconds, shorter than a person can type
	// addresses to fill.
	Window time.Duration
	// Pages is how many self-started navigations to distinct targets in
	// the window make a crawler (default 8).
	Pages int
	// Disallowed is how many of them, to targets robots.txt's "*" group
	// disallows, make a crawler (default 4): at most Disallowed-1 such
	// pages are read before the client is held.
	Disallowed int
	// Hold is how long a client that behaved as a crawler is held to
	// robots.txt as a bot after its last such navigation (default 30 min).
	Hold time.Duration
}

// Default is the configuration measured against the suites: a person
// there started at most 1 navigation to a distinct page in any 10 s, and
// none to a disallowed one; a crawler that loads URLs reaches 8 within its
// first 8 pages and its 4th disallowed page within its first 16.
var Default = Config{Window: 10 * time.Second, Pages: 8, Disallowed: 4, Hold: 30 * time.Minute}

// Slots is how many targets a Summary remembers: the most Pages can be.
const Slots = 16

// Group returns the configuration of a group of clients (a network's
// clients of one browser build: [Config.Pages] twice, Disallowed four
// times, at most Slots), pooling people who each do little, and the
// configuration of a client of a group that behaves as a crawler (half
// the thresholds, at least 1), so that a crawler spread over the
// addresses of a network is caught while a person there who only clicks
// is never held.
func (c Config) Group() (group, member Config) {
	group, member = c, c
	group.Pages, group.Disallowed = min(Slots, 2*c.Pages), min(Slots, 4*c.Disallowed)
	member.Pages, member.Disallowed = max(1, (c.Pages+1)/2), max(1, (c.Disallowed+1)/2)
	return group, member
}

// Validate reports a configuration that cannot work, naming the field.
func (c Config) Validate() error {
	switch {
	case c.Window < 100*time.Millisecond || c.Window > 24*time.Hour:
		return fmt.Errorf("window %s: must be between 100ms and 24h", c.Window)
	case c.Pages < 1 || c.Pages > Slots:
		return fmt.Errorf("pages %d: must be between 1 and %d", c.Pages, Slots)
	case c.Disallowed < 1 || c.Disallowed > c.Pages:
		return fmt.Errorf("disallowed %d: must be between 1 and pages (%d)", c.Disallowed, c.Pages)
	case c.Hold < time.Second:
		return fmt.Errorf("hold %s: must be at least 1s", c.Hold)
	}
	return nil
}

// Request is what the evidence reads of one request: its Fetch Metadata
// and a little more, as the browser sent it. Every field may be empty.
type Request struct {
	// Dest, Mode, Site and User are the values of Sec-Fetch-Dest,
	// Sec-Fetch-Mode, Sec-Fetch-Site and Sec-Fetch-User.
	Dest, Mode, Site, User string
	// Purpose reports a prefetch or prerender: Sec-Purpose (or the older
	// Purpose or X-Moz) is present.
	Purpose bool
	// Conditional reports If-None-Match or If-Modified-Since: the browser
	// revalidates a copy it has, from an earlier visit.
	Conditional bool
	// Target is the request target's hash (path and query: [Hash]).
	Target uint32
	// Disallowed reports that robots.txt's "*" group disallows the target.
	Disallowed bool
	// Gestures reports that the client's TLS handshake is an engine's that
	// sends Sec-Fetch-User on every navigation a gesture starts (Chromium,
	// Firefox). Without it a Summary learns it from the first ?1 the
	// client sends.
	Gestures bool
}

// Navigation reports a top-level navigation to a document, the only
// requests a summary counts: Sec-Fetch-Mode navigate, Sec-Fetch-Dest
// document, not a prefetch.
func (r *Request) Navigation() bool {
	return r.Mode == "navigate" && r.Dest == "document" && !r.Purpose
}

// MayCount reports a navigation that a summary may count as self-started,
// whatever it learned of the browser: one with no page behind it, or one a
// page of the site started without a gesture; not a revalidation. Only
// such a navigation needs its Target and Disallowed, and only such a one
// makes a summary for a client that has none.
func (r *Request) MayCount() bool {
	if !r.Navigation() || r.Conditional {
		return false
	}
	return r.Site == "none" || (r.Site == "same-origin" || r.Site == "same-site") && r.User != "?1"
}

// selfStarted reports a navigation that no page led to with a person's
// gesture, gestures telling whether the browser sends Sec-Fetch-User: one
// with no page behind it (Sec-Fetch-Site none) and a gesture (a typed
// address, a bookmark, a link in another program, automation's navigate),
// or, from a browser that does not send Sec-Fetch-User, any; or one a page
// of the site started without a gesture (a script setting location).
// A revalidation never is.
func (r *Request) selfStarted(gestures bool) bool {
	if r.Conditional {
		return false
	}
	gesture := r.User == "?1"
	switch r.Site {
	case "none":
		return gesture || !gestures
	case "same-origin", "same-site":
		return gestures && !gesture
	}
	return false
}

// Hash returns the FNV-1a hash of a request target (its path and query),
// which a Summary keeps instead of the target. A final slash of the path
// is left out: a typed /account that the site redirects to /account/ is
// one page, not two. It allocates nothing.
func Hash(target string) uint32 {
	h := uint32(2166136261)
	end := strings.IndexByte(target, '?')
	if end < 0 {
		end = len(target)
	}
	for i := 0; i < len(target); i++ {
		if i == end-1 && end > 1 && target[i] == '/' {
			continue
		}
		h ^= uint32(target[i])
		h *= 16777619
	}
	return h
}
