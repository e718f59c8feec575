package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/robotsguard/robotsguard/internal/tlsclients"
)

// browser is a real browser the observer drives over h1, h2 and h3.
type browser struct {
	name, family, tool string
	version            func() string
	run                func(ctx context.Context, ca *tlsclients.CA, dir, url, proto string) error
}

var browsers = []browser{
	{name: "chromium", family: "chromium", tool: "chromium", version: func() string { return firstLine("chromium", "--version") }, run: runChromium},
	{name: "firefox-esr", family: "firefox", tool: "firefox-esr", version: func() string { return firstLine("firefox-esr", "--version") }, run: runFirefox},
}

func firstLine(name string, args ...string) string {
	out, _ := exec.Command(name, args...).CombinedOutput()
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.Contains(line, "Chromium") || strings.Contains(line, "Firefox") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// runChromium loads the page with headless Chromium (its desktop
// User-Agent), over h1 (HTTP/2 off), h2 (QUIC off) or h3 (QUIC forced on
// for the origin, the leaf accepted by its public key).
func runChromium(ctx context.Context, ca *tlsclients.CA, dir, u, proto string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	home := filepath.Join(dir, "home")
	if err := tlsclients.TrustNSS(ctx, ca.CAFile, filepath.Join(home, ".pki", "nssdb")); err != nil {
		return err
	}
	args := []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--ignore-certificate-errors-spki-list=" + ca.SPKI,
		"--user-agent=" + chromeUA, "--virtual-time-budget=3000", "--dump-dom"}
	switch proto {
	case "h1":
		args = append(args, "--disable-http2", "--disable-quic")
	case "h2":
		args = append(args, "--disable-quic")
	case "h3":
		pu, _ := url.Parse(u)
		args = append(args, "--enable-quic", "--origin-to-force-quic-on="+pu.Host)
	}
	cmd := exec.CommandContext(ctx, "chromium", append(args, u)...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "<h1>framing</h1>") {
		return fmt.Errorf("%v: %.300s", err, out)
	}
	return nil
}

// runFirefox loads the page with headless Firefox ESR (a screenshot, which
// waits for the page's load) over h1 (HTTP/2 and HTTP/3 off), h2 or h3
// (its testing Alt-Svc mapping, used from the first request).
func runFirefox(ctx context.Context, ca *tlsclients.CA, dir, u, proto string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	profile := filepath.Join(dir, "profile")
	if err := tlsclients.TrustNSS(ctx, ca.CAFile, profile); err != nil {
		return err
	}
	pu, _ := url.Parse(u)
	prefs := map[string]any{"browser.shell.checkDefaultBrowser": false, "datareporting.policy.dataSubmissionEnabled": false,
		"network.http.http3.enable": false}
	switch proto {
	case "h1":
		prefs["network.http.http2.enabled"] = false
	case "h3":
		prefs["network.http.http3.enable"] = true
		prefs["network.http.http3.alt-svc-mapping-for-testing"] = "localhost;h3=:" + pu.Port()
		prefs["network.http.http3.force-use-alt-svc-mapping-for-testing"] = true
		prefs["network.http.http3.disable_when_third_party_roots_found"] = false
	}
	var js strings.Builder
	for k, v := range prefs {
		val := fmt.Sprint(v)
		if s, ok := v.(string); ok {
			val = strconv.Quote(s)
		}
		fmt.Fprintf(&js, "user_pref(%q, %s);\n", k, val)
	}
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(js.String()), 0o600); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "firefox-esr", "--headless", "--no-remote", "--profile", profile, "--screenshot", filepath.Join(dir, "page.png"), u)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %.300s", err, out)
	}
	return nil
}
