package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestCrossSiteTrapFramesNobody (issue 29, item 1): a page on another site
// embeds the demo site's trap as an image; headless Chromium, viewing it,
// fetches the trap for that page (Sec-Fetch-Site: cross-site). The fetch is
// refused, but the visitor's next visit is served, with the page's
// content; with Chromium's own User-Agent (class script) and with a
// desktop Chrome's (a person). The visitor's own request for the trap
// (typed: Sec-Fetch-Site none) still blocks its address, and so does
// curl's (no Sec-Fetch-Site, no Referer); curl with a Referer of another
// site is refused the trap and not blocked.
func TestCrossSiteTrapFramesNobody(t *testing.T) {
	need(t, "curl")
	for _, ua := range []string{"", wbaChrome} {
		name := "HeadlessChrome"
		if ua != "" {
			name = "Chrome"
		}
		t.Run(name, func(t *testing.T) { crossSiteTrap(t, ua) })
	}
}

func crossSiteTrap(t *testing.T, ua string) {
	s := start(t, options{trustProxy: true})

	// The attacker's site: localhost, another site than 127.0.0.1 for the
	// browser, on loopback all the same.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf(`<!doctype html><title>cats</title><img id="cat" src="%s/private-archive/cat.png"
onload="document.title='loaded'" onerror="document.title='refused'">`, s.front)
	attacker := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	})}
	go func() { _ = attacker.Serve(l) }()
	t.Cleanup(func() { attacker.Close() })
	attackerURL := fmt.Sprintf("http://localhost:%d/", l.Addr().(*net.TCPAddr).Port)

	b := newBrowser(t)
	if ua != "" {
		b.run(t, "user agent", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua})
			return err
		}))
	}
	b.run(t, "the attacker's page", chromedp.Navigate(attackerURL),
		chromedp.Poll[chromedp.Void](`document.title === 'refused' || document.title === 'loaded'`, chromedp.WithPollingTimeout(20*time.Second)))
	if title := eval[string](t, b, "document.title"); title != "refused" {
		t.Errorf("the trap image: %q, want refused", title)
	}
	// The trap was hit, and blocked nobody.
	hit := false
	for _, e := range s.moduleEntries(t) {
		if e["uri"] == "/private-archive/cat.png" && e["reason"] == "trap" && e["client_ip"] == "127.0.0.1" {
			hit = true
			t.Logf("the cross-site fetch: class %v, %v", e["class"], e["user_agent"])
			if e["blocked_until"] != nil || e["strikes"] != 0.0 {
				t.Errorf("the cross-site trap hit blocked or struck: %v", e)
			}
		}
	}
	if !hit {
		t.Fatalf("no trap decision for the cross-site image in the log:\n%s", readLog(t, s))
	}
	// The visitor goes to the site: served, with its content.
	b.run(t, "the visitor's visit", chromedp.Navigate(s.front+"/"))
	if body := b.text(t, "body"); !strings.Contains(body, "robotsguard demo") || !strings.Contains(body, "Its robots.txt is enforced") {
		t.Errorf("the visitor's next visit after a cross-site trap fetch: %.200q", body)
	}
	if status, guard, _ := curl(t, s.front, "/about.html", wbaChrome); status != 200 {
		t.Errorf("the address after the cross-site fetch, curl: %d %s", status, guard)
	}

	// Referer of another site, without Sec-Fetch-Site (an older browser):
	// refused, not blocked.
	status, guard, _ := curl(t, s.front, "/private-archive/cat.png", wbaChrome, from("198.51.100.70", []string{"Referer: http://cats.example/cats.html"})...)
	if status != 403 {
		t.Errorf("cross-site Referer on the trap: %d %s", status, guard)
	}
	if status, guard, body := curl(t, s.front, "/about.html", wbaChrome, from("198.51.100.70", nil)...); status != 200 || !strings.Contains(body, "<title>About") {
		t.Errorf("after a Referer-only cross-site trap hit: %d %s", status, guard)
	}
	// curl's own trap hit: blocked.
	curl(t, s.front, "/private-archive/", wbaChrome, from("198.51.100.71", nil)...)
	if status, guard, _ := curl(t, s.front, "/about.html", wbaChrome, from("198.51.100.71", nil)...); status != 403 || guard != "blocked_client" {
		t.Errorf("after curl's own trap hit: %d %s, want 403 blocked_client", status, guard)
	}
	// The visitor types the trap's URL: its own request, blocked. A person
	// (a desktop Chrome's User-Agent) is refused with the page that says
	// why (enforce/person.go); Chromium's own User-Agent (class script)
	// gets the empty refusal, which Chromium reports as a failed load.
	refused := func(what, url string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
		defer cancel()
		err := chromedp.Do(ctx, chromedp.Navigate(url))
		if ua == "" {
			if err == nil || !strings.Contains(err.Error(), "ERR_HTTP_RESPONSE_CODE_FAILURE") {
				t.Errorf("%s: %v, want a refusal (body %.100q)", what, err, b.text(t, "body"))
			}
			return
		}
		if body := b.text(t, "body"); err != nil || !strings.Contains(body, "Access paused") || strings.Contains(body, "robotsguard demo") {
			t.Errorf("%s: %v, body %.200q, want the refusal page a person can read", what, err, body)
		}
	}
	refused("the visitor's own trap hit", s.front+"/private-archive/")
	refused("the visitor's next visit", s.front+"/")
}

// TestServedFileAllowsTrapAndClass (issue 29, item 2): the enforcer never
// refuses, strikes or blocks what the robots.txt it serves allows the
// client. With "trap /trap-here/" and the site's "Allow:
// /trap-here/open/", a bot that obeys the served file ("caddy robots
// check" says allowed) fetches /trap-here/open/x.html and is served, again
// and again, and stays unblocked; the rest of the trap still blocks. With
// "block_class ai" and the site's "User-agent: GPTBot" / "Allow: /",
// GPTBot is served (the issue saw it blocked after seven requests), paced
// by its class rate; ClaudeBot, which the site does not name, is shut out.
// A robots file that says so is refused at load (TestContradictionRefused);
// the site's own robots.txt, read at run time, is enforced as served, and
// the log names both lines.
func TestServedFileAllowsTrapAndClass(t *testing.T) {
	need(t, "curl")
	robots := "User-agent: *\nAllow: /trap-here/open/\nDisallow: /private/\n\nUser-agent: GPTBot\nAllow: /\n"
	s := start(t, options{robots: robots, ownRobots: true, trustProxy: true, backend: "file_server",
		guard: "trap /trap-here/\n\t\tblock_class ai\n\t\trate ai 200ms\n\t\trate bot 100ms"})
	for _, f := range []string{"trap-here/open/x.html", "trap-here/x.html"} {
		p := filepath.Join(s.dir, "site", f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("<title>"+f+"</title>"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, _, served := curl(t, s.front, "/robots.txt", "curl/8")
	for _, want := range []string{`"line":2,"rule":"Allow: /trap-here/open/"`, `"line":6,"rule":"Allow: /","agent":"gptbot"`} {
		if !strings.Contains(s.output.String(), want) {
			t.Errorf("the log does not name the contradiction %s", want)
		}
	}
	// What the served file says, however it is laid out, as a polite
	// crawler reads it.
	file := filepath.Join(t.TempDir(), "served.txt")
	if err := os.WriteFile(file, []byte(served), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(ua, url string) string {
		out, _ := exec.Command(caddyBin, "robots", "check", "--robots", file, "-A", ua, url).Output()
		return string(out)
	}
	const bot = "PoliteBot/1.0 (+https://polite.example/bot)"
	if out := check(bot, "https://example.com/trap-here/open/x.html"); !strings.HasPrefix(out, "allowed") {
		t.Fatalf("caddy robots check on the served file: %q", out)
	}
	for i := 0; i < 10; i++ {
		status, guard, body := curl(t, s.front, "/trap-here/open/x.html", bot, from("198.51.100.80", nil)...)
		if status != 200 || !strings.Contains(body, "trap-here/open/x.html") {
			t.Fatalf("polite bot on the part of the trap the site allows, request %d: %d %s", i+1, status, guard)
		}
		time.Sleep(150 * time.Millisecond) // rate bot 100ms
	}
	if status, guard, _ := curl(t, s.front, "/about.html", bot, from("198.51.100.80", nil)...); status != 200 {
		t.Errorf("polite bot afterwards: %d %s", status, guard)
	}
	if status, guard, _ := curl(t, s.front, "/trap-here/open/x.html", wbaChrome, from("198.51.100.81", nil)...); status != 200 {
		t.Errorf("browser on the part of the trap the site allows: %d %s", status, guard)
	}
	// The rest of the trap traps.
	if out := check(bot, "https://example.com/trap-here/x.html"); !strings.HasPrefix(out, "disallowed") {
		t.Errorf("caddy robots check, the trap: %q", out)
	}
	curl(t, s.front, "/trap-here/x.html", bot, from("198.51.100.82", nil)...)
	if status, guard, _ := curl(t, s.front, "/about.html", bot, from("198.51.100.82", nil)...); status != 403 || guard != "blocked_client" {
		t.Errorf("after the trap: %d %s", status, guard)
	}

	const gptbot = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	const claudebot = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
	if out := check(gptbot, "https://example.com/about.html"); !strings.HasPrefix(out, "allowed") {
		t.Fatalf("caddy robots check, GPTBot on the served file: %q", out)
	}
	for i := 0; i < 15; i++ {
		status, guard, body := curl(t, s.front, "/about.html", gptbot, from("198.51.100.90", nil)...)
		if status != 200 || !strings.Contains(body, "<title>About") {
			t.Fatalf("GPTBot, allowed by the site's own group, request %d: %d %s", i+1, status, guard)
		}
		time.Sleep(250 * time.Millisecond) // rates ai 200ms
	}
	if status, guard, _ := curl(t, s.front, "/about.html", claudebot, from("198.51.100.91", nil)...); status != 403 || guard != "blocked_class" {
		t.Errorf("ClaudeBot: %d %s, want 403 blocked_class", status, guard)
	}
}

// readLog returns the module's log, for a failure message.
func readLog(t *testing.T, s *server) string {
	t.Helper()
	data, _ := os.ReadFile(s.moduleLog)
	return string(data)
}
