package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The escalation ladder with real crawlers that no one here wrote (issue
// 19): Scrapy (Debian's python3-scrapy 2.8) and wget against the demo site,
// whose robots.txt has Crawl-delay: 1, with the default ladder (burst 3,
// grace 1, strikes 5, window 10m). Every decision is logged (log_allowed 1)
// and each test logs a summary of the crawl's decisions.

// demoAllowed are the demo site's pages that its robots.txt allows to every
// crawler.
var demoAllowed = []string{"/", "/about.html", "/docs/", "/docs/getting-started.html", "/docs/rules.html", "/private/press/release.html"}

// spider is a Scrapy spider that crawls a site (following links) or, with
// repeat, requests one page repeatedly, and writes what it got.
const spider = `
import json
import scrapy
from scrapy.linkextractors import LinkExtractor


class Demo(scrapy.Spider):
    name = "demo"
    allowed_domains = ["127.0.0.1"]

    def __init__(self, start=None, out=None, repeat="0", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start, self.out, self.repeat = start, out, int(repeat)
        self.pages = []

    def start_requests(self):
        if self.repeat:
            for i in range(self.repeat):
                yield scrapy.Request(self.start + "about.html?n=%d" % i, dont_filter=True)
        else:
            yield scrapy.Request(self.start)

    def parse(self, response):
        self.pages.append([response.url, response.status])
        if not self.repeat:
            for link in LinkExtractor().extract_links(response):
                yield response.follow(link.url, self.parse)

    def closed(self, reason):
        stats = {k: v for k, v in self.crawler.stats.get_stats().items() if isinstance(v, (int, float, str))}
        with open(self.out, "w") as f:
            json.dump({"pages": self.pages, "stats": stats}, f)
`

// scrapyResult is what a Scrapy run fetched and its stats.
type scrapyResult struct {
	Pages [][2]any       `json:"pages"`
	Stats map[string]any `json:"stats"`
}

// status returns the count of a response status in Scrapy's stats.
func (r scrapyResult) status(code int) int {
	v, _ := r.Stats[fmt.Sprintf("downloader/response_status_count/%d", code)].(float64)
	return int(v)
}

// runScrapy runs the spider against base with Scrapy's default settings,
// robots.txt obeyed, plus extra settings.
func runScrapy(t *testing.T, base string, repeat int, settings ...string) scrapyResult {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spider.py"), []byte(spider), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.json")
	args := []string{"runspider", "spider.py", "-a", "start=" + base + "/", "-a", "out=" + out, "-a", fmt.Sprintf("repeat=%d", repeat),
		"-s", "ROBOTSTXT_OBEY=True", "-s", "LOG_LEVEL=WARNING", "-s", "TELNETCONSOLE_ENABLED=False"}
	for _, s := range settings {
		args = append(args, "-s", s)
	}
	cmd := exec.Command("scrapy", args...)
	cmd.Dir = dir
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scrapy: %v\n%s", err, log)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res scrapyResult
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return res
}

// decision is one entry of the module's decision log.
type decision struct {
	at                     time.Duration // since the client's first decision
	uri, action, reason    string
	strikes                int
	retryAfter, blockUntil string
}

// decisions returns the logged decisions for clients whose User-Agent
// contains ua, in order.
func (s *server) decisions(t *testing.T, ua string) []decision {
	t.Helper()
	var out []decision
	var first float64
	for _, e := range s.moduleEntries(t) {
		if u, _ := e["user_agent"].(string); !strings.Contains(u, ua) {
			continue
		}
		ts, _ := e["ts"].(float64)
		if first == 0 {
			first = ts
		}
		d := decision{at: time.Duration((ts - first) * float64(time.Second)).Round(time.Millisecond)}
		d.uri, _ = e["uri"].(string)
		d.action, _ = e["action"].(string)
		d.reason, _ = e["reason"].(string)
		if n, ok := e["strikes"].(float64); ok {
			d.strikes = int(n)
		}
		if ra, ok := e["retry_after"].(float64); ok {
			d.retryAfter = time.Duration(ra * float64(time.Second)).Round(time.Millisecond).String()
		}
		if v, ok := e["blocked_until"]; ok && v != nil {
			d.blockUntil = fmt.Sprint(v)
		}
		out = append(out, d)
	}
	return out
}

// summary counts decisions by action and reason and lists the first
// timeline of them.
func summary(ds []decision, timeline int) string {
	counts := map[string]int{}
	var lines []string
	for _, d := range ds {
		key := d.action
		if d.reason != "" {
			key += "/" + d.reason
		}
		counts[key]++
		if len(lines) < timeline {
			line := fmt.Sprintf("  +%v %s %s", d.at, d.uri, key)
			if d.retryAfter != "" {
				line += " retry-after " + d.retryAfter
			}
			lines = append(lines, fmt.Sprintf("%s strikes %d", line, d.strikes))
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, fmt.Sprintf("%s %d", k, counts[k]))
	}
	sort.Strings(keys)
	last := time.Duration(0)
	if len(ds) > 0 {
		last = ds[len(ds)-1].at
	}
	return fmt.Sprintf("%d decisions over %v: %s\n%s", len(ds), last, strings.Join(keys, ", "), strings.Join(lines, "\n"))
}

