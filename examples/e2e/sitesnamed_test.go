package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// siteRowsJS reads every row of the review page's tables with the site it
// names: the bots table's rows (their "site" line), the claims and the
// blocked tables' (their first cell).
const siteRowsJS = `[...document.querySelectorAll('#bots tbody tr')].map(tr => 'bots ' + tr.dataset.key + ': ' + ((tr.querySelector('small.site') || {}).textContent || ''))
  .concat([...document.querySelectorAll('#claims tbody tr, #blocked tbody tr')].map(tr => tr.closest('table').id + ' ' + (tr.dataset.ip || '') + ': ' + tr.children[0].textContent))`

// TestSitesNamedEverywhere (issue 39): one Caddy, two sites sharing one
// zone (the operator's choice), real clients on both (Scrapy ignoring
// robots.txt on A, GPTBot and a browser on B): caddy robots report (text,
// --json, --html), caddy robots blocked, the review page (in headless
// Chromium) and the metrics name the site on every row, and no row mixes
// the two sites' robots.txt files.
func TestSitesNamedEverywhere(t *testing.T) {
	need(t, "scrapy", "curl")
	const gptbot = "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	s := startTwoSites(t, "shop")
	siteA, siteB := fmt.Sprintf(":%d", s.portA), fmt.Sprintf(":%d", s.portB)
	scrapyIgnoring(t, s.a+"/private/", s.a+"/~sam/", s.a+"/private/report.html", s.a+"/private/")
	if code, _, _ := curl(t, s.b, "/admin/", gptbot); code != 403 {
		t.Errorf("GPTBot on B's /admin/: %d", code)
	}
	for _, p := range []string{"/", "/private/report.html"} {
		if code, _, _ := curl(t, s.b, p, firefox); code != 200 {
			t.Errorf("a browser on B's %s: %d", p, code)
		}
	}
	if code, _, _ := curl(t, s.a, "/private/", firefox); code != 200 {
		t.Errorf("a browser on A's /private/: %d", code)
	}

	// caddy robots report: the sites in the first line, each row's site.
	out, err := exec.Command(caddyBin, "robots", "report", s.decisions).CombinedOutput()
	if err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	t.Logf("caddy robots report:\n%s", out)
	text := string(out)
	if !strings.Contains(text, "decisions on 2 sites (") || !strings.Contains(text, "scrapy @ "+siteA) || !strings.Contains(text, "gptbot @ "+siteB) {
		t.Errorf("the report does not name the sites")
	}
	section := ""
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " "):
			section = l
		case strings.HasPrefix(section, "hourly") || !strings.HasPrefix(l, "  ") || strings.HasPrefix(strings.TrimSpace(l), "(none)"):
		case strings.HasPrefix(l, "  by class:") || strings.HasPrefix(l, "  evidence:") || strings.HasPrefix(l, "  top "):
		case !strings.Contains(l, " @ "+siteA) && !strings.Contains(l, " @ "+siteB):
			t.Errorf("a row of %q names no site: %q", section, l)
		}
	}
	// --json: every row has its site.
	js, err := exec.Command(caddyBin, "robots", "report", "--json", s.decisions).Output()
	if err != nil {
		t.Fatal(err)
	}
	var bySite map[string]int
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(raw["by_site"], &bySite)
	if len(bySite) != 2 || bySite[siteA] == 0 || bySite[siteB] == 0 {
		t.Errorf("by_site: %v", bySite)
	}
	for _, k := range []string{"top_bots", "top_ips", "top_paths", "read_robots_and_ignored"} {
		var rows []map[string]any
		_ = json.Unmarshal(raw[k], &rows)
		for _, r := range rows {
			if r["site"] != siteA && r["site"] != siteB {
				t.Errorf("--json %s: a row names no site: %v", k, r)
			}
		}
	}

	// caddy robots blocked: Scrapy's block, on A, in the zone shop.
	bl, err := exec.Command(caddyBin, "robots", "blocked", "--address", s.admin).CombinedOutput()
	if err != nil || !strings.Contains(string(bl), siteA+" (zone shop)  127.0.0.1  scrapy") {
		t.Errorf("caddy robots blocked (%v):\n%s", err, bl)
	}
	// The metrics: each site's decisions.
	metrics := adminGet(t, s.admin, "/metrics")
	for _, want := range []string{`caddy_robots_guard_site_decisions_total{action="deny",site="` + siteA + `"}`, `caddy_robots_guard_site_decisions_total{action="deny",site="` + siteB + `"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("no %s in the metrics", want)
		}
	}

	// The review page, live and built from the logs, in headless
	// Chromium: every row names its site.
	html := filepath.Join(t.TempDir(), "report.html")
	if out, err := exec.Command(caddyBin, "robots", "report", "--html", html, s.decisions).CombinedOutput(); err != nil {
		t.Fatalf("report --html: %v\n%s", err, out)
	}
	b := newBrowserSize(t, 1366, 900)
	for name, url := range map[string]string{"live page": startReview(t, s.admin), "report --html": "file://" + html} {
		b.run(t, name, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)))
		rows := eval[[]string](t, b, siteRowsJS)
		t.Logf("%s: %q", name, rows)
		bots := 0
		for _, r := range rows {
			if !strings.Contains(r, siteA) && !strings.Contains(r, siteB) {
				t.Errorf("%s: a row names no site: %q", name, r)
			}
			if strings.HasPrefix(r, "bots ") {
				bots++
			}
		}
		if bots < 3 || !strings.Contains(strings.Join(rows, "\n"), "bots scrapy: site "+siteA) || !strings.Contains(strings.Join(rows, "\n"), "bots gptbot: site "+siteB) {
			t.Errorf("%s: the bots of each site are not its own rows: %q", name, rows)
		}
		if errs := b.consoleErrors(); len(errs) > 0 {
			t.Errorf("console errors on the %s: %q", name, errs)
		}
	}
}
