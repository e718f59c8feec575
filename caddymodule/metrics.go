package caddymodule

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsguard/robotsguard/metrics"
)

// metricsNamespace and metricsSubsystem prefix the names of the store's
// collectors (store.go) as they do the others'.
const metricsNamespace, metricsSubsystem = metrics.Namespace, metrics.Subsystem

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
