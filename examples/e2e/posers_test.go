package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/robotsguard/robotsguard/internal/browserctl"
	"github.com/robotsguard/robotsguard/internal/tlsclients"
	rgreport "github.com/robotsguard/robotsguard/report"
)

// The end-to-end test of issue 25, "Evidence over claims": a client that
// poses as a browser is still held to robots.txt, and a real browser is
// not.

// The User-Agents the posers send: a current Chrome and Firefox on
// Windows. The curl that copies all of Chrome's headers sends the
// User-Agent of the Chromium whose navigation they are (Linux, see
// chromeNavigation), so that nothing in its headers contradicts it.
const (
	poserChrome  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
	poserFirefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:153.0) Gecko/20100101 Firefox/153.0"
)

// posersRobots is the site's robots.txt.
const posersRobots = "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n"

// posersPages are the allowed pages a poser fetches back to back: under
// Crawl-delay 1 with the default burst (3) and grace (1), the fifth is
// throttled at the latest.
const posersPages = 8

// posersSite writes the site: pages p0.html ... p9.html, a gallery of 12
// images with a style sheet, and two private pages robots.txt disallows.
func posersSite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{
		"style.css":           []byte("h1 { color: rgb(1, 2, 3) }\n"),
		"private/secret.html": []byte(posersPage("Secret", "The private plans.")),
		"private/notes.html":  []byte(posersPage("Notes", "The private notes.")),
	}
	for i := range 10 {
		files[fmt.Sprintf("p%d.html", i)] = []byte(posersPage(fmt.Sprintf("Page %d", i), fmt.Sprintf("Content of page %d.", i)))
	}
	var gallery strings.Builder
	for i := range 12 {
		var buf bytes.Buffer
		img := image.NewRGBA(image.Rect(0, 0, 8+i, 8))
		img.Set(0, 0, color.RGBA{uint8(20 * i), 0, 0, 255})
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		files[fmt.Sprintf("img/%d.png", i)] = buf.Bytes()
		fmt.Fprintf(&gallery, "<img src=\"/img/%d.png\" alt=\"%d\">\n", i, i)
	}
	files["gallery.html"] = []byte(strings.Replace(posersPage("Gallery", gallery.String()), "<head>", "<head><link rel=\"stylesheet\" href=\"/style.css\">", 1))
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func posersPage(title, body string) string {
	return "<!DOCTYPE html><html><head><title>" + title + "</title><link rel=\"icon\" href=\"data:,\"></head><body><h1>" + title + "</h1>\n<p>" + body + "</p></body></html>\n"
}

