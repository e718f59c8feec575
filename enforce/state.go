package enforce

import (
	"math"
	"time"
)

// State is the state of one client (an address prefix and a product token),
// of one address prefix as a whole, or of one crawler across its addresses
// (see [Crawler]). Times are Unix nanoseconds, zero
// when unset, so that a State is small and has no pointers.
type State struct {
	// TAT is the rate limiter's theoretical arrival time (GCRA): the time
	// by which the requests so far would have been spaced out. It is
	// equivalent to a token bucket of Burst tokens refilled one per
	// Interval, with integer arithmetic and one field.
	TAT int64
	// ThrottleUntil ends the current Retry-After window: the span a
	// throttled client was told to wait. Rate violations inside it count as
	// one strike at most.
	ThrottleUntil int64
	// StrikeFrom is when, inside that window, a further violation shows
	// that the client ignores the 429 (earlier ones are requests it sent in
	// parallel or retried at once); it moves to ThrottleUntil once the
	// window has struck.
	StrikeFrom int64
	// WindowStart starts the span (Op.Window) in which Strikes and Slips
	// count.
	WindowStart int64
	// BlockedUntil ends the current block.
	BlockedUntil int64
	// Remember is when a past offender may be forgotten: a block is
	// remembered for MaxCooldown after it ends, so that a repeat offence
	// within that time gets a longer cooldown.
	Remember int64
	// RobotsAt is when the address last fetched /robots.txt.
	RobotsAt int64
	// LastSeen is the last time an Op touched the state.
	LastSeen int64
	// Strikes counts strikes since WindowStart.
	Strikes int32
	// Slips counts rate violations since WindowStart that opened no
	// Retry-After window; the first Op.Grace of them are only logged.
	Slips int32
	// Offenses counts the blocks so far; each doubles the next cooldown.
	Offenses int32
	// Why is the reason of the last block (Op.Why of the Op that made it).
	Why BlockReason
}

// Blocked reports whether the state is blocked at now.
func (s *State) Blocked(now int64) bool { return s.BlockedUntil > now }

// Offender reports whether the state is blocked or a remembered offender at
// now.
func (s *State) Offender(now int64) bool { return s.BlockedUntil > now || s.Remember > now }

// Op describes one request's change to a client's state and, with
// CheckAddr, to its address's state. The engine builds it; the store applies
// it with [Apply] under its own lock, as one atomic operation. Ops are plain
// values, so a store in another process can apply them too.
type Op struct {
	// Peek reads the state without creating or changing it.
	Peek bool
	// CheckAddr applies the Op to the client's address too (see
	// [AddrKey]): a blocked address refuses the Op; the address's
	// robots.txt fetch and block are reported; strikes count on the
	// address as well; and the address's own bucket (AddrInterval) is taken
	// from when the client's is.
	CheckAddr bool
	// MarkRobots records a /robots.txt fetch.
	MarkRobots bool
	// Interval and Burst describe the client's token bucket to take one
	// token from: one token per Interval, at most Burst stored. Zero
	// Interval: no bucket. A request that finds it empty is a rate
	// violation (see [Apply]).
	Interval time.Duration
	Burst    int
	// AddrInterval and AddrBurst describe the address's bucket, shared by
	// all its tokens, so that rotating User-Agents gains no fresh buckets.
	AddrInterval time.Duration
	AddrBurst    int
	// CheckCrawler applies the Op to the key's crawler too (Key.Crawler;
	// see [CrawlerKey]), as CheckAddr does to its address: a blocked
	// crawler refuses the Op; strikes count on it, and a Block (a trap) is
	// one, and CrawlerStrikes of them block it; its bucket
	// (CrawlerInterval) is taken from when the client's and the address's
	// are.
	CheckCrawler bool
	// CrawlerInterval and CrawlerBurst describe the crawler's bucket,
	// shared by all its addresses.
	CrawlerInterval time.Duration
	CrawlerBurst    int
	// Grace is how many rate violations in Window are only logged (slips)
	// before violations are throttled.
	Grace int
	// Strike adds a strike (a disallowed path, a blocked class, ...).
	Strike bool
	// Block blocks at once (traps).
	Block bool
	// Blockable lets strikes turn into blocks.
	Blockable bool
	// Strikes is how many strikes in Window block the state the Op is
	// applied to; AddrStrikes is how many block the address, for an Op
	// with CheckAddr, and CrawlerStrikes the crawler, for an Op with
	// CheckCrawler.
	Strikes, AddrStrikes, CrawlerStrikes int
	// Window, Cooldown and MaxCooldown are the other escalation settings.
	Window                time.Duration
	Cooldown, MaxCooldown time.Duration
	// Why is the reason a block that this Op makes carries (of the state
	// and of the address alike).
	Why BlockReason
}

