package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/robotsguard/robotsguard/framing"
	"github.com/robotsguard/robotsguard/internal/browserctl"
	"github.com/robotsguard/robotsguard/internal/tlsclients"
)

// The end-to-end test of issue 40 part 3: the clients that copy a
// browser's TLS hello, or speak a library's HTTP/2 under a browser's
// User-Agent, are caught by how their HTTP stack speaks (the framing); real
// browsers are refused nothing.

// framingRun is one client of TestFramingPosers.
type framingRun struct {
	c      *tlsclients.Client
	proto  string
	as     string
	header bool // Chrome's navigation headers too
}

// TestFramingPosers: over real TLS to the real binary (the robots_guard
// listener wrapper on), under "Crawl-delay: 1" and "Disallow: /private/",
// the uTLS client (refraction-networking/utls v1.8.2 HelloChrome_Auto,
// Chrome's hello copied exactly) with Chrome's User-Agent and all of
// Chrome's navigation headers, over HTTP/2 with Go's framing (and over
// HTTP/1.1 with Go's header order), and Python's httpx (h2) and Node's
// http2 with a Chrome User-Agent, are each refused the disallowed page
// from their first request (403, X-Robots-Guard: disallowed, the evidence
// naming framing), throttled under the Crawl-delay, and logged with their
// framing fingerprint. The uTLS client is caught by its framing alone: its
// TLS and headers are Chrome's.
func TestFramingPosers(t *testing.T) {
	need(t)
	ca, err := tlsclients.NewCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*tlsclients.Client{"utls": tlsclients.UTLS}
	for _, c := range tlsclients.Clients {
		clients[c.Name] = c
	}
	runs := []framingRun{
		{clients["utls"], "h2", "uTLS, Chrome's UA and headers", true},
		{clients["utls"], "h1", "uTLS, Chrome's UA and headers", true},
		{clients["python-httpx"], "h2", "Chrome UA", false},
		{clients["node"], "h2", "Chrome UA", false},
	}
	fullUA, fullHeader := chromeNavigation(t)
	sites := startTLSSites(t, ca, tlsSiteOptions{n: len(runs), robots: posersRobots, root: posersSite(t)})
	for i, r := range runs {
		t.Run(r.c.Name+"_"+r.proto, func(t *testing.T) {
			if !r.c.Available() {
				missing(t, "%s is not installed", r.c.Tool)
			}
			run := poserRun{c: r.c, proto: r.proto, as: r.as, ua: poserChrome}
			if r.header {
				run.ua, run.header = fullUA, fullHeader
			}
			res := tryFramingPoser(t, ca, sites, i, run, r.c.Name == "utls")
			t.Logf("%-14s %s (%s): caught on its first request: %s, 429 seen: %s (after %d pages), evidence %s, framing %s",
				r.c.Name, r.proto, r.as, yesNo(res.caught), yesNo(res.limited), res.served, res.evidence, res.ja4)
		})
	}
}