// checkNeverBlocked fails if an allowed page was refused with 403, or the
// client was blocked.
func checkNeverBlocked(t *testing.T, ds []decision) {
	t.Helper()
	for _, d := range ds {
		if d.action == "deny" || d.action == "tarpit" || d.blockUntil != "" {
			t.Errorf("+%v %s: %s/%s (strikes %d), want never refused", d.at, d.uri, d.action, d.reason, d.strikes)
		}
	}
}

// checkBlockedAfterWindows checks that a client that ignored its 429s was
// blocked for its rate, after strikes Retry-After windows, and refused from
// then on. It logs when each strike came.
func checkBlockedAfterWindows(t *testing.T, ds []decision, strikes int) time.Duration {
	t.Helper()
	var firstThrottle, blockAt time.Duration = -1, -1
	var struck []string
	last := 0
	for _, d := range ds {
		if d.strikes > last {
			struck = append(struck, fmt.Sprintf("%d at +%v", d.strikes, d.at))
			last = d.strikes
		}
		if d.action == "throttle" && firstThrottle < 0 {
			firstThrottle = d.at
		}
		if d.action == "deny" && blockAt < 0 {
			blockAt = d.at
			if d.reason != "crawl_delay" || d.strikes != strikes || d.blockUntil == "" {
				t.Errorf("the blocking decision: %+v, want crawl_delay with %d strikes", d, strikes)
			}
			continue
		}
		if blockAt >= 0 && d.reason != "blocked_client" && d.uri != "/robots.txt" {
			t.Errorf("+%v %s after the block: %s/%s", d.at, d.uri, d.action, d.reason)
		}
	}
	if firstThrottle < 0 || blockAt < 0 {
		t.Logf("strikes: %s; decisions: %s", strings.Join(struck, ", "), summary(ds, 0))
		t.Fatalf("throttled at %v, blocked at %v: want both", firstThrottle, blockAt)
	}
	t.Logf("first 429 at +%v; strikes %s; blocked at +%v", firstThrottle, strings.Join(struck, ", "), blockAt)
	// Each strike is a 1s Retry-After window the client kept sending
	// through; the first opened without one.
	if took := blockAt - firstThrottle; took < time.Duration(strikes-1)*time.Second {
		t.Errorf("blocked %v after the first 429; want at least %d windows of 1s", took, strikes-1)
	}
	return blockAt - firstThrottle
}

// TestScrapyDefaults: Scrapy with its default settings (8 requests at once,
// no delay, 429 retried twice at once) and ROBOTSTXT_OBEY is throttled but
// never blocked while crawling the demo site, and never gets a 403 for an
// allowed page.
func TestScrapyDefaults(t *testing.T) {
	need(t, "scrapy")
	s := start(t, options{guard: ladderLog})
	res := runScrapy(t, s.front, 0)
	ds := s.decisions(t, "Scrapy/")
	t.Logf("Scrapy defaults: %d pages, statuses 200:%d 429:%d 403:%d; decisions: %s",
		len(res.Pages), res.status(200), res.status(429), res.status(403), summary(ds, 30))
	if res.status(403) != 0 {
		t.Errorf("Scrapy got %d 403s", res.status(403))
	}
	if res.status(429) == 0 {
		t.Errorf("Scrapy was not throttled; the test exercises nothing: %v", res.Stats)
	}
	checkNeverBlocked(t, ds)
	for _, d := range ds {
		if isDisallowedDemo(d.uri) {
			t.Errorf("Scrapy (ROBOTSTXT_OBEY) requested disallowed %s", d.uri)
		}
	}
}

// TestScrapyDownloadDelay: with DOWNLOAD_DELAY equal to the Crawl-delay,
// Scrapy gets no 429 at all and fetches every allowed page.
func TestScrapyDownloadDelay(t *testing.T) {
	need(t, "scrapy")
	s := start(t, options{guard: ladderLog})
	res := runScrapy(t, s.front, 0, "DOWNLOAD_DELAY=1")
	ds := s.decisions(t, "Scrapy/")
	t.Logf("Scrapy DOWNLOAD_DELAY=1: %d pages, statuses 200:%d 429:%d; decisions: %s", len(res.Pages), res.status(200), res.status(429), summary(ds, 10))
	if res.status(429) != 0 || res.status(403) != 0 {
		t.Errorf("Scrapy at the Crawl-delay got %d 429s and %d 403s", res.status(429), res.status(403))
	}
	got := map[string]bool{}
	for _, d := range ds {
		got[d.uri] = d.action == "allow"
	}
	for _, p := range demoAllowed {
		if !got[p] {
			t.Errorf("Scrapy at the Crawl-delay did not get %s", p)
		}
	}
	checkNeverBlocked(t, ds)
}

