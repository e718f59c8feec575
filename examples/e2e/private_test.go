package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// noRedirects is an HTTP client that reports redirects instead of
// following them.
var noRedirects = &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// getAs makes one GET of base+path with the User-Agent ua and the headers
// (name, value pairs), and returns the response with its body read.
func getAs(t *testing.T, base, path, ua string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", ua)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestRefusalsArePrivate (issue 29, item 4): every response that depends on
// who asks is marked for that client only, so that a shared cache (a CDN,
// a corporate proxy) never serves a bot's answer to a person: a deny 404
// refusal, a 429 throttle, a trap's refusal, a blocked client's, and the
// canonical 301 sent only to bots carry Cache-Control: private, no-store
// and Vary: User-Agent. The page a browser gets at the same URL is the
// backend's own.
func TestRefusalsArePrivate(t *testing.T) {
	s := start(t, options{
		robots: "User-agent: *\nQueryParam: -sid\nCrawl-delay: 5\nDisallow: /private/\n",
		guard:  "deny 404\n\t\tstrikes 1000", trustProxy: true,
	})
	const bot = "PrivateBot/1.0 (+https://example.com/bot)"
	check := func(what string, resp *http.Response, status int) {
		t.Helper()
		cc, vary := resp.Header.Get("Cache-Control"), strings.Join(resp.Header.Values("Vary"), ", ")
		t.Logf("%s: %d, Cache-Control %q, Vary %q, X-Robots-Guard %q", what, resp.StatusCode, cc, vary, resp.Header.Get("X-Robots-Guard"))
		if resp.StatusCode != status {
			t.Errorf("%s: status %d, want %d", what, resp.StatusCode, status)
		}
		if cc != "private, no-store" {
			t.Errorf("%s: Cache-Control %q, want private, no-store", what, cc)
		}
		if !strings.Contains(vary, "User-Agent") {
			t.Errorf("%s: Vary %q, want User-Agent", what, vary)
		}
	}
	resp, _ := getAs(t, s.front, "/index.html?sid=1", bot)
	check("the canonical redirect of a bot", resp, 301)
	if loc := resp.Header.Get("Location"); loc != "/index.html" {
		t.Errorf("the canonical redirect: Location %q, want /index.html", loc)
	}
	resp, _ = getAs(t, s.front, "/private/report.html", bot, "X-Forwarded-For", "192.0.2.1")
	check("deny 404 of a disallowed path", resp, 404)
	for range 10 { // past the burst and the grace
		if resp, _ = getAs(t, s.front, "/index.html", bot); resp.StatusCode != 200 {
			break
		}
	}
	check("a throttle (Crawl-delay: 5)", resp, 429)
	resp, _ = getAs(t, s.front, "/private-archive/x.html", "TrapBot/1.0", "X-Forwarded-For", "192.0.2.50")
	check("a trap hit", resp, 404)
	resp, _ = getAs(t, s.front, "/index.html", "TrapBot/1.0", "X-Forwarded-For", "192.0.2.50")
	check("a blocked client", resp, 404)
	resp, body := getAs(t, s.front, "/about.html?sid=1", firefox)
	if resp.StatusCode != 200 || !strings.Contains(body, "<title>") {
		t.Errorf("the browser's page: %d %.80q, want the page", resp.StatusCode, body)
	}
}

// TestRewriteHeadersDropped (issue 29, item 5): an application that takes
// the path to serve from X-Original-URL, X-Rewrite-URL or a like header
// (IIS's URL Rewrite, Symfony, Zend; nginx's X-Original-URI) would serve a
// disallowed page to a bot that asks for "/" with the header: the guard
// judges "/" and drops the headers before the backend, which serves "/".
// A person's request is passed on the same way.
func TestRewriteHeadersDropped(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	headers := []string{"X-Original-URL", "X-Rewrite-URL", "X-Original-URI", "X-Forwarded-Path", "X-Forwarded-Uri", "X-Override-URL"}
	app := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		for _, h := range headers { // the route the application would take
			if v := r.Header.Get(h); v != "" {
				path = v
			}
		}
		if strings.HasPrefix(path, "/private/") {
			fmt.Fprint(w, "the secret of "+path)
			return
		}
		fmt.Fprint(w, "the home page")
	})}
	go func() { _ = app.Serve(l) }()
	t.Cleanup(func() { app.Close() })
	s := start(t, options{proxyTo: l.Addr().String(), guard: "strikes 1000", trustProxy: true})
	const bot = "RewriteBot/1.0 (+https://example.com/bot)"
	// The application does route by the headers.
	for _, h := range headers {
		resp, err := http.DefaultClient.Do(func() *http.Request {
			r, _ := http.NewRequest("GET", "http://"+l.Addr().String()+"/", nil)
			r.Header.Set(h, "/private/secret.html")
			return r
		}())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), "secret") {
			t.Fatalf("the application does not route by %s: %q", h, b)
		}
	}
	for i, h := range headers {
		ip := fmt.Sprintf("192.0.2.%d", 10+i) // apart from the Crawl-delay of the others
		for _, ua := range []string{bot, firefox} {
			resp, body := getAs(t, s.front, "/", ua, h, "/private/secret.html", "X-Forwarded-For", ip)
			if strings.Contains(body, "secret") {
				t.Errorf("%s: /private/secret.html served through / to %s: %d %q", h, ua, resp.StatusCode, body)
			} else if resp.StatusCode != 200 || body != "the home page" {
				t.Errorf("%s, %s: %d %q, want the home page", h, ua, resp.StatusCode, body)
			}
		}
	}
	// The disallowed page itself is refused to the bot.
	if resp, body := getAs(t, s.front, "/private/secret.html", bot, "X-Forwarded-For", "192.0.2.99"); resp.StatusCode != 403 {
		t.Errorf("/private/secret.html to the bot: %d %q, want 403", resp.StatusCode, body)
	}
}
