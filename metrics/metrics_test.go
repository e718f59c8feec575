package metrics

import (
	"math/bits"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/signature"
	"github.com/robotsguard/robotsguard/uaclass"
)

// TestMetrics: collectors register on a fresh registry, register again
// without error for a second handler of the same config, and are
// nil-safe.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := m.Register(reg); err != nil { // a second handler in the same config
		t.Fatalf("second registration: %v", err)
	}
	if err := New().Register(reg); err == nil {
		t.Error("other collectors of the same names registered")
	}
	d := enforce.Decision{Action: enforce.Deny, Reason: enforce.ReasonDisallowed}
	m.Decision(&d, uaclass.AI)
	m.Decision(&d, uaclass.AI)
	m.Decision(&enforce.Decision{}, uaclass.Browser)
	m.Decision(&enforce.Decision{Action: enforce.Tarpit, Reason: enforce.ReasonBlockedClient}, uaclass.Browser)
	m.Decision(&enforce.Decision{Action: enforce.Tarpit, Reason: enforce.ReasonBlockedClient}, uaclass.Script)
	m.Decision(&enforce.Decision{Action: enforce.Deny, Reason: "some_new_reason"}, uaclass.AI) // not cached
	m.Reload("ok")
	m.SetTracked("default", 42, 3)
	if got := testutil.ToFloat64(m.decisions.WithLabelValues("deny", "disallowed", "ai")); got != 2 {
		t.Errorf("deny/disallowed/ai = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.decisions.WithLabelValues("allow", "none", "browser")); got != 1 {
		t.Errorf("allow/none/browser = %v", got)
	}
	for _, labels := range [][]string{{"tarpit", "blocked_client", "browser"}, {"tarpit", "blocked_client", "script"}, {"deny", "some_new_reason", "ai"}} {
		if got := testutil.ToFloat64(m.decisions.WithLabelValues(labels...)); got != 1 {
			t.Errorf("%v = %v, want 1", labels, got)
		}
	}
	count := m.Signatures()
	for _, o := range []signature.Outcome{signature.Invalid, signature.Invalid, signature.Verified, signature.None, 9} {
		count(o)
	}
	if got := testutil.ToFloat64(m.signatures.WithLabelValues("invalid")); got != 2 {
		t.Errorf("signatures invalid = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.signatures.WithLabelValues("verified")); got != 1 {
		t.Errorf("signatures verified = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.reloads.WithLabelValues("ok")); got != 1 {
		t.Errorf("reloads ok = %v", got)
	}
	if got := testutil.ToFloat64(m.tracked.WithLabelValues("default")); got != 42 {
		t.Errorf("tracked = %v", got)
	}
	if got := testutil.ToFloat64(m.blocked.WithLabelValues("default")); got != 3 {
		t.Errorf("blocked = %v", got)
	}
	var nilMetrics *Collectors // a handler that was never provisioned
	nilMetrics.Decision(&d, uaclass.AI)
	nilMetrics.Reload("ok")
	nilMetrics.SetTracked("x", 1, 0)
	nilMetrics.Signatures()(signature.Verified)
}

// TestClaimMetrics (issue 25): browser claims on disallowed paths are
// counted by class and action, a served poser of posers "log" as a poser;
// each finding against a claim once; a decision not marked, or a request
// without evidence, counts nothing; counting allocates nothing.
func TestClaimMetrics(t *testing.T) {
	m := New()
	reg := prometheus.NewRegistry()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	walk := enforce.Decision{BrowserDisallowed: true}
	m.Claim(&walk, uaclass.Browser, 0)
	m.Claim(&walk, uaclass.Browser, evidence.SecCHUA)
	m.Claim(&enforce.Decision{}, uaclass.Browser, 0) // an allowed path
	m.Claim(&enforce.Decision{Action: enforce.Deny, Reason: enforce.ReasonDisallowed, BrowserDisallowed: true, Evidence: evidence.SecFetch}, uaclass.Poser, evidence.SecFetch)
	m.Claim(&enforce.Decision{BrowserDisallowed: true, Evidence: evidence.TLSStack | evidence.SecFetch}, uaclass.Browser, evidence.TLSStack|evidence.SecFetch) // posers log
	m.Claim(&enforce.Decision{Action: enforce.Deny, Reason: enforce.ReasonDisallowed}, uaclass.OtherBot, 0)
	for labels, want := range map[[2]string]float64{{"browser", "allow"}: 2, {"poser", "deny"}: 1, {"poser", "allow"}: 1, {"browser", "deny"}: 0, {"poser", "tarpit"}: 0} {
		if got := testutil.ToFloat64(m.walks.WithLabelValues(labels[0], labels[1])); got != want {
			t.Errorf("browser_claims_disallowed_total%v = %v, want %v", labels, got, want)
		}
	}
	for code, want := range map[string]float64{"sec-fetch": 2, "tls": 1, "sec-ch-ua": 1, "gecko": 0, "tls-family": 0} {
		if got := testutil.ToFloat64(m.evidence.WithLabelValues(code)); got != want {
			t.Errorf("claim_evidence_total{evidence=%q} = %v, want %v", code, got, want)
		}
	}
	// Every series exists from the start, at 0: 2 classes × 4 actions, 13
	// findings (tls to behaviour: every code evidence knows).
	if n := testutil.CollectAndCount(m.walks); n != 8 {
		t.Errorf("%d browser_claims_disallowed_total series, want 8", n)
	}
	if n := testutil.CollectAndCount(m.evidence); n != 13 || n != bits.OnesCount16(uint16(evidence.All)) {
		t.Errorf("%d claim_evidence_total series, want 13", n)
	}
	d := enforce.Decision{Action: enforce.Deny, BrowserDisallowed: true, Evidence: evidence.SecFetch}
	if n := testing.AllocsPerRun(100, func() { m.Claim(&d, uaclass.Poser, evidence.SecFetch|evidence.SecCHUA) }); n != 0 {
		t.Errorf("Claim allocates %v times", n)
	}
	var nilMetrics *Collectors
	nilMetrics.Claim(&d, uaclass.Poser, evidence.SecFetch)
}
