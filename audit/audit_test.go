package audit

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/policy"
)

var update = flag.Bool("update", false, "rewrite golden files")

func kinds(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind+" "+f.Path)
	}
	return out
}

// TestAuditGolden: the audit of a fixture site that has each problem once
// matches the expected report.
func TestAuditGolden(t *testing.T) {
	site, err := ReadDir("testdata/site", 1000)
	if err != nil {
		t.Fatal(err)
	}
	robots, err := os.ReadFile("testdata/site/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	findings := Audit(policy.Parse(robots), site)
	var out bytes.Buffer
	WriteText(&out, findings)
	if *update {
		if err := os.WriteFile("testdata/golden.txt", out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("audit report differs from testdata/golden.txt:\n%s", out.String())
	}
	count := map[string]int{}
	for _, f := range findings {
		count[f.Kind]++
	}
	for _, k := range []string{"lint", "noindex_disallowed", "disallowed_linked", "disallowed_image_embedded", "conflicting_image_robots"} {
		if count[k] != 1 {
			t.Errorf("%d %s findings, want 1", count[k], k)
		}
	}
}

// guardedSite serves dir like a site behind robots_guard would, for a
// crawler that obeys robots.txt: it records every path asked for, and
// refuses (and fails the test on) any path that robots.txt disallows for
// the audit; throttle429 paths are answered 429 once.
func guardedSite(t *testing.T, dir, robots string, throttle429 ...string) (*httptest.Server, func() []string) {
	t.Helper()
	p := policy.Compile(policy.Parse([]byte(robots)))
	var mu sync.Mutex
	var asked []string
	throttled := map[string]bool{}
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.RequestURI)
		first := slices.Contains(throttle429, r.URL.Path) && !throttled[r.URL.Path]
		throttled[r.URL.Path] = true
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, robots)
			return
		}
		if !p.Match([]string{Token}, r.RequestURI).Allowed {
			t.Errorf("the audit requested disallowed %s", r.RequestURI)
			w.Header().Set("X-Robots-Guard", "blocked_client")
			http.Error(w, "blocked", http.StatusForbidden)
			return
		}
		if first {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("X-Robots-Guard", "crawl_delay")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
}

