package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsguard/robotsguard/enforce"
)

// SiteDecisions counts one site's decisions by action, in
// caddy_robots_guard_site_decisions_total{site, action}: every decision
// names its site in the metrics too. Its children are made once, so
// counting takes no lock and hashes no labels.
type SiteDecisions struct {
	byAction [len(enforce.Actions)]prometheus.Counter
}

// Site returns the decision counters of a site; nil (counting nothing)
// for nil collectors.
func (m *Collectors) Site(site string) *SiteDecisions {
	if m == nil {
		return nil
	}
	s := &SiteDecisions{}
	for _, a := range enforce.Actions {
		s.byAction[a] = m.sites.WithLabelValues(site, a.String())
	}
	return s
}

// Count counts one decision of the site.
func (s *SiteDecisions) Count(a enforce.Action) {
	if s == nil || int(a) >= len(s.byAction) {
		return
	}
	s.byAction[a].Inc()
}
