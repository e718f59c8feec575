package e2e

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/robotsguard/robotsguard/evidence/behaviour"
)

// The people suite of issue 37: real Chromium and Firefox ESR, images on,
// their ordinary desktop User-Agents, doing what people do on a site whose
// robots.txt disallows pages people use (search, account). Every request
// must be served: 0 refused or throttled, checked for each request in
// Caddy's access log, and no decision of robots_guard may refuse one.

// person is one scenario of the people suite: what a person (or an
// office) does, on site i.
type person struct {
	name, slug string // slug: the file name of its requests (ROBOTSGUARD_BEHAVIOUR_DUMP)
	run        func(env *behaviourEnv, i int) error
	// alone runs it after the others, one at a time: pages opened at once
	// by a browser that is not one of seven on two cores (which opens them
	// 100 to 400 ms apart, as slowly as a crawler loads them one after
	// another: docs/posers.md).
	alone bool
}

// behaviourEnv is what a scenario needs: the sites, the browsers'
// binaries and User-Agent, scratch space.
type behaviourEnv struct {
	s        *behaviourSites
	chromium string
	ua       string // Chromium's desktop User-Agent
	tmp      func() string
}

func (e *behaviourEnv) chromium1(o chromiumOptions) (*chromiumSession, error) {
	return startChromium(e.chromium, e.ua, e.s.home, e.tmp(), o)
}

// pause is a person's pause between two actions.
func pause(d time.Duration) { time.Sleep(d) }

// people are the scenarios.
var people = []person{
	{"Chromium fast reader: 15 links in 30 s, search and account pages among them", "person-chromium-fast-reader", fastReader, false},
	{"Chromium 20 tabs at once, then each reloaded", "person-chromium-20-tabs", twentyTabs, false},
	{"Chromium back, forward, reload over 10 pages, then a return visit with a warm cache, 10 pages quickly", "person-chromium-history-return", historyAndReturn, false},
	{"Chromium office: 15 sessions from one address, 8 pages each over a minute", "person-chromium-office", office, false},
	{"Firefox reader: 10 pages with search", "person-firefox-reader", firefoxReader, false},
	{"Chromium started with a bookmarks folder opened at once: 10 pages, 6 of them search and account pages", "person-chromium-bookmarks", bookmarksChromium, true},
	{"Firefox started with a bookmarks folder's 10 pages, 6 of them search and account pages", "person-firefox-bookmarks", bookmarksFirefox, true},
}

