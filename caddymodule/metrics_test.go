package caddymodule

import (
	"context"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"
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
	second.metrics.setTracked(zone, second.shared.store.Len(), 4)
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
