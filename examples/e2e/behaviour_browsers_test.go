package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/robotsguard/robotsguard/internal/browserctl"
)

// How the behaviour suites drive real browsers: headless Chromium over the
// DevTools protocol (chromedp) and Firefox ESR over WebDriver BiDi
// (browserctl), each with its ordinary desktop User-Agent, trusting the
// site's certificate as a person's browser trusts a public one (Chromium
// through $HOME/.pki/nssdb, Firefox through its profile's database), so
// that nothing in how they fetch differs from a person's browser: the
// HTTP cache, cookies and connections work as they do for anyone.

// chromiumSession is a running headless Chromium.
type chromiumSession struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// chromiumOptions say how to start Chromium.
type chromiumOptions struct {
	profile  string // the user data directory; "" for a new one
	noImages bool   // images off, as scrapers run it
	restore  bool   // restore the profile's last session (its tabs), as a person's browser does when it starts
	// extension is the directory of an unpacked extension to load ("" for
	// none).
	extension string
}

// startChromium starts headless Chromium for the sites s with the desktop
// User-Agent of its version.
func startChromium(bin, ua, home, scratch string, o chromiumOptions) (*chromiumSession, error) {
	if o.profile == "" {
		o.profile = scratch
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Env("HOME=" + home),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,DisableLoadExtensionCommandLineSwitch"),
		chromedp.UserDataDir(o.profile), chromedp.WindowSize(1280, 900), chromedp.UserAgent(ua),
	}
	if o.restore {
		opts = append(opts, chromedp.Flag("restore-last-session", true))
	}
	if o.noImages {
		opts = append(opts, chromedp.Flag("blink-settings", "imagesEnabled=false"))
	}
	if o.extension != "" {
		opts = append(opts, chromedp.Flag("load-extension", o.extension), chromedp.Flag("disable-extensions-except", o.extension))
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	c := &chromiumSession{ctx: ctx, cancel: func() { cancelC(); cancelA() }}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		c.cancel()
		return nil, err
	}
	return c, nil
}

// within runs f with a context of the session's bounded by d.
func within[T any](ctx context.Context, d time.Duration, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return chromedp.Run(ctx, a)
}

// chromiumGo navigates as a crawler does (Page.navigate: a typed URL, to
// the browser) and waits for the load event; it returns the status.
func chromiumGo(ctx context.Context, u string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s: %w", u, err)
	case resp == nil: // an error page (a refusal with no body): no response to tell
		return 0, nil
	}
	return int(resp.Status), nil
}

// chromiumClick clicks the first element that matches the CSS selector
// as a person does (the mouse, over the element) and waits for the
// navigation it starts to load.
func chromiumClick(ctx context.Context, sel string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute) // a loaded machine is slow
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		return fmt.Errorf("click %s: %w", sel, err)
	}
	return nil
}

// chromiumSearch types a query into the search form and submits it with
// its button, waiting for the results to load.
func chromiumSearch(ctx context.Context, q string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#q")), chromedp.SendKeys(chromedp.CSS("#q"), q)); err != nil {
		return fmt.Errorf("search %q: %w", q, err)
	}
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#search-go"))); err != nil {
		return fmt.Errorf("search %q: %w", q, err)
	}
	return nil
}

// chromiumHistory goes delta entries back (negative) or forward in the
// tab's history, as the browser's buttons do, and waits until the page
// shows: a page restored from the back/forward cache fires no load event.
func chromiumHistory(ctx context.Context, delta int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	h, err := chromedp.Call(ctx, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		return err
	}
	i := int(h.CurrentIndex) + delta
	if i < 0 || i >= len(h.Entries) {
		return fmt.Errorf("no history entry %d", i)
	}
	e := h.Entries[i]
	if _, err := chromedp.Call(ctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: e.ID}); err != nil {
		return err
	}
	for {
		// The page's context changes under the evaluation while it loads.
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`location.href === `+strconv.Quote(e.URL)+` && document.readyState === 'complete'`)); err == nil && ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never showed: %w", e.URL, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// chromiumReloadTab makes the tab the active one and reloads it, as a
// person pressing F5 in each tab does.
func chromiumReloadTab(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.CallBrowser(ctx, target.ActivateTarget, target.ActivateTargetParams{TargetID: chromedp.FromContext(ctx).Target.TargetID}); err != nil {
		return err
	}
	return chromedp.Do(ctx, chromedp.Reload())
}

