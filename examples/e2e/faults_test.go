package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Faults: robots.txt files written badly, folders replaced, oversized
// files, and bad configuration values, against the real binary. Nothing of
// it may let a bot read what the rules in force disallow, or crash Caddy.

const faultBot = "FaultBot/1.0 (+https://example.com/bot)"

// faultRobots disallows /private/ on its last line, so that any cut of it
// lacks that rule.
var faultRobots = "User-agent: *\n" + strings.Repeat("Disallow: /filler/\n", 200) + "Disallow: /private/\n"

// faultGuard lets the bot make as many requests as it likes: only the
// rules decide.
const faultGuard = "rate bot 0s\n\t\tstrikes 1000000"

// hammer requests /private/report.html as a bot until stop is closed and
// returns how many answers carried the page's content, and how many
// requests were made.
func hammer(s *server, stop <-chan struct{}) (leaks, requests *atomic.Int64, done *sync.WaitGroup) {
	leaks, requests, done = &atomic.Int64{}, &atomic.Int64{}, &sync.WaitGroup{}
	client := &http.Client{Timeout: 5 * time.Second}
	for w := 0; w < 2; w++ {
		done.Add(1)
		go func() {
			defer done.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", s.front+"/private/report.html", nil)
				req.Header.Set("User-Agent", faultBot)
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				requests.Add(1)
				if resp.StatusCode == 200 || strings.Contains(string(body), "Confidential figures") {
					leaks.Add(1)
				}
			}
		}()
	}
	return leaks, requests, done
}

// writeInPieces rewrites path in place: truncate, the first piece, a
// pause, the rest (or nothing, for a writer that dies).
func writeInPieces(t *testing.T, path, body string, cut int, pause time.Duration, finish bool) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(body[:cut]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(pause)
	if finish {
		if _, err := f.WriteString(body[cut:]); err != nil {
			t.Fatal(err)
		}
	}
}

// waitLogged waits for text in Caddy's logs.
func waitLogged(t *testing.T, s *server, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !s.logged(t, text) {
		if time.Now().After(deadline) {
			t.Fatalf("%q was never logged", text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFaultPartialWrites: while a bot hammers /private/, robots.txt is
// saved in place by a writer that pauses 600 ms half way, and by one that
// dies half way (as a save on a full disk does). The bot never reads the
// page; the whole file is installed once it settles; the cut file is
// refused, and both are reported in Caddy's main log, not only in the
// decision log.
func TestFaultPartialWrites(t *testing.T) {
	need(t, "curl")
	s := start(t, options{robots: faultRobots, guard: faultGuard})
	if code, _, _ := curl(t, s.front, "/private/report.html", faultBot); code != 403 {
		t.Fatalf("/private/ for a bot at start: %d", code)
	}
	stop := make(chan struct{})
	leaks, requests, done := hammer(s, stop)
	cut := strings.Index(faultRobots, "Disallow: /private/") + len("Disallow: /pr")

	// A writer that pauses 600 ms in the middle of a line, then finishes.
	next := faultRobots + "Disallow: /about.html\n"
	writeInPieces(t, s.robots, next, cut, 600*time.Millisecond, true)
	waitStatus(t, s, "/about.html", faultBot, 403)

	// A writer that pauses at a line end: the first piece is a robots.txt
	// without /private/, valid on its own.
	next = faultRobots + "Disallow: /index.html\n"
	writeInPieces(t, s.robots, next, strings.Index(next, "Disallow: /private/"), 600*time.Millisecond, true)
	waitStatus(t, s, "/index.html", faultBot, 403)

	// A writer that dies in the middle of a line and never finishes.
	writeInPieces(t, s.robots, faultRobots+"Disallow: /docs/\n", cut, 0, false)
	time.Sleep(3 * time.Second) // well past the settle time
	close(stop)
	done.Wait()
	if leaks.Load() > 0 {
		t.Errorf("the bot read /private/report.html %d times in %d requests while robots.txt was being written", leaks.Load(), requests.Load())
	} else {
		t.Logf("%d bot requests for /private/ during the writes, none served", requests.Load())
	}
	if code, _, _ := curl(t, s.front, "/index.html", faultBot); code != 403 {
		t.Errorf("the cut file replaced the rules in force: /index.html %d", code)
	}
	waitLogged(t, s, "it looks cut short")

	// Reload problems are in the main log (the decision log is routed to
	// a file of its own, as the README shows).
	main := s.output.String()
	for _, want := range []string{`"logger":"robots_guard"`, "once it has stayed unchanged", "it looks cut short"} {
		if !strings.Contains(main, want) {
			t.Errorf("Caddy's main log lacks %q", want)
		}
	}
	if data, _ := os.ReadFile(s.moduleLog); strings.Contains(string(data), "cut short") {
		t.Error("reload problems went to the decision log")
	}
}

// TestFaultFullDisk: robots.txt on a small file system (a tmpfs mount,
// needs root); an in-place save that fails with ENOSPC half way leaves a
// partial file, which is never installed.
func TestFaultFullDisk(t *testing.T) {
	need(t, "curl")
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8k"); err != nil {
		t.Skipf("mounting a small tmpfs: %v", err)
	}
	defer func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) }()
	s := start(t, options{robots: faultRobots, robotsPath: filepath.Join(dir, "robots.txt"), guard: faultGuard})
	stop := make(chan struct{})
	leaks, requests, done := hammer(s, stop)
	big := "User-agent: *\nDisallow: /about.html\n"
	for i := 0; len(big) < 12<<10; i++ {
		big += fmt.Sprintf("Disallow: /generated/%d\n", i)
	}
	big += "Disallow: /private/\n"
	err := os.WriteFile(s.robots, []byte(big), 0o644)
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("a 12 KiB save to an 8 KiB disk: %v", err)
	}
	time.Sleep(3 * time.Second) // well past the settle time
	close(stop)
	done.Wait()
	if leaks.Load() > 0 {
		t.Errorf("the bot read /private/report.html %d times in %d requests after the failed save", leaks.Load(), requests.Load())
	} else {
		t.Logf("save failed: %v; %d bot requests for /private/, none served", err, requests.Load())
	}
	if code, _, _ := curl(t, s.front, "/about.html", faultBot); code != 200 {
		t.Errorf("the partial file was installed: /about.html %d", code)
	}
	waitLogged(t, s, "it looks cut short")
}

