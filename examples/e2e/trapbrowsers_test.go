package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/robotsguard/robotsguard/internal/browserctl"
	"github.com/robotsguard/robotsguard/internal/tlsclients"
)

// The trap's evidence of issue 40 part 4, from real browsers: what
// Chromium and Firefox send when another site makes them fetch a trap, and
// when the visitor does it.

// trapSiteOptions are the sites of the trap tests: robots.txt with
// Crawl-delay 1 and /private/ disallowed, the trap /trap/, pages with a
// link to the trap.
func trapSiteOptions(t *testing.T, n int) tlsSiteOptions {
	dir := posersSite(t)
	page := `<!DOCTYPE html><html><head><title>Links</title><link rel="icon" href="data:,"></head><body><h1>Links</h1>
<p><a id="go" href="/trap/same-site.html">archive</a></p></body></html>
`
	if err := os.WriteFile(filepath.Join(dir, "links.html"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	return tlsSiteOptions{n: n, robots: posersRobots, root: dir, guard: "trap /trap/"}
}

// otherSite is a page on another site (https://127.0.0.1:port, another
// site than https://localhost:port for a browser), serving the pages that
// make a visitor's browser fetch a trap: by name, with {trap} the trap's
// URL on the site under test.
func otherSite(t *testing.T, ca *tlsclients.CA, pages map[string]string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := pages[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}), TLSConfig: ca.TLSConfig()}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String()
}

// attackerPages are what a page on another site can do to make a visitor's
// browser fetch the trap, each scenario its own trap URL ({trap}name).
func attackerPages(trap string) map[string]string {
	p := func(title, body string) string {
		return "<!doctype html><html><head><title>" + title + "</title><link rel=\"icon\" href=\"data:,\"></head><body>" + body + "</body></html>"
	}
	r := strings.NewReplacer("{trap}", trap)
	return map[string]string{
		"img.html":      r.Replace(p("img", `<img src="{trap}img.png" onload="document.title='loaded'" onerror="document.title='refused'">`)),
		"iframe.html":   r.Replace(p("iframe", `<iframe src="{trap}iframe.html" onload="document.title='loaded'"></iframe>`)),
		"script.html":   r.Replace(p("script", `<script src="{trap}script.js" onerror="document.title='refused'"></script>`)),
		"fetch.html":    r.Replace(p("fetch", `<script>fetch("{trap}fetch", {mode: "no-cors"}).finally(() => document.title = "done")</script>`)),
		"link.html":     r.Replace(p("link", `<a id="go" href="{trap}link.html">cats</a>`)),
		"redirect.html": r.Replace(p("redirect", `<script>location.href = "{trap}redirect.html"</script>`)),
		"meta.html":     r.Replace(`<!doctype html><html><head><title>meta</title><meta http-equiv="refresh" content="0;url={trap}meta.html"></head><body></body></html>`),
		"form.html":     r.Replace(p("form", `<form id="f" method="POST" action="{trap}form.html"><input name="q" value="1"></form><script>document.getElementById("f").submit()</script>`)),
		"popup.html": r.Replace(p("popup", `<button id="go" onclick="const w = window.open('{trap}popup-1.html'); `+
			`setTimeout(() => { try { w.location = '{trap}popup-2.html' } catch (e) {} }, 1500); setTimeout(() => { try { w.location = '{trap}popup-3.html' } catch (e) {} }, 3000)">open</button>`)),
	}
}

// trapFetch is what the site saw of one trap request.
type trapFetch struct {
	Path, Method, Site, Mode, Dest, User, Referer string
	Status                                        int
}

