package caddymodule

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsguard/robotsguard/metrics"
)

// sharedMetrics registers the process's collectors (metrics.Process) on
// reg, the registry of the config being provisioned (nil: none), and
// returns them.
func sharedMetrics(reg *prometheus.Registry) (*metrics.Collectors, error) {
	m := metrics.Process()
	return m, m.Register(reg)
}

// zoneLeft drops the series of h's zone when no handler uses it any more
// (a reload removed it).
func (h *Handler) zoneLeft() {
	if _, used := states.References(stateKey(h.Zone)); !used {
		h.metrics.DropZone(h.Zone)
	}
}
