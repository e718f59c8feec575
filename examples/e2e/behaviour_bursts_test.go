package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/robotsguard/robotsguard/evidence/behaviour"
	"github.com/robotsguard/robotsguard/internal/tlsclients"
)

// Bursts: several pages opened at once (a bookmarks folder's "Open all",
// a browser started with several addresses, a crawler opening tabs in
// parallel) against a crawler loading one page after another.

// bookmarks is a bookmarks folder of the suites' site: search and account
// pages (disallowed) among articles.
var bookmarks = []string{"/search?q=robots", "/account/", "/articles/a03.html", "/search?q=crawl", "/account/orders.html",
	"/articles/a07.html", "/search?q=tag1", "/account/settings.html", "/articles/", "/search?q=tag2"}

// firefoxWithURLs starts headless Firefox ESR with urls on its command
// line, as a person's desktop or session manager does (a tab each), and
// stops it once site i has answered want documents or after d. (Headless
// Chromium refuses several URLs: "Multiple targets are not supported in
// headless mode"; chromiumNewTabs opens its tabs at once instead.)
func firefoxWithURLs(env *behaviourEnv, i int, urls []string, want int, d time.Duration) error {
	profile := filepath.Join(env.tmp(), "profile")
	if err := os.MkdirAll(profile, 0o700); err != nil {
		return err
	}
	if err := tlsclients.TrustNSS(context.Background(), env.s.caFile, profile); err != nil {
		return err
	}
	prefs := "user_pref(\"browser.shell.checkDefaultBrowser\", false);\nuser_pref(\"network.http.http3.enable\", false);\n" +
		"user_pref(\"browser.startup.homepage_override.mstone\", \"ignore\");\nuser_pref(\"datareporting.policy.dataSubmissionEnabled\", false);\n" +
		"user_pref(\"app.update.disabledForTesting\", true);\nuser_pref(\"dom.security.https_first\", false);\n"
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(prefs), 0o600); err != nil {
		return err
	}
	bin, err := exec.LookPath("firefox-esr")
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, append([]string{"--headless", "--no-remote", "--profile", profile}, urls...)...)
	cmd.Env = append(os.Environ(), "MOZ_CRASHREPORTER_DISABLE=1")
	return runBrowser(env, i, cmd, want, d)
}

// runBrowser runs cmd in a process group of its own until site i has
// answered want documents or d has passed, then stops the group.
func runBrowser(env *behaviourEnv, i int, cmd *exec.Cmd, want int, d time.Duration) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if documents(env.s.hitsSoFar(i)) >= want {
			time.Sleep(time.Second) // their subresources
			return nil
		}
	}
	return fmt.Errorf("%d documents of %d in %s", documents(env.s.hitsSoFar(i)), want, d)
}

func documents(hits []behaviourHit) int {
	n := 0
	for _, h := range hits {
		if h.Document() {
			n++
		}
	}
	return n
}

// chromiumNewTabs opens a tab for each of urls with DevTools'
// Target.createTarget, one call after the other without waiting for any
// page to load: the browser starts each navigation itself, as it does for
// a bookmarks folder's "Open all" (Sec-Fetch-Site none, Sec-Fetch-User
// ?1), and as a crawler that opens tabs in parallel does. (Sent all at
// once, the calls made Chromium start the pages further apart: 12 to 52
// ms, against 0.1 to 10 one after the other.)
func chromiumNewTabs(ctx context.Context, urls []string) ([]target.ID, error) {
	var ids []target.ID
	for _, u := range urls {
		res, err := chromedp.CallBrowser(ctx, target.CreateTarget, target.CreateTargetParams{URL: u})
		if err != nil {
			return ids, err
		}
		ids = append(ids, res.TargetID)
	}
	return ids, nil
}

// closeTabs closes the tabs.
func closeTabs(ctx context.Context, ids []target.ID) error {
	for _, id := range ids {
		if _, err := chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id}); err != nil {
			return err
		}
	}
	return nil
}

