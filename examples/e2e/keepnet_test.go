package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The end-to-end tests of issue 27, "Keep the internet working": verified
// crawlers get the reference reading of robots.txt, departures never
// escalate, feeds reach feed readers, verified user-triggered fetchers are
// held only to the groups that name them, renderers get their pages'
// subresources, and block_class can spare AI search and user-triggered
// fetchers. Each failed on main before the change (see the report in the
// commit log).

const (
	uaGooglebot   = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	uaMiniflux    = "Mozilla/5.0 (compatible; Miniflux/2.2.4; +https://miniflux.app)"
	uaChatGPTUser = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
	uaPerplexity  = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)"
	uaFeedFetcher = "FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)"
)

// loopbackRanges writes a ranges file (the "prefixes" format Google and
// OpenAI publish) that holds 127.0.0.1, and returns the verify block that
// verifies each token by it.
func loopbackRanges(t *testing.T, tokens ...string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ranges.json")
	if err := os.WriteFile(file, []byte(`{"prefixes": [{"ipv4Prefix": "127.0.0.1/32"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	block := "verify {\n"
	for _, tok := range tokens {
		block += "\t\t\tranges " + tok + " " + file + "\n"
	}
	return block + "\t\t}"
}

// writeSite writes files into the site the backend serves.
func writeSite(t *testing.T, s *server, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(s.dir, "site", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// curlResult is one answer curl got.
type curlResult struct {
	status int
	header http.Header
	body   string
}

// curlDo makes one request with curl: extra are curl arguments (-I, -H ...).
func curlDo(t *testing.T, url, ua string, extra ...string) curlResult {
	t.Helper()
	args := append([]string{"-s", "--path-as-is", "-A", ua, "-D", "-", "-o", "-", "--max-time", "10"}, extra...)
	out, err := exec.Command("curl", append(args, url)...).Output()
	if err != nil {
		t.Fatalf("curl %s: %v", url, err)
	}
	head, body, _ := bytes.Cut(out, []byte("\r\n\r\n"))
	lines := strings.Split(string(head), "\r\n")
	r := curlResult{header: http.Header{}, body: string(body)}
	fmt.Sscanf(lines[0], "HTTP/1.1 %d", &r.status)
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ": "); ok {
			r.header.Add(k, v)
		}
	}
	return r
}

// reportByReason runs "caddy robots report --json" over the module log.
func reportByReason(t *testing.T, s *server) map[string]int {
	t.Helper()
	out, err := exec.Command(caddyBin, "robots", "report", "--json", s.moduleLog).Output()
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		ByReason map[string]int `json:"by_reason"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return rep.ByReason
}

// TestVerifiedCrawlerReferenceReading: Googlebot, verified by a ranges file
// that holds 127.0.0.1, reads "/page.php?id=1" under "Disallow: /*.php$"
// (Google documents that "/*.php$" does not match "/filename.php?params");
// an unverified bot is refused it by the query departure; what the
// reference disallows is refused to both. On main: 403 for Googlebot.
func TestVerifiedCrawlerReferenceReading(t *testing.T) {
	need(t, "curl")
	s := start(t, options{robots: "User-agent: *\nDisallow: /*.php$\n", verify: loopbackRanges(t, "googlebot")})
	writeSite(t, s, map[string][]byte{"page.php": []byte("<h1>The PHP page</h1>\n")})
	r := curlDo(t, s.front+"/page.php?id=1", uaGooglebot)
	if r.status != 200 || !strings.Contains(r.body, "The PHP page") {
		t.Errorf("verified Googlebot, /page.php?id=1: %d %q %q, want the page", r.status, r.header.Get("X-Robots-Guard"), r.body)
	}
	r = curlDo(t, s.front+"/page.php", uaGooglebot)
	if r.status != 403 || r.header.Get("X-Robots-Guard") != "disallowed" || strings.Contains(r.body, "PHP page") {
		t.Errorf("verified Googlebot, /page.php: %d %q, want 403 disallowed", r.status, r.header.Get("X-Robots-Guard"))
	}
	r = curlDo(t, s.front+"/page.php?id=1", "ExampleBot/1.0 (+https://example.com/bot)")
	if r.status != 403 || r.header.Get("X-Robots-Guard") != "departure" || r.header.Get("X-Robots-Guard-Rule") != "robots.txt line 2: Disallow: /*.php$" || strings.Contains(r.body, "PHP page") {
		t.Errorf("unverified bot, /page.php?id=1: %d %q %q, want 403 departure", r.status, r.header.Get("X-Robots-Guard"), r.header.Get("X-Robots-Guard-Rule"))
	}
}

// keepSpider is a Scrapy spider, robots.txt obeyed (protego, which reads
// "Disallow: /*.php$" and "Disallow: /messages$" as Google does), that asks
// for 20 URLs the reference allows and the enforcer's query departure
// refuses, then, once they are answered, for an allowed page; it writes
// each answer.
const keepSpider = `
import json
import scrapy


class Keep(scrapy.Spider):
    name = "keep"
    handle_httpstatus_list = [403, 429]

    def __init__(self, base=None, out=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.base, self.out, self.got = base, out, []

    def start_requests(self):
        for i in range(10):
            yield scrapy.Request(f"{self.base}/page.php?id={i}", priority=1)
            yield scrapy.Request(f"{self.base}/messages?a={i}", priority=1)
        yield scrapy.Request(self.base + "/about.html", priority=-1)

    def parse(self, response):
        self.got.append({"url": response.url, "status": response.status,
                         "guard": response.headers.get("X-Robots-Guard", b"").decode(),
                         "h1": response.css("h1::text").get()})

    def closed(self, reason):
        with open(self.out, "w") as f:
            json.dump(self.got, f)
`

// TestDeparturesNeverEscalate: Scrapy, robots.txt obeyed, is refused 20
// URLs by the query departure (its parser, like Google's, allows them):
// 403 each, no strike, so it is still served the allowed page that follows;
// the metrics and "caddy robots report" count the refusals apart (reason
// departure). On main the 5th refusal blocked it, and the allowed page was
// refused.
func TestDeparturesNeverEscalate(t *testing.T) {
	need(t, "curl", "scrapy")
	admin := freePort(t)
	s := start(t, options{robots: "User-agent: *\nDisallow: /*.php$\nDisallow: /messages$\n", admin: fmt.Sprintf("localhost:%d\n\tmetrics", admin), guard: "log_repeats 0"})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spider.py"), []byte(keepSpider), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.json")
	cmd := exec.Command("scrapy", "runspider", "spider.py", "-a", "base="+s.front, "-a", "out="+out,
		"-s", "ROBOTSTXT_OBEY=True", "-s", "CONCURRENT_REQUESTS=1", "-s", "LOG_LEVEL=WARNING", "-s", "TELNETCONSOLE_ENABLED=False")
	cmd.Dir = dir
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scrapy: %v\n%s", err, log)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		URL, Guard, H1 string
		Status         int
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	departures, served := 0, false
	for _, g := range got {
		switch {
		case strings.HasSuffix(g.URL, "/about.html"):
			served = g.Status == 200 && g.H1 == "About"
			if departures != 20 {
				t.Errorf("the allowed page came after %d departures, want 20", departures)
			}
		case g.Status == 403 && g.Guard == "departure":
			departures++
		default:
			t.Errorf("%s: %d %q, want 403 departure", g.URL, g.Status, g.Guard)
		}
	}
	if departures != 20 || !served {
		t.Errorf("Scrapy: %d departures, allowed page served %v; answers %+v", departures, served, got)
	}
	for _, e := range s.moduleEntries(t) {
		if e["reason"] == "blocked_client" || e["reason"] == "departure" && e["strikes"] != nil && e["strikes"] != 0.0 {
			t.Errorf("logged: %v", e)
		}
	}
	if n := reportByReason(t, s)["departure"]; n != 20 {
		t.Errorf("caddy robots report: %d departures, want 20", n)
	}
	resp, err := http.Get(fmt.Sprintf("http://localhost:%d/metrics", admin))
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `caddy_robots_guard_decisions_total{action="deny",class="script",reason="departure"} 20`; !strings.Contains(string(metrics), want) {
		t.Errorf("metrics lack %s", want)
	}
}

// TestFeedReaders: under "User-agent: *" / "Disallow: /", Miniflux (its
// real User-Agent) is served the feed (application/rss+xml), its HEAD and
// its conditional poll (304), and refused an HTML page as today, strikes
// and block included; a client that is no feed reader is refused the feed.
// On main: 403 for the feed.
func TestFeedReaders(t *testing.T) {
	need(t, "curl")
	const feed = `<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Demo feed</title><link>http://example.com/</link>
<item><title>First post</title><link>http://example.com/first</link></item></channel></rss>
`
	// The monitor class's rate (a reader's polls) is lifted: the test
	// asks for a feed and pages back to back.
	s := start(t, options{robots: "User-agent: *\nDisallow: /\n", guard: "log_repeats 0\n\t\trate monitor 0s",
		backendCfg: `header /feed.xml Content-Type "application/rss+xml; charset=utf-8"`})
	writeSite(t, s, map[string][]byte{"feed.xml": []byte(feed)})
	r := curlDo(t, s.front+"/feed.xml", uaMiniflux)
	if r.status != 200 || r.header.Get("Content-Type") != "application/rss+xml; charset=utf-8" || r.body != feed {
		t.Fatalf("Miniflux, /feed.xml: %d %q %q %q, want the feed", r.status, r.header.Get("Content-Type"), r.header.Get("X-Robots-Guard"), r.body)
	}
	etag := r.header.Get("Etag")
	if h := curlDo(t, s.front+"/feed.xml", uaMiniflux, "-I"); h.status != 200 || h.header.Get("Content-Type") != "application/rss+xml; charset=utf-8" {
		t.Errorf("Miniflux, HEAD /feed.xml: %d %v", h.status, h.header)
	}
	if etag == "" {
		t.Fatal("the backend sent no ETag")
	}
	if c := curlDo(t, s.front+"/feed.xml", uaMiniflux, "-H", "If-None-Match: "+etag); c.status != 304 || c.body != "" {
		t.Errorf("Miniflux, conditional poll: %d %q", c.status, c.body)
	}
	if c := curlDo(t, s.front+"/feed.xml", "curl/8.5.0"); c.status != 403 || strings.Contains(c.body, "Demo feed") {
		t.Errorf("curl, /feed.xml: %d, want 403", c.status)
	}
	// An HTML page: refused, as today, with a strike: the fifth blocks.
	for i := 1; i <= 5; i++ {
		p := curlDo(t, s.front+"/about.html", uaMiniflux)
		want := "disallowed"
		if p.status != 403 || p.header.Get("X-Robots-Guard") != want || strings.Contains(p.body, "About") || p.header.Get("Etag") != "" || p.header.Get("Last-Modified") != "" {
			t.Fatalf("Miniflux, HTML page %d: %d %q %v %q, want 403 %s without the page's headers", i, p.status, p.header.Get("X-Robots-Guard"), p.header, p.body, want)
		}
	}
	if b := curlDo(t, s.front+"/feed.xml", uaMiniflux); b.status != 403 || b.header.Get("X-Robots-Guard") != "blocked_client" {
		t.Errorf("Miniflux after 5 HTML pages: %d %q, want 403 blocked_client", b.status, b.header.Get("X-Robots-Guard"))
	}
	reasons := reportByReason(t, s)
	if reasons["feed"] != 3 || reasons["disallowed"] < 6 || reasons["blocked_client"] != 1 {
		t.Errorf("report by reason: %v, want 3 feeds, 6 disallowed (5 pages, curl) and a block", reasons)
	}
}

// TestUserTriggeredFetchers: under "Disallow: /", FeedFetcher-Google and
// ChatGPT-User verified by their published ranges (a file holding
// 127.0.0.1) are served a page, as Google documents for its user-triggered
// fetchers; Perplexity-User, whose ranges are not loaded, is a claim and is
// refused as any unverified bot. On main: 403 for the verified ones.
func TestUserTriggeredFetchers(t *testing.T) {
	need(t, "curl")
	s := start(t, options{robots: "User-agent: *\nDisallow: /\n\nUser-agent: ChatGPT-User\nDisallow: /members/\n",
		verify: loopbackRanges(t, "feedfetcher-google", "chatgpt-user")})
	writeSite(t, s, map[string][]byte{"members/list.html": []byte("<h1>Members</h1>\n")})
	for _, ua := range []string{uaFeedFetcher, uaChatGPTUser} {
		r := curlDo(t, s.front+"/about.html", ua)
		if r.status != 200 || !strings.Contains(r.body, "<h1>About</h1>") {
			t.Errorf("verified %s: %d %q, want the page", ua, r.status, r.header.Get("X-Robots-Guard"))
		}
	}
	if r := curlDo(t, s.front+"/members/list.html", uaChatGPTUser); r.status != 403 || r.header.Get("X-Robots-Guard") != "disallowed" || strings.Contains(r.body, "Members") {
		t.Errorf("verified ChatGPT-User, its own group's Disallow: %d %q", r.status, r.header.Get("X-Robots-Guard"))
	}
	if r := curlDo(t, s.front+"/about.html", uaPerplexity); r.status != 403 || r.header.Get("X-Robots-Guard") != "disallowed" || strings.Contains(r.body, "About") {
		t.Errorf("unverified Perplexity-User: %d %q, want 403 disallowed", r.status, r.header.Get("X-Robots-Guard"))
	}
	for _, e := range s.moduleEntries(t) {
		if toks, _ := e["tokens"].([]any); len(toks) > 0 && toks[0] == "perplexity-user" && e["verification"] != "unverified" {
			t.Errorf("Perplexity-User logged as %v", e["verification"])
		}
	}
}

// TestBlockAITraining: block_class ai-training shuts out GPTBot and serves
// OAI-SearchBot and ChatGPT-User; the served robots.txt disallows the
// training crawlers' tokens only. On main the option is refused at load.
func TestBlockAITraining(t *testing.T) {
	need(t, "curl")
	s := start(t, options{robots: "User-agent: *\nAllow: /\n", guard: "block_class ai-training"})
	if r := curlDo(t, s.front+"/about.html", uaGPTBot); r.status != 403 || r.header.Get("X-Robots-Guard") != "blocked_class" {
		t.Errorf("GPTBot: %d %q, want 403 blocked_class", r.status, r.header.Get("X-Robots-Guard"))
	}
	for _, ua := range []string{uaOAISearch, uaChatGPTUser} {
		if r := curlDo(t, s.front+"/about.html", ua); r.status != 200 || !strings.Contains(r.body, "<h1>About</h1>") {
			t.Errorf("%s: %d %q, want the page", ua, r.status, r.header.Get("X-Robots-Guard"))
		}
	}
	robots := curlDo(t, s.front+"/robots.txt", "curl/8.5.0").body
	if !strings.Contains(robots, "User-agent: gptbot\n") || !strings.Contains(robots, "User-agent: claudebot\n") ||
		strings.Contains(robots, "oai-searchbot") || strings.Contains(robots, "chatgpt-user") {
		t.Errorf("served robots.txt:\n%s", robots)
	}
}

// TestHeadlessChromiumRenders: real headless Chromium (its own, honest
// HeadlessChrome User-Agent) renders a page of 10 images under
// "Crawl-delay: 1": all 10 are served (on main: 3, and 7 answered 429),
// and its rapid page navigations are throttled by the Crawl-delay.
func TestHeadlessChromiumRenders(t *testing.T) {
	need(t, "curl")
	chromium(t)
	s := start(t, options{robots: "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n", guard: "throttle 429 \"slow down\"\n\t\tlog_repeats 0"})
	files := map[string][]byte{}
	var page strings.Builder
	page.WriteString("<!DOCTYPE html><html><head><title>Gallery</title><link rel=\"icon\" href=\"data:,\"></head><body><h1>Gallery</h1>\n")
	for i := 0; i < 10; i++ {
		var buf bytes.Buffer
		img := image.NewRGBA(image.Rect(0, 0, 8+i, 8))
		for x := 0; x < 8+i; x++ {
			img.Set(x, 0, color.RGBA{uint8(25 * i), 0, 0, 255})
		}
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		files[fmt.Sprintf("img/%d.png", i)] = buf.Bytes()
		fmt.Fprintf(&page, "<img src=\"/img/%d.png\" alt=\"%d\">\n", i, i)
	}
	page.WriteString("</body></html>\n")
	files["gallery.html"] = []byte(page.String())
	for i := 0; i < 12; i++ {
		files[fmt.Sprintf("p%d.html", i)] = []byte(fmt.Sprintf("<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head><body><h1>Page %d</h1></body></html>\n", i))
	}
	writeSite(t, s, files)

	b := newBrowser(t)
	b.run(t, "gallery", chromedp.Navigate(s.front+"/gallery.html"))
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	// Wait until every image has settled, loaded or failed.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`Array.from(document.images).every(i => i.complete)`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("images: %v", err)
	}
	if ua := eval[string](t, b, "navigator.userAgent"); !strings.Contains(ua, "HeadlessChrome/") {
		t.Fatalf("Chromium's User-Agent %q is not its honest headless one", ua)
	}
	if h1 := b.text(t, "h1"); h1 != "Gallery" {
		t.Errorf("page heading %q", h1)
	}
	rendered := eval[int](t, b, `Array.from(document.images).filter(i => i.naturalWidth > 0).length`)
	if rendered != 10 {
		t.Errorf("%d of 10 images rendered", rendered)
	}
	// Each image is the one the site serves (its width says which).
	if w := eval[string](t, b, `Array.from(document.images).map(i => i.naturalWidth).join(",")`); w != "8,9,10,11,12,13,14,15,16,17" {
		t.Errorf("image widths %s", w)
	}
	// Rapid navigations: the Crawl-delay paces them.
	var statuses []int
	throttled := false
	for i := 0; i < 12 && !throttled; i++ {
		ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
		resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(fmt.Sprintf("%s/p%d.html", s.front, i)))
		cancel()
		if err != nil {
			t.Fatalf("navigation %d: %v", i, err)
		}
		st := int(resp.Status)
		statuses = append(statuses, st)
		body := eval[string](t, b, "document.body.innerText")
		switch {
		case st == 429 && strings.Contains(body, "slow down"):
			throttled = true
		case st != 200 || !strings.Contains(body, fmt.Sprintf("Page %d", i)):
			t.Fatalf("navigation %d: %d %q", i, st, body)
		}
	}
	if !throttled || statuses[0] != 200 {
		t.Errorf("rapid navigations: %v, want served, then throttled", statuses)
	}
	for _, e := range s.moduleEntries(t) {
		if uri, _ := e["uri"].(string); strings.HasPrefix(uri, "/img/") && e["action"] != "allow" {
			t.Errorf("image refused: %v", e)
		}
	}
	t.Logf("%d of 10 images rendered; navigations %v", rendered, statuses)
}