// Outcome is the result of applying an Op.
type Outcome struct {
	// State is the state after the Op (or as found, for Peek).
	State State
	// AddrRobotsAt and AddrBlockedUntil come from the address's state, for
	// an Op with CheckAddr, and so does AddrWhy, its block's reason.
	// AddrBlocked reports that the address is blocked: before the Op
	// (which then was not applied; Blocked is set too) or by it
	// (AddrNewlyBlocked).
	AddrRobotsAt, AddrBlockedUntil int64
	AddrWhy                        BlockReason
	AddrBlocked, AddrNewlyBlocked  bool
	// CrawlerBlockedUntil and CrawlerWhy come from the crawler's state, for
	// an Op with CheckCrawler that consulted it; CrawlerBlocked reports
	// that the crawler is blocked: before the Op (which then was not
	// applied; Blocked is set too) or by it (CrawlerNewlyBlocked).
	CrawlerBlockedUntil                 int64
	CrawlerWhy                          BlockReason
	CrawlerBlocked, CrawlerNewlyBlocked bool
	// Found reports whether the store had state for the key.
	Found bool
	// Blocked reports that the client (or its address) was already
	// blocked, so the Op was not applied.
	Blocked bool
	// Took reports that the request conforms to the rate. Otherwise Slip
	// reports a violation that is only logged, Throttled one that is
	// answered 429 with RetryAfter, ByAddr that the address's bucket, not
	// the client's, was empty, and ByCrawler the crawler's.
	Took, Slip, Throttled, ByAddr, ByCrawler bool
	RetryAfter                               time.Duration
	// Struck reports that the Op counted a strike (on the client, its
	// address or its crawler).
	Struck bool
	// NewlyBlocked reports that this Op blocked the client.
	NewlyBlocked bool
	// BlockDropped reports that this Op would have blocked but the store
	// had no room for another block; it is set by the store.
	BlockDropped bool
	// AddrStrikes is the address's strike count in its window after the
	// Op (all its clients together), for an Op with CheckAddr; 0 where
	// the store does not say (the Redis store).
	AddrStrikes int
}

// Apply applies op at now to st, the state of the Op's key, addr, the
// state of its address for an Op with CheckAddr (else nil), and crawler,
// the state of its crawler for an Op with CheckCrawler (else nil). It is
// the one definition of how state changes, shared by every Store; the
// store holds the states under its lock.
//
// The ladder: a strike (op.Strike) counts at once. A rate violation does
// not: the first op.Grace in a window are slips, only logged; the next
// opens a Retry-After window (a 429, no strike). Violations inside that
// window are answered 429 too, and they count as one strike, only if one
// arrives after the window's first half (at most its first second):
// requests sent in parallel or retried at once are one burst, not
// persistence. A client that waits out its Retry-After collects no strike
// for its rate; one that keeps hammering collects one per window.
//
// The checks come in this order: the address's block, the state's own
// (a peek stops there), the crawler's block; then the buckets, the
// client's, the address's and the crawler's, and the strikes.
func Apply(st, addr, crawler *State, now int64, op Op) Outcome {
	var out Outcome
	if addr != nil {
		out.AddrRobotsAt, out.AddrBlockedUntil, out.AddrWhy = addr.RobotsAt, addr.BlockedUntil, addr.Why
		if addr.Blocked(now) {
			out.State, out.AddrBlocked, out.Blocked = *st, true, true
			return out
		}
	}
	if op.Peek {
		out.State, out.Blocked = *st, st.Blocked(now)
		if !out.Blocked && crawler != nil {
			out.blockedCrawler(crawler, now)
		}
		return out
	}
	st.LastSeen = now
	if op.MarkRobots {
		st.RobotsAt = now
	}
	if st.Blocked(now) {
		out.State, out.Blocked = *st, true
		return out
	}
	// A block (a trap) applies whatever the crawler's state: the address
	// is blocked, whether its crawler is or not.
	crawlerBlocked := crawler != nil && out.blockedCrawler(crawler, now)
	if crawlerBlocked && !op.Block {
		out.State = *st
		return out
	}
	out.Blocked = false
	if addr != nil {
		addr.LastSeen = now
	}
	if crawler != nil {
		crawler.LastSeen = now
	}
	strike, addrStrike, crawlerStrike := op.Strike, false, false
	if op.Interval > 0 {
		tat, addrTAT := st.TAT, int64(0)
		if addr != nil {
			addrTAT = addr.TAT
		}
		r := st.take(now, op.Interval, op.Burst, op.Grace, op.Window)
		if r.took && addr != nil && op.AddrInterval > 0 {
			if ar := addr.take(now, op.AddrInterval, op.AddrBurst, op.Grace, op.Window); !ar.took {
				// The address as a whole is over its rate. A refused
				// request does not use up the client's own bucket.
				if !ar.slip {
					st.TAT = tat
				}
				r, out.ByAddr, addrStrike = ar, true, ar.strike
			}
		}
		if r.took && crawler != nil && op.CrawlerInterval > 0 {
			if cr := crawler.take(now, op.CrawlerInterval, op.CrawlerBurst, op.Grace, op.Window); !cr.took {
				// The crawler as a whole is over its rate: nor does a
				// refused request use up the client's or the address's.
				if !cr.slip {
					st.TAT = tat
					if addr != nil {
						addr.TAT = addrTAT
					}
				}
				r, out.ByCrawler, crawlerStrike = cr, true, cr.strike
			}
		}
		out.Took, out.Slip, out.Throttled = r.took, r.slip, !r.took && !r.slip
		out.RetryAfter = time.Duration(r.retry)
		strike = strike || r.strike && !out.ByAddr && !out.ByCrawler
	}
	block := op.Block
	if strike {
		st.strike(now, op.Window)
		out.Struck = true
		if op.Blockable && op.Strikes > 0 && int(st.Strikes) >= op.Strikes {
			block = true
		}
	}
	if addr != nil && op.Blockable && (strike || addrStrike) {
		addr.strike(now, op.Window)
		out.AddrStrikes = int(addr.Strikes)
		out.Struck = true
		if op.AddrStrikes > 0 && int(addr.Strikes) >= op.AddrStrikes {
			addr.block(now, &op)
			out.AddrBlocked, out.AddrNewlyBlocked, out.AddrBlockedUntil, out.AddrWhy = true, true, addr.BlockedUntil, addr.Why
		}
	}
	// A block (a trap) is one strike on the crawler: its address is
	// blocked at once, its crawler when CrawlerStrikes of its addresses
	// have been.
	if crawler != nil && !crawlerBlocked && (op.Blockable && (strike || crawlerStrike) || op.Block) {
		crawler.strike(now, op.Window)
		out.Struck = true
		if op.CrawlerStrikes > 0 && int(crawler.Strikes) >= op.CrawlerStrikes {
			crawler.block(now, &op)
			out.CrawlerBlocked, out.CrawlerNewlyBlocked, out.CrawlerBlockedUntil, out.CrawlerWhy = true, true, crawler.BlockedUntil, crawler.Why
		}
	}
	if block {
		st.block(now, &op)
		out.NewlyBlocked = true
	}
	out.State = *st
	return out
}

