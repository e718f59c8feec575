package caddymodule

import (
	"errors"
	"sync"
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
	fetches   *prometheus.CounterVec
	unreach   prometheus.Gauge
	// signatures counts Web Bot Auth outcomes (webbotauth.go).
	signatures *prometheus.CounterVec
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

// processMetrics are the collectors of the Caddy process, made once. Caddy
// makes a new registry for every config it loads, so collectors made per
// config would start again at zero on every "caddy reload"; these are
// registered on each config's registry instead, as Caddy does with its own
// admin and config metrics (and caddy-ratelimit with its collectors), so the
// counters keep counting across reloads and restart only with the process.
var processMetrics = sync.OnceValue(makeMetrics)

// sharedMetrics registers the process's collectors on reg, the registry of
// the config being provisioned (nil: none), and returns them.
func sharedMetrics(reg *prometheus.Registry) (*metrics, error) {
	return processMetrics().register(reg)
}

// newMetrics makes a new set of collectors and registers them on reg (nil:
// none). Handlers use sharedMetrics; a new set keeps a test's counts apart.
func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	return makeMetrics().register(reg)
}

// makeMetrics makes the collectors.
func makeMetrics() *metrics {
	return &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "decisions_total",
			Help: "Requests decided by robots_guard, by action, reason and User-Agent class.",
		}, []string{"action", "reason", "class"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "policy_reloads_total",
			Help: "robots.txt loads by result: ok, invalid, incomplete, error, missing (a robots.txt read from a URL counts ok, invalid and incomplete here, and its fetches in robots_fetches_total).",
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
			Help: "Handlers whose robots.txt is missing now: a file not found (enforcing no rules, or their last good rules), or a URL answered with a 4xx (no rules).",
		}),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "robots_fetches_total",
			Help: "Fetches of a robots.txt read from a URL, by result: ok (2xx), not_modified (304), unavailable (4xx: no rules), unreachable (5xx, 408, 429, timeouts, connection errors, redirects not followed: the last good rules stay).",
		}, []string{"result"}),
		unreach: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "robots_unreachable",
			Help: "Handlers whose robots.txt URL could not be fetched at the last try (enforcing their last good rules, or none before the first fetch).",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "blocks_dropped_total",
			Help: "Blocks not stored because the zone already held max_blocks blocked addresses (the requests were refused all the same), by zone.",
		}, []string{"zone"}),
		signatures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "signatures_total",
			Help: "Requests with Web Bot Auth signature headers, by outcome: verified, invalid, unverified.",
		}, []string{"outcome"}),
	}
}

// register registers m's collectors on reg (nil: none). Handlers of one
// config share its registry, so a collector that is already registered
// there is no error.
func (m *metrics) register(reg *prometheus.Registry) (*metrics, error) {
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.decisions, m.reloads, m.tracked, m.blocked, m.held, m.overflow, m.missing, m.dropped, m.fetches, m.unreach, m.signatures} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) || are.ExistingCollector != c {
				return nil, err
			}
		}
	}
	return m, nil
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

// zoneLeft drops the series of a zone that no handler uses any more (a
// reload removed it), so that the process's collectors do not report its
// last figures for as long as Caddy runs; a zone that comes back starts
// from zero, as its state does.
func (m *metrics) zoneLeft(zone string) {
	if m == nil {
		return
	}
	if _, used := states.References(stateKey(zone)); used {
		return
	}
	m.tracked.DeleteLabelValues(zone)
	m.blocked.DeleteLabelValues(zone)
	m.dropped.DeleteLabelValues(zone)
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

// fetch counts a fetch of a robots.txt URL by its result.
func (m *metrics) fetch(result string) {
	if m == nil {
		return
	}
	m.fetches.WithLabelValues(result).Inc()
}

// robotsUnreachable records a robots.txt URL becoming unreachable (+1) or
// fetched again (-1).
func (m *metrics) robotsUnreachable(delta int) {
	if m == nil {
		return
	}
	m.unreach.Add(float64(delta))
}