// linksJS lists every link of the page, hidden ones too, as a crawler
// reads them from the DOM.
const linksJS = `Array.from(document.querySelectorAll('a[href]'), a => a.href)`

// crawlOrder is how a crawler walks.
type crawlOrder int

const (
	// breadthFirst walks the queue in order.
	breadthFirst crawlOrder = iota
	// disallowedFirst walks depth first, the paths robots.txt disallows
	// before any other.
	disallowedFirst
)

// crawlPlan is what one crawler does: where it starts, how it walks, how
// many pages it loads.
type crawlPlan struct {
	order      crawlOrder
	fromRobots bool // reads /robots.txt and starts from the paths it names
	pages      int
	move       crawlMove     // how it moves from page to page (Chromium)
	pause      time.Duration // between pages: 0, machine pace
}

// crawl walks the site at base from its home page (and robots.txt's
// paths, fromRobots), loading each page with load and reading its links
// with links, at machine pace: no pause. It returns the statuses of the
// siteLink returns a link of a page of base without its fragment, and
// whether it is one of base's own.
func siteLink(base, link string) (*url.URL, bool) {
	u, err := url.Parse(link)
	if err != nil || "https://"+u.Host != base {
		return &url.URL{}, false
	}
	u.Fragment = ""
	return u, true
}

// pages loaded, by URL path.
func crawl(base string, p crawlPlan, load func(string) (int, error), links func() ([]string, error), text func() (string, error)) ([]string, error) {
	var queue, loaded []string
	seen, failed := map[string]bool{}, 0
	push := func(u string) {
		v, ok := siteLink(base, u)
		if s := v.String(); ok && !seen[s] {
			seen[s] = true
			switch {
			case p.order == breadthFirst, disallowedPath(v.Path):
				queue = append(queue, s) // the queue's end, the stack's top
			default:
				queue = append([]string{s}, queue...) // the stack's bottom
			}
		}
	}
	if p.fromRobots { // robots.txt's paths first, as a map
		if _, err := load(base + "/robots.txt"); err != nil {
			return nil, err
		}
		body, err := text()
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Disallow:"); ok && strings.TrimSpace(v) != "" {
				push(base + strings.TrimSpace(v))
			}
		}
	}
	push(base + "/")
	for len(queue) > 0 && len(loaded) < p.pages {
		var u string
		if p.order == disallowedFirst {
			u, queue = queue[len(queue)-1], queue[:len(queue)-1]
		} else {
			u, queue = queue[0], queue[1:]
		}
		if len(loaded) > 0 {
			time.Sleep(p.pause)
		}
		if _, err := load(u); err != nil {
			// A refusal with no body is an error page to Chromium's
			// navigate: the crawler goes on with its queue.
			if failed++; failed > p.pages {
				return loaded, err
			}
			loaded = append(loaded, u)
			continue
		}
		loaded = append(loaded, u)
		ls, err := links()
		if err != nil {
			return loaded, err
		}
		for _, l := range ls {
			push(l)
		}
	}
	return loaded, nil
}

// chromiumFromPage navigates as a crawler does from inside the page: a
// script sets location.href (a navigation the page makes, with the page
// as its Referer and no person's gesture).
func chromiumFromPage(ctx context.Context, u string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[any]("location.href = "+strconv.Quote(u))(ctx, t)
		return err
	}))
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s: %w", u, err)
	case resp == nil:
		return 0, nil
	}
	return int(resp.Status), nil
}

// chromiumClickTo navigates as a crawler that hides best does: it puts a
// link to u at the top of the page and clicks it with the mouse (the
// page as its Referer, a gesture as a person's click has).
func chromiumClickTo(ctx context.Context, u string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	add := `(() => { const a = document.createElement('a'); a.id = 'crawl-next'; a.href = ` + strconv.Quote(u) +
		`; a.textContent = 'next'; a.style = 'display:block;font-size:40px'; document.body.prepend(a); return true })()`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](add)); err != nil {
		return 0, fmt.Errorf("%s: %w", u, err)
	}
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#crawl-next")))
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s: %w", u, err)
	case resp == nil:
		return 0, nil
	}
	return int(resp.Status), nil
}

// How a crawler moves from page to page.
type crawlMove int

const (
	byGoto  crawlMove = iota // Page.navigate: a typed URL
	byPage                   // location.href from the page
	byClick                  // a mouse click on a link it adds to the page
)