// trapFetches returns site i's trap requests, from its access log.
func trapFetches(t *testing.T, sites *tlsSites, i int) []trapFetch {
	t.Helper()
	var out []trapFetch
	for _, line := range readLines(t, sites.access[i]) {
		var e struct {
			Request struct {
				Method  string              `json:"method"`
				URI     string              `json:"uri"`
				Headers map[string][]string `json:"headers"`
			} `json:"request"`
			Status int `json:"status"`
		}
		if json.Unmarshal([]byte(line), &e) != nil || !strings.HasPrefix(e.Request.URI, "/trap/") {
			continue
		}
		h := http.Header(e.Request.Headers)
		out = append(out, trapFetch{Path: strings.TrimPrefix(e.Request.URI, "/trap/"), Method: e.Request.Method, Site: h.Get("Sec-Fetch-Site"),
			Mode: h.Get("Sec-Fetch-Mode"), Dest: h.Get("Sec-Fetch-Dest"), User: h.Get("Sec-Fetch-User"), Referer: h.Get("Referer"), Status: e.Status})
	}
	return out
}

// TestTrapBrowsers: real Chromium and Firefox ESR, headless with desktop
// User-Agents over HTTPS, are made to fetch the trap by a page on another
// site in every way such a page can (an image, an iframe, a script, a
// fetch, a link the visitor clicks and its reload, a script redirect and a
// meta refresh without the visitor's click, a form the page submits, a
// popup the visitor's click opens and the page then navigates twice):
// each trap request is refused, and none blocks the visitor, whose next
// page is served. The visitor's own trap requests (a typed URL, a click on
// a link of the site itself) block its address. The test logs what each
// browser sent, which docs/posers.md's trap rule rests on.
func TestTrapBrowsers(t *testing.T) {
	need(t, "chromium", "firefox-esr", "certutil")
	ca, err := tlsclients.NewCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sites := startTLSSites(t, ca, trapSiteOptions(t, 6))
	for b, browser := range []string{"chromium", "firefox-esr"} {
		t.Run(browser, func(t *testing.T) {
			cross, typed, same := sites.urls[3*b], sites.urls[3*b+1], sites.urls[3*b+2]
			other := otherSite(t, ca, attackerPages(cross+"/trap/"))
			drv := startTrapBrowser(t, ca, browser)
			defer drv.close()
			for _, page := range []string{"img.html", "iframe.html", "script.html", "fetch.html", "redirect.html", "meta.html", "form.html"} {
				drv.load(t, other+"/"+page)
				time.Sleep(700 * time.Millisecond)
			}
			drv.load(t, other+"/link.html")
			drv.click(t, "go")
			time.Sleep(time.Second)
			drv.reload(t)
			time.Sleep(time.Second)
			drv.load(t, other+"/popup.html")
			drv.click(t, "go")
			time.Sleep(4 * time.Second)
			// The visitor's next page: served.
			if st := drv.status(t, cross+"/p0.html"); st != 200 {
				t.Errorf("the visitor's page after another site's trap fetches: %d, want 200", st)
			}
			fetches := trapFetches(t, sites, 3*b)
			logFetches(t, browser+", made by another site", fetches)
			want := []string{"img.png", "iframe.html", "script.js", "fetch", "redirect.html", "meta.html", "form.html", "link.html", "popup-1.html"}
			for _, w := range want {
				found := false
				for _, f := range fetches {
					found = found || f.Path == w
				}
				if !found {
					t.Errorf("no trap request for %s", w)
				}
			}
			for _, f := range fetches {
				if f.Status != 403 {
					t.Errorf("%s: %d, want 403", f.Path, f.Status)
				}
			}
			for _, e := range sites.entries(t, 3*b) {
				if e.BlockedUntil != nil && !e.BlockedUntil.IsZero() || e.Reason == "blocked_client" {
					t.Errorf("%s blocked the visitor: %s %s until %v", e.URI, e.Action, e.Reason, e.BlockedUntil)
				}
			}

			// The visitor's own: a typed URL, a click on the site's link.
			drv.load(t, typed+"/trap/typed.html")
			drv.load(t, same+"/links.html")
			drv.click(t, "go")
			time.Sleep(time.Second)
			for _, own := range []struct{ base, what string }{{typed, "a typed URL"}, {same, "a click on the site's own link"}} {
				if st := drv.status(t, own.base+"/p0.html"); st != 403 {
					t.Errorf("after %s to the trap: the next page %d, want 403 (blocked)", own.what, st)
				}
			}
			logFetches(t, browser+", the visitor's own", append(trapFetches(t, sites, 3*b+1), trapFetches(t, sites, 3*b+2)...))
		})
	}
}

