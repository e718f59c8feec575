package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
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
	c       *rpc
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
	if err := trustCA(nss, s.caPEM); err != nil {
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
	url, err := listening(stderr, regexp.MustCompile(`DevTools listening on (ws://\S+)`), &b.log, &b.mu)
	if err != nil {
		b.close()
		return nil, fmt.Errorf("%v\n%s", err, b.output())
	}
	if b.c, err = dialRPC(url); err != nil {
		b.close()
		return nil, err
	}
	var targets struct {
		TargetInfos []struct{ TargetID, Type string } `json:"targetInfos"`
	}
	if err := b.c.call("", "Target.getTargets", map[string]any{}, &targets); err != nil {
		b.close()
		return nil, err
	}
	for _, t := range targets.TargetInfos {
		if t.Type == "page" {
			var att struct {
				SessionID string `json:"sessionId"`
			}
			if err := b.c.call("", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true}, &att); err != nil {
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
	if err := b.c.call("", "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": downloads}, nil); err != nil {
		b.close()
		return nil, err
	}
	return b, b.c.call(b.session, "Page.enable", map[string]any{}, nil)
}

// overrideUA sets the User-Agent through the DevTools protocol without
// client-hint metadata, as DevTools' network conditions and automation
// tools do.
func (b *chromium) overrideUA(ua string) error {
	return b.c.call(b.session, "Emulation.setUserAgentOverride", map[string]any{"userAgent": ua}, nil)
}

func (b *chromium) navigate(url string) error {
	return b.c.call(b.session, "Page.navigate", map[string]any{"url": url}, nil)
}

func (b *chromium) click(id string) error {
	return retry(func() (bool, error) {
		var res struct {
			Result struct {
				Value bool `json:"value"`
			} `json:"result"`
		}
		err := b.c.call(b.session, "Runtime.evaluate", map[string]any{"expression": clickJS(id), "userGesture": true, "returnByValue": true}, &res)
		return res.Result.Value, err
	})
}

func (b *chromium) reload() error {
	return b.c.call(b.session, "Runtime.evaluate", map[string]any{"expression": "location.reload()"}, nil)
}

func (b *chromium) output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.String()
}

