package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/quic-go/quic-go/http3"

	"github.com/robotsguard/robotsguard/internal/browserctl"
	"github.com/robotsguard/robotsguard/internal/tlsclients"
	"github.com/robotsguard/robotsguard/tlsprint/quicprint"
)

// The end-to-end test of issue 40, part 2: the QUIC transport parameters
// of an HTTP/3 connection are judged as its TLS hello is.

// TestQUIC: over HTTP/3 to the real binary, under "Crawl-delay: 1" and
// "Disallow: /private/", quic-go's HTTP/3 client with a desktop Chrome
// User-Agent and all of a Chrome navigation's headers is refused the
// disallowed page from its first request (403, X-Robots-Guard:
// disallowed, evidence "tls,quic,framing": its connection's hello is of
// Go's TLS family, its transport parameters and HTTP/3 SETTINGS
// quic-go's) and throttled (429,
// Retry-After); real
// Chromium and Firefox ESR over HTTP/3 load a page with 12 images and a
// style sheet, pages in quick succession, the disallowed pages, a reload,
// back and forward: every request that reached the server (Caddy's access
// log) was answered 200 or 304, every decision is a browser's with no
// evidence, and each has its connection's QUIC fingerprint, known as the
// browser's own stack, so the layer was at work.
func TestQUIC(t *testing.T) {
	need(t)
	start := time.Now()
	ca, err := tlsclients.NewCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sites := startTLSSites(t, ca, tlsSiteOptions{n: 3, robots: posersRobots, root: posersSite(t), guard: behaviourOffHere})
	if strings.Contains(sites.out.String(), "without the robots_guard_quic packet conn wrapper") {
		t.Errorf("Caddy warns of a missing QUIC wrapper:\n%s", sites.out.String())
	}

	t.Run("quic-go", func(t *testing.T) {
		ua, header := chromeNavigation(t)
		rt := &http3.Transport{TLSClientConfig: ca.TLSClientConfig()}
		defer rt.Close()
		get := func(u string) (*http.Response, string) {
			req, _ := http.NewRequest("GET", u, nil)
			req.Header.Set("User-Agent", ua)
			for _, h := range header {
				req.Header.Set(h[0], h[1])
			}
			resp, err := (&http.Client{Transport: rt, Timeout: 10 * time.Second}).Do(req)
			if err != nil {
				t.Fatalf("%s: %v", u, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.Proto != "HTTP/3.0" {
				t.Errorf("%s: answered over %s", u, resp.Proto)
			}
			return resp, string(body)
		}
		resp, body := get(sites.urls[0] + "/private/secret.html")
		ev := resp.Header.Get("X-Robots-Guard-Evidence")
		if resp.StatusCode != 403 || resp.Header.Get("X-Robots-Guard") != "disallowed" || ev != "tls,quic,framing" || strings.Contains(body, "private plans") {
			t.Errorf("first request: %d, X-Robots-Guard %q, evidence %q, body %.200q; want 403 disallowed with evidence tls,quic,framing, not the page",
				resp.StatusCode, resp.Header.Get("X-Robots-Guard"), ev, body)
		}
		served, throttled := 0, false
		for p := range posersPages {
			resp, body := get(fmt.Sprintf("%s/p%d.html", sites.urls[0], p))
			switch {
			case resp.StatusCode == 200 && !throttled:
				if !strings.Contains(body, fmt.Sprintf("Content of page %d.", p)) {
					t.Errorf("p%d: served %.200q", p, body)
				}
				served++
			case resp.StatusCode == 429:
				throttled = true
				if resp.Header.Get("Retry-After") == "" || !strings.Contains(resp.Header.Get("X-Robots-Guard-Evidence"), "quic") || strings.Contains(body, "Content of page") {
					t.Errorf("p%d: 429 with Retry-After %q, evidence %q, body %.100q", p, resp.Header.Get("Retry-After"), resp.Header.Get("X-Robots-Guard-Evidence"), body)
				}
			case resp.StatusCode != 200:
				t.Errorf("p%d: %d", p, resp.StatusCode)
			}
		}
		if served == 0 || !throttled {
			t.Errorf("%d allowed pages back to back under Crawl-delay: 1: %d served, throttled %v", posersPages, served, throttled)
		}
		entries := sites.entries(t, 0)
		var first *struct{ class, evidence, quic, ja4 string }
		for _, e := range entries {
			if e.URI == "/private/secret.html" {
				first = &struct{ class, evidence, quic, ja4 string }{e.Class, e.Evidence, e.QUIC, e.JA4}
			}
		}
		if first == nil || first.class != "poser" || first.evidence != "tls,quic,framing" || first.quic != "q1_g.5.6.7.4.8.9.1.3.b.e.f" || !strings.HasPrefix(first.ja4, "q13") {
			t.Errorf("decision of the first request: %+v, want a poser with evidence tls,quic,framing and quic-go's fingerprint", first)
		}
		t.Logf("quic-go as Chrome over HTTP/3: refused /private/ on its first request (evidence %s, QUIC %s, JA4 %s); %d pages served, then 429",
			ev, first.quic, first.ja4, served)
	})

	for i, name := range []string{"chromium", "firefox-esr"} {
		t.Run(name, func(t *testing.T) {
			i++
			var res browserResult
			if name == "chromium" {
				res = chromiumH3Walk(t, ca, sites.urls[i])
			} else {
				res = firefoxH3Walk(t, ca, sites.urls[i])
			}
			family := map[string]string{"chromium": "chromium", "firefox-esr": "firefox"}[name]
			quic := quicServerSaw(t, sites, i, family, &res)
			t.Logf("%s over HTTP/3: %d answers seen by the browser, %d logged by the server, %d refused or throttled; QUIC %s; %s",
				name, res.seen, res.logged, res.refused, strings.Join(quic, " "), res.got)
		})
	}
	t.Logf("%v", time.Since(start).Round(time.Second))
}

// chromiumH3Walk drives real headless Chromium over HTTP/3 (QUIC forced
// for the site's origin) with its desktop User-Agent: the gallery, the
// pages and the disallowed pages, then a reload, back and forward.
func chromiumH3Walk(t *testing.T, ca *tlsclients.CA, base string) browserResult {
	t.Helper()
	bin := chromium(t)
	b := newBrowserWith(t, chromedp.UserAgent(desktopChromeUA(t, bin)), chromedp.Flag("ignore-certificate-errors-spki-list", ca.SPKI),
		chromedp.Flag("disable-quic", false), chromedp.Flag("enable-quic", true), chromedp.Flag("origin-to-force-quic-on", strings.TrimPrefix(base, "https://")))
	res := browserResult{proto: "h3"}
	navigate := func(u string) int {
		ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
		defer cancel()
		resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
		if err != nil {
			t.Errorf("%s: %v", u, err)
			return -1
		}
		if resp.Protocol != "h3" {
			t.Errorf("%s: Chromium used %q, want h3", u, resp.Protocol)
		}
		return int(resp.Status)
	}
	st := navigate(base + "/gallery.html")
	l := eval[loaded](t, b, loadedJS, chromedp.EvalAwaitPromise)
	checkPage(t, base+"/gallery.html", eval[pageSeen](t, b, pageJS), st, "h3", "Gallery", &res)
	checkGallery(t, l, "h3", &res)
	urls, want := browserPages(base)
	for k, u := range urls {
		st := navigate(u)
		if st < 0 {
			res.seen, res.refused = res.seen+1, res.refused+1
			continue
		}
		checkPage(t, u, eval[pageSeen](t, b, pageJS), st, "h3", want[k], &res)
	}
	// A reload, then back and forward: the last two pages again (back and
	// forward may come from the back/forward cache, which fires no load
	// event: wait for the page's text).
	b.run(t, "reload", chromedp.Reload())
	checkPage(t, "reload", eval[pageSeen](t, b, pageJS), 0, "h3", want[len(want)-1], &res)
	settle := func(what, script, text string) {
		eval[bool](t, b, script)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if eval[bool](t, b, `document.readyState === "complete" && document.body.innerText.includes(`+fmt.Sprintf("%q", text)+`)`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the page never showed %q", what, text)
			}
		}
		checkPage(t, what, eval[pageSeen](t, b, pageJS), 0, "h3", text, &res)
	}
	settle("back", `(history.back(), true)`, want[len(want)-2])
	settle("forward", `(history.forward(), true)`, want[len(want)-1])
	res.got = fmt.Sprintf("%d images, %d pages, a reload, back and forward", len(l.Widths), len(urls)+1)
	return res
}

// firefoxH3Walk drives real headless Firefox ESR over HTTP/3 (its testing
// preferences: an Alt-Svc mapping used from the first request) through
// the same walk.
func firefoxH3Walk(t *testing.T, ca *tlsclients.CA, base string) browserResult {
	t.Helper()
	need(t, "firefox-esr", "certutil")
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	b, err := browserctl.StartFirefox(t.TempDir(), ca.CAFile, map[string]any{"network.http.http3.enable": true,
		"network.http.http3.alt-svc-mapping-for-testing":           "localhost;h3=:" + u.Port(),
		"network.http.http3.force-use-alt-svc-mapping-for-testing": true,
		"network.http.http3.disable_when_third_party_roots_found":  false})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res := browserResult{proto: "h3"}
	page := func(what string) pageSeen {
		var p pageSeen
		if err := b.Eval(pageJS, &p); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return p
	}
	load := func(u string) pageSeen {
		if err := b.Load(u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		return page(u)
	}
	// settle waits until the page shows want and has loaded.
	settle := func(what, want string) pageSeen {
		var p pageSeen
		if err := browserctl.Retry(func() (bool, error) {
			var ready bool
			if err := b.Eval(`document.readyState === "complete" && document.body.innerText.includes(`+fmt.Sprintf("%q", want)+`)`, &ready); err != nil || !ready {
				return false, err
			}
			return true, b.Eval(pageJS, &p)
		}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return p
	}
	checkPage(t, base+"/gallery.html", load(base+"/gallery.html"), 0, "h3", "Gallery", &res)
	var l loaded
	if err := b.Eval(loadedJS, &l); err != nil {
		t.Fatal(err)
	}
	checkGallery(t, l, "h3", &res)
	urls, want := browserPages(base)
	for k, u := range urls {
		checkPage(t, u, load(u), 0, "h3", want[k], &res)
	}
	if err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	checkPage(t, "reload", settle("reload", want[len(want)-1]), 0, "h3", want[len(want)-1], &res)
	var ok bool
	if err := b.Eval(`(history.back(), true)`, &ok); err != nil {
		t.Fatal(err)
	}
	checkPage(t, "back", settle("back", want[len(want)-2]), 0, "h3", want[len(want)-2], &res)
	if err := b.Eval(`(history.forward(), true)`, &ok); err != nil {
		t.Fatal(err)
	}
	checkPage(t, "forward", settle("forward", want[len(want)-1]), 0, "h3", want[len(want)-1], &res)
	res.got = fmt.Sprintf("%d images, %d pages, a reload, back and forward", len(l.Widths), len(urls)+1)
	return res
}

// quicServerSaw checks what the server answered browser site i: every
// answer (Caddy's access log) 200, or 304 for a reload's revalidation (and
// the site's 404 for a favicon it lacks, which Firefox asks for on a
// reload), over HTTP/3; every decision an allowance of a browser with no evidence
// and the QUIC fingerprint of its connection, which the table knows as
// the browser's own stack (family). It returns the fingerprints seen.
func quicServerSaw(t *testing.T, sites *tlsSites, i int, family string, res *browserResult) []string {
	t.Helper()
	pages := 0
	for _, a := range sites.served(t, i) {
		if a.Request.URI == "/robots.txt" && a.Request.Headers["User-Agent"][0] == "Go-http-client/1.1" {
			continue // startTLSSites' readiness check
		}
		res.logged++
		ok := a.Status == 200 || a.Status == 304 || a.Status == 404 && a.Request.URI == "/favicon.ico"
		if !ok {
			res.refused++
		}
		if !ok || a.Request.Proto != "HTTP/3.0" {
			t.Errorf("server: %s answered %d over %s, want 200 or 304 over HTTP/3.0", a.Request.URI, a.Status, a.Request.Proto)
		}
		pages++
	}
	if want := 1 + 13 + posersPages + 2; pages < want {
		t.Errorf("server answered %d requests, want at least %d (the gallery, its 13 subresources, %d pages, 2 private pages, then a reload)", pages, want, posersPages)
	}
	var seen []string
	for _, e := range sites.entries(t, i) {
		if e.URI == "/robots.txt" {
			continue
		}
		if e.Action != "allow" {
			res.refused++
		}
		s := quicprint.Builtin().Lookup(e.QUIC)
		if e.Action != "allow" || e.Class != "browser" || e.Evidence != "" || s.Family != family || !s.Browser {
			t.Errorf("decision for %s: %s %s, class %s, evidence %q, QUIC %q (%+v); want an allowed browser with no evidence and %s's QUIC stack",
				e.URI, e.Action, e.Reason, e.Class, e.Evidence, e.QUIC, s, family)
		}
		if !slices.Contains(seen, e.QUIC) {
			seen = append(seen, e.QUIC)
		}
	}
	return seen
}