// TestCrawlPolite: over HTTP the audit reads robots.txt first, never asks
// for a disallowed page or the trap (disallowed in the served robots.txt,
// linked invisibly), does not list the trap, keeps the Crawl-delay, waits
// out a 429 and reports it.
func TestCrawlPolite(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "testdata/site", dir)
	index := filepath.Join(dir, "index.html")
	data, _ := os.ReadFile(index)
	data = bytes.Replace(data, []byte("</body>"), []byte(`<a href="/private-archive/" style="display: none" tabindex="-1">archive</a></body>`), 1)
	if err := os.WriteFile(index, data, 0o644); err != nil {
		t.Fatal(err)
	}
	robots, _ := os.ReadFile("testdata/site/robots.txt")
	served := string(robots) + "Disallow: /private-archive/\nCrawl-delay: 0.25\n"
	srv, asked := guardedSite(t, dir, served, "/about.html")
	var slept []time.Duration
	var progress []Progress
	c, err := CrawlSite(srv.URL, CrawlOptions{Sleep: func(d time.Duration) { slept = append(slept, d) }, Progress: func(p Progress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	got := asked()
	if len(got) == 0 || got[0] != "/robots.txt" {
		t.Errorf("robots.txt not read first: %v", got)
	}
	if c.Disallowed != 3 { // /drafts/plan.html, /old.html and the trap
		t.Errorf("disallowed links not followed = %d, want 3", c.Disallowed)
	}
	if len(c.Refusals) != 1 || c.Refusals[0].Path != "/about.html" || c.Refusals[0].Status != 429 || c.Refusals[0].Guard != "crawl_delay" {
		t.Errorf("refusals: %+v", c.Refusals)
	}
	if _, ok := c.Site.Pages["/about.html"]; !ok {
		t.Error("the page throttled once was not read after the wait")
	}
	if !slices.Contains(slept, time.Second) || !slices.Contains(slept, 250*time.Millisecond) {
		t.Errorf("waits %v: want the Crawl-delay (250ms) and the Retry-After (1s)", slept)
	}
	if len(progress) == 0 || progress[len(progress)-1].Read != len(c.Site.Pages) {
		t.Errorf("progress: %+v", progress)
	}
	findings := Audit(policy.Parse(c.Robots), c.Site)
	want := []string{"lint ", "disallowed_linked /drafts/plan.html", "disallowed_linked /old.html", "disallowed_image_embedded /images/private/team.jpg", "conflicting_image_robots /images/logo.png"}
	if !reflect.DeepEqual(kinds(findings), want) {
		t.Errorf("findings over HTTP = %q, want %q (the trap is no finding; the disallowed page is not read, so its noindex is not seen)", kinds(findings), want)
	}
	var out bytes.Buffer
	WriteCrawl(&out, c, 1000)
	for _, s := range []string{"crawl: 2 pages read in 4 requests; 3 links not followed because robots.txt disallows them", "warning: the site refused 1 of 4 requests", "429 /about.html (X-Robots-Guard: crawl_delay)", "allow_token robotsguard-audit"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("crawl summary lacks %q:\n%s", s, out.String())
		}
	}
}

// TestCrawlStopsWhenBlocked: a site that blocks the audit ends the crawl
// at once, and the summary says so.
func TestCrawlStopsWhenBlocked(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow:\n")
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a>`)
		default:
			w.Header().Set("X-Robots-Guard", "blocked_client")
			http.Error(w, "no", http.StatusForbidden)
		}
	}))
	defer srv.Close()
	c, err := CrawlSite(srv.URL, CrawlOptions{Delay: -1})
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || c.Stopped == "" || len(c.Refusals) != 1 {
		t.Errorf("%d requests, stopped %q, refusals %+v", n, c.Stopped, c.Refusals)
	}
}

// TestMaxPages: a site larger than the cap is read breadth first, so the
// home page and the top level are read, and the cap is reported, from a
// directory and over HTTP.
func TestMaxPages(t *testing.T) {
	dir := t.TempDir()
	var links strings.Builder
	for i := range 30 {
		sub := filepath.Join(dir, "a", fmt.Sprintf("s%02d", i))
		os.MkdirAll(sub, 0o755)
		os.WriteFile(filepath.Join(sub, "index.html"), []byte(`<a href="/">home</a>`), 0o644)
		fmt.Fprintf(&links, `<a href="/a/s%02d/">s</a>`, i)
	}
	os.WriteFile(filepath.Join(dir, "index.html"), []byte(`<a href="/top.html">top</a>`+links.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "top.html"), []byte(`<p>top</p>`), 0o644)
	site, err := ReadDir(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if site.Pages["/"] == nil || site.Pages["/top.html"] == nil || len(site.Pages) != 10 || site.Unread != 22 {
		t.Errorf("read %d pages (home %v, top %v), unread %d", len(site.Pages), site.Pages["/"] != nil, site.Pages["/top.html"] != nil, site.Unread)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	c, err := CrawlSite(srv.URL, CrawlOptions{MaxPages: 10, Delay: -1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Site.Pages["/"] == nil || len(c.Site.Pages) != 10 || c.Site.Unread != 22 {
		t.Errorf("crawl read %d pages, unread %d", len(c.Site.Pages), c.Site.Unread)
	}
	var out bytes.Buffer
	WriteUnread(&out, site, 10)
	if !strings.Contains(out.String(), "warning: stopped at --max-pages 10; 22 more were not read") {
		t.Errorf("got %q", out.String())
	}
}

// TestAuditDemoSite: on the demo site the audit reports only what is true:
// /private/ and /~sam/ are disallowed but linked from allowed pages (on
// purpose: the demo shows robots being refused there); the hidden trap
// link is no finding.
func TestAuditDemoSite(t *testing.T) {
	site, err := ReadDir("../examples/site", 1000)
	if err != nil {
		t.Fatal(err)
	}
	robots, err := os.ReadFile("../examples/site/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"disallowed_linked /private/", "disallowed_linked /~sam/"}
	if got := kinds(Audit(policy.Parse(append(robots, "\nUser-agent: *\nDisallow: /private-archive/\n"...)), site)); !reflect.DeepEqual(got, want) {
		t.Errorf("demo site findings = %q, want %q", got, want)
	}
}

// TestWriteText: singular and plural counts.
func TestWriteText(t *testing.T) {
	var out bytes.Buffer
	WriteText(&out, []Finding{{Kind: "lint", Severity: "warning", Line: 2, Message: "m"}})
	if !strings.HasSuffix(out.String(), "\n1 finding\n") {
		t.Errorf("got %q", out.String())
	}
}

// FuzzParsePage: any HTML is read without panicking, and every link and
// image kept is a same-site path.
func FuzzParsePage(f *testing.F) {
	f.Add(`<html><head><meta name="robots" content="noindex, nofollow"></head><body><a href="/private/">x</a><img src="../img/a.png" alt="a"><a href="https://other.example/">o</a></body></html>`)
	f.Add(`<a href="//example.test/x?y=1"><a href="javascript:alert(1)"><a href=" /%zz"><div hidden><a href="/t">t</a></div>`)
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := ParsePage("/dir/page.html", "example.test", strings.NewReader(doc))
		if err != nil {
			return
		}
		for _, l := range p.Links {
			if !strings.HasPrefix(l.Target, "/") {
				t.Fatalf("kept link %q, not a same-site path", l.Target)
			}
		}
		for _, i := range p.Images {
			if !strings.HasPrefix(i.Src, "/") {
				t.Fatalf("kept image %q, not a same-site path", i.Src)
			}
		}
	})
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCrawlNoPages: a site whose pages are not HTML (an empty 200, as a
// misrouted proxy gives) is reported, not taken for a site without
// problems.
func TestCrawlNoPages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		}
	}))
	defer srv.Close()
	c, err := CrawlSite(srv.URL, CrawlOptions{Delay: -1})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	WriteCrawl(&out, c, 1000)
	if want := "crawl: 0 pages read in 2 requests; 1 answer was not an HTML page\nwarning: no page could be read: / answered 200 OK with Content-Type \"\"\n"; out.String() != want {
		t.Errorf("got %q\nwant %q", out.String(), want)
	}
}