// selfGaps returns the gaps between the arrivals of a client's
// self-started navigations (as the behaviour evidence counts them), in
// order, and how many there were.
func selfGaps(hits []behaviourHit) (gaps []time.Duration, n int) {
	var last time.Time
	for i := range hits {
		h := &hits[i]
		if !selfStarted(h) && !(h.Site == "none" && h.Dest == "document" && h.Mode == "navigate" && !h.Conditional) {
			continue
		}
		if n > 0 {
			gaps = append(gaps, h.At.Sub(last))
		}
		last, n = h.At, n+1
	}
	return gaps, n
}

// burstSpread returns the largest of gaps within a burst: of those under
// a second (a person's pause before opening the pages is not).
func burstSpread(gaps []time.Duration) time.Duration {
	var most time.Duration
	for _, g := range gaps {
		if g < time.Second {
			most = max(most, g)
		}
	}
	return most
}

// gapFigures describes gaps: the smallest, the median, the largest, in ms.
func gapFigures(gaps []time.Duration) string {
	if len(gaps) == 0 {
		return "no gap"
	}
	s := slices.Clone(gaps)
	slices.Sort(s)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e6) }
	var all []string
	for _, g := range gaps {
		all = append(all, ms(g))
	}
	return fmt.Sprintf("min %s median %s max %s ms; in order: %s", ms(s[0]), ms(s[len(s)/2]), ms(s[len(s)-1]), strings.Join(all, " "))
}

// TestBehaviourBurstGaps (ROBOTSGUARD_BEHAVIOUR_LONG=1) measures the gaps
// between the starts of self-started navigations when a browser opens
// several pages at once, and when a crawler loads one after another at
// machine pace: what the behaviour evidence's burst gap is chosen from.
func TestBehaviourBurstGaps(t *testing.T) {
	need(t, "firefox-esr", "certutil")
	if os.Getenv("ROBOTSGUARD_BEHAVIOUR_LONG") == "" {
		t.Skip("a long measurement: ROBOTSGUARD_BEHAVIOUR_LONG=1")
	}
	bin := chromium(t)
	runs := []struct {
		name string
		run  func(env *behaviourEnv, i int) error
	}{
		{"Chromium opening 10 tabs at once as it starts", func(env *behaviourEnv, i int) error { return chromiumOpenAll(env, i, false) }},
		{"Chromium opening 10 tabs at once on the site, 2 s after its home page", func(env *behaviourEnv, i int) error { return chromiumOpenAll(env, i, true) }},
		{"Chromium on the site opening 10 tabs in its own loop, 2 s after its home page", openAllChromium},
		{"Firefox started with 10 URLs", func(env *behaviourEnv, i int) error {
			return firefoxWithURLs(env, i, urlsOf(env.s.urls[i], bookmarks), len(bookmarks), 60*time.Second)
		}},
		{"Chromium crawler, images off", func(env *behaviourEnv, i int) error {
			_, err := runCrawler(env, crawlers[0], i)
			return err
		}},
		{"Chromium crawler from robots.txt's paths, images off", func(env *behaviourEnv, i int) error {
			_, err := runCrawler(env, crawlers[4], i)
			return err
		}},
		{"Firefox crawler, images off", func(env *behaviourEnv, i int) error {
			_, err := runCrawler(env, crawlers[2], i)
			return err
		}},
	}
	s := startBehaviourSites(t, len(runs), behaviourGuard())
	env := &behaviourEnv{s: s, chromium: bin, ua: desktopChromeUA(t, bin), tmp: tmpDirs(t)}
	for i, r := range runs {
		if err := r.run(env, i); err != nil {
			t.Errorf("%s: %v", r.name, err)
		}
		time.Sleep(300 * time.Millisecond)
		hits := s.hits(t, i)
		dumpHits(t, fmt.Sprintf("gaps-%d", i), hits)
		gaps, n := selfGaps(hits)
		var users []string
		for _, h := range hits {
			if h.Dest == "document" && h.Site == "none" {
				users = append(users, h.User)
			}
		}
		t.Logf("%s: %d self-started navigations (Sec-Fetch-User %q); gaps %s", r.name, n, strings.Join(users, ","), gapFigures(gaps))
	}
}

