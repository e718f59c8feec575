package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/robotsguard/robotsguard/enforce"
)

// TestSiteDecisions: each site's decisions are counted under its name and
// action, apart from the other sites'; nil collectors count nothing.
func TestSiteDecisions(t *testing.T) {
	m := New()
	a, b := m.Site("a.example"), m.Site(":8080")
	a.Count(enforce.Deny)
	a.Count(enforce.Deny)
	b.Count(enforce.Allow)
	if got := testutil.ToFloat64(m.sites.WithLabelValues("a.example", "deny")); got != 2 {
		t.Errorf("a.example deny: %v", got)
	}
	if got := testutil.ToFloat64(m.sites.WithLabelValues(":8080", "allow")); got != 1 {
		t.Errorf(":8080 allow: %v", got)
	}
	if got := testutil.ToFloat64(m.sites.WithLabelValues(":8080", "deny")); got != 0 {
		t.Errorf(":8080 deny: %v", got)
	}
	var none *Collectors
	none.Site("x").Count(enforce.Deny) // no panic
	if n := testing.AllocsPerRun(100, func() { a.Count(enforce.Throttle) }); n != 0 {
		t.Errorf("counting allocates %v", n)
	}
}