// blockedCrawler reports the crawler's block in out, and whether it is in
// force at now (then the Op is refused: out.Blocked).
func (out *Outcome) blockedCrawler(crawler *State, now int64) bool {
	out.CrawlerBlockedUntil, out.CrawlerWhy = crawler.BlockedUntil, crawler.Why
	if !crawler.Blocked(now) {
		return false
	}
	out.CrawlerBlocked, out.Blocked = true, true
	return true
}

// takeResult is the outcome of one take from a bucket.
type takeResult struct {
	took, slip, strike bool
	retry              int64 // Retry-After, for a throttled request
}

// take takes one token from the bucket (interval, burst) of s, and applies
// the ladder's rules to a request that finds it empty (see [Apply]).
func (s *State) take(now int64, interval time.Duration, burst, grace int, window time.Duration) takeResult {
	// GCRA: a request conforms when it comes no earlier than TAT less the
	// burst tolerance; each conforming request moves TAT one interval on.
	iv := int64(interval)
	tolerance := int64(math.MaxInt64 / 4)
	if b := int64(max(burst, 1) - 1); b == 0 || iv <= tolerance/b {
		tolerance = b * iv
	}
	tat := max(s.TAT, now)
	if now >= tat-tolerance {
		s.TAT = tat + min(iv, math.MaxInt64/4)
		return takeResult{took: true}
	}
	if now < s.ThrottleUntil {
		r := takeResult{retry: s.ThrottleUntil - now}
		if now >= s.StrikeFrom {
			r.strike, s.StrikeFrom = true, s.ThrottleUntil
		}
		return r
	}
	s.newWindow(now, window)
	if s.Slips < math.MaxInt32 {
		s.Slips++
	}
	if int(s.Slips) <= grace {
		return takeResult{slip: true}
	}
	// Retry-After goes out in whole seconds; the window is what the client
	// was told, so a client that honours it comes back after it.
	const second = int64(time.Second)
	ra := (tat - tolerance - now + second - 1) / second * second
	s.ThrottleUntil = now + ra
	s.StrikeFrom = now + min(ra/2, second)
	return takeResult{retry: ra}
}

// newWindow starts a new span for strikes and slips when the current one is
// over.
func (s *State) newWindow(now int64, window time.Duration) {
	if s.WindowStart == 0 || now-s.WindowStart > int64(window) {
		s.WindowStart, s.Strikes, s.Slips = now, 0, 0
	}
}

// strike counts one strike.
func (s *State) strike(now int64, window time.Duration) {
	s.newWindow(now, window)
	if s.Strikes < math.MaxInt32 {
		s.Strikes++
	}
}

// block blocks s for a cooldown that doubles with each offence.
func (s *State) block(now int64, op *Op) {
	cd := op.Cooldown
	for i := int32(0); i < s.Offenses && cd < op.MaxCooldown; i++ {
		cd *= 2
	}
	cd = min(cd, op.MaxCooldown)
	s.BlockedUntil = now + int64(cd)
	s.Remember = s.BlockedUntil + int64(op.MaxCooldown)
	s.Why = op.Why
	if s.Offenses < math.MaxInt32 {
		s.Offenses++
	}
}