// chromeNavigation is the User-Agent and every other header of a typed
// navigation of real Chromium over HTTPS, as evidence/internal/capture
// recorded it (evidence/testdata/captures/chromium.json).
func chromeNavigation(t *testing.T) (string, [][2]string) {
	t.Helper()
	data, err := os.ReadFile("../../evidence/testdata/captures/chromium.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Requests []struct {
			Case, Origin string
			Header       map[string][]string
		}
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Requests {
		if r.Case != "navigate" || r.Origin != "secure" {
			continue
		}
		var h [][2]string
		for k, v := range r.Header {
			if k != "User-Agent" && k != "Connection" && k != "Host" {
				h = append(h, [2]string{k, v[0]})
			}
		}
		slices.SortFunc(h, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
		if len(r.Header["User-Agent"]) == 0 || !slices.ContainsFunc(h, func(p [2]string) bool { return p[0] == "Sec-Ch-Ua" }) {
			t.Fatalf("the captured navigation lacks a User-Agent or Sec-CH-UA: %v", r.Header)
		}
		return r.Header["User-Agent"][0], h
	}
	t.Fatal("no secure navigation in the Chromium capture")
	return "", nil
}

// poserRun is one poser: a client, the HTTP version it speaks and what
// it claims.
type poserRun struct {
	c      *tlsclients.Client
	proto  string
	as     string // "Chrome UA", "Firefox UA", "Chrome UA and headers"
	ua     string
	header [][2]string
}

func (r poserRun) name() string { return r.c.Name + " " + r.proto + " (" + r.as + ")" }

// poserResult is what became of one.
type poserResult struct {
	name            string
	caught, limited bool // refused its first request (disallowed, tls); met a 429
	served          int  // allowed pages served before the first 429
	evidence, ja4   string
}

// browserResult is what became of one browser run.
type browserResult struct {
	name            string
	seen, logged    int // answers the browser saw, and the server logged
	refused         int // refusals and throttles among them
	proto, ja4, got string
}

// TestPosers: over real TLS (h1, h2 and h3) to the real binary, under
// "Crawl-delay: 1" and "Disallow: /private/" in the "*" group, every HTTP
// client of the TLS table (curl, wget, Python's urllib, requests, httpx and
// aiohttp, Scrapy, Node, Java, Go), sending a current Chrome User-Agent
// (and some Firefox's), over each HTTP version it speaks, is refused a
// disallowed page from its first request (403, X-Robots-Guard: disallowed,
// the evidence naming its TLS stack) and throttled (429, Retry-After) when
// it fetches allowed pages faster than the Crawl-delay; curl with
// Chrome's User-Agent and all of Chrome's headers is caught by its TLS
// stack alone. Real Chromium and Firefox ESR, headless with ordinary
// desktop User-Agents, over HTTP/2 and HTTP/3, load a page with 12 images
// and a style sheet, pages in quick succession and the disallowed pages,
// all served with their content, none refused or throttled. Each client
// has a site of its own (a port and a zone: its state apart, as a client
// on another address has).
func TestPosers(t *testing.T) {
	need(t)
	start := time.Now()
	ca, err := tlsclients.NewCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fullUA, fullHeader := chromeNavigation(t)
	var runs []poserRun
	for _, c := range tlsclients.Clients {
		for _, proto := range c.Protos {
			runs = append(runs, poserRun{c: c, proto: proto, as: "Chrome UA", ua: poserChrome})
		}
		switch c.Name {
		case "curl", "wget", "python-requests", "go":
			runs = append(runs, poserRun{c: c, proto: c.Protos[len(c.Protos)-1], as: "Firefox UA", ua: poserFirefox})
		}
		if c.Name == "curl" {
			for _, proto := range c.Protos {
				runs = append(runs, poserRun{c: c, proto: proto, as: "Chrome UA and headers", ua: fullUA, header: fullHeader})
			}
		}
	}
	browsers := []string{"chromium h2", "chromium h3", "firefox-esr h2", "firefox-esr h3"}
	sites := startTLSSites(t, ca, tlsSiteOptions{n: len(runs) + len(browsers), robots: posersRobots, root: posersSite(t), guard: behaviourOffHere})

	var posers []poserResult
	for i, r := range runs {
		t.Run(strings.NewReplacer(" ", "_", "(", "", ")", "").Replace(r.name()), func(t *testing.T) {
			if !r.c.Available() {
				missing(t, "%s is not installed", r.c.Tool)
			}
			posers = append(posers, tryPoser(t, ca, sites, i, r))
		})
	}
	t.Run("curl_h3", func(t *testing.T) {
		need(t, "curl")
		// Debian 12's curl (7.88) is built without HTTP/3: its --version
		// lists no HTTP3 feature.
		if out, _ := exec.Command("curl", "--version").Output(); !strings.Contains(string(out), "HTTP3") {
			t.Skip("the installed curl has no HTTP/3 (no HTTP3 in curl --version's features)")
		}
		t.Error("curl has HTTP/3 now: add its h3 run (Client.Protos)")
	})

	var seen []browserResult
	for j, name := range browsers {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			i := len(runs) + j
			var res browserResult
			browser, proto, _ := strings.Cut(name, " ")
			switch browser {
			case "chromium":
				res = chromiumLoads(t, ca, sites.urls[i], proto)
			default:
				res = firefoxLoads(t, ca, sites.urls[i], proto)
			}
			res.name = name
			serverSaw(t, sites, i, proto, &res)
			seen = append(seen, res)
		})
	}

	// A client is caught when every run of it was: refused on its first
	// request and throttled.
	caught, limited, clients := 0, 0, map[string]bool{}
	for _, p := range posers {
		name := strings.Fields(p.name)[0]
		if ok, seen := clients[name]; !seen || ok {
			clients[name] = p.caught && p.limited
		}
		t.Logf("poser %-44s caught on its first request: %-3s  429 seen: %-3s (after %d pages)  evidence %s  JA4 %s",
			p.name, yesNo(p.caught), yesNo(p.limited), p.served, p.evidence, p.ja4)
		if p.caught {
			caught++
		}
		if p.limited {
			limited++
		}
	}
	refused, answers, refusedRuns := 0, 0, 0
	for _, b := range seen {
		t.Logf("browser %-15s %d answers seen by the browser, %d logged by the server, %d refused or throttled, over %s, JA4 %s; %s",
			b.name, b.seen, b.logged, b.refused, b.proto, b.ja4, b.got)
		refused, answers = refused+b.refused, answers+b.seen+b.logged
		if b.refused > 0 {
			refusedRuns++
		}
	}
	names := slices.Sorted(maps.Keys(clients))
	caughtClients := 0
	for _, n := range names {
		if clients[n] {
			caughtClients++
		}
	}
	t.Logf("%d of %d clients caught (%s), %d browsers refused: %d of %d poser runs refused on their first request, %d of %d throttled; %d of %d browser runs refused or throttled (%d of %d answers, the browsers' and the server's); %s",
		caughtClients, len(clients), strings.Join(names, ", "), refusedRuns, caught, len(posers), limited, len(posers),
		refusedRuns, len(seen), refused, answers, time.Since(start).Round(time.Second))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// tryPoser runs one poser against site i: a disallowed page first, then