// urlsOf returns the URLs of paths on base.
func urlsOf(base string, paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, base+p)
	}
	return out
}

// bookmarksChromium: a person starts Chromium and opens a bookmarks
// folder at once (search and account pages among its 10), and reads.
func bookmarksChromium(env *behaviourEnv, i int) error {
	return chromiumOpenAll(env, i, false)
}

// chromiumOpenAll opens the bookmarks folder in a new Chromium, after
// reading the site's home page for 2 s (warm: its connection open) or as
// the browser's first pages (cold: the tabs wait together for the
// connection).
func chromiumOpenAll(env *behaviourEnv, i int, warm bool) error {
	c, err := env.chromium1(chromiumOptions{})
	if err != nil {
		return err
	}
	defer c.cancel()
	base := env.s.urls[i]
	if warm {
		if _, err := chromiumGo(c.ctx, base+"/"); err != nil { // typed
			return err
		}
		pause(2 * time.Second)
	}
	ids, err := chromiumNewTabs(c.ctx, urlsOf(base, bookmarks))
	if err != nil {
		return err
	}
	pause(5 * time.Second) // reads
	return closeTabs(c.ctx, ids)
}

// openAllChromium: a person reading the site's home page in Chromium
// opens a bookmarks folder of the site in new tabs, 2 s later. Chromium
// opens them itself, in its own loop: an extension's chrome.tabs.create,
// one call after the other without waiting, as the bookmarks menu's "Open
// all" creates its background tabs (headless Chromium has no menus; the
// DevTools calls of chromiumNewTabs wait for each tab, which spreads tabs
// on an open connection 20 to 68 ms apart, a crawler's pace). A
// measurement of the gaps only (TestBehaviourBurstGaps; replayed in
// behaviour.TestBurstOpenAll): an extension's tabs carry no
// Sec-Fetch-User, which the evidence never counts, where a bookmark's
// carry ?1.
func openAllChromium(env *behaviourEnv, i int) error {
	base := env.s.urls[i]
	ext := filepath.Join(env.tmp(), "openall")
	if err := os.MkdirAll(ext, 0o700); err != nil {
		return err
	}
	urls, err := json.Marshal(urlsOf(base, bookmarks))
	if err != nil {
		return err
	}
	files := map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "open all", "version": "1", "permissions": ["tabs"], "background": {"service_worker": "bg.js"}}`,
		"bg.js": `const home = ` + strconv.Quote(base+"/") + `, urls = ` + string(urls) + `;
