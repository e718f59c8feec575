package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rgreport "github.com/robotsguard/robotsguard/report"
)

// The site of the behaviour suites (issue 37): a demo-like site whose
// pages link to each other, with images, a style sheet and a script, a
// search and account pages that people use and robots.txt disallows, and
// private pages that only robots.txt or a hidden link names. Served by the
// real binary over real TLS (tls internal), each scenario on a site of its
// own (a port and a zone), every request in Caddy's access log and every
// decision in the decision log (log_allowed 1).

// behaviourOffHere turns the behaviour evidence off for the tests of how a
// client speaks (TestPosers, TestTLSFamily, TestQUIC): their browsers type
// a dozen addresses of the site in a few seconds, which is what a crawler
// driving a browser does, and which the behaviour evidence holds (the
// suites here hold it to people who click).
const behaviourOffHere = "behaviour off"

// behaviourRobots is the site's robots.txt.
const behaviourRobots = "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\nDisallow: /search\nDisallow: /account\n"

// behaviourArticles is how many articles the site has.
const behaviourArticles = 40

// disallowedPath reports whether robots.txt's "*" group disallows p.
func disallowedPath(p string) bool {
	return strings.HasPrefix(p, "/private/") || strings.HasPrefix(p, "/search") || strings.HasPrefix(p, "/account")
}

// unlinkedPath reports whether no visible link of the site names p: the
// private pages, which only robots.txt (/private/) or a hidden link
// (/private/hidden.html) names, or the private index's own links.
func unlinkedPath(p string) bool { return strings.HasPrefix(p, "/private/") }