func fastReader(env *behaviourEnv, i int) error {
	c, err := env.chromium1(chromiumOptions{})
	if err != nil {
		return err
	}
	defer c.cancel()
	base := env.s.urls[i]
	if _, err := chromiumGo(c.ctx, base+"/"); err != nil { // typed
		return err
	}
	steps := []string{"#nav-articles", "#to-a03", "#next", "#tag", "#result-5", "#orders", "#to-account", "#to-settings",
		"#nav-articles", "#to-a12", "search:robots", "#result-9", "#next", "#nav-about", "#to-a01"}
	for _, s := range steps {
		pause(2 * time.Second)
		if q, ok := strings.CutPrefix(s, "search:"); ok {
			err = chromiumSearch(c.ctx, q)
		} else {
			err = chromiumClick(c.ctx, s)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func twentyTabs(env *behaviourEnv, i int) error {
	c, err := env.chromium1(chromiumOptions{})
	if err != nil {
		return err
	}
	defer c.cancel()
	if _, err := chromiumGo(c.ctx, env.s.urls[i]+"/articles/"); err != nil {
		return err
	}
	pause(time.Second)
	var sels []string
	for a := 1; a <= 17; a++ {
		sels = append(sels, fmt.Sprintf("#to-a%02d", a))
	}
	sels = append(sels, "#tag-a01", "#tag-a02", "#tag-a03") // search pages: disallowed
	tabs, cancels, err := openTabs(c.ctx, sels)
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
	}()
	if err != nil {
		return err
	}
	pause(2 * time.Second)
	for _, tab := range tabs { // F5 in each, one after the other
		if err := chromiumReloadTab(tab); err != nil {
			return fmt.Errorf("reload: %w", err)
		}
		pause(300 * time.Millisecond)
	}
	return nil
}

func historyAndReturn(env *behaviourEnv, i int) error {
	profile := env.tmp()
	base := env.s.urls[i]
	c, err := env.chromium1(chromiumOptions{profile: profile})
	if err != nil {
		return err
	}
	err = func() error {
		defer c.cancel()
		if _, err := chromiumGo(c.ctx, base+"/"); err != nil {
			return err
		}
		pause(time.Second)
		if err := chromiumClick(c.ctx, "#to-a01"); err != nil {
			return err
		}
		for range 9 { // a02 ... a10
			pause(time.Second)
			if err := chromiumClick(c.ctx, "#next"); err != nil {
				return err
			}
		}
		for _, delta := range []int{-1, -1, -1, -1, 1, 1, 0, 0} { // back 4 times, forward twice, reload twice
			pause(700 * time.Millisecond)
			var err error
			if delta == 0 {
				_, err = within(c.ctx, 30*time.Second, chromedp.Reload())
			} else {
				err = chromiumHistory(c.ctx, delta)
			}
			if err != nil {
				return fmt.Errorf("history %+d: %w", delta, err)
			}
		}
		return nil
	}()
	if err != nil {
		return err
	}
	pause(2 * time.Second)
	// The return visit: the same profile, its cache and cookies.
	c, err = env.chromium1(chromiumOptions{profile: profile})
	if err != nil {
		return err
	}
	defer c.cancel()
	if _, err := chromiumGo(c.ctx, base+"/"); err != nil {
		return err
	}
	for _, s := range []string{"#nav-articles", "#to-a11", "#next", "#next", "#tag", "#result-5", "#next", "#next", "#orders", "#to-account"} {
		pause(500 * time.Millisecond)
		if err := chromiumClick(c.ctx, s); err != nil {
			return err
		}
	}
	return nil
}

func office(env *behaviourEnv, i int) error {
	c, err := env.chromium1(chromiumOptions{})
	if err != nil {
		return err
	}
	defer c.cancel()
	base := env.s.urls[i]
	paths := [][]string{
		{"#to-a02", "#tag", "#result-5", "#orders", "#to-account", "#nav-articles", "#to-a20"},
		{"#nav-account", "#to-orders", "#to-account", "#nav-articles", "#to-a30", "#next", "#tag"},
		{"#nav-articles", "#to-a15", "#next", "#next", "#tag", "#result-1", "#orders"},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 15)
	for k := range 15 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(k) * 1800 * time.Millisecond)
			// A profile of its own: cookies, cache and connections apart.
			sctx, cancel := chromedp.NewContext(c.ctx, chromedp.WithNewBrowserContext())
			defer cancel()
			if err := chromedp.Do(sctx); err != nil { // opens its tab, for as long as sctx lives
				errs <- err
				return
			}
			if _, err := chromiumGo(sctx, base+"/"); err != nil {
				errs <- err
				return
			}
			for j, s := range paths[k%len(paths)] {
				pause(time.Duration(3500+(k*7+j*13)%10*100) * time.Millisecond)
				if err := chromiumClick(sctx, s); err != nil {
					errs <- fmt.Errorf("session %d: %w", k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func firefoxReader(env *behaviourEnv, i int) error {
	b, err := startFirefox(env, map[string]any{"network.http.http3.enable": false})
	if err != nil {
		return err
	}
	defer b.Close()
	base := env.s.urls[i]
	if err := b.Load(base + "/"); err != nil {
		return err
	}
	for _, id := range []string{"nav-articles", "to-a07", "next", "tag", "result-9", "search:crawl", "result-13", "orders", "to-account"} {
		pause(1500 * time.Millisecond)
		if q, ok := strings.CutPrefix(id, "search:"); ok {
			var v string
			if err := b.Eval(`document.getElementById('q').value = `+fmt.Sprintf("%q", q), &v); err != nil {
				return err
			}
			if err := firefoxClick(b, "search-go", "/search?q="+q); err != nil {
				return err
			}
			continue
		}
		var href string
		if err := b.Eval(`document.getElementById(`+fmt.Sprintf("%q", id)+`).href`, &href); err != nil {
			return fmt.Errorf("#%s: %w", id, err)
		}
		u, err := url.Parse(href)
		if err != nil {
			return err
		}
		if err := firefoxClick(b, id, u.RequestURI()); err != nil {
			return err
		}
	}
	return nil
}

// TestBehaviourPeople: the people suite. Each scenario runs on a site of
// its own, all at once (those alone after them, one at a time); every
// request each made must be served.
func TestBehaviourPeople(t *testing.T) {
	need(t, "firefox-esr", "certutil")
	long(t)
	t.Parallel() // with the crawler suite
	bin := chromium(t)
	s := startBehaviourSites(t, len(people), behaviourGuard())
	env := &behaviourEnv{s: s, chromium: bin, ua: desktopChromeUA(t, bin), tmp: tmpDirs(t)}
	errs := make([]error, len(people))
	var wg sync.WaitGroup
	for i, p := range people {
		if p.alone {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.run(env, i)
		}()
	}
	wg.Wait()
	for i, p := range people {
		if p.alone {
			errs[i] = p.run(env, i)
		}
	}
	time.Sleep(500 * time.Millisecond) // the last access log lines
	t.Logf("the people suite took %s\n%s", time.Since(s.start).Round(time.Second), behaviourHeader)
	for i, p := range people {
		if errs[i] != nil {
			t.Errorf("%s: %v", p.name, errs[i])
		}
		hits := s.hits(t, i)
		dumpHits(t, p.slug, hits)
		f := figuresOf(p.name, hits)
		t.Log(f.row())
		if p.alone {
			gaps, n := selfGaps(hits)
			t.Logf("%s: %d self-started navigations, gaps %s", p.name, n, gapFigures(gaps))
			if spread := burstSpread(gaps); spread >= behaviour.BurstStall {
				// A browser so loaded that it stalls longer than
				// behaviour.BurstStall opens the pages at a crawler's
				// pace: not told apart (docs/posers.md).
				t.Logf("%s: the browser opened its pages up to %s apart here, not at once: not checked", p.name, spread)
				continue
			}
		}
		checkServed(t, p.name, hits, s.entries(t, i))
	}
}

// checkServed fails the test for every request of a person that was
// refused or throttled (the access log) and every decision that was not
// an allowance (the decision log).
func checkServed(t *testing.T, name string, hits []behaviourHit, decisions []rgEntry) {
	t.Helper()
	if len(hits) == 0 {
		t.Errorf("%s: no request in the access log", name)
	}
	for _, h := range hits {
		if h.Status >= 400 {
			t.Errorf("%s: %s %s answered %d", name, h.Method, h.URI, h.Status)
		}
	}
	for _, e := range decisions {
		if e.Action != "allow" || e.Evidence != "" {
			t.Errorf("%s: decision for %s: %s %s, class %s, evidence %q", name, e.URI, e.Action, e.Reason, e.Class, e.Evidence)
		}
	}
}

// behaviourGuard is more robots_guard options for the suites' sites:
// $ROBOTSGUARD_BEHAVIOUR_GUARD, to try other thresholds (with
// "behaviour {\n pages 1\n }" the people suite fails: docs/posers.md).
func behaviourGuard() string { return os.Getenv("ROBOTSGUARD_BEHAVIOUR_GUARD") }

// tmpDirs returns a source of new scratch directories, removed at the end.
func tmpDirs(t *testing.T) func() string {
	root := t.TempDir()
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return filepath.Join(root, fmt.Sprint(n))
	}
}
