package behaviour

import (
	"strconv"
	"time"
)

// Summary is what one client (or one group of clients) did lately: the
// targets of its self-started navigations in the last Window, its
// navigations in all, its burst and its hold. It is fixed-size and has no
// pointers, so that a store keeps it inline and copies it freely; the
// zero Summary is a client never seen. Times are Unix nanoseconds, 0 when
// unset.
type Summary struct {
	// Targets are the self-started navigations to distinct targets, each
	// packed as its target's hash (29 bits), a burst bit, a used bit, a
	// disallowed bit and the time it was last made (Unix milliseconds, its
	// low 32 bits). Entries older than the window are cleared as they are
	// met.
	Targets [Slots]uint64
	// Last is when the client last navigated; LastSelf when it last made
	// a self-started navigation.
	Last, LastSelf int64
	// Epoch starts the current span of Window length; Navs and Self count
	// the navigations, and the self-started ones among them, in that span
	// (0) and the one before (1).
	Epoch      int64
	Navs, Self [2]uint16
	// HeldUntil ends the hold: until then the client is held to robots.txt
	// as an undeclared bot.
	HeldUntil int64
	// BurstLast is when the client's free burst (see [BurstGap]) last grew,
	// BurstN how many navigations it has: one such burst in Hold.
	BurstLast int64
	BurstN    uint8
	// SeenPages, SeenDisallowed and SeenNavs are what made the hold, at its
	// last renewal: the self-started navigations to distinct targets in
	// the window, those of them robots.txt disallows, and the navigations.
	SeenPages, SeenDisallowed uint8
	SeenNavs                  uint16
	// Gestures records that the client sent Sec-Fetch-User: ?1 once: its
	// browser sends it for every gesture, so a navigation without it was
	// started by no gesture.
	Gestures bool
}

// BurstGap is how soon after a self-started navigation another starts
// within a burst: several pages opened at once (a bookmarks folder's "Open
// all", a browser started with several addresses). Measured with the site
// on the same idle 2-core machine (examples/e2e TestBehaviourBurstGaps,
// docs/posers.md): Firefox started with 10 URLs, and Chromium opening 10
// tabs as it starts, start them 0.0 to 12.9 ms apart (Chromium stalls
// once in a while: 50, 150 ms); a crawler loading one page after another,
// images off, 18.3 ms apart at the least (a redirect's next hop aside: the
// same target, it makes no burst).
//
// A client's first burst in Hold, at most Slots navigations to distinct
// targets, the first two within BurstGap of each other and each next
// within [BurstStall] of the one before, counts as one target
// (disallowed if one of its pages is) and makes no hold by itself: where a
// person opening many pages at once and a crawler's first pages look
// alike, the person wins. A later burst counts every page.
const BurstGap = 15 * time.Millisecond

// BurstStall is how far apart a burst's pages may be once two have
// started within BurstGap: each navigation to a new target within
// BurstStall of the burst's last joins it. A browser opening pages at once
// starts them in batches: Chromium sends six to a host until it knows the
// connection is HTTP/2, then the rest 97 to 154 ms later; opening a
// bookmarks folder in new tabs on a site it already has open, it started
// them 0.0 to 46 ms apart with pauses of 62 to 207 ms between batches; a
// loaded machine spreads them (Chromium as it starts, in a CI run at a
// load of 9: 4 within 1.2 ms, then 6 more 0.6 to 69.6 ms apart). A
// crawler loading one page after another starts no two pages within
// BurstGap, so it has no burst to go on with.
const BurstStall = 300 * time.Millisecond

// Packing of a target entry.
const (
	entryBurst      = 1 << 34
	entryUsed       = 1 << 33
	entryDisallowed = 1 << 32
	entryTimeMask   = 1<<32 - 1
	entryHashShift  = 35
)

// Verdict is what a Summary says after a request.
type Verdict struct {
	// Held reports that the client is held to robots.txt as an undeclared
	// bot: it behaved as a crawler within Hold.
	Held bool
	// Fired reports that this request made or renewed the hold.
	Fired bool
	// Counted reports that this request was a self-started navigation.
	Counted bool
	// Pages, Disallowed and Navs are what made the hold (see
	// Summary.SeenPages), when Held.
	Pages, Disallowed, Navs int
}

// Reason describes a hold for a person, over window: what the client did.
// It allocates; call it to log, not to decide.
func (v Verdict) Reason(window time.Duration) string {
	if !v.Held {
		return ""
	}
	return strconv.Itoa(v.Pages) + " pages opened in " + window.String() + " with no page of the site behind them (" +
		strconv.Itoa(v.Disallowed) + " of them disallowed), of " + strconv.Itoa(v.Navs) + " navigations"
}

// Held reports whether the summary holds the client at now.
func (s *Summary) Held(now int64) bool { return s.HeldUntil > now }

// Verdict returns the hold as it stands at now, without a request.
func (s *Summary) Verdict(now int64) Verdict {
	if !s.Held(now) {
		return Verdict{}
	}
	return Verdict{Held: true, Pages: int(s.SeenPages), Disallowed: int(s.SeenDisallowed), Navs: int(s.SeenNavs)}
}

