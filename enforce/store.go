package enforce

import (
	"net/netip"
	"time"
)

// Key identifies a client in the store: an IP and the most specific
// robots.txt product token of its User-Agent. Per-IP state (traps, bad
// agents, impostors, robots.txt fetches) uses [IPKey].
type Key struct {
	IP    netip.Addr
	Token string
}

// ipToken marks per-IP state; it cannot be a product token.
const ipToken = "\x00ip"

// IPKey returns the key of the per-IP state of ip.
func IPKey(ip netip.Addr) Key { return Key{IP: ip, Token: ipToken} }

// State is the per-client state. Times are Unix nanoseconds, zero when
// unset, so that a State is small and has no pointers.
type State struct {
	// TAT is the rate limiter's theoretical arrival time (GCRA): the time
	// by which the client's requests so far would have been spaced out. It
	// is equivalent to a token bucket of Burst tokens refilled one per
	// Interval, with integer arithmetic and one field.
	TAT int64
	// Strikes counts violations since WindowStart.
	Strikes     int32
	WindowStart int64
	// Offenses counts the blocks so far; each doubles the next cooldown.
	Offenses     int32
	BlockedUntil int64
	// Remember is when a past offender may be forgotten: a block is
	// remembered for MaxCooldown after it ends, so that a repeat offence
	// within that time gets a longer cooldown.
	Remember int64
	// RobotsAt is when the client last fetched /robots.txt.
	RobotsAt int64
	// LastSeen is the last time an Op touched the state.
	LastSeen int64
}

// Op describes one change to a client's State. The engine builds it; the
// store applies it with [State.Apply] under its own lock. Ops are plain
// values, so a store in another process can apply them too.
type Op struct {
	// Peek reads the state without creating or changing it.
	Peek bool
	// CheckIP makes the store read the per-IP state of the key's IP first
	// (see [IPKey]) and return it in Outcome.IP; when that IP is blocked,
	// the Op is not applied. It saves a second store operation per request.
	CheckIP bool
	// MarkRobots records a /robots.txt fetch.
	MarkRobots bool
	// Interval and Burst describe a token bucket to take one token from:
	// one token per Interval, at most Burst stored. Zero Interval: no bucket.
	Interval time.Duration
	Burst    int
	// Strike adds a violation. StrikeOnEmpty adds one only if the bucket
	// had no token.
	Strike, StrikeOnEmpty bool
	// Block blocks the client at once, as if it had reached Strikes.
	Block bool
	// Blockable allows strikes to turn into a block.
	Blockable bool
	// Strikes, Window, Cooldown and MaxCooldown are the escalation settings.
	Strikes               int
	Window                time.Duration
	Cooldown, MaxCooldown time.Duration
}

// Outcome is the result of applying an Op.
type Outcome struct {
	// State is the state after the Op (or as found, for Peek).
	State State
	// IPRobotsAt and IPBlockedUntil come from the per-IP state, for an Op
	// with CheckIP; IPBlocked reports that the IP is blocked (and the Op
	// was not applied).
	IPRobotsAt, IPBlockedUntil int64
	IPBlocked                  bool
	// Found reports whether the store had state for the key.
	Found bool
	// Blocked reports that the client was already blocked, so the Op was not
	// applied.
	Blocked bool
	// Took reports that a token was taken; Wait is how long until the next
	// one when none was.
	Took bool
	Wait time.Duration
	// NewlyBlocked reports that this Op blocked the client.
	NewlyBlocked bool
}

// Store keeps per-client state. Implementations must apply each Op
// atomically with respect to other Ops on the same key, bound their memory,
// and be safe for concurrent use.
type Store interface {
	// Apply applies op to the state of key at time now and returns the
	// outcome. For a Peek of an unknown key it returns a zero Outcome and
	// creates nothing.
	Apply(key Key, now time.Time, op Op) Outcome
	// Len returns the number of clients tracked.
	Len() int
}

// Apply applies op to s at time now (Unix nanoseconds). It is the one
// definition of how state changes, shared by every Store.
func (s *State) Apply(now int64, op Op) Outcome {
	if op.Peek {
		return Outcome{State: *s, Found: true, Blocked: s.BlockedUntil > now}
	}
	s.LastSeen = now
	if op.MarkRobots {
		s.RobotsAt = now
	}
	if s.BlockedUntil > now {
		return Outcome{State: *s, Found: true, Blocked: true}
	}
	out := Outcome{Found: true}
	if op.Interval > 0 {
		// GCRA: a request conforms when it comes no earlier than TAT less
		// the burst tolerance; each conforming request moves TAT one
		// interval on.
		interval := int64(op.Interval)
		tolerance := int64(max(op.Burst, 1)-1) * interval
		tat := max(s.TAT, now)
		if now >= tat-tolerance {
			s.TAT = tat + interval
			out.Took = true
		} else {
			out.Wait = time.Duration(tat - tolerance - now)
		}
	}
	if op.Strike || op.StrikeOnEmpty && op.Interval > 0 && !out.Took {
		if s.WindowStart == 0 || now-s.WindowStart > int64(op.Window) {
			s.WindowStart, s.Strikes = now, 0
		}
		s.Strikes++
		if op.Blockable && op.Strikes > 0 && int(s.Strikes) >= op.Strikes {
			op.Block = true
		}
	}
	if op.Block {
		cd := op.Cooldown
		for i := int32(0); i < s.Offenses && cd < op.MaxCooldown; i++ {
			cd *= 2
		}
		cd = min(cd, op.MaxCooldown)
		s.BlockedUntil = now + int64(cd)
		s.Remember = s.BlockedUntil + int64(op.MaxCooldown)
		s.Offenses++
		out.NewlyBlocked = true
	}
	out.State = *s
	return out
}