// behaviourSite writes the site under a new directory and returns it.
func behaviourSite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{}
	pngOf := func(w, h int, c color.RGBA) []byte {
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		for x := range w {
			for y := range h {
				img.Set(x, y, c)
			}
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	files["assets/site.css"] = []byte("body { font-family: sans-serif; max-width: 50em; margin: auto }\nnav a { margin-right: 1em }\n.hidden { display: none }\n")
	files["assets/site.js"] = []byte("document.documentElement.classList.add('js');\n" +
		"fetch('/api/hello.json').then(r => r.json()).then(j => { document.body.dataset.hello = j.hello; });\n")
	files["api/hello.json"] = []byte(`{"hello": "world"}` + "\n")
	files["assets/logo.png"] = pngOf(40, 20, color.RGBA{10, 20, 200, 255})
	files["assets/favicon.png"] = pngOf(16, 16, color.RGBA{200, 20, 10, 255})
	for i := 1; i <= behaviourArticles; i++ {
		files[fmt.Sprintf("img/a%02d.png", i)] = pngOf(20+i, 10, color.RGBA{uint8(5 * i), 100, 50, 255})
	}
	nav := `<nav><a id="nav-home" href="/">Home</a><a id="nav-articles" href="/articles/">Articles</a>` +
		`<a id="nav-about" href="/about.html">About</a><a id="nav-account" href="/account/">Your account</a>` +
		`<form id="search" action="/search" method="get"><input id="q" name="q" value=""><button id="search-go">Search</button></form></nav>`
	page := func(title, body string) []byte {
		return []byte("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + title + "</title>" +
			"<link rel=\"stylesheet\" href=\"/assets/site.css\"><link rel=\"icon\" href=\"/assets/favicon.png\">" +
			"<script src=\"/assets/site.js\" defer></script></head>\n<body>" + nav +
			"<img src=\"/assets/logo.png\" alt=\"logo\" width=\"40\" height=\"20\">\n<h1>" + title + "</h1>\n" + body + "\n</body></html>\n")
	}
	art := func(i int) string { return fmt.Sprintf("/articles/a%02d.html", i) }
	var list strings.Builder
	for i := 1; i <= behaviourArticles; i++ {
		fmt.Fprintf(&list, "<li><a id=\"to-a%02d\" href=\"%s\">Article %d</a> <a id=\"tag-a%02d\" href=\"/search?q=tag%d\">more on tag %d</a></li>\n", i, art(i), i, i, i%7, i%7)
	}
	files["index.html"] = page("Home", "<p>Welcome.</p><ul>"+strings.Join(strings.Split(list.String(), "\n")[:10], "\n")+"</ul>"+
		"\n<footer><a class=\"hidden\" href=\"/private/hidden.html\">staff only</a></footer>")
	files["articles/index.html"] = page("Articles", "<ul>"+list.String()+"</ul>")
	files["about.html"] = page("About", "<p>About this site.</p><p><a id=\"to-a01\" href=\"/articles/a01.html\">Our first article</a></p>")
	for i := 1; i <= behaviourArticles; i++ {
		prev, next := (i+behaviourArticles-2)%behaviourArticles+1, i%behaviourArticles+1
		body := fmt.Sprintf("<p>Content of article %d.</p><img src=\"/img/a%02d.png\" alt=\"figure %d\">\n"+
			"<p><a id=\"prev\" href=\"%s\">Previous</a> <a id=\"next\" href=\"%s\">Next</a> "+
			"<a id=\"to-a%02d\" href=\"%s\">Related</a> <a id=\"tag\" href=\"/search?q=tag%d\">More on tag %d</a> "+
			"<a id=\"orders\" href=\"/account/orders.html\">Buy it</a></p>",
			i, i, i, art(prev), art(next), (i+10)%behaviourArticles+1, art((i+10)%behaviourArticles+1), i%7, i%7)
		if i%5 == 0 {
			body += "\n<a class=\"hidden\" href=\"/private/hidden.html\">staff only</a>"
		}
		files[strings.TrimPrefix(art(i), "/")] = page(fmt.Sprintf("Article %d", i), body)
	}
	var results strings.Builder
	for i := 1; i <= behaviourArticles; i += 4 {
		fmt.Fprintf(&results, "<li><a id=\"result-%d\" href=\"%s\">Article %d</a></li>\n", i, art(i), i)
	}
	files["search"] = page("Search", "<p>Results:</p><ul>"+results.String()+"</ul>")
	files["account/index.html"] = page("Your account", "<p>Signed in.</p><p><a id=\"to-orders\" href=\"/account/orders.html\">Orders</a> <a id=\"to-settings\" href=\"/account/settings.html\">Settings</a></p>")
	files["account/orders.html"] = page("Your orders", "<p>No orders yet.</p><p><a id=\"to-account\" href=\"/account/\">Your account</a></p>")
	files["account/settings.html"] = page("Settings", "<p>Your settings.</p><p><a id=\"to-account\" href=\"/account/\">Your account</a></p>")
	files["private/index.html"] = page("Private", "<p>Staff pages.</p><ul><li><a href=\"/private/report.html\">Report</a></li><li><a href=\"/private/plans.html\">Plans</a></li><li><a href=\"/private/staff/list.html\">Staff</a></li></ul>")
	files["private/report.html"] = page("Report", "<p>The private report.</p><a href=\"/private/staff/list.html\">Staff</a>")
	files["private/plans.html"] = page("Plans", "<p>The private plans.</p>")
	files["private/staff/list.html"] = page("Staff", "<p>The staff list.</p><a href=\"/private/staff/pay.html\">Pay</a>")
	files["private/staff/pay.html"] = page("Pay", "<p>The pay list.</p>")
	files["private/hidden.html"] = page("Hidden", "<p>Only a hidden link names this page.</p>")
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

// behaviourSites is the real binary serving the site n times.
type behaviourSites struct {
	dir       string
	urls      []string // https://localhost:port, no slash
	decisions string   // the decision log, for all sites (entries' zone: "b0", "b1", ...)
	access    []string // each site's access log
	caFile    string   // the root of Caddy's internal CA (tls internal), PEM
	home      string   // a HOME whose NSS database trusts it (Chromium on Linux reads $HOME/.pki/nssdb)
	start     time.Time
}

// startBehaviourSites starts the binary with n copies of the site, each
// with more robots_guard options guard.
func startBehaviourSites(t *testing.T, n int, guard string) *behaviourSites {
	t.Helper()
	dir := t.TempDir()
	root := behaviourSite(t)
	robots := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robots, []byte(behaviourRobots), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "robots.txt"), []byte(behaviourRobots), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &behaviourSites{dir: dir, decisions: filepath.Join(dir, "robots_guard.log"), home: filepath.Join(dir, "home")}
	var sites strings.Builder
	for i := range n {
		port := freePort(t)
		s.urls = append(s.urls, fmt.Sprintf("https://localhost:%d", port))
		s.access = append(s.access, filepath.Join(dir, fmt.Sprintf("access%d.log", i)))
		fmt.Fprintf(&sites, `https://localhost:%d {
	bind 127.0.0.1
	tls internal
	log {
		output file %s
		format json
	}
	@assets path /assets/* /img/*
	header @assets Cache-Control "public, max-age=3600"
	@nosession not header_regexp Cookie sid=
	header @nosession Set-Cookie "sid={http.request.uuid}; Path=/; Max-Age=86400; Secure; SameSite=Lax"
	robots_guard {
		robots %s
		zone b%d
		verify off
		log_allowed 1
		log_repeats 0
		%s
	}
	root * %s
	file_server
}
`, port, s.access[i], robots, i, guard, root)
	}
	cfg := fmt.Sprintf(`{
	admin off
	auto_https disable_redirects
	skip_install_trust
	storage file_system %s
	grace_period 1s
	servers {
		protocols h1 h2
	}
	log robots_guard {
		output file %s
		format json
		include http.handlers.robots_guard
	}
}
%s`, filepath.Join(dir, "data"), s.decisions, sites.String())
	cfgPath := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	cmd := exec.Command(caddyBin, "run", "--config", cfgPath, "--adapter", "caddyfile")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, out
	startProcess(t, cmd, "caddy", out, 5*time.Second)
	// Ready when Caddy's root exists and every site serves its robots.txt
	// over a certificate it issued.
	s.caFile = filepath.Join(dir, "data", "pki", "authorities", "local", "root.crt")
	var client *http.Client
	for deadline := time.Now().Add(20 * time.Second); client == nil; time.Sleep(50 * time.Millisecond) {
		if pem, err := os.ReadFile(s.caFile); err == nil {
			pool := x509.NewCertPool()
			if pool.AppendCertsFromPEM(pem) {
				client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 2 * time.Second}
			}
		}
		if client == nil && time.Now().After(deadline) {
			t.Fatalf("caddy made no root certificate:\n%s", out.String())
		}
	}
	for _, u := range s.urls {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			resp, err := client.Get(u + "/robots.txt")
			if err == nil {
				resp.Body.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("caddy did not serve %s: %v\n%s", u, err, out.String())
			}
		}
	}
	if err := trustNSS(s.caFile, filepath.Join(s.home, ".pki", "nssdb")); err != nil {
		t.Fatal(err)
	}
	s.start = time.Now()
	return s
}

