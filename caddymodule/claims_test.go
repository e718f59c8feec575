package caddymodule

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/review"
)

// TestIntegrationBrowserClaims (issue 25, "visible even when served"): a
// browser's requests (Chrome's User-Agent and the headers Chrome sends)
// for a path robots.txt disallows are served with the backend's content,
// and yet counted in the metrics, logged with browser_disallowed (their
// repeat folded by log_repeats), and shown by the report and the review
// JSON; real curl posing as Chrome over HTTPS is refused and counted as a
// poser's, with its evidence; a browser on a path the file allows is
// neither logged nor counted.
func TestIntegrationBrowserClaims(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl")
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
	log rg {
		output file %s
		format json
		include http.handlers.robots_guard
	}
}
https://localhost:9443, http://localhost:9080 {
	tls internal
	robots_guard {
		robots %s
		zone %s
		verify off
		log_repeats 1s
	}
	reverse_proxy %s
}
`, decisions, s.robots, s.zone, strings.TrimPrefix(s.backend.URL, "http://")), "caddyfile")
	before := adminMetrics(t)

	// Chrome's navigation, over plain HTTP (where a Go client's TLS
	// handshake cannot give it away): a person's browser.
	chrome := http.Header{"User-Agent": {uaChrome}, "Accept": {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
		"Accept-Language": {"en-US,en;q=0.9"}, "Upgrade-Insecure-Requests": {"1"}, "Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"},
		"Sec-Fetch-User": {"?1"}, "Sec-Fetch-Dest": {"document"}, "Sec-Ch-Ua": {`"Chromium";v="156", "Google Chrome";v="156", "Not-A.Brand";v="99"`},
		"Sec-Ch-Ua-Mobile": {"?0"}, "Sec-Ch-Ua-Platform": {`"Windows"`}}
	const plain = "http://localhost:9080"
	for _, path := range []string{"/private/report.html", "/private/report.html", "/private/press/release.html"} {
		resp, body := fetch(t, tester, plain, path, chrome)
		expectStatus(t, "a browser's "+path, resp, body, 200)
		if body != "backend:"+path || resp.Header.Get("X-Robots-Guard") != "" {
			t.Errorf("a browser's %s: body %q, X-Robots-Guard %q; want the backend's page, no refusal", path, body, resp.Header.Get("X-Robots-Guard"))
		}
	}
	// curl posing as Chrome over HTTPS, once the certificate is there.
	certified(t, "localhost:9443")
	out, err := exec.Command(curl, "-sk", "-D", "-", "-o", "/dev/null", "-A", uaChrome, "https://localhost:9443/private/curl.html").Output()
	if err != nil {
		t.Fatalf("curl: %v", err)
	}
	head := string(out)
	if !strings.HasPrefix(head, "HTTP/2 403") && !strings.HasPrefix(head, "HTTP/1.1 403") || !strings.Contains(strings.ToLower(head), "x-robots-guard: disallowed") {
		t.Fatalf("curl posing as Chrome on a disallowed path:\n%s", head)
	}
	evidence := ""
	for _, line := range strings.Split(head, "\r\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && strings.EqualFold(k, "X-Robots-Guard-Evidence") {
			evidence = v
		}
	}
	if !strings.Contains(evidence, "sec-fetch") {
		t.Errorf("curl's refusal names evidence %q, want sec-fetch among it", evidence)
	}

	after := adminMetrics(t)
	want := map[string]float64{
		`caddy_robots_guard_browser_claims_disallowed_total{action="allow",class="browser"}`: 2,
		`caddy_robots_guard_browser_claims_disallowed_total{action="deny",class="poser"}`:    1,
		`caddy_robots_guard_browser_claims_disallowed_total{action="deny",class="browser"}`:  0,
	}
	for _, code := range strings.Split(evidence, ",") {
		want[`caddy_robots_guard_claim_evidence_total{evidence="`+code+`"}`] = 1
	}
	checkCounted(t, before, after, want)

	// The log: the browser's first request in full, its repeat in a
	// summary line a second later; the poser's with its evidence and JA4.
	var log []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if log, _ = os.ReadFile(decisions); bytes.Contains(log, []byte(`"repeats":1`)) || time.Now().After(deadline) {
			break
		}
	}
	sum, _, entries := reportOf(t, string(log))
	var browser, poser *report.Entry
	for i, e := range entries {
		switch {
		case e.Class == "browser" && e.Repeats == 0:
			browser = &entries[i]
		case e.Class == "poser":
			poser = &entries[i]
		case e.URI == "/private/press/release.html":
			t.Errorf("a browser on an allowed path was logged: %+v", e)
		}
	}
	if browser == nil || !browser.BrowserDisallowed || browser.Action != "allow" || browser.Rule != "Disallow: /private/" || browser.RuleLine != 6 || browser.URI != "/private/report.html" {
		t.Errorf("the browser's log line: %+v\n%s", browser, log)
	}
	if poser == nil || !poser.BrowserDisallowed || poser.Action != "deny" || poser.Evidence != evidence || poser.JA4 == "" {
		t.Errorf("the poser's log line: %+v\n%s", poser, log)
	}
	c := sum.BrowserDisallowed
	if c.Count != 3 || c.Served != 2 || c.Refused != 1 || c.ByClass["browser"] != 2 || c.ByClass["poser"] != 1 || sum.Folded != 1 {
		t.Errorf("report: %+v (folded %d)\n%s", c, sum.Folded, log)
	}
	var text bytes.Buffer
	sum.WriteText(&text)
	if !strings.Contains(text.String(), "browser claims on disallowed paths: 3 (served 2, refused 1)") || !strings.Contains(text.String(), "line 6: Disallow: /private/") {
		t.Errorf("report text:\n%s", text.String())
	}

	// The review page's JSON: the same counts, one view per site of the
	// zone (issue 39): the site block's two addresses are two origins,
	// http://localhost:9080 (the browser's) and https://localhost:9443
	// (curl's).
	var view review.View
	adminJSON(t, "GET", "/robots_guard/stats?zone="+s.zone, "", http.StatusOK, &view)
	if len(view.Zones) != 2 || view.Zones[0].Site != "localhost:9080" || view.Zones[1].Site != "localhost:9443" {
		t.Fatalf("zones %+v", view.Zones)
	}
	v, w := view.Zones[0].BrowserDisallowed, view.Zones[1].BrowserDisallowed
	if v.Served != 2 || v.Refused != 0 || v.ByClass["browser"] != (review.ClaimCount{Served: 2}) || w.ByClass["poser"] != (review.ClaimCount{Refused: 1}) ||
		len(v.Paths) != 1 || v.Paths[0] != (review.PathCount{Path: "/private/report.html", Count: 2}) || len(v.Rules) != 1 || v.Rules[0].Line != 6 ||
		w.Served != 0 || w.Refused != 1 || len(w.Paths) != 1 || len(w.Rules) != 1 || w.Rules[0].Line != 6 {
		t.Errorf("review: %+v, %+v", v, w)
	}
	for _, code := range strings.Split(evidence, ",") {
		if w.Evidence[code] != 1 || c.Evidence[code] != 1 {
			t.Errorf("evidence %q: review %d, report %d, want 1", code, w.Evidence[code], c.Evidence[code])
		}
	}
	t.Logf("curl's evidence %q; report:\n%s", evidence, text.String())
}