// posersPages allowed pages back to back. A client that cannot run here
// (a Python module missing) skips the test.
func tryPoser(t *testing.T, ca *tlsclients.CA, sites *tlsSites, i int, r poserRun) poserResult {
	t.Helper()
	res := poserResult{name: r.name()}
	base := sites.urls[i]
	urls := []string{base + "/private/secret.html"}
	for p := range posersPages {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", base, p))
	}
	got, err := r.c.Fetch(context.Background(), ca, t.TempDir(), tlsclients.Request{URLs: urls, UA: r.ua, Header: r.header, Proto: r.proto})
	if err != nil {
		if m := regexp.MustCompile(`No module named '(\w+)'`).FindStringSubmatch(err.Error()); m != nil {
			missing(t, "Python's %s is not installed", m[1])
		}
		t.Fatalf("%v", err)
	}
	wantProto := map[string]string{"h1": "1.1", "h2": "2"}[r.proto]
	for _, a := range got {
		if a.Proto != wantProto {
			t.Errorf("%s: answered over HTTP/%s, want HTTP/%s", a.URL, a.Proto, wantProto)
		}
	}
	first := got[0]
	res.evidence = first.Header.Get("X-Robots-Guard-Evidence")
	res.caught = first.Status == 403 && first.Header.Get("X-Robots-Guard") == "disallowed" && slices.Contains(strings.Split(res.evidence, ","), "tls") &&
		!strings.Contains(first.Body, "private plans")
	if !res.caught {
		t.Errorf("first request, %s: %d, X-Robots-Guard %q, evidence %q, body %.200q; want 403 disallowed with evidence tls, not the page",
			first.URL, first.Status, first.Header.Get("X-Robots-Guard"), res.evidence, first.Body)
	}
	for p, a := range got[1:] {
		switch {
		case a.Status == 200 && !res.limited:
			if !strings.Contains(a.Body, fmt.Sprintf("<h1>Page %d</h1>\n<p>Content of page %d.</p>", p, p)) {
				t.Errorf("%s: served %.200q, not its page", a.URL, a.Body)
			}
			res.served++
		case a.Status == 429:
			res.limited = true
			if a.Header.Get("Retry-After") == "" || strings.Contains(a.Body, "Content of page") || !strings.Contains(a.Header.Get("X-Robots-Guard-Evidence"), "tls") {
				t.Errorf("%s: 429 with Retry-After %q, evidence %q, body %.200q; want a Retry-After, the evidence and not the page",
					a.URL, a.Header.Get("Retry-After"), a.Header.Get("X-Robots-Guard-Evidence"), a.Body)
			}
		case a.Status == 200: // after a 429, the bucket may have refilled
			if !strings.Contains(a.Body, fmt.Sprintf("Content of page %d.", p)) {
				t.Errorf("%s: served %.200q, not its page", a.URL, a.Body)
			}
		default:
			t.Errorf("%s: %d %q, want 200 or 429", a.URL, a.Status, a.Header.Get("X-Robots-Guard"))
		}
	}
	if res.served == 0 {
		t.Errorf("no allowed page served: %d", got[1].Status)
	}
	if !res.limited {
		t.Errorf("%d allowed pages back to back under Crawl-delay: 1: none throttled", posersPages)
	}
	// The decision log says the same: class poser, refused for the rule,
	// the evidence and a JA4 of the protocol (t: TCP).
	var entries []rgreport.Entry
	for _, e := range sites.entries(t, i) {
		if e.URI != "/robots.txt" { // startTLSSites' readiness check
			entries = append(entries, e)
		}
	}
	if len(entries) != len(urls) {
		t.Errorf("%d decisions logged for %d requests", len(entries), len(urls))
	} else {
		e := entries[0]
		res.ja4 = e.JA4
		if e.Class != "poser" || e.Reason != "disallowed" || !strings.Contains(e.Evidence, "tls") || len(e.JA4) != 36 || e.JA4[0] != 't' {
			t.Errorf("first decision: class %q reason %q evidence %q JA4 %q, want a poser refused with evidence tls and a TCP JA4", e.Class, e.Reason, e.Evidence, e.JA4)
		}
	}
	return res
}

