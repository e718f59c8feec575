package caddymodule

import (
	"errors"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/uaclass"
)

const metricsNamespace, metricsSubsystem = "caddy", "robots_guard"

// metrics holds the module's collectors. Labels come only from closed sets
// (actions, reasons, classes, reload results, zone names from the config),
// never from User-Agents, IPs or paths. The methods are nil-safe.
type metrics struct {
	decisions *prometheus.CounterVec
	reloads   *prometheus.CounterVec
	tracked   *prometheus.GaugeVec
	blocked   *prometheus.GaugeVec
	held      prometheus.Gauge
	overflow  prometheus.Counter
	missing   prometheus.Gauge
	dropped   *prometheus.CounterVec
	// counters caches the children of decisions by action, reason (its
	// place in cachedReasons) and class, filled on first use, so that
	// counting a decision on the hot path takes no lock and hashes no
	// labels.
	counters [4][len(cachedReasons)][16]atomic.Pointer[counterRef]
}

// counterRef boxes a counter for an atomic pointer.
type counterRef struct{ prometheus.Counter }

// cachedReasons are the reasons whose counters are cached; the engine gives
// no other.
var cachedReasons = [...]enforce.Reason{
	enforce.ReasonNone, enforce.ReasonRobotsTxt, enforce.ReasonAllowlisted, enforce.ReasonDisallowed,
	enforce.ReasonCrawlDelay, enforce.ReasonRate, enforce.ReasonAddressRate, enforce.ReasonBlockedClient, enforce.ReasonTrap,
	enforce.ReasonBadAgent, enforce.ReasonImpostor, enforce.ReasonBlockedClass, enforce.ReasonInvalid, enforce.ReasonContentUsage,
}

// newMetrics registers the collectors on reg. Caddy makes a new registry
// for every config load, and handlers of one config share it, so an
// identical collector that is already registered is reused.
func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "decisions_total",
			Help: "Requests decided by robots_guard, by action, reason and User-Agent class.",
		}, []string{"action", "reason", "class"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "policy_reloads_total",
			Help: "robots.txt loads by result: ok, invalid, incomplete, error, missing.",
		}, []string{"result"}),
		tracked: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "tracked_clients",
			Help: "Clients with state in the store, by zone.",
		}, []string{"zone"}),
		blocked: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "blocked_clients",
			Help: "Clients blocked, by zone, as of the last sweep (every minute).",
		}, []string{"zone"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "tarpit_held",
			Help: "Requests held in the tarpit now.",
		}),
		overflow: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "tarpit_full_total",
			Help: "Tarpit decisions refused at once because tarpit_max requests were already held.",
		}),
		missing: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "robots_missing",
			Help: "Handlers whose robots.txt file is missing now (enforcing no rules, or their last good rules).",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "blocks_dropped_total",
			Help: "Blocks not stored because the zone already held max_blocks blocked addresses (the requests were refused all the same), by zone.",
		}, []string{"zone"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.decisions, err = registerOrExisting(reg, m.decisions); err != nil {
		return nil, err
	}
	if m.reloads, err = registerOrExisting(reg, m.reloads); err != nil {
		return nil, err
	}
	if m.tracked, err = registerOrExisting(reg, m.tracked); err != nil {
		return nil, err
	}
	if m.blocked, err = registerOrExisting(reg, m.blocked); err != nil {
		return nil, err
	}
	if m.held, err = registerOrExisting(reg, m.held); err != nil {
		return nil, err
	}
	if m.overflow, err = registerOrExisting(reg, m.overflow); err != nil {
		return nil, err
	}
	if m.missing, err = registerOrExisting(reg, m.missing); err != nil {
		return nil, err
	}
	if m.dropped, err = registerOrExisting(reg, m.dropped); err != nil {
		return nil, err
	}
	return m, nil
}

// registerOrExisting registers c on reg, or returns the identical collector
// that is already registered.
func registerOrExisting[C prometheus.Collector](reg *prometheus.Registry, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}

func (m *metrics) decision(d *enforce.Decision, class uaclass.Class) {
	if m == nil {
		return
	}
	r := 0
	for r < len(cachedReasons) && cachedReasons[r] != d.Reason {
		r++
	}
	if int(d.Action) >= len(m.counters) || r == len(cachedReasons) || int(class) >= len(m.counters[0][0]) {
		m.decisionCounter(d, class).Inc()
		return
	}
	slot := &m.counters[d.Action][r][class]
	c := slot.Load()
	if c == nil {
		// Racing first uses store the same child.
		c = &counterRef{m.decisionCounter(d, class)}
		slot.Store(c)
	}
	c.Inc()
}

// decisionCounter returns the child of decisions for d and class.
func (m *metrics) decisionCounter(d *enforce.Decision, class uaclass.Class) prometheus.Counter {
	reason := string(d.Reason)
	if reason == "" {
		reason = "none"
	}
	return m.decisions.WithLabelValues(d.Action.String(), reason, class.String())
}

func (m *metrics) reload(result string) {
	if m == nil {
		return
	}
	m.reloads.WithLabelValues(result).Inc()
}

// setTracked sets the zone's tracked- and blocked-clients gauges.
func (m *metrics) setTracked(zone string, tracked, blocked int) {
	if m == nil {
		return
	}
	m.tracked.WithLabelValues(zone).Set(float64(tracked))
	m.blocked.WithLabelValues(zone).Set(float64(blocked))
}

// tarpit records a request entering (+1) or leaving (-1) the tarpit, or
// (0) one refused at once because the tarpit was full.
func (m *metrics) tarpit(delta int) {
	if m == nil {
		return
	}
	if delta == 0 {
		m.overflow.Inc()
		return
	}
	m.held.Add(float64(delta))
}

// robotsMissing records a robots.txt file going missing (+1) or found
// again (-1).
func (m *metrics) robotsMissing(delta int) {
	if m == nil {
		return
	}
	m.missing.Add(float64(delta))
}

// blockDropped counts a block the zone's store had no room for.
func (m *metrics) blockDropped(zone string) {
	if m == nil {
		return
	}
	m.dropped.WithLabelValues(zone).Inc()
}