// tryFramingPoser runs one poser against site i as tryPoser does, wanting
// framing in the evidence (and, when alone, nothing else: the uTLS
// client's TLS and headers are Chrome's). res.ja4 holds the framing
// fingerprint logged.
func tryFramingPoser(t *testing.T, ca *tlsclients.CA, sites *tlsSites, i int, r poserRun, alone bool) poserResult {
	t.Helper()
	res := poserResult{name: r.name()}
	base := sites.urls[i]
	urls := []string{base + "/private/secret.html"}
	for p := range posersPages {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", base, p))
	}
	got, err := r.c.Fetch(context.Background(), ca, t.TempDir(), tlsclients.Request{URLs: urls, UA: r.ua, Header: r.header, Proto: r.proto})
	if err != nil {
		if strings.Contains(err.Error(), "No module named") {
			missing(t, "%v", err)
		}
		t.Fatal(err)
	}
	first := got[0]
	res.evidence = first.Header.Get("X-Robots-Guard-Evidence")
	codes := strings.Split(res.evidence, ",")
	res.caught = first.Status == 403 && first.Header.Get("X-Robots-Guard") == "disallowed" && slices.Contains(codes, "framing") &&
		(!alone || len(codes) == 1) && !strings.Contains(first.Body, "private plans")
	if !res.caught {
		t.Errorf("first request, %s: %d, X-Robots-Guard %q, evidence %q, body %.200q; want 403 disallowed with evidence framing, not the page",
			first.URL, first.Status, first.Header.Get("X-Robots-Guard"), res.evidence, first.Body)
	}
	for p, a := range got[1:] {
		switch {
		case a.Status == 429:
			res.limited = true
			if a.Header.Get("Retry-After") == "" || strings.Contains(a.Body, "Content of page") || !strings.Contains(a.Header.Get("X-Robots-Guard-Evidence"), "framing") {
				t.Errorf("%s: 429 with Retry-After %q, evidence %q; want a Retry-After, framing, and not the page", a.URL, a.Header.Get("Retry-After"), a.Header.Get("X-Robots-Guard-Evidence"))
			}
		case a.Status == 200:
			if !strings.Contains(a.Body, fmt.Sprintf("Content of page %d.", p)) {
				t.Errorf("%s: served %.200q, not its page", a.URL, a.Body)
			}
			if !res.limited {
				res.served++
			}
		default:
			t.Errorf("%s: %d, want 200 or 429", a.URL, a.Status)
		}
	}
	if !res.limited {
		t.Errorf("%d allowed pages back to back under Crawl-delay: 1: none throttled", posersPages)
	}
	var first0 = true
	for _, e := range sites.entries(t, i) {
		if e.URI == "/robots.txt" {
			continue
		}
		if first0 {
			first0, res.ja4 = false, e.Framing
			if e.Class != "poser" || e.Reason != "disallowed" || !strings.Contains(e.Evidence, "framing") || !strings.Contains(e.EvidenceReason, "framing: its HTTP framing is") {
				t.Errorf("first decision: class %q reason %q evidence %q (%s), want a poser refused naming framing", e.Class, e.Reason, e.Evidence, e.EvidenceReason)
			}
		}
		if s := framing.Lookup(e.Framing); !s.Known || s.Browser || !strings.HasPrefix(e.Framing, r.proto+":") {
			t.Errorf("%s: framing %q (%+v), want a library's over %s", e.URI, e.Framing, s, r.proto)
		}
	}
	return res
}

// peoplePage is a page of TestFramingPeople's site: a style sheet, a
// script, two images and links.
func peoplePage(title, next string) string {
	return `<!DOCTYPE html><html><head><title>` + title + `</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/style.css">
<script src="/app.js"></script></head><body><h1>` + title + `</h1><img src="/img/1.png" alt="1"><img src="/img/2.png" alt="2">
<p><a id="next" href="` + next + `">next</a></p></body></html>
`
}