// TestScrapyIgnores429: a Scrapy crawl that keeps retrying its 429s at
// once (RETRY_TIMES 300, 100 requests for one page) ignores them for longer
// than strikes windows, and is blocked. The retries must outlast five
// one-second windows however fast the machine answers (about 1,500
// requests a second here): a crawl that ended sooner would prove nothing.
func TestScrapyIgnores429(t *testing.T) {
	need(t, "scrapy")
	s := start(t, options{guard: ladderLog})
	res := runScrapy(t, s.front, 100, "RETRY_TIMES=300")
	ds := s.decisions(t, "Scrapy/")
	took := checkBlockedAfterWindows(t, ds, 5)
	t.Logf("Scrapy ignoring 429: statuses 200:%d 429:%d 403:%d, blocked %v after its first 429; decisions: %s",
		res.status(200), res.status(429), res.status(403), took, summary(ds, 0))
	if res.status(403) == 0 {
		t.Error("Scrapy never saw a 403")
	}
}

// TestWgetAtCrawlDelay: wget --wait equal to the Crawl-delay gets no 429
// at all and fetches every allowed page.
func TestWgetAtCrawlDelay(t *testing.T) {
	need(t, "wget")
	s := start(t, options{guard: ladderLog})
	const ua = "WaitBot/1.0 (+https://example.com/waitbot)"
	res := wget(t, s.front, ua, "--wait=1")
	ds := s.decisions(t, "WaitBot/")
	t.Logf("wget --wait=1: fetched %d, errors %v; decisions: %s", len(res.fetched), res.errors, summary(ds, 10))
	if len(res.errors) > 0 {
		t.Errorf("wget at the Crawl-delay was refused: %v", res.errors)
	}
	for _, d := range ds {
		if d.action != "allow" || d.reason != "" && d.reason != "robots_txt" {
			t.Errorf("+%v %s: %s/%s", d.at, d.uri, d.action, d.reason)
		}
	}
	// wget's robots.txt parser does not read Allow lines, so it skips
	// /private/press/ (see TestPoliteCrawler).
	for _, p := range demoAllowed[:5] {
		if !res.fetched[p] {
			t.Errorf("wget at the Crawl-delay did not fetch %s (fetched %v)", p, res.fetched)
		}
	}
}

// TestWgetBelowCrawlDelay: wget --wait below the Crawl-delay (0.1s, and
// none) is throttled, never blocked, never refused an allowed page. (At
// 0.2s or more, its five pages stay within the burst and the one slip that
// grace only logs.)
func TestWgetBelowCrawlDelay(t *testing.T) {
	need(t, "wget")
	for _, wait := range []string{"0.1", "0"} {
		t.Run("wait "+wait, func(t *testing.T) {
			s := start(t, options{guard: ladderLog})
			const ua = "HurryBot/1.0 (+https://example.com/hurrybot)"
			res := wget(t, s.front, ua, "--wait="+wait)
			ds := s.decisions(t, "HurryBot/")
			t.Logf("wget --wait=%s: fetched %d, errors %v; decisions: %s", wait, len(res.fetched), res.errors, summary(ds, 20))
			throttled := 0
			for p, code := range res.errors {
				if code != 429 {
					t.Errorf("%s: %d, want only 429s", p, code)
				}
				throttled++
			}
			if throttled == 0 {
				t.Errorf("wget --wait=%s was not throttled; the test exercises nothing", wait)
			}
			checkNeverBlocked(t, ds)
		})
	}
}

// ladderLog logs every decision, one line each (no log_repeats folding):
// these tests read the ladder's steps from the log.
const ladderLog = "log_allowed 1\n\t\tlog_repeats 0"

// TestWgetIgnores429: wget fetching 120 URLs of the site 0.1s apart
// ignores its 429s for longer than strikes windows, and is blocked.
func TestWgetIgnores429(t *testing.T) {
	need(t, "wget")
	s := start(t, options{guard: ladderLog})
	dir := t.TempDir()
	var urls strings.Builder
	for i := 0; i < 120; i++ {
		fmt.Fprintf(&urls, "%s%s?n=%d\n", s.front, demoAllowed[i%len(demoAllowed)], i)
	}
	list := filepath.Join(dir, "urls.txt")
	if err := os.WriteFile(list, []byte(urls.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	const ua = "PushyBot/1.0 (+https://example.com/pushybot)"
	out, _ := exec.Command("wget", "-nv", "-i", list, "-P", filepath.Join(dir, "out"), "-U", ua, "--wait=0.1", "--tries=1", "--timeout=10").CombinedOutput()
	ds := s.decisions(t, "PushyBot/")
	took := checkBlockedAfterWindows(t, ds, 5)
	codes := map[string]int{}
	for _, code := range []string{"403", "429"} {
		codes[code] = strings.Count(string(out), "ERROR "+code)
	}
	t.Logf("wget ignoring 429: errors %v, blocked %v after its first 429; decisions: %s", codes, took, summary(ds, 0))
	if codes["403"] == 0 || codes["429"] == 0 {
		t.Errorf("wget saw %v; want 429s, then 403s", codes)
	}
}
