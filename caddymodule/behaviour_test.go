package caddymodule

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/robotsguard/robotsguard/evidence/behaviour"
	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/review"
)

// TestIntegrationBehaviour (issue 37): a browser claim whose navigations
// start as a crawler's (each a typed address: Sec-Fetch-Site none) is
// served until its 4th distinct disallowed page, then held as a poser:
// refused with X-Robots-Guard-Evidence: behaviour and the rule, and the
// decision log, the metrics and the review page say so, with what it did.
// A person's clicks from the same build on another address are served.
func TestIntegrationBehaviour(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy")
	}
	s := newSite(t, siteRobots)
	decisions := filepath.Join(t.TempDir(), "decisions.log")
	tester := caddytest.NewTester(t)
	tester.InitServer(fmt.Sprintf(`{
	skip_install_trust
	admin localhost:2999
	http_port 9080
	https_port 9443
	grace_period 1ns
	servers {
		trusted_proxies static 127.0.0.1/32
	}
	log rg {
		output file %s
		format json
		include http.handlers.robots_guard
	}
}
http://localhost:9080 {
	robots_guard {
		robots %s
		zone %s
		verify off
		log_repeats 0
	}
	reverse_proxy %s
}
`, decisions, s.robots, s.zone, strings.TrimPrefix(s.backend.URL, "http://")), "caddyfile")
	before := adminMetrics(t)
	typed := http.Header{"User-Agent": {uaChrome}, "Accept": {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
		"Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-User": {"?1"}, "Sec-Fetch-Dest": {"document"},
		"Sec-Ch-Ua": {`"Chromium";v="156", "Google Chrome";v="156", "Not-A.Brand";v="99"`}, "Sec-Ch-Ua-Mobile": {"?0"}, "Sec-Ch-Ua-Platform": {`"Windows"`},
		"X-Forwarded-For": {"192.0.2.10"}}
	const base = "http://localhost:9080"
	served := 0
	var refusal *http.Response
	for i := range 4 {
		for _, path := range []string{fmt.Sprintf("/p%d.html", i), fmt.Sprintf("/private/%d.html", i)} {
			// A crawler's pace, one page after another: pages opened
			// less than behaviour.BurstGap apart would be one burst, a
			// person's folder opened at once.
			time.Sleep(2 * behaviour.BurstGap)
			resp, body := fetch(t, tester, base, path, typed)
			switch {
			case resp.StatusCode == 200 && body == "backend:"+path:
				served++
			case resp.StatusCode == 403 && refusal == nil:
				refusal = resp
			default:
				t.Errorf("%s: %d %q", path, resp.StatusCode, body)
			}
		}
	}
	if served != 7 || refusal == nil {
		t.Fatalf("%d of 8 pages served, refusal %v: want 7 and the 4th disallowed page refused", served, refusal)
	}
	if ev, rule := refusal.Header.Get("X-Robots-Guard-Evidence"), refusal.Header.Get("X-Robots-Guard-Rule"); ev != "behaviour" || !strings.Contains(rule, "Disallow: /private/") {
		t.Errorf("the refusal: evidence %q, rule %q", ev, rule)
	}
	// A person's clicks, the same browser build on another address: served.
	clicked := typed.Clone()
	clicked.Set("Sec-Fetch-Site", "same-origin")
	clicked.Set("X-Forwarded-For", "192.0.2.99")
	for i := range 10 {
		if resp, body := fetch(t, tester, base, fmt.Sprintf("/private/click%d.html", i), clicked); resp.StatusCode != 200 {
			t.Errorf("a click: %d %q, evidence %q", resp.StatusCode, body, resp.Header.Get("X-Robots-Guard-Evidence"))
		}
	}
	after := adminMetrics(t)
	checkCounted(t, before, after, map[string]float64{
		`caddy_robots_guard_claim_evidence_total{evidence="behaviour"}`:                      1,
		`caddy_robots_guard_browser_claims_disallowed_total{action="deny",class="poser"}`:    1,
		`caddy_robots_guard_browser_claims_disallowed_total{action="allow",class="browser"}`: 3 + 10,
	})

	var log []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if log, _ = os.ReadFile(decisions); bytes.Contains(log, []byte(`"behaviour"`)) || time.Now().After(deadline) {
			break
		}
	}
	_, _, entries := reportOf(t, string(log))
	var held *report.Entry
	for i, e := range entries {
		if e.Evidence != "" && held == nil {
			held = &entries[i]
		}
	}
	if held == nil || held.Class != "poser" || held.Evidence != "behaviour" || held.Action != "deny" || held.URI != "/private/3.html" ||
		!strings.Contains(held.EvidenceReason, "behaviour: it opened 8 pages in 10s with no page of the site behind them (4 of them disallowed), among 8 navigations") {
		t.Errorf("the held client's log line: %+v\n%s", held, log)
	}
	var view review.View
	adminJSON(t, "GET", "/robots_guard/stats?zone="+s.zone, "", http.StatusOK, &view)
	if len(view.Zones) != 1 || view.Zones[0].BrowserDisallowed.Evidence["behaviour"] != 1 || view.Zones[0].BrowserDisallowed.ByClass["poser"] != (review.ClaimCount{Refused: 1}) {
		t.Errorf("review: %+v", view.Zones)
	}
	if held != nil {
		t.Logf("the log: %s", held.EvidenceReason)
	}
}
