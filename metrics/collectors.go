// Package metrics holds robots_guard's Prometheus collectors
// ([Collectors]): the decisions by action, reason and User-Agent class,
// the robots.txt loads and fetches, the tracked and blocked clients per
// zone, the tarpit, the Web Bot Auth outcomes, the browser claims on
// disallowed paths and the evidence against browser claims, and the shared
// store's health, with nil-safe methods that record them (a decision's,
// from its record: [Collectors.Record]). Labels come only from closed sets (actions, reasons,
// classes, results, zone names from the config), never from User-Agents,
// IPs or paths. The collectors of the process ([Process]) are made once
// and registered on the registry of each config Caddy loads, so that they
// keep counting across reloads. The package does not import Caddy.
package metrics

import (
	"errors"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
)

// Namespace and Subsystem prefix every metric's name:
// caddy_robots_guard_….
const Namespace, Subsystem = "caddy", "robots_guard"

// Collectors are robots_guard's collectors. The methods that record are
// nil-safe: a nil *Collectors records nothing.
type Collectors struct {
	decisions  *prometheus.CounterVec
	reloads    *prometheus.CounterVec
	tracked    *prometheus.GaugeVec
	blocked    *prometheus.GaugeVec
	held       prometheus.Gauge
	overflow   prometheus.Counter
	missing    prometheus.Gauge
	dropped    *prometheus.CounterVec
	fetches    *prometheus.CounterVec
	unreach    prometheus.Gauge
	ranges     *prometheus.CounterVec // fetches of crawler ranges URLs
	rangesOK   *prometheus.GaugeVec   // their last good fetch
	signatures *prometheus.CounterVec
	fallbacks  *prometheus.CounterVec // of the shared (Redis) store
	storeUp    *prometheus.GaugeVec
	walks      *prometheus.CounterVec // browser claims on disallowed paths
	evidence   *prometheus.CounterVec // findings against browser claims
	sites      *prometheus.CounterVec // decisions by site and action
	framing    *prometheus.CounterVec // requests by their connection's HTTP stack
	// walkCounters and evidenceCounters are the children of walks (by
	// class, browser or poser, and action) and of evidence (by finding,
	// in the order of its bits), made with the collectors: counting takes
	// no lock and hashes no labels.
	walkCounters     [2][len(enforce.Actions)]prometheus.Counter
	evidenceCounters [16]prometheus.Counter // by the finding's bit (evidence.Evidence is 16 bits)
	// framingCounters are the children of framing by HTTP version and
	// stack (framingStacks), made with the collectors.
	framingCounters [len(framingProtos)][]prometheus.Counter
	// counters caches the children of decisions by action, reason (its
	// place in enforce.Reasons) and class, filled on first use, so that
	// counting a decision on the hot path takes no lock and hashes no
	// labels.
	counters [4][len(enforce.Reasons)][16]atomic.Pointer[counterRef]
}

// counterRef boxes a counter for an atomic pointer.
type counterRef struct{ prometheus.Counter }

// Process returns the collectors of the process, made on first use. Caddy
// makes a new registry for every config it loads, so collectors made per
// config would start again at zero on every "caddy reload"; these are
// registered on each config's registry instead, as Caddy does with its own
// admin and config metrics (and caddy-ratelimit with its collectors), so
// the counters keep counting across reloads and restart only with the
// process.
var Process = sync.OnceValue(New)