// TestFaultFolderReplaced: the robots.txt folder is moved away and made
// again (mv dir dir.old; mkdir dir); the new folder is watched, and its
// robots.txt takes effect.
func TestFaultFolderReplaced(t *testing.T) {
	need(t, "curl")
	dir := filepath.Join(t.TempDir(), "robots")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := start(t, options{robots: faultRobots, robotsPath: filepath.Join(dir, "robots.txt"), guard: faultGuard})
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.robots, []byte(faultRobots+"Disallow: /about.html\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, s, "/about.html", faultBot, 403)
	waitLogged(t, s, "watching the robots.txt folder again")
	if code, _, _ := curl(t, s.front, "/private/report.html", faultBot); code != 403 {
		t.Errorf("/private/ after the folder was replaced: %d", code)
	}
	// And again, in the new folder.
	if err := os.WriteFile(s.robots, []byte(faultRobots+"Disallow: /index.html\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, s, "/index.html", faultBot, 403)
}

// TestFaultMissingFile: a robots path that does not exist, on purpose
// (robots_optional; without it the config is refused, see
// TestMistakeRobotsTypo), warns at start, in the main log, and the file is
// enforced once it appears.
func TestFaultMissingFile(t *testing.T) {
	need(t, "curl")
	path := filepath.Join(t.TempDir(), "robots.txt")
	s := start(t, options{robotsPath: path, guard: faultGuard + "\n\t\trobots_optional"})
	waitLogged(t, s, "robots.txt not found")
	if code, _, _ := curl(t, s.front, "/private/report.html", faultBot); code != 200 {
		t.Errorf("no robots.txt means no rules: /private/ %d", code)
	}
	if err := os.WriteFile(path, []byte(faultRobots), 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, s, "/private/report.html", faultBot, 403)
	waitLogged(t, s, "robots.txt found again")
}

// TestFaultOversized: a 20 MiB robots.txt: the rules of its first 500 KiB
// apply (RFC 9309 section 2.5), with a lint warning in the main log.
func TestFaultOversized(t *testing.T) {
	need(t, "curl")
	s := start(t, options{robots: faultRobots, guard: faultGuard})
	var big strings.Builder
	big.WriteString("User-agent: *\nDisallow: /private/\nDisallow: /about.html\n")
	for i := 0; big.Len() < 20<<20; i++ {
		fmt.Fprintf(&big, "Disallow: /generated/%d\n", i)
	}
	big.WriteString("Disallow: /index.html\n")
	if err := os.WriteFile(s.robots, []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, s, "/about.html", faultBot, 403)
	waitLogged(t, s, "file is larger than 512000 bytes")
	if code, _, _ := curl(t, s.front, "/index.html", faultBot); code != 200 {
		t.Errorf("a rule beyond the first 500 KiB applies: /index.html %d", code)
	}
	_, _, served := curl(t, s.front, "/robots.txt", faultBot)
	if len(served) > 600<<10 || !strings.Contains(served, "Disallow: /about.html") {
		t.Errorf("served robots.txt: %d bytes", len(served))
	}
}

// TestFaultBadConfig: bad values, in JSON and in the Caddyfile, make `caddy
// validate` and `caddy run` fail with a message that names the option (and
// the line, for the Caddyfile); Caddy never panics. Caddy prints errors as
// JSON log lines, so quotes in the messages are escaped.
func TestFaultBadConfig(t *testing.T) {
	need(t)
	dir := t.TempDir()
	run := func(name, config string, args ...string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, caddyBin, append(args, "--config", name)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s %s: accepted", strings.Join(args, " "), name)
		}
		if strings.Contains(string(out), "panic") || strings.Contains(string(out), "goroutine ") {
			t.Errorf("%s %s: Caddy panicked:\n%s", strings.Join(args, " "), name, out)
		}
		return string(out)
	}
	jsonConfig := func(handler string) string {
		return `{"admin": {"disabled": true}, "apps": {"http": {"servers": {"s": {"listen": ["127.0.0.1:0"],
			"routes": [{"handle": [{"handler": "robots_guard", "verify": {"disabled": true}, ` + handler + `}]}]}}}}}`
	}
	for _, tc := range []struct{ handler, want string }{
		{`"tarpit": 1000000000, "tarpit_max": -1`, "robots_guard: tarpit_max: must be at least 1, got -1"},
		{`"tarpit_max": -1`, "robots_guard: tarpit_max: must be at least 1, got -1"},
		{`"sitemaps": ["not-a-url"]`, `robots_guard: sitemaps[0]: \"not-a-url\" is not an absolute http(s) URL`},
		{`"max_clients": -1`, "robots_guard: max_clients: must be at least 1, got -1"},
		{`"state_ttl": -1000000000`, "robots_guard: state_ttl: must be above 0, got -1s"},
		{`"rates": {"ai": -1000000000}`, "robots_guard: rates.ai: must not be negative, got -1s"},
		{`"x_robots_tags": [{"pattern": "/x"}]`, "robots_guard: x_robots_tags[0]: no directives for /x"},
	} {
		for _, cmd := range [][]string{{"validate"}, {"run"}} {
			if out := run("bad.json", jsonConfig(tc.handler), cmd...); !strings.Contains(out, tc.want) {
				t.Errorf("caddy %s with %s:\n%s\nwant %q", cmd[0], tc.handler, out, tc.want)
			}
		}
	}
	for _, tc := range []struct{ option, want string }{
		{"crawl_delay 0s", "robots_guard: crawl_delay: must be above 0, got 0s, at Caddyfile:6"},
		{"state_ttl 0s", "robots_guard: state_ttl: must be above 0, got 0s, at Caddyfile:6"},
		{"strikess 3", "robots_guard: unrecognized option 'strikess' (did you mean 'strikes'?), at Caddyfile:6"},
		{"verify {\n\t\t\tranges gptbot /nonexistent/gptbot.json\n\t\t}", "robots_guard: verify ranges: /nonexistent/gptbot.json: no such file or directory, at Caddyfile:7"},
		{"sitemap /sitemap.xml", `robots_guard: sitemap: \"/sitemap.xml\" is not an absolute http(s) URL, at Caddyfile:6`},
		{"tarpit 10s -1", "robots_guard: tarpit <max held>: must be at least 1, got -1, at Caddyfile:6"},
	} {
		// The option is on line 6.
		cfg := "{\n\tadmin off\n}\n:0 {\n\trobots_guard {\n\t\t" + tc.option + "\n\t}\n}\n"
		for _, cmd := range [][]string{{"adapt", "--adapter", "caddyfile"}, {"validate", "--adapter", "caddyfile"}} {
			if out := run("Caddyfile", cfg, cmd...); !strings.Contains(out, tc.want) {
				t.Errorf("caddy %s with %q:\n%s\nwant %q", cmd[0], tc.option, out, tc.want)
			}
		}
	}
}
