package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestPagesAgreeReadThenFast (issue 36, "one record"): a bot fetches
// robots.txt, then goes faster than its Crawl-delay, with the decision
// log at its defaults (no allowed request logged, so not the robots.txt
// fetch either). The live page and "caddy robots report --html" of the
// log show the same row: marked "read robots.txt, ignored it", with when
// it read robots.txt (not "never") and when its address did, the same
// time on both.
func TestPagesAgreeReadThenFast(t *testing.T) {
	need(t, "curl")
	admin := fmt.Sprintf("localhost:%d", freePort(t))
	s := start(t, options{robots: "User-agent: *\nCrawl-delay: 5\nDisallow: /private/\n", admin: admin, trustProxy: true, guard: "strikes 100\n\t\tlog_repeats 0"})
	const bot, ip = "fastbot/1.0 (+https://fast.example/bot)", "X-Forwarded-For: 192.0.2.77"
	if code, _, _ := curl(t, s.front, "/robots.txt", bot, ip); code != 200 {
		t.Fatalf("robots.txt: %d", code)
	}
	throttled := 0
	for i := range 8 {
		if code, guard, _ := curl(t, s.front, fmt.Sprintf("/page%d.html", i), bot, ip); code == 429 && guard == "crawl_delay" {
			throttled++
		}
	}
	if throttled == 0 {
		t.Fatal("8 requests at once under Crawl-delay: 5, none throttled")
	}

	b := newBrowserSize(t, 1366, 900)
	b.run(t, "live page", chromedp.Navigate(startReview(t, admin)), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)))
	live := eval[[]pageRow](t, b, pageRowsJS)
	html := filepath.Join(t.TempDir(), "report.html")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, caddyBin, "robots", "report", "--html", html, s.moduleLog).CombinedOutput(); err != nil {
		t.Fatalf("report --html: %v %s", err, out)
	}
	b.run(t, "report page", chromedp.Navigate("file://"+html), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)))
	logs := eval[[]pageRow](t, b, pageRowsJS)

	row := func(rs []pageRow) pageRow {
		for _, r := range rs {
			if r.Key == "fastbot" {
				return r
			}
		}
		return pageRow{}
	}
	l, r := row(live), row(logs)
	for name, p := range map[string]pageRow{"live page": l, "report --html": r} {
		if !p.Ignored || p.Throttled != fmt.Sprint(throttled) || !strings.HasPrefix(p.Robots, "1×, last ") || strings.Contains(p.Robots, "never") ||
			!clockTimes.MatchString(p.Robots) || !strings.Contains(p.Robots, "its address: ") {
			t.Errorf("%s: fastbot's row %+v: want it marked, %d throttled, its robots.txt read and when (1×, last T; its address: T)", name, p, throttled)
		}
	}
	if a, b := l.Robots[strings.Index(l.Robots+"its address", "its address"):], r.Robots[strings.Index(r.Robots+"its address", "its address"):]; a != b {
		t.Errorf("the address read robots.txt at different times: live %q, report --html %q", l.Robots, r.Robots)
	}
	t.Logf("live: %+v\nreport --html: %+v", l, r)
}