// New makes a new set of collectors, registered nowhere. Handlers use
// Process; a new set keeps a test's counts apart.
func New() *Collectors {
	m := &Collectors{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "decisions_total",
			Help: "Requests decided by robots_guard, by action, reason and User-Agent class.",
		}, []string{"action", "reason", "class"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "policy_reloads_total",
			Help: "robots.txt loads by result: ok; no_rules, truncated, star_lifted (installed, but every rule lifted, rules lost to the 500 KiB cut, or no rule left for *); invalid, incomplete, error, missing (a robots.txt read from a URL counts ok, no_rules, truncated, star_lifted, invalid and incomplete here, and its fetches in robots_fetches_total).",
		}, []string{"result"}),
		tracked: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "tracked_clients",
			Help: "Clients with state in the store, by zone.",
		}, []string{"zone"}),
		blocked: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "blocked_clients",
			Help: "Clients blocked, by zone, as of the last sweep (every minute).",
		}, []string{"zone"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "tarpit_held",
			Help: "Requests held in the tarpit now.",
		}),
		overflow: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "tarpit_full_total",
			Help: "Tarpit decisions refused at once because tarpit_max requests were already held.",
		}),
		missing: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "robots_missing",
			Help: "Handlers whose robots.txt is missing now: a file not found (enforcing no rules, or their last good rules), or a URL answered with a 4xx (no rules).",
		}),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "robots_fetches_total",
			Help: "Fetches of a robots.txt read from a URL, by result: ok (2xx), not_modified (304), unavailable (4xx: no rules), unreachable (5xx, 408, 429, timeouts, connection errors, redirects not followed: the last good rules stay).",
		}, []string{"result"}),
		unreach: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "robots_unreachable",
			Help: "Handlers whose robots.txt URL could not be fetched at the last try (enforcing their last good rules, or none before the first fetch).",
		}),
		ranges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "ranges_fetches_total",
			Help: "Fetches of a crawler's published IP ranges (verify ranges <token> <url>, ranges published), by URL and result: ok, not_modified, unavailable (4xx), unreachable (5xx, timeouts, connection errors), refused (empty, oversized or unparsable). Any result but ok keeps the last good list.",
		}, []string{"url", "result"}),
		rangesOK: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "ranges_fetched_timestamp_seconds",
			Help: "When the list of a ranges URL was last fetched or confirmed current (ok or not_modified), in Unix seconds: time() minus it is the age of the list in force.",
		}, []string{"url"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "blocks_dropped_total",
			Help: "Blocks not stored because the zone already held max_blocks blocked addresses (the requests were refused all the same), by zone.",
		}, []string{"zone"}),
		signatures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "signatures_total",
			Help: "Requests with Web Bot Auth signature headers, by outcome: verified, invalid, unverified.",
		}, []string{"outcome"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "store_fallbacks_total",
			Help: "Requests decided without the shared (Redis) store because it could not be reached, as on_error says, by zone.",
		}, []string{"zone"}),
		storeUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "store_up",
			Help: "1 while the zone's shared (Redis) store answers, 0 while requests are decided without it.",
		}, []string{"zone"}),
		walks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "browser_claims_disallowed_total",
			Help: "Requests whose User-Agent claims a browser for a path the robots.txt \"*\" group disallows (the reference reading, as a polite crawler reads the served file), served or not, by class (browser: the claim stands, or posers log served it; poser: decisive evidence against the claim) and action taken (allow, throttle, deny, tarpit; in dry run, the action that would have been taken).",
		}, []string{"class", "action"}),
		sites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "site_decisions_total",
			Help: "Requests decided by robots_guard, by the site it guards (its hosts, or :PORT for a site of any host; the log's site) and action: decisions_total's counts, site by site.",
		}, []string{"site", "action"}),
		evidence: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "claim_evidence_total",
			Help: "Requests whose browser claim was judged with evidence against it, once per finding (a request with two findings counts under both): tls, sec-fetch, gecko, quic and framing are decisive (a poser), tls-family, quic-family, framing-family and the sec-ch-ua findings a mismatch that changes nothing.",
		}, []string{"evidence"}),
		framing: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "framing_total",
			Help: "Requests by how their connection's HTTP stack spoke (the framing fingerprint): proto h1, h2 or h3 (none: no fingerprint, over plain HTTP, from a trusted proxy, or on a server without the robots_guard listener wrapper), and stack, the family the framing table knows it as (chromium, firefox, go, python-h2, ...), unknown or none.",
		}, []string{"proto", "stack"}),
	}
	for p, proto := range framingProtos {
		for _, s := range framingStacks() {
			m.framingCounters[p] = append(m.framingCounters[p], m.framing.WithLabelValues(proto, s))
		}
	}
	for c, class := range [...]string{"browser", "poser"} {
		for _, a := range enforce.Actions {
			m.walkCounters[c][a] = m.walks.WithLabelValues(class, a.String())
		}
	}
	for f := range evidence.AllEvidence() {
		m.evidenceCounters[bits.TrailingZeros16(uint16(f))] = m.evidence.WithLabelValues(f.Code())
	}
	return m
}

// Register registers the collectors on reg (nil: none). Handlers of one
// config share its registry, so a collector that is already registered
// there is no error.
func (m *Collectors) Register(reg *prometheus.Registry) error {
	if reg == nil {
		return nil
	}
	for _, c := range []prometheus.Collector{m.decisions, m.reloads, m.tracked, m.blocked, m.held, m.overflow, m.missing, m.dropped, m.fetches, m.unreach, m.ranges, m.rangesOK, m.signatures, m.fallbacks, m.storeUp, m.walks, m.evidence, m.sites, m.framing} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) || are.ExistingCollector != c {
				return err
			}
		}
	}
	return nil
}