let opened = false;
chrome.tabs.onUpdated.addListener((id, info, tab) => {
  if (opened || info.status !== "complete" || tab.url !== home) return;
  opened = true;
  setTimeout(() => { for (const url of urls) chrome.tabs.create({url, active: false}); }, 2000);
});`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(ext, name), []byte(text), 0o600); err != nil {
			return err
		}
	}
	c, err := env.chromium1(chromiumOptions{extension: ext})
	if err != nil {
		return err
	}
	defer c.cancel()
	pause(time.Second)                                     // the extension's worker starts
	if _, err := chromiumGo(c.ctx, base+"/"); err != nil { // typed
		return err
	}
	for deadline := time.Now().Add(60 * time.Second); documents(env.s.hitsSoFar(i)) < 1+len(bookmarks); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d documents of %d: did the extension open the tabs?", documents(env.s.hitsSoFar(i)), 1+len(bookmarks))
		}
	}
	pause(3 * time.Second) // reads
	return nil
}

// tabLinks returns the links of the page a tab loads, once it has loaded,
// within d. The check and the reading are one evaluation, tried again
// until the page is there: a new tab's about:blank is complete before the
// page's navigation commits (a loaded machine read its links, none, and
// the crawl ended at its home page), and a check and a reading made apart
// can straddle the commit ("Execution context was destroyed").
func tabLinks(tab context.Context, d time.Duration) ([]string, error) {
	type page struct {
		Ready bool
		Links []string
	}
	js := `document.readyState === 'complete' && location.href !== 'about:blank' ? {Ready: true, Links: ` + linksJS + `} : {Ready: false}`
	deadline := time.Now().Add(d)
	for {
		p, err := within(tab, 5*time.Second, chromedp.Evaluate[page](js))
		switch {
		case err == nil && p.Ready:
			return p.Links, nil
		case time.Now().After(deadline):
			return nil, fmt.Errorf("the page did not load in %s (last error: %v)", d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bookmarksFirefox: Firefox started with a bookmarks folder's 10 pages
// (search and account pages among them) on its command line.
func bookmarksFirefox(env *behaviourEnv, i int) error {
	return firefoxWithURLs(env, i, urlsOf(env.s.urls[i], bookmarks), len(bookmarks), 90*time.Second)
}

// chromiumTabsCrawl crawls with Chromium as a crawler that opens its
// pages in parallel tabs does: the home page, then tabs at a time (a
// burst), each tab's links read once it has loaded and the tab closed,
// then the next batch opened.
func chromiumTabsCrawl(c *chromiumSession, base string, p crawlPlan, tabs int) ([]string, error) {
	queue, loaded := []string{base + "/"}, []string(nil)
	seen := map[string]bool{base + "/": true}
	for len(queue) > 0 && len(loaded) < p.pages {
		n := 1
		if len(loaded) > 0 {
			n = min(tabs, len(queue), p.pages-len(loaded))
		}
		batch := queue[:n]
		queue = queue[n:]
		ids, err := chromiumNewTabs(c.ctx, batch)
		if err != nil {
			return loaded, err
		}
		loaded = append(loaded, batch...)
		for _, id := range ids {
			links, err := func() ([]string, error) {
				tab, cancel := chromedp.NewContext(c.ctx, chromedp.WithTargetID(id))
				// Do attaches to the tab; cancel closes it.
				defer cancel()
				if err := chromedp.Do(tab); err != nil {
					return nil, err
				}
				return tabLinks(tab, 30*time.Second)
			}()
			if err != nil {
				if len(queue) == 0 {
					return loaded, fmt.Errorf("%s: %w", id, err)
				}
				continue // a refused page may have none to give
			}
			for _, l := range links {
				if u, ok := siteLink(base, l); ok {
					if s := u.String(); !seen[s] {
						seen[s] = true
						queue = append(queue, s)
					}
				}
			}
		}
	}
	return loaded, nil
}

// firstBurst returns the disallowed pages of a client's first burst, as
// the behaviour evidence sees it, and its pages: two pages within
// behaviour.BurstGap start it, each next within BurstStall of its last
// joins it, at most behaviour.Slots pages. (The crawlers run for less than
// a hold: one free burst.)
func firstBurst(hits []behaviourHit) (disallowed, pages int) {
	var last, burstLast time.Time
	var lastKey uint32
	seen := map[uint32]string{} // the pages made before, by behaviour.Hash
	burst := map[uint32]bool{}
	for i := range hits {
		h := &hits[i]
		if !selfStarted(h) {
			continue
		}
		key := behaviour.Hash(h.URI)
		_, found := seen[key]
		gap := h.At.Sub(last)
		switch {
		case last.IsZero():
		case burstLast.Equal(last) && gap < behaviour.BurstStall:
			if found || len(burst) < behaviour.Slots {
				burst[key], burstLast = true, h.At
			}
		case gap < behaviour.BurstGap && !found && burstLast.IsZero():
			burst[lastKey], burst[key], burstLast = true, true, h.At
		}
		seen[key], last, lastKey = h.URI, h.At, key
	}
	for k := range burst {
		if disallowedPath(seen[k]) {
			disallowed++
		}
	}
	return disallowed, len(burst)
}
