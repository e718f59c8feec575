package report

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/record"
)

// DefaultRepeats is log_repeats' default: a flood of refusals from one
// client writes one line per 10 seconds instead of one per request, and a
// count reaches the log at most 10 seconds late. MaxRepeats bounds it, so
// that the log (and "caddy robots report") is never far behind the
// metrics.
const (
	DefaultRepeats = 10 * time.Second
	MaxRepeats     = time.Hour
)

// CheckLogSettings checks the decision log's options: allowed is
// log_allowed, the fraction of allowed requests logged; repeats is
// log_repeats (nil: DefaultRepeats), which it returns resolved. Its
// errors are *field.Error.
func CheckLogSettings(allowed float64, repeats *time.Duration) (time.Duration, error) {
	if !(allowed >= 0 && allowed <= 1) {
		return 0, field.Errorf("log_allowed", "%v is not a fraction between 0 and 1", allowed)
	}
	r := DefaultRepeats
	if repeats != nil {
		r = *repeats
	}
	if r < 0 || r > MaxRepeats {
		return 0, field.Errorf("log_repeats", "%v is not an interval between 0 (log every request) and %v", r, MaxRepeats)
	}
	return r, nil
}

// DecisionLog writes a handler's decisions to its decision log, each as an
// [Entry]. With a repeat interval (log_repeats), a refusal or violation
// like one logged in the current interval is only counted, at the cost of
// a hash and an atomic add and no allocation, and written later in a
// summary line. Its methods are safe for concurrent use.
type DecisionLog struct {
	logger  atomic.Pointer[zap.Logger]
	zone    string
	prefix  func(netip.Addr) netip.Prefix
	repeats *repeatLog // nil when every decision is logged in full
	stop    chan struct{}
	stopped sync.Once
}

// DecisionLogOptions configure a [DecisionLog].
type DecisionLogOptions struct {
	// Zone is the handler's zone, written in every entry.
	Zone string
	// Repeats is the interval over which repeated refusals and violations
	// are folded into summary lines; 0 logs every decision in full.
	Repeats time.Duration
	// ClientPrefix returns the address prefix a client is tracked by
	// ([enforce.Engine.ClientPrefix]): the addresses of one prefix are one
	// client for the folding of repeats. Nil: each address is one.
	ClientPrefix func(netip.Addr) netip.Prefix
}

// NewDecisionLog returns a decision log written to logger. With a repeat
// interval, it writes the summary lines every interval, until ctx is done
// or Close is called.
func NewDecisionLog(ctx context.Context, logger *zap.Logger, o DecisionLogOptions) *DecisionLog {
	l := &DecisionLog{zone: o.Zone, prefix: o.ClientPrefix, stop: make(chan struct{})}
	l.logger.Store(logger)
	if l.prefix == nil {
		l.prefix = func(a netip.Addr) netip.Prefix { return netip.PrefixFrom(a, a.BitLen()) }
	}
	if o.Repeats > 0 {
		l.repeats = newRepeatLog(o.Repeats, l.writeRepeats)
		go l.repeats.run(ctx, l.stop)
	}
	return l
}

// SetLogger replaces the logger the entries are written to.
func (l *DecisionLog) SetLogger(logger *zap.Logger) { l.logger.Store(logger) }

// Interval returns the repeat interval; 0 when every decision is logged in
// full.
func (l *DecisionLog) Interval() time.Duration {
	if l.repeats == nil {
		return 0
	}
	return l.repeats.interval
}

// Groups returns how many repeat groups are open: decisions logged in full
// whose repeats are being counted.
func (l *DecisionLog) Groups() int {
	if l.repeats == nil {
		return 0
	}
	n := 0
	for i := range l.repeats.slots {
		if l.repeats.slots[i].Load() != nil {
			n++
		}
	}
	return n
}

// Flush writes the summary lines of the repeats counted so far, and closes
// the groups that had none for a whole interval up to now, so that their
// next decision is logged in full again. The log does it every interval
// by itself.
func (l *DecisionLog) Flush(now time.Time) {
	if l.repeats != nil {
		l.repeats.flush(now, false)
	}
}

// Close stops the summary lines' interval and writes every count: from
// then on every decision is logged in full. No count is lost. It is
// nil-safe and may be called more than once.
func (l *DecisionLog) Close() {
	if l == nil || l.repeats == nil {
		return
	}
	l.stopped.Do(func() { close(l.stop) })
	<-l.repeats.done
	l.repeats.close(time.Now())
}

// Write writes one entry for a decision, the line of its record r
// (EntryOf). Nothing is built unless the logger writes at info level;
// with a repeat interval, a noteworthy decision (a refusal, a violation)
// like one logged in the current interval is only counted.
func (l *DecisionLog) Write(r *record.Record) {
	logger := l.logger.Load()
	if !logger.Core().Enabled(zapcore.InfoLevel) {
		return
	}
	rl := l.repeats
	var key repeatKey
	var hash uint64
	if rl != nil && r.Noteworthy {
		key = repeatKey{
			prefix: l.prefix(r.ClientIP),
			token:  r.Token(),
			class:  r.Class,
			action: r.Action,
			reason: r.Reason,
			dryRun: r.DryRun,

			browserDisallowed: r.BrowserDisallowed,
		}
		if !incidentalRule(r.Reason) {
			key.rule = r.Rule
		}
		if r.Reason == enforce.ReasonBlockedClient || r.Reason == enforce.ReasonTrap && !r.BlockedUntil.IsZero() {
			// Once blocked, a client is folded by its address: rotating
			// User-Agents (product tokens, classes) buys no lines.
			key.token, key.class = "", 0
		}
		hash = rl.hash(&key)
		if rl.count(&key, hash) {
			return
		}
	} else {
		rl = nil // a sampled allowed request is never folded
	}
	l.line(logger, r, rl, &key, hash)
}

// line writes r's line, and with rl starts counting its repeats under key.
// Apart from Write, whose folded repeats need none of its stack.
func (l *DecisionLog) line(logger *zap.Logger, r *record.Record, rl *repeatLog, key *repeatKey, hash uint64) {
	ce := logger.Check(zap.InfoLevel, r.Message())
	if ce == nil {
		return
	}
	e := new(Entry)
	*e = EntryOf(r)
	if e.Zone == "" {
		e.Zone = l.zone
	}
	ce.Write(zap.Inline(e))
	if rl != nil {
		rl.start(*key, hash, e, time.Now())
	}
}

// incidentalRule reports whether a decision's rule is incidental to its
// reason: the rule the path matched, where the refusal is for the client
// (a block, a rate). Repeats of such a decision are folded whatever rule
// the paths matched; for every other reason (disallowed, a trap, a reason
// added later) a different rule is a different kind of violation, logged
// at once.
func incidentalRule(r enforce.Reason) bool {
	switch r {
	case enforce.ReasonBlockedClient, enforce.ReasonRate, enforce.ReasonCrawlDelay, enforce.ReasonAddressRate, enforce.ReasonCrawlerRate:
		return true
	}
	return false
}

// writeRepeats writes the summary line of a repeat group: the fields of
// the line it follows up (its first request's), the message "N more like
// this in 10s" and the count in the repeats field, which "caddy robots
// report" adds to its totals.
func (l *DecisionLog) writeRepeats(g *repeatGroup, n int64, span time.Duration) {
	ce := l.logger.Load().Check(zap.InfoLevel, repeatMessage(n, span))
	if ce == nil {
		return
	}
	e := g.entry
	e.Repeats = n
	ce.Write(zap.Inline(&e))
}