// peopleSite writes posersSite plus two pages with a script, and the
// script.
func peopleSite(t *testing.T) string {
	dir := posersSite(t)
	for name, data := range map[string]string{
		"a.html": peoplePage("A", "/b.html"), "b.html": peoplePage("B", "/private/secret.html"),
		"app.js": "document.documentElement.dataset.js = 'ran';\n", "favicon.ico": "",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// pageState is what TestFramingPeople reads of the page a browser shows.
const pageStateJS = `({title: document.title, js: document.documentElement.dataset.js || "", color: getComputedStyle(document.querySelector("h1")).color,
  images: Array.from(document.images).filter(i => i.complete && i.naturalWidth > 0).length, text: document.body.innerText,
  proto: (performance.getEntriesByType("navigation")[0] || {}).nextHopProtocol || ""})`

type pageState struct {
	Title, JS, Color, Text, Proto string
	Images                        int
}

// TestFramingPeople: real Chromium and Firefox ESR, headless with their
// desktop User-Agents, over HTTP/1.1, HTTP/2 and HTTP/3, each browse a
// site as a person does: a page with a style sheet, a script and images,
// a reload, a click to the next page, back and forward, a click to a page
// robots.txt disallows and its reload. Every request the server answered
// (Caddy's access log) is 200 or 304, every decision an allowance of a
// browser with no evidence, and the framing logged is the browser's own
// engine or unknown, never a library's. With ROBOTSGUARD_FRAMING_BREAK=1
// the table calls Chromium's and Firefox's HTTP/2 and HTTP/3 shapes a
// library's (framing.Builtin's rows rewritten in this process only: the
// binary is rebuilt with the variable), and the test must fail: see
// docs/posers.md.
func TestFramingPeople(t *testing.T) {
	need(t, "chromium", "firefox-esr", "certutil")
	ca, err := tlsclients.NewCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runs := []string{"chromium h1", "chromium h2", "chromium h3", "firefox-esr h1", "firefox-esr h2", "firefox-esr h3"}
	sites := startTLSSites(t, ca, tlsSiteOptions{n: len(runs), robots: posersRobots, root: peopleSite(t)})
	for i, name := range runs {
		browser, proto, _ := strings.Cut(name, " ")
		t.Run(browser+"_"+proto, func(t *testing.T) {
			var pages []pageState
			if browser == "chromium" {
				pages = chromiumBrowses(t, ca, sites.urls[i], proto)
			} else {
				pages = firefoxBrowses(t, ca, sites.urls[i], proto)
			}
			want := []string{"A", "A", "B", "A", "B", "Secret", "Secret"} // load, reload, click, back, forward, click, reload
			for k, p := range pages {
				if k < len(want) && (p.Title != want[k] || p.Title != "Secret" && (p.JS != "ran" || p.Color != "rgb(1, 2, 3)" || p.Images != 2)) {
					t.Errorf("step %d: %+v, want page %s with its script run, its style and 2 images", k, p, want[k])
				}
			}
			if len(pages) != len(want) {
				t.Errorf("%d steps, want %d", len(pages), len(want))
			}
			peopleServed(t, sites, i, browser, proto)
		})
	}
}

// peopleServed checks what the server answered site i: every answer 200
// or 304 over proto (access log), every decision an allowance of a
// browser with no evidence, its framing the browser's own engine's or
// unknown.
func peopleServed(t *testing.T, sites *tlsSites, i int, browser, proto string) {
	t.Helper()
	wantProto := map[string]string{"h1": "HTTP/1.1", "h2": "HTTP/2.0", "h3": "HTTP/3.0"}[proto]
	answers, refused := 0, 0
	for _, a := range sites.served(t, i) {
		if a.Request.URI == "/robots.txt" && a.Request.Headers["User-Agent"][0] == "Go-http-client/1.1" {
			continue // startTLSSites' readiness check
		}
		answers++
		if a.Status != 200 && a.Status != 304 || a.Request.Proto != wantProto {
			refused++
			t.Errorf("server: %s answered %d over %s, want 200 or 304 over %s", a.Request.URI, a.Status, a.Request.Proto, wantProto)
		}
	}
	family := map[string]string{"chromium": "chromium", "firefox-esr": "firefox"}[browser]
	prints := map[string]bool{}
	decisions := 0
	for _, e := range sites.entries(t, i) {
		if e.URI == "/robots.txt" {
			continue
		}
		decisions++
		if e.Action != "allow" || e.Class != "browser" || e.Evidence != "" {
			t.Errorf("decision for %s: %s %s, class %s, evidence %q (%s)", e.URI, e.Action, e.Reason, e.Class, e.Evidence, e.EvidenceReason)
		}
		if s := framing.Lookup(e.Framing); s.Known && (!s.Browser || s.Family != family) {
			t.Errorf("decision for %s: framing %q is %+v, want %s's or unknown", e.URI, e.Framing, s, family)
		}
		prints[e.Framing] = true
	}
	if answers < 8 || decisions < answers {
		t.Errorf("%d answers, %d decisions: want every request of the walk answered and decided", answers, decisions)
	}
	var known []string
	for p := range prints {
		if p != "" && framing.Lookup(p).Known {
			known = append(known, p)
		}
	}
	if len(known) == 0 {
		t.Errorf("no request framed as %s's over %s: %v", family, proto, prints)
	}
	t.Logf("%s over %s: %d answers, %d refused; framings %v", browser, proto, answers, refused, slices.Sorted(func(yield func(string) bool) {
		for p := range prints {
			if !yield(p) {
				return
			}
		}
	}))
}

// chromiumBrowses walks real Chromium over proto (h1: HTTP/2 off; h2: QUIC
// off; h3: QUIC forced on for the origin) and returns the page it shows
// after each step.
func chromiumBrowses(t *testing.T, ca *tlsclients.CA, base, proto string) []pageState {
	t.Helper()
	bin := chromium(t)
	// Back and forward load the pages again (no back/forward cache, which
	// would restore them without a request and without a load event).
	opts := []chromedp.ExecAllocatorOption{chromedp.UserAgent(desktopChromeUA(t, bin)), chromedp.Flag("ignore-certificate-errors-spki-list", ca.SPKI),
		chromedp.Flag("disable-features", "BackForwardCache")}
	switch proto {
	case "h1":
		opts = append(opts, chromedp.Flag("disable-http2", true))
	case "h3":
		opts = append(opts, chromedp.Flag("disable-quic", false), chromedp.Flag("enable-quic", true),
			chromedp.Flag("origin-to-force-quic-on", strings.TrimPrefix(base, "https://")))
	}
	b := newBrowserWith(t, opts...)
	var pages []pageState
	step := func(what string, a chromedp.Action[chromedp.Void]) {
		ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
		defer cancel()
		if err := chromedp.Do(ctx, a, chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond) // the images of a page restored from the cache
		pages = append(pages, eval[pageState](t, b, pageStateJS))
	}
	// titled waits for a loaded page whose title meets cond, through the
	// navigation (which replaces the page's JavaScript context).
	titled := func(cond string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			for {
				if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && document.title `+cond)); err == nil && ok {
					return nil
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(50 * time.Millisecond):
				}
			}
		})
	}
	// A real click (input events: user activation) on the link, then the
	// next page's load.
	click := func(from string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(chromedp.Click(chromedp.CSS("#next")), titled(fmt.Sprintf("!== %q", from)))
	}
	history := func(nav chromedp.Action[chromedp.Void], want string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(nav, titled(fmt.Sprintf("=== %q", want)))
	}
	step("load", chromedp.Navigate(base+"/a.html"))
	step("reload", chromedp.Reload())
	step("click", click("A"))
	step("back", history(chromedp.NavigateBack(), "A"))
	step("forward", history(chromedp.NavigateForward(), "B"))
	step("click to a disallowed page", click("B"))
	step("reload", chromedp.Reload())
	if p := pages[0].Proto; p != map[string]string{"h1": "http/1.1", "h2": "h2", "h3": "h3"}[proto] {
		t.Errorf("Chromium used %q, want %s", p, proto)
	}
	return pages
}

// firefoxBrowses walks real Firefox ESR over proto (h1: HTTP/2 off; h3:
// its testing Alt-Svc mapping) and returns the page it shows after each
// step.
func firefoxBrowses(t *testing.T, ca *tlsclients.CA, base, proto string) []pageState {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	prefs := map[string]any{"network.http.http3.enable": false}
	switch proto {
	case "h1":
		prefs["network.http.http2.enabled"] = false
	case "h3":
		prefs = map[string]any{"network.http.http3.enable": true,
			"network.http.http3.alt-svc-mapping-for-testing":           "localhost;h3=:" + u.Port(),
			"network.http.http3.force-use-alt-svc-mapping-for-testing": true,
			"network.http.http3.disable_when_third_party_roots_found":  false}
	}
	b, err := browserctl.StartFirefox(t.TempDir(), ca.CAFile, prefs)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var pages []pageState
	wait := func(what, want string) {
		var p pageState
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			var n int
			if err := b.Eval(`new Promise(ok => document.readyState === "complete" ? ok(0) : addEventListener("load", () => ok(0)))`, &n); err == nil {
				if err := b.Eval(pageStateJS, &p); err == nil && p.Title == want && (want == "Secret" || p.Images == 2) {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the page shows %+v, want %s", what, p, want)
			}
		}
		pages = append(pages, p)
	}
	if err := b.Load(base + "/a.html"); err != nil {
		t.Fatal(err)
	}
	wait("load", "A")
	if err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	wait("reload", "A")
	if err := b.Click("next"); err != nil {
		t.Fatal(err)
	}
	wait("click", "B")
	var n int
	b.Eval(`(history.back(), 0)`, &n)
	wait("back", "A")
	b.Eval(`(history.forward(), 0)`, &n)
	wait("forward", "B")
	if err := b.Click("next"); err != nil {
		t.Fatal(err)
	}
	wait("click to a disallowed page", "Secret")
	if err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	wait("reload", "Secret")
	if p := pages[0].Proto; p != map[string]string{"h1": "http/1.1", "h2": "h2", "h3": "h3"}[proto] {
		t.Errorf("Firefox used %q, want %s", p, proto)
	}
	return pages
}