// trustNSS makes an NSS database under db that trusts the CA of caFile.
func trustNSS(caFile, db string) error {
	if err := os.MkdirAll(db, 0o700); err != nil {
		return err
	}
	for _, args := range [][]string{{"-N", "--empty-password", "-d", "sql:" + db}, {"-A", "-n", "caddy-local", "-t", "C,,", "-i", caFile, "-d", "sql:" + db}} {
		if out, err := exec.Command("certutil", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("certutil %s: %v: %s", args[0], err, out)
		}
	}
	return nil
}

// behaviourHit is one request as Caddy's access log has it, with what a
// behaviour summary reads.
type behaviourHit struct {
	At                     time.Time // when the request arrived (the log's time less the request's duration)
	Status                 int
	Method, URI, Path      string
	Conn                   string // the client's port: one connection
	Dest, Mode, Site, User string // Sec-Fetch-*
	Referer                string // the referring path, "" for none, "x" for another site
	Cookie                 bool
	Conditional            bool // If-None-Match or If-Modified-Since
	UA                     string
}

// Document reports a navigation's document (or a frame's).
func (h *behaviourHit) Document() bool {
	return h.Dest == "document" || h.Dest == "iframe" || h.Dest == "frame"
}

// hits returns the requests site i answered, in the order they arrived,
// but the readiness check's robots.txt.
func (s *behaviourSites) hits(t *testing.T, i int) []behaviourHit {
	t.Helper()
	return s.parseHits(i, readLines(t, s.access[i]))
}