// Observe adds r, made at now, to the summary under c, and returns the
// verdict: the client behaves as a crawler when, in the last c.Window, it
// made self-started navigations to at least c.Pages distinct targets, or
// to c.Disallowed distinct targets robots.txt disallows, and at least
// three in four of its navigations in the span were self-started; its
// first burst in c.Hold counts as one target (see [BurstGap]). Then it is
// held until c.Hold after this request. Only navigations change the
// summary (see [Request.Navigation]); for any other request Observe only
// reads the hold. It allocates nothing.
func (s *Summary) Observe(now int64, r *Request, c *Config) Verdict {
	if !r.Navigation() {
		return s.Verdict(now)
	}
	window := int64(c.Window)
	if s.Last != 0 && now-s.Last > window {
		s.Targets = [Slots]uint64{}
	}
	s.Last = now
	s.roll(now, window)
	if r.User == "?1" {
		s.Gestures = true
	}
	v := Verdict{Counted: r.selfStarted(r.Gestures || s.Gestures)}
	s.Navs[0] = inc(s.Navs[0])
	if !v.Counted {
		// The targets change only by a self-started navigation, and only
		// one makes a hold.
		held := s.Verdict(now)
		held.Counted = false
		return held
	}
	s.Self[0] = inc(s.Self[0])
	ms := uint64(now/int64(time.Millisecond)) & entryTimeMask
	key := uint64(r.Target) >> 3 << entryHashShift // the hash's top 29 bits
	windowMs := uint64(window / int64(time.Millisecond))
	free, oldest, oldestAge, newest, newestAge := -1, -1, uint64(0), -1, uint64(0)
	found := -1
	for i, e := range s.Targets {
		if e&entryUsed == 0 {
			if free < 0 {
				free = i
			}
			continue
		}
		age := (ms - e&entryTimeMask) & entryTimeMask
		if age >= windowMs {
			s.Targets[i] = 0
			if free < 0 {
				free = i
			}
			continue
		}
		if e>>entryHashShift == key>>entryHashShift {
			found = i
		}
		if age >= oldestAge {
			oldest, oldestAge = i, age
		}
		if newest < 0 || age < newestAge {
			newest, newestAge = i, age
		}
	}
	// A burst: a new target within BurstGap of the last self-started
	// navigation, which starts it. The first in Hold goes on with each
	// navigation within BurstStall of its last, up to Slots navigations.
	gap := now - s.LastSelf
	soon := s.LastSelf != 0 && gap >= 0 && gap < int64(BurstGap)
	burst := false
	switch {
	case s.LastSelf != 0 && s.BurstLast == s.LastSelf && gap >= 0 && gap < int64(BurstStall):
		// The free burst goes on: a navigation to a target it has (a
		// redirect's next hop) keeps it going without a place of its own.
		burst = found >= 0 || s.BurstN < Slots
	case !soon:
	case found < 0 && (s.BurstLast == 0 || now-s.BurstLast >= int64(c.Hold)):
		burst, s.BurstN = true, 0
		if newest >= 0 {
			s.Targets[newest] |= entryBurst
			s.BurstN = 1
		}
	}
	if burst {
		s.BurstLast = now
		if found < 0 {
			s.BurstN++
		}
	}
	s.LastSelf = now
	e := key | entryUsed | ms
	if r.Disallowed {
		e |= entryDisallowed
	}
	if burst {
		e |= entryBurst
	}
	switch {
	case found >= 0:
		// The same target again: the newest time and what robots.txt
		// says now.
		s.Targets[found] = e
	case free >= 0:
		s.Targets[free] = e
	default:
		s.Targets[oldest] = e // the oldest gives its place
	}
	pages, disallowed := s.count()
	navs, self := int(s.Navs[0])+int(s.Navs[1]), int(s.Self[0])+int(s.Self[1])
	if !burst && (pages >= c.Pages || disallowed >= c.Disallowed) && self*4 >= navs*3 {
		s.HeldUntil = now + int64(c.Hold)
		s.SeenPages, s.SeenDisallowed, s.SeenNavs = uint8(pages), uint8(disallowed), uint16(min(navs, 1<<16-1))
		v.Fired = true
	}
	held := s.Verdict(now)
	held.Fired, held.Counted = v.Fired, v.Counted
	return held
}

// count returns the distinct targets in the summary and those of them
// robots.txt disallows, a burst's counting as one.
func (s *Summary) count() (pages, disallowed int) {
	var burst, burstDisallowed bool
	for _, e := range s.Targets {
		switch {
		case e&entryUsed == 0:
		case e&entryBurst != 0:
			burst = true
			burstDisallowed = burstDisallowed || e&entryDisallowed != 0
		default:
			pages++
			if e&entryDisallowed != 0 {
				disallowed++
			}
		}
	}
	if burst {
		pages++
	}
	if burstDisallowed {
		disallowed++
	}
	return pages, disallowed
}

// roll moves the navigation counts on to the span that holds now.
func (s *Summary) roll(now, window int64) {
	switch d := now - s.Epoch; {
	case s.Epoch == 0 || d >= 2*window || d < 0:
		s.Epoch, s.Navs, s.Self = now, [2]uint16{}, [2]uint16{}
	case d >= window:
		s.Epoch += window
		s.Navs[1], s.Navs[0] = s.Navs[0], 0
		s.Self[1], s.Self[0] = s.Self[0], 0
	}
}

func inc(n uint16) uint16 {
	if n < 1<<16-1 {
		n++
	}
	return n
}
