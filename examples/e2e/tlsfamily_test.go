package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/quic-go/quic-go/http3"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/internal/browserctl"
	"github.com/robotsguard/robotsguard/internal/tlsclients"
)

// The end-to-end test of issue 40 part 1, "TLS by family, not by exact
// hello": a client whose caller changed its TLS in a line is still its
// stack's family, and a browser is never a library's.

// chromeTLS12Suites are Chrome's twelve TLS 1.2 cipher suites, in Chrome's
// order: what a Go program sets in one line (tls.Config.CipherSuites) to
// send Chrome's cipher set, which the fingerprint table once read as
// Chromium's.
var chromeTLS12Suites = []uint16{0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035}

// familyPoser is one Go client posing as Chrome.
type familyPoser struct {
	name   string
	proto  string // h1, h2, h3 (quic-go)
	ua     string
	header [][2]string
	// want is the evidence its refusals carry, exactly.
	want string
}

// familyBrowser is one run of a real browser.
type familyBrowser struct {
	browser, proto string // chromium, firefox-esr; h1, h2, h3
	// ua is the User-Agent it sends ("" its own); another engine's makes
	// every request show tls-family, which says that its handshake was
	// known as its own engine's.
	ua string
	// history: a reload and a step back in its history too.
	history bool
}

func (b familyBrowser) name() string {
	s := b.browser + " " + b.proto
	if b.ua != "" {
		s += " (another engine's UA)"
	}
	return s
}

