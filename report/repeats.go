package report

import (
	"context"
	"hash/maphash"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Bounds of the repeat table (log_repeats): repeatBuckets buckets of
// repeatWays groups each. A group is a (client, reason, rule) logged in
// the current interval: about 850 bytes with a typical first line, at most
// about 2 KiB (the client's strings are cut to maxKept bytes), so a full
// table holds about 3.5 MiB, at most 8 MiB, plus 32 KiB of slots.
const (
	repeatWays    = 4
	repeatBuckets = 1024
)

// repeatClosed marks a closed group's count: far enough below zero that
// the adds of requests racing with the close never bring it back up.
const repeatClosed = math.MinInt64 / 2

// repeatKey is what makes two decisions "like" each other: the client
// (address prefix, as the engine tracks it, product token and class), the
// action, the reason and, where it decided, the rule. A different reason or
// rule is a new kind of violation and is logged at once. A blocked
// client's refusals (and trap hits once blocked) leave the token and class
// out: a blocked address that rotates its User-Agent is one group.
type repeatKey struct {
	prefix netip.Prefix
	token  string
	class  uaclass.Class
	action enforce.Action
	reason enforce.Reason
	rule   *policy.Rule
	dryRun bool
	// browserDisallowed: a browser's claim on a disallowed path is not
	// like one on an allowed path (a blocked browser's, whose rule is
	// incidental).
	browserDisallowed bool
}

// repeatGroup is one key logged in the current interval: the line that
// was written in full, and the repeats counted since the group's last line.
type repeatGroup struct {
	key repeatKey
	// entry is the line written in full; a summary line repeats it.
	entry Entry
	// count is the number of repeats not yet written; repeatClosed and
	// below once the group is closed, after which a repeat starts a new
	// group (and is logged in full).
	count atomic.Int64
	// last is when the group's last line was written (Unix nanoseconds).
	last atomic.Int64
}

// take returns the repeats not yet written and sets them to zero; 0 if
// the group is closed.
func (g *repeatGroup) take() int64 {
	for {
		n := g.count.Load()
		if n <= 0 {
			return 0
		}
		if g.count.CompareAndSwap(n, 0) {
			return n
		}
	}
}

// close closes the group and returns the repeats not yet written; 0 if it
// was closed already.
func (g *repeatGroup) close() int64 {
	for {
		n := g.count.Load()
		if n < 0 {
			return 0
		}
		if g.count.CompareAndSwap(n, repeatClosed) {
			return n
		}
	}
}

// repeatLog folds repeated refusals into summary lines. The first decision
// of a key is logged in full and starts a group; its repeats within the
// interval only count, with an atomic add on a slot found by a hash (no
// lock, no allocation); every interval, a group with repeats writes them as
// one summary line, and a group idle for a whole interval is closed, so
// that the key's next decision is logged in full again. The table is
// bounded: a key that finds its bucket full takes the slot of a group that
// has had no repeat since its last line, or else is logged in full (as
// without log_repeats) until a flush frees a slot; so clients that flood
// keep their groups. Nothing can be hidden: a decision that is not counted
// is logged. Closing the table (DecisionLog.Close, on the handler's
// Cleanup) writes every count; a count is never lost, since a request that
// finds its group closed is logged in full instead.
type repeatLog struct {
	interval time.Duration
	seed     maphash.Seed
	slots    [repeatBuckets * repeatWays]atomic.Pointer[repeatGroup]
	closed   atomic.Bool
	// write writes a group's summary line of n repeats over span.
	write func(g *repeatGroup, n int64, span time.Duration)
	done  chan struct{} // closed when run returns
}

// newRepeatLog returns a repeat table that writes its summary lines with
// write.
func newRepeatLog(interval time.Duration, write func(g *repeatGroup, n int64, span time.Duration)) *repeatLog {
	return &repeatLog{interval: interval, seed: maphash.MakeSeed(), write: write, done: make(chan struct{})}
}

// hash returns the hash of a key. The seed is random, so that clients
// cannot choose keys that share a bucket.
func (t *repeatLog) hash(k *repeatKey) uint64 {
	var h maphash.Hash
	h.SetSeed(t.seed)
	a := k.prefix.Addr().As16()
	h.Write(a[:])
	var small [6]byte
	small[0], small[1], small[2] = byte(k.prefix.Bits()), byte(k.class), byte(k.action)
	if k.rule != nil {
		line := uint32(k.rule.Line)
		small[3], small[4], small[5] = byte(line), byte(line>>8), byte(line>>16)
	}
	h.Write(small[:])
	h.WriteString(k.token)
	h.WriteByte(0)
	h.WriteString(string(k.reason))
	return h.Sum64()
}

// bucket returns the slots of a hash's bucket.
func (t *repeatLog) bucket(hash uint64) []atomic.Pointer[repeatGroup] {
	i := int(hash%repeatBuckets) * repeatWays
	return t.slots[i : i+repeatWays]
}

// count counts a decision as a repeat of its key's open group and reports
// whether it did; false means that the decision must be logged in full
// (and then passed to start).
func (t *repeatLog) count(k *repeatKey, hash uint64) bool {
	b := t.bucket(hash)
	for i := range b {
		// A closed group's add is harmless: its count stays negative.
		if g := b[i].Load(); g != nil && g.key == *k && g.count.Add(1) > 0 {
			return true
		}
	}
	return false
}

// start opens a group for a key whose decision was just logged in full as
// e. Where the key's group was opened meanwhile by a concurrent request
// (also logged in full), it does nothing.
func (t *repeatLog) start(k repeatKey, hash uint64, e *Entry, now time.Time) {
	if t.closed.Load() {
		return
	}
	g := &repeatGroup{key: k, entry: *e}
	// What the client chose is kept short: 4,096 groups of long
	// User-Agents must not hold megabytes.
	for _, f := range []*string{&g.entry.UserAgent, &g.entry.URI, &g.entry.Host, &g.entry.SignatureAgent, &g.entry.SignatureError} {
		*f = keepShort(*f)
	}
	g.last.Store(now.UnixNano())
	b := t.bucket(hash)
	installed := false
	victim, oldest := -1, int64(math.MaxInt64)
	for i := range b {
		old := b[i].Load()
		if old == nil || old.count.Load() < 0 {
			if b[i].CompareAndSwap(old, g) {
				installed = true
				break
			}
			continue
		}
		if old.key == k {
			return
		}
		if last := old.last.Load(); old.count.Load() == 0 && last < oldest {
			victim, oldest = i, last
		}
	}
	// A full bucket gives up its oldest group that has had no repeat since
	// its last line; where every group has had one (clients that flood),
	// the new key keeps being logged in full until a flush.
	if !installed && victim >= 0 {
		if old := b[victim].Load(); old != nil && old.count.CompareAndSwap(0, repeatClosed) {
			installed = b[victim].CompareAndSwap(old, g)
		}
	}
	// A close that ran while the group was put in may have missed it.
	if installed && t.closed.Load() {
		t.flushGroup(g, now, true)
	}
}

// maxKept bounds the length of a client's strings that a group keeps for
// its summary line.
const maxKept = 256

// keepShort returns s, or its first maxKept bytes (cut at a character
// boundary) in a string of their own.
func keepShort(s string) string {
	if len(s) <= maxKept {
		return s
	}
	n := maxKept
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.Clone(s[:n])
}

// flushGroup writes a group's repeats, and closes it when close is set.
func (t *repeatLog) flushGroup(g *repeatGroup, now time.Time, close bool) {
	var n int64
	if close {
		n = g.close()
	} else {
		n = g.take()
	}
	if n > 0 {
		t.write(g, n, time.Duration(now.UnixNano()-g.last.Load()))
		g.last.Store(now.UnixNano())
	}
}

// flush writes the repeats of every group and closes the groups that had
// none for a whole interval (all of them when final is set).
func (t *repeatLog) flush(now time.Time, final bool) {
	for i := range t.slots {
		g := t.slots[i].Load()
		if g == nil {
			continue
		}
		idle := g.count.Load() == 0 && now.UnixNano()-g.last.Load() >= int64(t.interval)
		if idle && g.count.CompareAndSwap(0, repeatClosed) || g.count.Load() < 0 {
			t.slots[i].CompareAndSwap(g, nil)
			continue
		}
		t.flushGroup(g, now, final)
		if final {
			t.slots[i].CompareAndSwap(g, nil)
		}
	}
}

// run flushes the table every interval until ctx is done or stop is
// closed.
func (t *repeatLog) run(ctx context.Context, stop <-chan struct{}) {
	defer close(t.done)
	tick := time.NewTicker(t.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case now := <-tick.C:
			t.flush(now, false)
		}
	}
}

// close writes every count and closes the table: from then on every
// decision is logged in full. The caller has stopped run (or never
// started it).
func (t *repeatLog) close(now time.Time) {
	t.closed.Store(true)
	t.flush(now, true)
}

// repeatMessage is a summary line's message: "N more like this in 10s".
func repeatMessage(n int64, span time.Duration) string {
	return strconv.FormatInt(n, 10) + " more like this in " + roundSpan(span)
}

// roundSpan writes a summary's span to the second ("10s", "1m30s", "2h"),
// or to the millisecond below a second.
func roundSpan(d time.Duration) string {
	if d < time.Second {
		return max(d, 0).Round(time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	for _, zero := range []string{"m0s", "h0m"} {
		if len(s) > len(zero) && s[len(s)-len(zero):] == zero {
			s = s[:len(s)-len(zero)+1]
		}
	}
	return s
}
