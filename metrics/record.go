package metrics

import (
	"math/bits"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/framing"
	"github.com/robotsguard/robotsguard/record"
	"github.com/robotsguard/robotsguard/signature"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Record counts a decision from its record: [Collectors.Decision] by its
// client's class, what its browser claim showed ([Collectors.Claim], by
// the record's rules), a block the store could not keep, and its
// connection's framing ([Collectors.Framing]). It takes no lock and
// allocates nothing once the decision's series was counted before.
func (m *Collectors) Record(r *record.Record) {
	if m == nil {
		return
	}
	m.decision(r.Action, r.Reason, r.Class)
	m.findings(r.Evidence.Evidence)
	if c, ok := r.Claim(); ok {
		m.walk(c, r.Action)
	}
	if r.BlockDropped {
		m.BlockDropped(r.Zone)
	}
	m.Framing(r.Framing, r.FramingStack)
}

// framingProtos are the values of framing_total's proto label, by the
// fingerprint's first two characters.
var framingProtos = [...]string{"none", "h1", "h2", "h3"}

// framingStacks are the values of its stack label: none, unknown, and the
// framing table's families.
var framingStacks = sync.OnceValue(func() []string {
	return append([]string{"none", "unknown"}, framing.Builtin().Families()...)
})

// framingIndex maps a family to its place in framingStacks.
var framingIndex = sync.OnceValue(func() map[string]int {
	m := map[string]int{}
	for i, s := range framingStacks() {
		m[s] = i
	}
	return m
})

// Framing counts a request by its connection's framing fingerprint
// (record.Record.Framing, "" for none) and the family the table knows
// its stack as ("" for unknown). It takes no lock and allocates nothing.
func (m *Collectors) Framing(fingerprint, family string) {
	if m == nil {
		return
	}
	p, s := 0, 0
	if len(fingerprint) >= 2 && fingerprint[0] == 'h' && fingerprint[1] >= '1' && fingerprint[1] <= '3' {
		p, s = int(fingerprint[1]-'0'), 1
		if i, ok := framingIndex()[family]; ok && family != "" {
			s = i
		}
	}
	m.framingCounters[p][s].Inc()
}

// Decision counts a decision for a client of class. It takes no lock and
// allocates nothing once the series was counted before.
func (m *Collectors) Decision(d *enforce.Decision, class uaclass.Class) {
	if m == nil {
		return
	}
	m.decision(d.Action, d.Reason, class)
}

func (m *Collectors) decision(action enforce.Action, reason enforce.Reason, class uaclass.Class) {
	r := 0
	for r < len(enforce.Reasons) && enforce.Reasons[r] != reason {
		r++
	}
	if int(action) >= len(m.counters) || r == len(enforce.Reasons) || int(class) >= len(m.counters[0][0]) {
		m.decisionCounter(action, reason, class).Inc()
		return
	}
	slot := &m.counters[action][r][class]
	c := slot.Load()
	if c == nil {
		// Racing first uses store the same child.
		c = &counterRef{m.decisionCounter(action, reason, class)}
		slot.Store(c)
	}
	c.Inc()
}

// decisionCounter returns the child of decisions for action, reason and
// class.
func (m *Collectors) decisionCounter(action enforce.Action, reason enforce.Reason, class uaclass.Class) prometheus.Counter {
	name := string(reason)
	if name == "" {
		name = "none"
	}
	return m.decisions.WithLabelValues(action.String(), name, class.String())
}

// Reload counts a load of the robots.txt by its result: ok; no_rules,
// truncated or star_lifted for a file installed that takes rules away
// (source.ResultNoRules); invalid, incomplete, error or missing.
func (m *Collectors) Reload(result string) {
	if m == nil {
		return
	}
	m.reloads.WithLabelValues(result).Inc()
}

// SetTracked sets the zone's tracked- and blocked-clients gauges.
func (m *Collectors) SetTracked(zone string, tracked, blocked int) {
	if m == nil {
		return
	}
	m.tracked.WithLabelValues(zone).Set(float64(tracked))
	m.blocked.WithLabelValues(zone).Set(float64(blocked))
}

// DropZone drops the series of a zone that no handler uses any more (a
// reload removed it), so that the process's collectors do not report its
// last figures for as long as Caddy runs; a zone that comes back starts
// from zero, as its state does.
func (m *Collectors) DropZone(zone string) {
	if m == nil {
		return
	}
	m.tracked.DeleteLabelValues(zone)
	m.blocked.DeleteLabelValues(zone)
	m.dropped.DeleteLabelValues(zone)
}

// Tarpit records a request entering (+1) or leaving (-1) the tarpit, or
// (0) one refused at once because the tarpit was full.
func (m *Collectors) Tarpit(delta int) {
	if m == nil {
		return
	}
	if delta == 0 {
		m.overflow.Inc()
		return
	}
	m.held.Add(float64(delta))
}

// RobotsMissing records a robots.txt going missing (+1) or found again
// (-1).
func (m *Collectors) RobotsMissing(delta int) {
	if m == nil {
		return
	}
	m.missing.Add(float64(delta))
}

// BlockDropped counts a block the zone's store had no room for.
func (m *Collectors) BlockDropped(zone string) {
	if m == nil {
		return
	}
	m.dropped.WithLabelValues(zone).Inc()
}

// Fetch counts a fetch of a robots.txt URL by its result.
func (m *Collectors) Fetch(result string) {
	if m == nil {
		return
	}
	m.fetches.WithLabelValues(result).Inc()
}

// RangesFetch counts a fetch of a crawler ranges URL by its result, and
// records when a good one (ok, not_modified) was made.
func (m *Collectors) RangesFetch(url, result string) {
	if m == nil {
		return
	}
	m.ranges.WithLabelValues(url, result).Inc()
	if result == "ok" || result == "not_modified" {
		m.rangesOK.WithLabelValues(url).SetToCurrentTime()
	}
}

// RobotsUnreachable records a robots.txt URL becoming unreachable (+1) or
// fetched again (-1).
func (m *Collectors) RobotsUnreachable(delta int) {
	if m == nil {
		return
	}
	m.unreach.Add(float64(delta))
}

// Signatures returns the count of requests with Web Bot Auth signature
// headers by outcome (verified, invalid, unverified), for
// signature.NewAgents: its counters are looked up once, so that the hot
// path hashes no labels. Of a nil m, it counts nothing.
func (m *Collectors) Signatures() func(signature.Outcome) {
	var counters [signature.Unverified + 1]prometheus.Counter
	if m != nil {
		for _, o := range []signature.Outcome{signature.Verified, signature.Invalid, signature.Unverified} {
			counters[o] = m.signatures.WithLabelValues(o.String())
		}
	}
	return func(o signature.Outcome) {
		if int(o) < len(counters) && counters[o] != nil {
			counters[o].Inc()
		}
	}
}

// StoreFallback counts a request of the zone decided without the shared
// (Redis) store.
func (m *Collectors) StoreFallback(zone string) {
	if m != nil {
		m.fallbacks.WithLabelValues(zone).Inc()
	}
}

// SetStoreUp records whether the zone's shared (Redis) store answers.
func (m *Collectors) SetStoreUp(zone string, up bool) {
	if m == nil {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	m.storeUp.WithLabelValues(zone).Set(v)
}

// Claim counts what a request's browser claim showed: each finding of the
// evidence judged against it (ev, the request's evidence.Verdict's; none
// for a request not judged), and, for a decision marked
// BrowserDisallowed, the walk onto a disallowed path by class (poser for
// class poser or decisive evidence that posers "log" served, else browser)
// and action (record.ClaimOf). It takes no lock and allocates nothing.
func (m *Collectors) Claim(d *enforce.Decision, class uaclass.Class, ev evidence.Evidence) {
	if m == nil {
		return
	}
	m.findings(ev)
	if d.BrowserDisallowed {
		m.walk(record.ClaimOf(class, d.Evidence, record.OutcomeOf(d.Action, d.Reason)), d.Action)
	}
}

// findings counts each finding of ev.
func (m *Collectors) findings(ev evidence.Evidence) {
	for f := range ev.Each() {
		if c := m.evidenceCounters[bits.TrailingZeros16(uint16(f))]; c != nil {
			c.Inc()
		}
	}
}

// walk counts a browser's claim on a disallowed path, by its class and
// the decision's action.
func (m *Collectors) walk(c record.Claim, action enforce.Action) {
	if int(action) >= len(m.walkCounters[0]) {
		return
	}
	i := 0
	if c.Class == uaclass.Poser {
		i = 1
	}
	m.walkCounters[i][action].Inc()
}