// desktopChromeUA is the User-Agent of the installed Chromium as it sends
// it when it is not headless: its own without "Headless".
func desktopChromeUA(t *testing.T, bin string) string {
	t.Helper()
	out, _ := exec.Command(bin, "--version").Output()
	m := regexp.MustCompile(`Chromium (\d+)\.`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("chromium --version: %q", out)
	}
	return "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + string(m[1]) + ".0.0.0 Safari/537.36"
}

// loadedJS reports a gallery's rendering, once every image has settled:
// the widths of the images that rendered, the heading's colour (the style
// sheet's), and each subresource's protocol and, where the browser tells
// (responseStatus), status.
const loadedJS = `new Promise(done => {
  const check = () => Array.from(document.images).every(i => i.complete)
    ? done({
        widths: Array.from(document.images).filter(i => i.naturalWidth > 0).map(i => i.naturalWidth),
        color: getComputedStyle(document.querySelector("h1")).color,
        ua: navigator.userAgent,
        resources: performance.getEntriesByType("resource").map(e => ({name: e.name, proto: e.nextHopProtocol, status: e.responseStatus || 0})),
      })
    : setTimeout(check, 50);
  check();
})`

// pageJS reports a page: its text and its navigation's protocol and status.
const pageJS = `({text: document.body.innerText, proto: performance.getEntriesByType("navigation")[0].nextHopProtocol,
  status: performance.getEntriesByType("navigation")[0].responseStatus || 0})`

type loaded struct {
	Widths    []int
	Color, UA string
	Resources []struct {
		Name, Proto string
		Status      int
	}
}

type pageSeen struct {
	Text, Proto string
	Status      int
}

