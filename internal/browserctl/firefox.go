package browserctl

import (
	"context"
	"encoding/json"
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

	"github.com/robotsguard/robotsguard/internal/tlsclients"
)

// Firefox is a headless Firefox ESR driven over WebDriver BiDi.
type Firefox struct {
	cmd     *exec.Cmd
	c       *RPC
	context string
	log     strings.Builder
	mu      sync.Mutex
}

// StartFirefox starts Firefox ESR (or firefox) with a fresh profile under
// dir whose certificate database trusts the CA of caFile (certutil, from
// libnss3-tools), with downloads saved under dir and no telemetry, update
// or safe-browsing traffic. prefs are more user.js preferences, and win.
func StartFirefox(dir, caFile string, prefs map[string]any) (*Firefox, error) {
	profile := filepath.Join(dir, "profile")
	if err := os.MkdirAll(profile, 0o700); err != nil {
		return nil, err
	}
	if err := tlsclients.TrustNSS(context.Background(), caFile, profile); err != nil {
		return nil, err
	}
	downloads := filepath.Join(dir, "downloads")
	os.MkdirAll(downloads, 0o700)
	base := map[string]any{
		"browser.shell.checkDefaultBrowser":        false,
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
	b := &Firefox{cmd: exec.Command(bin, "--headless", "--no-remote", "--profile", profile,
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
	url, err := Listening(stderr, regexp.MustCompile(`WebDriver BiDi listening on (ws://\S+)`), &b.log, &b.mu)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("%v\n%s", err, b.Output())
	}
	if b.c, err = DialRPC(strings.TrimSuffix(url, "/") + "/session"); err != nil {
		b.Close()
		return nil, err
	}
	if err := b.c.Call("", "session.new", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		b.Close()
		return nil, err
	}
	var tree struct {
		Contexts []struct{ Context string } `json:"contexts"`
	}
	if err := b.c.Call("", "browsingContext.getTree", map[string]any{}, &tree); err != nil || len(tree.Contexts) == 0 {
		b.Close()
		return nil, fmt.Errorf("firefox has no browsing context: %v", err)
	}
	b.context = tree.Contexts[0].Context
	return b, nil
}

// Navigate starts loading url and returns at once.
func (b *Firefox) Navigate(url string) error {
	return b.c.Call("", "browsingContext.navigate", map[string]any{"context": b.context, "url": url, "wait": "none"}, nil)
}

// Load loads url and returns once the page and its subresources have
// loaded (the load event).
func (b *Firefox) Load(url string) error {
	return b.c.Call("", "browsingContext.navigate", map[string]any{"context": b.context, "url": url, "wait": "complete"}, nil)
}

// Eval evaluates a JavaScript expression in the page (a promise is
// awaited) and stores its value, which must be JSON, in out.
func (b *Firefox) Eval(expr string, out any) error {
	var res struct {
		Type   string `json:"type"`
		Result struct {
			Type  string `json:"type"`
			Value string `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	err := b.c.Call("", "script.evaluate", map[string]any{
		"expression": "(async () => JSON.stringify(await (" + expr + ")))()", "target": map[string]any{"context": b.context}, "awaitPromise": true,
	}, &res)
	if err != nil {
		return err
	}
	if res.Type == "exception" || res.Result.Type != "string" {
		return fmt.Errorf("%s: %s %s", expr, res.Result.Type, res.ExceptionDetails)
	}
	return json.Unmarshal([]byte(res.Result.Value), out)
}

// Click clicks the element with the id once the document has it, as a
// person would (with user activation).
func (b *Firefox) Click(id string) error {
	return Retry(func() (bool, error) {
		var res struct {
			Result struct {
				Value bool `json:"value"`
			} `json:"result"`
		}
		err := b.c.Call("", "script.evaluate", map[string]any{
			"expression": ClickJS(id), "target": map[string]any{"context": b.context}, "awaitPromise": false, "userActivation": true,
		}, &res)
		return res.Result.Value, err
	})
}

// Reload reloads the page and returns at once.
func (b *Firefox) Reload() error {
	return b.c.Call("", "browsingContext.reload", map[string]any{"context": b.context, "wait": "none"}, nil)
}

// Output is what Firefox printed.
func (b *Firefox) Output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.String()
}

// Close ends the session and stops Firefox.
func (b *Firefox) Close() {
	if b.c != nil {
		b.c.Call("", "session.end", map[string]any{}, nil)
		b.c.Close()
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

// ClickJS is a script that clicks the element with the id once the
// document has it, and reports whether it did.
func ClickJS(id string) string {
	return "(() => { const e = document.readyState === 'complete' && document.getElementById(" + strconv.Quote(id) + "); if (!e) return false; e.click(); return true; })()"
}

// Retry calls f until it reports done, for at most 20 s; errors (a page
// that is still loading) are retried too.
func Retry(f func() (bool, error)) error {
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

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
