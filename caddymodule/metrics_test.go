package caddymodule

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsguard/robotsguard/metrics"
)

// gathered returns the value of the series name{labels} in reg, and whether
// reg has it.
func gathered(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue series
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue(), true
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// metricValue returns the value of m's series name{labels}: name without
// the caddy_robots_guard_ prefix, labels as pairs of name and value; 0
// when m has no such series.
func metricValue(m *metrics.Collectors, name string, labels ...string) float64 {
	reg := prometheus.NewRegistry()
	if err := m.Register(reg); err != nil {
		panic(err)
	}
	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		if f.GetName() != metrics.Namespace+"_"+metrics.Subsystem+"_"+name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range s.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if got[labels[i]] != labels[i+1] {
					continue series
				}
			}
			if s.GetCounter() != nil {
				return s.GetCounter().GetValue()
			}
			return s.GetGauge().GetValue()
		}
	}
	return 0
}

// TestMetricsSurviveReload: a reload as Caddy does it (a new context with
// a new metrics registry, the new handler provisioned before the old one
// is cleaned up) keeps the counts: the new registry reports the requests
// of both configs. A zone that the next config drops loses its series.
func TestMetricsSurviveReload(t *testing.T) {
	const zone = "metrics-reload"
	deny := map[string]string{"action": "deny", "reason": "trap", "class": "browser"}
	load := func() (*Handler, *prometheus.Registry, func()) {
		h := &Handler{Zone: zone, Verify: &VerifyConfig{Disabled: true}, Traps: []string{"/trap/"}}
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		if err := h.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		return h, ctx.GetMetricsRegistry(), func() { _ = h.Cleanup(); cancel() }
	}
	first, reg1, unload1 := load()
	before, _ := gathered(t, reg1, "caddy_robots_guard_decisions_total", deny)
	for _, ip := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
		if code := serve(first, ip, uaFirefoxState, "/trap/"); code != 403 {
			t.Fatalf("trap: %d", code)
		}
	}
	if got, _ := gathered(t, reg1, "caddy_robots_guard_decisions_total", deny); got != before+3 {
		t.Fatalf("before the reload: %v, want %v", got, before+3)
	}

	second, reg2, unload2 := load()
	unload1()
	if reg2 == reg1 {
		t.Fatal("the reload did not make a new registry")
	}
	if got, ok := gathered(t, reg2, "caddy_robots_guard_decisions_total", deny); got != before+3 || !ok {
		t.Errorf("after the reload, before any request: %v (found %v), want %v", got, ok, before+3)
	}
	serve(second, "192.0.2.4", uaFirefoxState, "/trap/")
	if got, _ := gathered(t, reg2, "caddy_robots_guard_decisions_total", deny); got != before+4 {
		t.Errorf("after the reload: %v, want %v", got, before+4)
	}
	second.metrics.SetTracked(zone, second.shared.store.Len(), 4)
	if got, ok := gathered(t, reg2, "caddy_robots_guard_blocked_clients", map[string]string{"zone": zone}); got != 4 || !ok {
		t.Errorf("blocked_clients %v (found %v), want 4", got, ok)
	}

	// The zone goes with its last handler; so do its series.
	unload2()
	if got, ok := gathered(t, reg2, "caddy_robots_guard_blocked_clients", map[string]string{"zone": zone}); ok {
		t.Errorf("blocked_clients of a zone no config uses: %v", got)
	}
	if got, _ := gathered(t, reg2, "caddy_robots_guard_decisions_total", deny); got != before+4 {
		t.Errorf("decisions after the zone left: %v, want %v", got, before+4)
	}
}

// seriesValue returns the value of a series (its name and labels as
// Prometheus writes them) in a /metrics page, and whether the page has it.
func seriesValue(page, series string) (float64, bool) {
	for _, line := range strings.Split(page, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// checkCounted checks that each series went up by its count between two
// /metrics pages. The counters are the process's, so a test counts what
// its own requests added.
func checkCounted(t *testing.T, before, after string, counts map[string]float64) {
	t.Helper()
	for series, want := range counts {
		was, _ := seriesValue(before, series)
		is, ok := seriesValue(after, series)
		if !ok || is-was != want {
			t.Errorf("%s went from %v to %v (found %v), want %v more", series, was, is, ok, want)
		}
	}
}