// checkGallery checks what the browser rendered of the gallery: 12
// images, each the site's, the style sheet applied, 13 subresources over
// proto ("h2", "h3"), none refused where the browser tells the status.
func checkGallery(t *testing.T, l loaded, proto string, res *browserResult) {
	t.Helper()
	if want := []int{8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}; !slices.Equal(l.Widths, want) {
		t.Errorf("images rendered, by width: %v, want %v", l.Widths, want)
	}
	if l.Color != "rgb(1, 2, 3)" {
		t.Errorf("the heading's colour %q: the style sheet was not applied", l.Color)
	}
	if len(l.Resources) != 13 {
		t.Errorf("%d subresources, want 13 (12 images, a style sheet): %+v", len(l.Resources), l.Resources)
	}
	for _, r := range l.Resources {
		res.seen++
		if r.Proto != proto || r.Status != 0 && r.Status != 200 {
			t.Errorf("%s: status %d over %q, want 200 over %s", r.Name, r.Status, r.Proto, proto)
		}
		if r.Status != 0 && r.Status != 200 {
			res.refused++
		}
	}
}

// checkPage checks a page the browser shows: its own, over proto, 200.
func checkPage(t *testing.T, u string, p pageSeen, status int, proto, want string, res *browserResult) {
	t.Helper()
	res.seen++
	if status == 0 { // the browser does not say it otherwise
		status = p.Status
	}
	if status != 0 && status != 200 {
		res.refused++
	}
	if status != 0 && status != 200 || !strings.Contains(p.Text, want) || p.Proto != proto {
		t.Errorf("%s: %d over %q, text %.200q; want 200 over %s with %q", u, status, p.Proto, p.Text, proto, want)
	}
}

// browserPages are the pages a browser loads after the gallery, in quick
// succession: the allowed ones, then the disallowed ones.
func browserPages(base string) (urls, want []string) {
	for i := range posersPages {
		urls, want = append(urls, fmt.Sprintf("%s/p%d.html", base, i)), append(want, fmt.Sprintf("Content of page %d.", i))
	}
	return append(urls, base+"/private/secret.html", base+"/private/notes.html"), append(want, "The private plans.", "The private notes.")
}

// chromiumLoads drives real headless Chromium, with the desktop
// User-Agent of its version, over proto: HTTP/2 (QUIC off: Caddy's Alt-Svc
// would move it to HTTP/3) or HTTP/3 (QUIC forced on for the site's
// origin, its certificate accepted by the leaf's public key, which QUIC
// requires for a certificate of a local CA).
func chromiumLoads(t *testing.T, ca *tlsclients.CA, base, proto string) browserResult {
	t.Helper()
	bin := chromium(t)
	ua := desktopChromeUA(t, bin)
	opts := []chromedp.ExecAllocatorOption{chromedp.UserAgent(ua), chromedp.Flag("ignore-certificate-errors-spki-list", ca.SPKI)}
	if proto == "h3" {
		opts = append(opts, chromedp.Flag("disable-quic", false), chromedp.Flag("enable-quic", true),
			chromedp.Flag("origin-to-force-quic-on", strings.TrimPrefix(base, "https://")))
	}
	b := newBrowserWith(t, opts...)
	res := browserResult{proto: proto}
	navigate := func(u string) int {
		ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
		defer cancel()
		resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
		if err != nil { // an error status with no body, for one
			t.Errorf("%s: %v", u, err)
			return -1
		}
		if resp.Protocol != proto {
			t.Errorf("%s: Chromium used %q, want %s", u, resp.Protocol, proto)
		}
		return int(resp.Status)
	}
	st := navigate(base + "/gallery.html")
	l := eval[loaded](t, b, loadedJS, chromedp.EvalAwaitPromise)
	if l.UA != ua || strings.Contains(l.UA, "Headless") {
		t.Errorf("Chromium's User-Agent %q, want %q", l.UA, ua)
	}
	checkPage(t, base+"/gallery.html", eval[pageSeen](t, b, pageJS), st, proto, "Gallery", &res)
	checkGallery(t, l, proto, &res)
	urls, want := browserPages(base)
	for k, u := range urls {
		st := navigate(u)
		if st < 0 {
			res.seen, res.refused = res.seen+1, res.refused+1
			continue
		}
		checkPage(t, u, eval[pageSeen](t, b, pageJS), st, proto, want[k], &res)
	}
	res.got = fmt.Sprintf("%d images, %d pages", len(l.Widths), len(urls)+1)
	return res
}

