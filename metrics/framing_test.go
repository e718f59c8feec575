package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestFramingMetrics: requests are counted by their fingerprint's HTTP
// version and the family the table names, unknown and none apart; every
// series exists from the start; counting allocates nothing.
func TestFramingMetrics(t *testing.T) {
	m := New()
	m.Framing("h2:2:0;4:4194304;5:16384;6:10485760|1073741824|0|a,m,p,s|0", "go")
	m.Framing("h2:1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p|1:0:256", "chromium")
	m.Framing("h1:1:Host,X", "")
	m.Framing("", "")
	m.Framing("h3:", "quic-go")
	m.Framing("h2:x", "not-a-family")
	for labels, want := range map[[2]string]float64{{"h2", "go"}: 1, {"h2", "chromium"}: 1, {"h1", "unknown"}: 1, {"none", "none"}: 1,
		{"h3", "quic-go"}: 1, {"h2", "unknown"}: 1, {"h1", "go"}: 0} {
		if got := testutil.ToFloat64(m.framing.WithLabelValues(labels[0], labels[1])); got != want {
			t.Errorf("framing_total%v = %v, want %v", labels, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.framing); n != 4*len(framingStacks()) {
		t.Errorf("%d framing_total series, want %d", n, 4*len(framingStacks()))
	}
	if n := testing.AllocsPerRun(100, func() { m.Framing("h2:x", "go") }); n != 0 {
		t.Errorf("Framing allocates %v times", n)
	}
}