// hitsSoFar returns the requests site i has answered so far (none when
// its access log cannot be read yet).
func (s *behaviourSites) hitsSoFar(i int) []behaviourHit {
	data, _ := os.ReadFile(s.access[i])
	return s.parseHits(i, strings.Split(string(data), "\n"))
}

// parseHits reads site i's access log lines.
func (s *behaviourSites) parseHits(i int, lines []string) []behaviourHit {
	var out []behaviourHit
	for _, line := range lines {
		var e struct {
			TS       float64 `json:"ts"`
			Duration float64 `json:"duration"`
			Request  struct {
				Port    string              `json:"remote_port"`
				Method  string              `json:"method"`
				URI     string              `json:"uri"`
				Headers map[string][]string `json:"headers"`
			} `json:"request"`
			Status int `json:"status"`
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Status == 0 {
			continue
		}
		h := e.Request.Headers
		one := func(k string) string {
			if len(h[k]) > 0 {
				return h[k][0]
			}
			return ""
		}
		if one("User-Agent") == "Go-http-client/1.1" {
			continue // the readiness check
		}
		// Caddy logs a request once answered: it arrived its duration
		// before, which is when robots_guard judged it.
		sec, frac := int64(e.TS), e.TS-float64(int64(e.TS))
		at := time.Unix(sec, int64(frac*1e9)).Add(-time.Duration(e.Duration * 1e9))
		hit := behaviourHit{At: at, Status: e.Status, Method: e.Request.Method, URI: e.Request.URI,
			Conn: e.Request.Port, Dest: one("Sec-Fetch-Dest"), Mode: one("Sec-Fetch-Mode"), Site: one("Sec-Fetch-Site"), User: one("Sec-Fetch-User"),
			Cookie: one("Cookie") != "", Conditional: one("If-None-Match") != "" || one("If-Modified-Since") != "", UA: one("User-Agent")}
		hit.Path, _, _ = strings.Cut(hit.URI, "?")
		if r := one("Referer"); r != "" {
			if rest, ok := strings.CutPrefix(r, s.urls[i]); ok {
				hit.Referer, _, _ = strings.Cut(rest, "?")
				if hit.Referer == "" {
					hit.Referer = "/"
				}
			} else {
				hit.Referer = "x"
			}
		}
		out = append(out, hit)
	}
	slices.SortStableFunc(out, func(a, b behaviourHit) int { return a.At.Compare(b.At) }) // in the order they arrived
	return out
}

// rgEntry is a decision log line.
type rgEntry = rgreport.Entry

// entries returns the decisions logged for site i.
func (s *behaviourSites) entries(t *testing.T, i int) []rgreport.Entry {
	t.Helper()
	var out []rgreport.Entry
	for _, line := range readLines(t, s.decisions) {
		var e rgreport.Entry
		if json.Unmarshal([]byte(line), &e) == nil && e.Action != "" && e.Zone == fmt.Sprintf("b%d", i) && e.UserAgent != "Go-http-client/1.1" {
			out = append(out, e)
		}
	}
	return out
}