// firefoxLoads drives real headless Firefox ESR, whose own User-Agent is
// a desktop one (headless Firefox says nothing of it), over proto: HTTP/2
// (HTTP/3 off: Caddy's Alt-Svc would move it there) or HTTP/3, forced for
// the site with Firefox's testing preferences (an Alt-Svc mapping used
// from the first request), and allowed although its profile trusts a
// root certificate of its own (Firefox turns HTTP/3 off when it finds
// third-party roots).
func firefoxLoads(t *testing.T, ca *tlsclients.CA, base, proto string) browserResult {
	t.Helper()
	need(t, "firefox-esr", "certutil")
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	prefs := map[string]any{"network.http.http3.enable": false}
	if proto == "h3" {
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
	res := browserResult{proto: proto}
	load := func(u string) pageSeen {
		if err := b.Load(u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		var p pageSeen
		if err := b.Eval(pageJS, &p); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		return p
	}
	checkPage(t, base+"/gallery.html", load(base+"/gallery.html"), 0, proto, "Gallery", &res)
	var l loaded
	if err := b.Eval(loadedJS, &l); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(l.UA, "Firefox/") || strings.Contains(l.UA, "Headless") {
		t.Errorf("Firefox's User-Agent %q", l.UA)
	}
	checkGallery(t, l, proto, &res)
	urls, want := browserPages(base)
	for k, u := range urls {
		checkPage(t, u, load(u), 0, proto, want[k], &res)
	}
	res.got = fmt.Sprintf("%d images, %d pages", len(l.Widths), len(urls)+1)
	return res
}

// serverSaw checks what the server answered browser site i: every answer
// 200 over the protocol (access log), every decision an allowance of a
// browser, with no evidence, and a JA4 of the protocol (q for QUIC).
func serverSaw(t *testing.T, sites *tlsSites, i int, proto string, res *browserResult) {
	t.Helper()
	wantProto := map[string]string{"h2": "HTTP/2.0", "h3": "HTTP/3.0"}[proto]
	served := sites.served(t, i)
	pages := 0
	for _, a := range served {
		if a.Request.URI == "/robots.txt" && a.Request.Headers["User-Agent"][0] == "Go-http-client/1.1" {
			continue // startTLSSites' readiness check
		}
		res.logged++
		if a.Status != 200 {
			res.refused++
		}
		if a.Status != 200 || a.Request.Proto != wantProto {
			t.Errorf("server: %s answered %d over %s, want 200 over %s", a.Request.URI, a.Status, a.Request.Proto, wantProto)
		}
		pages++
	}
	if want := 1 + 13 + posersPages + 2; pages != want {
		t.Errorf("server answered %d requests, want %d (the gallery, its 13 subresources, %d pages, 2 private pages)", pages, want, posersPages)
	}
	ja4s := map[string]bool{}
	for _, e := range sites.entries(t, i) {
		if e.URI == "/robots.txt" {
			continue
		}
		ja4s[e.JA4] = true
		if e.Action != "allow" {
			res.refused++
		}
		if e.Action != "allow" || e.Class != "browser" || e.Evidence != "" {
			t.Errorf("decision for %s: %s %s, class %s, evidence %q", e.URI, e.Action, e.Reason, e.Class, e.Evidence)
		}
	}
	for ja4 := range ja4s {
		res.ja4 = ja4
		if len(ja4) != 36 || (proto == "h3") != (ja4[0] == 'q') {
			t.Errorf("JA4 %q over %s", ja4, proto)
		}
	}
}
