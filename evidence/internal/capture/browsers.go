package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/robotsguard/robotsguard/internal/browserctl"
	"github.com/robotsguard/robotsguard/internal/tlsclients"
)

// browser drives one real browser.
type browser interface {
	navigate(url string) error
	// click clicks the element with the id as a person would (with user
	// activation).
	click(id string) error
	reload() error
	close()
}

// browse walks a browser through every kind of navigation and subresource
// on one origin ("secure", "insecure" or "loopback"), waiting each time
// until the site has seen the request the step makes.
func browse(s *site, b browser, kind string, logf func(string, ...any)) {
	a, other := siteA, siteB
	if kind == "loopback" {
		a, other = "127.0.0.1", "localhost"
	}
	self, xsite := s.origin(kind, a), s.origin(kind, other)
	step := func(what, want string, n int, act func() error) {
		if err := act(); err != nil {
			logf("  %s %s: %v", kind, what, err)
			return
		}
		if !s.waitN(self+want, n, 30*time.Second) {
			logf("  %s %s: no %s within 30 s", kind, what, want)
		}
	}
	step("navigate", "/done?page", 1, func() error { return b.navigate(self + "/page.html") })
	step("reload", "/done?page", 2, b.reload)
	step("link", "/done?next", 1, func() error { return b.click("next") })
	time.Sleep(2 * time.Second) // speculation rules, reports
	step("download", "/file.bin", 1, func() error { return b.click("dl") })
	step("form", "/form", 1, func() error { return b.click("submit") })
	step("redirect", "/redirected.html", 1, func() error { return b.navigate(self + "/redirect") })
	if err := b.navigate(xsite + "/xs-nav.html"); err != nil || !s.waitN(xsite+"/xs-nav.html", 1, 30*time.Second) {
		logf("  %s cross-site page: %v", kind, err)
	}
	step("cross-site link", "/from-b.html", 1, func() error { return b.click("go") })
}

// chromium is a headless Chromium driven over the DevTools protocol.
type chromium struct {
	cmd     *exec.Cmd
	c       *browserctl.RPC
	session string
	dir     string
	log     strings.Builder
	mu      sync.Mutex
}

// startChromium starts Debian's chromium with a fresh profile that trusts
// the capture CA (an NSS database in its HOME) and resolves the site's
// names to ip. extra are more flags (a User-Agent, features).
func startChromium(s *site, dir string, extra ...string) (*chromium, error) {
	home := filepath.Join(dir, "home")
	nss := filepath.Join(home, ".pki", "nssdb")
	if err := os.MkdirAll(nss, 0o700); err != nil {
		return nil, err
	}
	if err := tlsclients.TrustNSS(context.Background(), s.caPEM, nss); err != nil {
		return nil, err
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		return nil, err
	}
	args := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--remote-debugging-port=0", "--remote-allow-origins=*", "--disable-features=HttpsUpgrades",
		"--short-reporting-delay",
		fmt.Sprintf("--host-resolver-rules=MAP %s %s, MAP %s %s, MAP %s %s", siteA, s.ip, siteB, s.ip, siteC, s.ip),
	}
	args = append(args, extra...)
	args = append(args, "about:blank")
	b := &chromium{dir: dir, cmd: exec.Command(bin, args...)}
	b.cmd.Env = append(os.Environ(), "HOME="+home)
	stderr, err := b.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := b.cmd.Start(); err != nil {
		return nil, err
	}
	url, err := browserctl.Listening(stderr, regexp.MustCompile(`DevTools listening on (ws://\S+)`), &b.log, &b.mu)
	if err != nil {
		b.close()
		return nil, fmt.Errorf("%v\n%s", err, b.output())
	}
	if b.c, err = browserctl.DialRPC(url); err != nil {
		b.close()
		return nil, err
	}
	var targets struct {
		TargetInfos []struct{ TargetID, Type string } `json:"targetInfos"`
	}
	if err := b.c.Call("", "Target.getTargets", map[string]any{}, &targets); err != nil {
		b.close()
		return nil, err
	}
	for _, t := range targets.TargetInfos {
		if t.Type == "page" {
			var att struct {
				SessionID string `json:"sessionId"`
			}
			if err := b.c.Call("", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true}, &att); err != nil {
				b.close()
				return nil, err
			}
			b.session = att.SessionID
			break
		}
	}
	if b.session == "" {
		b.close()
		return nil, fmt.Errorf("chromium has no page")
	}
	downloads := filepath.Join(dir, "downloads")
	os.MkdirAll(downloads, 0o700)
	if err := b.c.Call("", "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": downloads}, nil); err != nil {
		b.close()
		return nil, err
	}
	return b, b.c.Call(b.session, "Page.enable", map[string]any{}, nil)
}

// overrideUA sets the User-Agent through the DevTools protocol without
// client-hint metadata, as DevTools' network conditions and automation
// tools do.
func (b *chromium) overrideUA(ua string) error {
	return b.c.Call(b.session, "Emulation.setUserAgentOverride", map[string]any{"userAgent": ua}, nil)
}

func (b *chromium) navigate(url string) error {
	return b.c.Call(b.session, "Page.navigate", map[string]any{"url": url}, nil)
}

func (b *chromium) click(id string) error {
	return browserctl.Retry(func() (bool, error) {
		var res struct {
			Result struct {
				Value bool `json:"value"`
			} `json:"result"`
		}
		err := b.c.Call(b.session, "Runtime.evaluate", map[string]any{"expression": browserctl.ClickJS(id), "userGesture": true, "returnByValue": true}, &res)
		return res.Result.Value, err
	})
}

func (b *chromium) reload() error {
	return b.c.Call(b.session, "Runtime.evaluate", map[string]any{"expression": "location.reload()"}, nil)
}

func (b *chromium) output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.String()
}

func (b *chromium) close() {
	if b.c != nil {
		b.c.Call("", "Browser.close", map[string]any{}, nil)
		b.c.Close()
	}
	done := make(chan struct{})
	go func() { b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		b.cmd.Process.Kill()
		<-done
	}
}

// firefox is a headless Firefox ESR (browserctl.Firefox) whose DNS
// resolves every name to the site's address.
type firefox struct{ *browserctl.Firefox }

// startFirefox starts Firefox ESR with a fresh profile whose certificate
// database trusts the capture CA and whose DNS resolves every name to the
// site's ip. prefs are more user.js preferences.
func startFirefox(s *site, dir string, prefs map[string]any) (*firefox, error) {
	all := map[string]any{"network.dns.forceResolve": s.ip}
	for k, v := range prefs {
		all[k] = v
	}
	b, err := browserctl.StartFirefox(dir, s.caPEM, all)
	if err != nil {
		return nil, err
	}
	return &firefox{b}, nil
}

func (b *firefox) navigate(url string) error { return b.Navigate(url) }
func (b *firefox) click(id string) error     { return b.Click(id) }
func (b *firefox) reload() error             { return b.Reload() }
func (b *firefox) close()                    { b.Close() }
