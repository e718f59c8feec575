package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/robotsguard/robotsguard/internal/tlsclients"
)

// Bursts: several pages opened at once (a bookmarks folder's "Open all",
// a browser started with several addresses, a crawler opening tabs in
// parallel) against a crawler loading one page after another.

// bookmarks is a bookmarks folder of the suites' site: search and account
// pages (disallowed) among articles.
var bookmarks = []string{"/search?q=robots", "/account/", "/articles/a03.html", "/search?q=crawl", "/account/orders.html",
	"/articles/a07.html", "/search?q=tag1", "/account/settings.html", "/articles/", "/search?q=tag2"}

// chromiumWithURLs starts headless Chromium with urls on its command line,
// as a person's desktop or a session manager does (one tab each), and
// stops it once the site has answered want documents or after d.
func chromiumWithURLs(env *behaviourEnv, i int, urls []string, want int, d time.Duration) error {
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir=" + env.tmp(), "--user-agent=" + env.ua, "--window-size=1280,900"}
	cmd := exec.Command(env.chromium, append(args, urls...)...)
	cmd.Env = append(os.Environ(), "HOME="+env.s.home)
	return runBrowser(env, i, cmd, want, d)
}

// firefoxWithURLs does the same with Firefox ESR.
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
// page to load, as a crawler that opens tabs in parallel does.
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
		{"Chromium started with 10 URLs", func(env *behaviourEnv, i int) error {
			return chromiumWithURLs(env, i, urlsOf(env.s.urls[i], bookmarks), len(bookmarks), 60*time.Second)
		}},
		{"Chromium, 10 tabs by Target.createTarget in a loop", func(env *behaviourEnv, i int) error {
			c, err := env.chromium1(chromiumOptions{})
			if err != nil {
				return err
			}
			defer c.cancel()
			_, err = chromiumNewTabs(c.ctx, urlsOf(env.s.urls[i], bookmarks))
			time.Sleep(4 * time.Second)
			return err
		}},
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