// chromiumCrawl crawls with Chromium.
func chromiumCrawl(c *chromiumSession, base string, p crawlPlan) ([]string, error) {
	first := true
	return crawl(base, p, func(u string) (int, error) {
		if first || p.move == byGoto {
			first = false
			return chromiumGo(c.ctx, u)
		}
		if p.move == byPage {
			return chromiumFromPage(c.ctx, u)
		}
		return chromiumClickTo(c.ctx, u)
	},
		func() ([]string, error) { return within(c.ctx, 10*time.Second, chromedp.Evaluate[[]string](linksJS)) },
		func() (string, error) {
			return within(c.ctx, 10*time.Second, chromedp.Evaluate[string]("document.body.innerText"))
		})
}

// firefoxCrawl crawls with Firefox.
func firefoxCrawl(b *browserctl.Firefox, base string, p crawlPlan) ([]string, error) {
	return crawl(base, p, func(u string) (int, error) { return 0, b.Load(u) },
		func() ([]string, error) {
			var ls []string
			err := b.Eval(linksJS, &ls)
			return ls, err
		},
		func() (string, error) {
			var s string
			err := b.Eval("document.body.innerText", &s)
			return s, err
		})
}

// startFirefox starts Firefox ESR trusting the sites' CA, once more if
// it does not answer (it may not, on a loaded machine).
func startFirefox(env *behaviourEnv, prefs map[string]any) (*browserctl.Firefox, error) {
	b, err := browserctl.StartFirefox(env.tmp(), env.s.caFile, prefs)
	if err != nil {
		b, err = browserctl.StartFirefox(env.tmp(), env.s.caFile, prefs)
	}
	return b, err
}

// firefoxClick clicks the element with the id (with user activation, as a
// person's click) and waits until the page it leads to has loaded: want is
// the path and query it must show.
func firefoxClick(b *browserctl.Firefox, id, want string) error {
	if err := b.Click(id); err != nil {
		return fmt.Errorf("click #%s: %w", id, err)
	}
	return firefoxWait(b, want)
}

// firefoxWait waits until Firefox shows the page at want (path and query),
// loaded.
func firefoxWait(b *browserctl.Firefox, want string) error {
	var at string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err := b.Eval(`location.pathname + location.search + (document.readyState === 'complete' ? '' : ' loading')`, &at); err == nil && at == want {
			return nil
		}
	}
	return fmt.Errorf("firefox shows %q, want %q", at, want)
}

// openTabs ctrl-clicks each link that matches the selectors, one after the
// other at a person's quickest, each opening a background tab, and returns
// a context of each new tab once it has loaded (cancel them to close the
// tabs).
func openTabs(ctx context.Context, sels []string) ([]context.Context, []context.CancelFunc, error) {
	before, err := chromedp.Targets(ctx)
	if err != nil {
		return nil, nil, err
	}
	old := map[target.ID]bool{}
	for _, t := range before {
		old[t.TargetID] = true
	}
	for _, sel := range sels {
		nodes, err := within(ctx, 10*time.Second, chromedp.Nodes(chromedp.CSS(sel)))
		if err != nil || len(nodes) == 0 {
			return nil, nil, fmt.Errorf("%s: %v", sel, err)
		}
		if _, err := within(ctx, 10*time.Second, chromedp.MouseClickNode(nodes[0], chromedp.ButtonModifiers(chromedp.Modifier(2)))); err != nil {
			return nil, nil, fmt.Errorf("ctrl-click %s: %w", sel, err)
		}
		time.Sleep(60 * time.Millisecond)
	}
	var tabs []target.ID
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		all, err := chromedp.Targets(ctx)
		if err != nil {
			return nil, nil, err
		}
		tabs = tabs[:0]
		for _, t := range all {
			if t.Type == "page" && !old[t.TargetID] {
				tabs = append(tabs, t.TargetID)
			}
		}
		if len(tabs) >= len(sels) {
			break
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("%d tabs opened of %d", len(tabs), len(sels))
		}
	}
	var ctxs []context.Context
	var cancels []context.CancelFunc
	for _, id := range tabs {
		tctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(id))
		ctxs, cancels = append(ctxs, tctx), append(cancels, cancel)
		if err := chromedp.Do(tctx); err != nil { // attaches, for as long as tctx lives
			return ctxs, cancels, err
		}
		// A background tab gets no animation frames: poll by the clock.
		if _, err := within(tctx, 30*time.Second, chromedp.Poll[bool](`document.readyState === 'complete' && location.protocol === 'https:'`,
			chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
			return ctxs, cancels, fmt.Errorf("tab %s: %w", id, err)
		}
	}
	return ctxs, cancels, nil
}