// TestTLSFamily: over real TLS to the real binary, under "Crawl-delay: 1"
// and "Disallow: /private/" in the "*" group, Go's net/http with Chrome's
// twelve TLS 1.2 cipher suites (one line of tls.Config) and a desktop
// Chrome User-Agent, over h1 and h2, is refused the disallowed page from
// its first request (403, X-Robots-Guard: disallowed, evidence tls, not the
// page) and throttled (429 with Retry-After) when it fetches ten allowed
// pages back to back: with no browser headers (tls,sec-fetch), and with
// every header of a real Chromium navigation copied (tls: its family says
// Go), Go's HTTP framing named too (framing). quic-go over HTTP/3 with the
// same headers is caught alike (Go's crypto/tls under QUIC, the family the
// QUIC wrapper reads of its connection's own hello; quic-go's transport
// parameters and HTTP/3 SETTINGS too: tls,quic,framing). Real Chromium and
// Firefox ESR, headless, load a
// page with 12 images and a style sheet, pages in quick succession and the
// disallowed pages: over HTTP/1.1 with their own User-Agents (with a
// reload and a step back), and over h1, h2 and h3 with the other engine's
// User-Agent, where every request must show tls-family (the handshake
// known as its own engine's, resumed sessions included) and nothing
// decisive. Every answer the server logged is 200 or 304, every decision
// an allowance.
func TestTLSFamily(t *testing.T) {
	need(t)
	start := time.Now()
	ca, err := tlsclients.NewCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	navUA, navHeader := chromeNavigation(t)
	posers := []familyPoser{
		{"go, chrome's ciphers", "h1", poserChrome, nil, "tls,sec-fetch,framing"},
		{"go, chrome's ciphers", "h2", poserChrome, nil, "tls,sec-fetch,framing"},
		{"go, chrome's ciphers and headers", "h1", navUA, navHeader, "tls,framing"},
		{"go, chrome's ciphers and headers", "h2", navUA, navHeader, "tls,framing"},
		{"quic-go, chrome's headers", "h3", navUA, navHeader, "tls,quic,framing"},
	}
	browsers := []familyBrowser{
		{"chromium", "h1", "", true},
		{"firefox-esr", "h1", "", true},
	}
	for _, proto := range []string{"h1", "h2", "h3"} {
		browsers = append(browsers, familyBrowser{"chromium", proto, poserFirefox, false}, familyBrowser{"firefox-esr", proto, poserChrome, false})
	}
	root := posersSite(t)
	// A favicon, which Firefox asks for on a reload.
	if err := os.WriteFile(filepath.Join(root, "favicon.ico"), []byte("\x00\x00\x01\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	sites := startTLSSites(t, ca, tlsSiteOptions{n: len(posers) + len(browsers), robots: posersRobots, root: root, guard: behaviourOffHere})

	caught := 0
	for i, p := range posers {
		t.Run(strings.NewReplacer(" ", "_", ",", "", "'", "").Replace(p.name+" "+p.proto), func(t *testing.T) {
			if familyPoserRun(t, ca, sites, i, p) {
				caught++
			}
		})
	}
	refused, answers := 0, 0
	for j, b := range browsers {
		t.Run(strings.NewReplacer(" ", "_", "(", "", ")", "", "'", "").Replace(b.name()), func(t *testing.T) {
			i := len(posers) + j
			var res browserResult
			switch b.browser {
			case "chromium":
				res = chromiumFamilyLoads(t, ca, sites.urls[i], b)
			default:
				res = firefoxFamilyLoads(t, ca, sites.urls[i], b)
			}
			familyServerSaw(t, sites, i, b, &res)
			refused, answers = refused+res.refused, answers+res.seen+res.logged
			t.Logf("%s: %d answers seen by the browser, %d logged by the server, %d refused or throttled; %s; JA4 %s",
				b.name(), res.seen, res.logged, res.refused, res.got, res.ja4)
		})
	}
	t.Logf("%d of %d Go posers refused on their first request and throttled; %d of %d browser answers (the browsers' and the server's) refused or throttled; %s",
		caught, len(posers), refused, answers, time.Since(start).Round(time.Second))
}

// familyPoserRun runs one poser against site i: the disallowed page first,
// then ten allowed pages back to back. It reports whether it was caught
// on its first request and throttled.
func familyPoserRun(t *testing.T, ca *tlsclients.CA, sites *tlsSites, i int, p familyPoser) bool {
	t.Helper()
	cfg := ca.TLSClientConfig()
	cfg.CipherSuites = chromeTLS12Suites
	var rt http.RoundTripper
	switch p.proto {
	case "h1":
		rt = &http.Transport{TLSClientConfig: cfg, TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
	case "h2":
		rt = &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	case "h3":
		h3 := &http3.Transport{TLSClientConfig: cfg}
		defer h3.Close()
		rt = h3
	}
	client := &http.Client{Transport: rt, Timeout: 10 * time.Second}
	base := sites.urls[i]
	urls := []string{base + "/private/secret.html"}
	for k := range 10 {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", base, k))
	}
	wantProto := map[string]int{"h1": 1, "h2": 2, "h3": 3}[p.proto]
	caught, limited := false, false
	for k, u := range urls {
		req, _ := http.NewRequest("GET", u, nil)
		for _, h := range p.header {
			req.Header.Set(h[0], h[1])
		}
		req.Header.Set("User-Agent", p.ua)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != wantProto {
			t.Errorf("%s: answered over %s, want %s", u, resp.Proto, p.proto)
		}
		ev := resp.Header.Get("X-Robots-Guard-Evidence")
		switch {
		case k == 0:
			caught = resp.StatusCode == 403 && resp.Header.Get("X-Robots-Guard") == "disallowed" && ev == p.want && !strings.Contains(string(body), "private plans")
			if !caught {
				t.Errorf("first request, %s: %d, X-Robots-Guard %q, evidence %q, body %.200q; want 403 disallowed with evidence %q, not the page",
					u, resp.StatusCode, resp.Header.Get("X-Robots-Guard"), ev, body, p.want)
			}
		case resp.StatusCode == 429:
			limited = true
			if resp.Header.Get("Retry-After") == "" || ev != p.want || strings.Contains(string(body), "Content of page") {
				t.Errorf("%s: 429 with Retry-After %q, evidence %q; want a Retry-After and evidence %q, not the page", u, resp.Header.Get("Retry-After"), ev, p.want)
			}
		case resp.StatusCode == 200:
			if !strings.Contains(string(body), fmt.Sprintf("Content of page %d.", k-1)) {
				t.Errorf("%s: served %.200q, not its page", u, body)
			}
		default:
			t.Errorf("%s: %d, want 200 or 429", u, resp.StatusCode)
		}
	}
	if !limited {
		t.Errorf("10 allowed pages back to back under Crawl-delay: 1: none throttled")
	}
	// The decision log says the same: a poser refused for the rule, with
	// the evidence, and a JA4 of its transport.
	var first *struct{ class, reason, evidence, ja4 string }
	for _, e := range sites.entries(t, i) {
		if e.URI == "/private/secret.html" {
			first = &struct{ class, reason, evidence, ja4 string }{e.Class, e.Reason, e.Evidence, e.JA4}
			break
		}
	}
	wantT := map[bool]byte{false: 't', true: 'q'}[p.proto == "h3"]
	if first == nil || first.class != "poser" || first.reason != "disallowed" || first.evidence != p.want || len(first.ja4) != 36 || first.ja4[0] != wantT {
		t.Errorf("the disallowed page's decision: %+v, want a poser refused as disallowed with evidence %q and a JA4 %c…", first, p.want, wantT)
	} else {
		t.Logf("%s over %s: refused on its first request with evidence %s, throttled: %v; JA4 %s", p.name, p.proto, first.evidence, limited, first.ja4)
	}
	return caught && limited
}

// familyPages are the pages a browser loads after the gallery: all of
// TestPosers' with its own User-Agent, two allowed and the two disallowed
// ones with another engine's.
func familyPages(base string, b familyBrowser) (urls, want []string) {
	urls, want = browserPages(base)
	if b.ua != "" {
		urls, want = urls[len(urls)-4:], want[len(want)-4:]
	}
	return urls, want
}

// protoName is the protocol as a browser's Performance API names it.
func protoName(proto string) string {
	return map[string]string{"h1": "http/1.1", "h2": "h2", "h3": "h3"}[proto]
}

// chromiumFamilyLoads drives real headless Chromium over b.proto: HTTP/1.1
// (HTTP/2 off, as for a site that speaks only HTTP/1.1), HTTP/2, or
// HTTP/3 (QUIC forced for the site, as in TestPosers).
func chromiumFamilyLoads(t *testing.T, ca *tlsclients.CA, base string, b familyBrowser) browserResult {
	t.Helper()
	bin := chromium(t)
	ua := b.ua
	if ua == "" {
		ua = desktopChromeUA(t, bin)
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.UserAgent(ua), chromedp.Flag("ignore-certificate-errors-spki-list", ca.SPKI)}
	switch b.proto {
	case "h1":
		opts = append(opts, chromedp.Flag("disable-http2", true))
	case "h3":
		opts = append(opts, chromedp.Flag("disable-quic", false), chromedp.Flag("enable-quic", true),
			chromedp.Flag("origin-to-force-quic-on", strings.TrimPrefix(base, "https://")))
	}
	br := newBrowserWith(t, opts...)
	res := browserResult{proto: b.proto}
	proto := protoName(b.proto)
	navigate := func(u string) int {
		ctx, cancel := context.WithTimeout(br.ctx, time.Minute)
		defer cancel()
		resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
		if err != nil {
			t.Errorf("%s: %v", u, err)
			return -1
		}
		if resp.Protocol != proto {
			t.Errorf("%s: Chromium used %q, want %s", u, resp.Protocol, proto)
		}
		return int(resp.Status)
	}
	st := navigate(base + "/gallery.html")
	l := eval[loaded](t, br, loadedJS, chromedp.EvalAwaitPromise)
	if l.UA != ua {
		t.Errorf("Chromium's User-Agent %q, want %q", l.UA, ua)
	}
	checkPage(t, base+"/gallery.html", eval[pageSeen](t, br, pageJS), st, proto, "Gallery", &res)
	checkGallery(t, l, proto, &res)
	urls, want := familyPages(base, b)
	for k, u := range urls {
		st := navigate(u)
		if st < 0 {
			res.seen, res.refused = res.seen+1, res.refused+1
			continue
		}
		checkPage(t, u, eval[pageSeen](t, br, pageJS), st, proto, want[k], &res)
	}
	if b.history {
		ctx, cancel := context.WithTimeout(br.ctx, time.Minute)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
			t.Errorf("reload: %v", err)
		}
		eval[int](t, br, "history.back(), 1")
		var text string
		if err := browserctl.Retry(func() (bool, error) {
			ctx, cancel := context.WithTimeout(br.ctx, 5*time.Second)
			defer cancel()
			var err error
			text, err = chromedp.Run(ctx, chromedp.Evaluate[string]("document.body.innerText"))
			return err == nil && strings.Contains(text, want[len(want)-2]), err
		}); err != nil {
			t.Errorf("after a reload and a step back: %.200q (%v), want %q", text, err, want[len(want)-2])
		}
		res.seen++
	}
	res.got = fmt.Sprintf("%d images, %d pages", len(l.Widths), len(urls)+1)
	return res
}

// firefoxFamilyLoads drives real headless Firefox ESR over b.proto:
// HTTP/1.1 (HTTP/2 and HTTP/3 off), HTTP/2 (HTTP/3 off), or HTTP/3 (as in
// TestPosers).
func firefoxFamilyLoads(t *testing.T, ca *tlsclients.CA, base string, b familyBrowser) browserResult {
	t.Helper()
	need(t, "firefox-esr", "certutil")
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	prefs := map[string]any{"network.http.http3.enable": false}
	switch b.proto {
	case "h1":
		prefs["network.http.http2.enabled"] = false
	case "h3":
		prefs = map[string]any{"network.http.http3.enable": true,
			"network.http.http3.alt-svc-mapping-for-testing":           "localhost;h3=:" + u.Port(),
			"network.http.http3.force-use-alt-svc-mapping-for-testing": true,
			"network.http.http3.disable_when_third_party_roots_found":  false}
	}
	if b.ua != "" {
		prefs["general.useragent.override"] = b.ua
	}
	br, err := browserctl.StartFirefox(t.TempDir(), ca.CAFile, prefs)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	res := browserResult{proto: b.proto}
	proto := protoName(b.proto)
	load := func(u string) pageSeen {
		if err := br.Load(u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		var p pageSeen
		if err := br.Eval(pageJS, &p); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		return p
	}
	checkPage(t, base+"/gallery.html", load(base+"/gallery.html"), 0, proto, "Gallery", &res)
	var l loaded
	if err := br.Eval(loadedJS, &l); err != nil {
		t.Fatal(err)
	}
	if b.ua != "" && l.UA != b.ua || b.ua == "" && !strings.Contains(l.UA, "Firefox/") {
		t.Errorf("Firefox's User-Agent %q", l.UA)
	}
	checkGallery(t, l, proto, &res)
	urls, want := familyPages(base, b)
	for k, u := range urls {
		checkPage(t, u, load(u), 0, proto, want[k], &res)
	}
	if b.history {
		if err := br.Reload(); err != nil {
			t.Errorf("reload: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
		var one int
		if err := br.Eval("history.back(), 1", &one); err != nil {
			t.Errorf("back: %v", err)
		}
		var back pageSeen
		if err := browserctl.Retry(func() (bool, error) {
			err := br.Eval(pageJS, &back)
			return err == nil && strings.Contains(back.Text, want[len(want)-2]), nil
		}); err != nil {
			t.Errorf("after a reload and a step back: %.200q (%v), want %q", back.Text, err, want[len(want)-2])
		}
		res.seen++
	}
	res.got = fmt.Sprintf("%d images, %d pages", len(l.Widths), len(urls)+1)
	return res
}

// familyServerSaw checks what the server answered browser site i: every
// answer 200 (or 304 to a reload) over the protocol, every decision an
// allowance of a browser with nothing decisive, with tls-family on each
// when the browser sent another engine's User-Agent (and over h3
// quic-family, the QUIC wrapper being on the sites' servers) and no
// evidence at all with its own.
func familyServerSaw(t *testing.T, sites *tlsSites, i int, b familyBrowser, res *browserResult) {
	t.Helper()
	wantProto := map[string]string{"h1": "HTTP/1.1", "h2": "HTTP/2.0", "h3": "HTTP/3.0"}[b.proto]
	pages := 0
	for _, a := range sites.served(t, i) {
		if a.Request.URI == "/robots.txt" && a.Request.Headers["User-Agent"][0] == "Go-http-client/1.1" {
			continue // startTLSSites' readiness check
		}
		res.logged++
		if a.Status != 200 && a.Status != 304 {
			res.refused++
		}
		if a.Status != 200 && a.Status != 304 || a.Request.Proto != wantProto {
			t.Errorf("server: %s answered %d over %s, want 200 over %s", a.Request.URI, a.Status, a.Request.Proto, wantProto)
		}
		pages++
	}
	urls, _ := familyPages("", b)
	if pages < 1+13+len(urls) {
		t.Errorf("server answered %d requests, want at least %d (the gallery, its 13 subresources, %d pages)", pages, 1+13+len(urls), len(urls))
	}
	for _, e := range sites.entries(t, i) {
		if e.URI == "/robots.txt" {
			continue
		}
		res.ja4 = e.JA4
		codes := strings.Split(e.Evidence, ",")
		decisive := slices.ContainsFunc(codes, func(c string) bool { e, _ := evidence.ParseEvidence(c); return evidence.Decisive&e != 0 })
		if e.Action != "allow" {
			res.refused++
		}
		switch {
		case e.Action != "allow" || e.Class != "browser" || decisive:
			t.Errorf("decision for %s: %s %s, class %s, evidence %q", e.URI, e.Action, e.Reason, e.Class, e.Evidence)
		case b.ua != "" && !slices.Contains(codes, "tls-family"):
			t.Errorf("decision for %s (JA4 %s): evidence %q, want tls-family: the handshake not known as %s's", e.URI, e.JA4, e.Evidence, b.browser)
		case b.ua != "" && b.proto == "h3" && !slices.Contains(codes, "quic-family"):
			t.Errorf("decision for %s (QUIC %s): evidence %q, want quic-family too: the transport parameters not known as %s's", e.URI, e.QUIC, e.Evidence, b.browser)
		case b.ua == "" && e.Evidence != "":
			t.Errorf("decision for %s: evidence %q, want none", e.URI, e.Evidence)
		}
		if len(e.JA4) != 36 || (b.proto == "h3") != (e.JA4[0] == 'q') {
			t.Errorf("JA4 %q over %s", e.JA4, b.proto)
		}
	}
}