func logFetches(t *testing.T, what string, fs []trapFetch) {
	t.Helper()
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n  %-16s %-6s %-12s %-9s %-9s %-4s %s\n", what, "trap", "method", "site", "mode", "dest", "user", "referer")
	for _, f := range fs {
		ref := f.Referer
		if u, err := url.Parse(ref); err == nil && u.Host != "" {
			ref = u.Scheme + "://" + u.Host + u.Path
		}
		fmt.Fprintf(&b, "  %-16s %-6s %-12s %-9s %-9s %-4s %s\n", f.Path, f.Method, f.Site, f.Mode, f.Dest, f.User, ref)
	}
	t.Log(b.String())
}

// trapBrowser drives one real browser through the trap scenarios.
type trapBrowser struct {
	chromium *browser
	firefox  *browserctl.Firefox
}

func startTrapBrowser(t *testing.T, ca *tlsclients.CA, name string) *trapBrowser {
	t.Helper()
	if name == "chromium" {
		bin := chromium(t)
		return &trapBrowser{chromium: newBrowserWith(t, chromedp.UserAgent(desktopChromeUA(t, bin)), chromedp.Flag("ignore-certificate-errors-spki-list", ca.SPKI))}
	}
	ff, err := browserctl.StartFirefox(t.TempDir(), ca.CAFile, map[string]any{"network.http.http3.enable": false, "dom.disable_open_during_load": true})
	if err != nil {
		t.Fatal(err)
	}
	return &trapBrowser{firefox: ff}
}

func (d *trapBrowser) close() {
	if d.firefox != nil {
		d.firefox.Close()
	}
}

// load loads a page (a refusal is a page too).
func (d *trapBrowser) load(t *testing.T, u string) {
	t.Helper()
	if d.firefox != nil {
		// A page whose script navigates away at once (redirect.html)
		// aborts its own load: Firefox ESR 140's BiDi reports that as
		// NS_BINDING_ABORTED, and the next page is what the test reads.
		if err := d.firefox.Load(u); err != nil && !strings.Contains(err.Error(), "NS_BINDING_ABORTED") {
			t.Fatalf("%s: %v", u, err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(d.chromium.ctx, time.Minute)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.NavigateResponse(u)); err != nil && !strings.Contains(err.Error(), "ERR_HTTP_RESPONSE_CODE_FAILURE") {
		t.Fatalf("%s: %v", u, err)
	}
}

// status loads a page and returns the status the browser got.
func (d *trapBrowser) status(t *testing.T, u string) int {
	t.Helper()
	if d.firefox != nil {
		d.load(t, u)
		var st int
		if err := d.firefox.Eval(`performance.getEntriesByType("navigation")[0].responseStatus`, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	ctx, cancel := context.WithTimeout(d.chromium.ctx, time.Minute)
	defer cancel()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
	if err != nil {
		if strings.Contains(err.Error(), "ERR_HTTP_RESPONSE_CODE_FAILURE") {
			return 403
		}
		t.Fatalf("%s: %v", u, err)
	}
	return int(resp.Status)
}

// click clicks the element with the id as a person does (user activation).
func (d *trapBrowser) click(t *testing.T, id string) {
	t.Helper()
	if d.firefox != nil {
		if err := d.firefox.Click(id); err != nil {
			t.Fatal(err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(d.chromium.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#"+id))); err != nil {
		t.Fatal(err)
	}
}

// reload reloads the page as a person does.
func (d *trapBrowser) reload(t *testing.T) {
	t.Helper()
	if d.firefox != nil {
		if err := d.firefox.Reload(); err != nil {
			t.Fatal(err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(d.chromium.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil && !strings.Contains(err.Error(), "ERR_HTTP_RESPONSE_CODE_FAILURE") {
		t.Fatal(err)
	}
}