func (b *chromium) close() {
	if b.c != nil {
		b.c.call("", "Browser.close", map[string]any{}, nil)
		b.c.close()
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

// firefox is a headless Firefox ESR driven over WebDriver BiDi.
type firefox struct {
	cmd     *exec.Cmd
	c       *rpc
	context string
	log     strings.Builder
	mu      sync.Mutex
}

// startFirefox starts Firefox ESR with a fresh profile whose certificate
// database trusts the capture CA (certutil, from libnss3-tools) and whose
// DNS resolves every name to ip. prefs are more user.js preferences.
func startFirefox(s *site, dir string, prefs map[string]any) (*firefox, error) {
	profile := filepath.Join(dir, "profile")
	if err := os.MkdirAll(profile, 0o700); err != nil {
		return nil, err
	}
	if err := trustCA(profile, s.caPEM); err != nil {
		return nil, err
	}
	downloads := filepath.Join(dir, "downloads")
	os.MkdirAll(downloads, 0o700)
	base := map[string]any{
		"network.dns.forceResolve": s.ip, "browser.shell.checkDefaultBrowser": false,
		"browser.startup.homepage_override.mstone": "ignore", "datareporting.policy.dataSubmissionEnabled": false,
		"toolkit.telemetry.reportingpolicy.firstRun": false, "app.update.disabledForTesting": true,
		"browser.safebrowsing.malware.enabled": false, "browser.safebrowsing.phishing.enabled": false,
		"browser.safebrowsing.downloads.enabled": false, "network.captive-portal-service.enabled": false,
		"network.connectivity-service.enabled": false, "extensions.update.enabled": false,
		"browser.newtabpage.enabled": false, "browser.download.folderList": 2, "browser.download.dir": downloads,
		"browser.download.useDownloadDir": true, "browser.download.always_ask_before_handling_new_types": false,
		"browser.helperApps.neverAsk.saveToDisk": "application/octet-stream", "dom.security.https_first": false,
		"remote.active-protocols": 1,
	}
	for k, v := range prefs {
		base[k] = v
	}
	var js strings.Builder
	for k, v := range base {
		val := fmt.Sprint(v)
		if sv, ok := v.(string); ok {
			val = strconv.Quote(sv)
		}
		fmt.Fprintf(&js, "user_pref(%q, %s);\n", k, val)
	}
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(js.String()), 0o600); err != nil {
		return nil, err
	}
	bin, err := exec.LookPath("firefox-esr")
	if err != nil {
		if bin, err = exec.LookPath("firefox"); err != nil {
			return nil, err
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	b := &firefox{cmd: exec.Command(bin, "--headless", "--no-remote", "--profile", profile,
		"--remote-debugging-port", strconv.Itoa(port), "--remote-allow-origins", "http://127.0.0.1", "about:blank")}
	b.cmd.Env = append(os.Environ(), "MOZ_CRASHREPORTER_DISABLE=1")
	stderr, err := b.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	b.cmd.Stdout = b.cmd.Stderr
	if err := b.cmd.Start(); err != nil {
		return nil, err
	}
	url, err := listening(stderr, regexp.MustCompile(`WebDriver BiDi listening on (ws://\S+)`), &b.log, &b.mu)
	if err != nil {
		b.close()
		return nil, fmt.Errorf("%v\n%s", err, b.output())
	}
	if b.c, err = dialRPC(strings.TrimSuffix(url, "/") + "/session"); err != nil {
		b.close()
		return nil, err
	}
	if err := b.c.call("", "session.new", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		b.close()
		return nil, err
	}
	var tree struct {
		Contexts []struct{ Context string } `json:"contexts"`
	}
	if err := b.c.call("", "browsingContext.getTree", map[string]any{}, &tree); err != nil || len(tree.Contexts) == 0 {
		b.close()
		return nil, fmt.Errorf("firefox has no browsing context: %v", err)
	}
	b.context = tree.Contexts[0].Context
	return b, nil
}

func (b *firefox) navigate(url string) error {
	return b.c.call("", "browsingContext.navigate", map[string]any{"context": b.context, "url": url, "wait": "none"}, nil)
}

func (b *firefox) click(id string) error {
	return retry(func() (bool, error) {
		var res struct {
			Result struct {
				Value bool `json:"value"`
			} `json:"result"`
		}
		err := b.c.call("", "script.evaluate", map[string]any{
			"expression": clickJS(id), "target": map[string]any{"context": b.context}, "awaitPromise": false, "userActivation": true,
		}, &res)
		return res.Result.Value, err
	})
}

func (b *firefox) reload() error {
	return b.c.call("", "browsingContext.reload", map[string]any{"context": b.context, "wait": "none"}, nil)
}

func (b *firefox) output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.String()
}

func (b *firefox) close() {
	if b.c != nil {
		b.c.call("", "session.end", map[string]any{}, nil)
		b.c.close()
	}
	b.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		b.cmd.Process.Kill()
		<-done
	}
}

// clickJS clicks the element with the id once the document has it, and
// reports whether it did.
func clickJS(id string) string {
	return "(() => { const e = document.readyState === 'complete' && document.getElementById(" + strconv.Quote(id) + "); if (!e) return false; e.click(); return true; })()"
}

// retry calls f until it reports done, for at most 20 s; errors (a page
// that is still loading) are retried too.
func retry(f func() (bool, error)) error {
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var done bool
		if done, err = f(); done {
			return nil
		}
	}
	if err == nil {
		err = fmt.Errorf("the element never appeared")
	}
	return err
}

// trustCA makes an NSS database in dir that trusts the CA for TLS servers.
func trustCA(dir, ca string) error {
	if out, err := exec.Command("certutil", "-N", "-d", "sql:"+dir, "--empty-password").CombinedOutput(); err != nil {
		return fmt.Errorf("certutil -N: %v: %s", err, out)
	}
	if out, err := exec.Command("certutil", "-A", "-d", "sql:"+dir, "-n", "capture-ca", "-t", "C,,", "-i", ca).CombinedOutput(); err != nil {
		return fmt.Errorf("certutil -A: %v: %s", err, out)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
