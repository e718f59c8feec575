package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// caddyCmd runs the binary with args in dir and returns its combined
// output and exit status; it fails the test if Caddy panicked.
func caddyCmd(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, caddyBin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("caddy %s: %v", strings.Join(args, " "), err)
	}
	if strings.Contains(string(out), "panic:") || strings.Contains(string(out), "goroutine ") {
		t.Errorf("caddy %s panicked:\n%s", strings.Join(args, " "), out)
	}
	return string(out), code
}

// writeTestFile writes a file of the test's directory and returns its path.
func writeTestFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMistakeRobotsTypo (issue 26, mistake 2): a typo in the robots path
// validated and started a guard that enforced nothing, with one warning
// at run time; now caddy validate, adapt and run refuse it, naming the
// path, its line and the option that allows a missing file on purpose;
// with robots_optional it validates (TestFaultMissingFile runs it).
func TestMistakeRobotsTypo(t *testing.T) {
	need(t)
	dir := t.TempDir()
	robots := writeTestFile(t, dir, "www/robots.txt", "User-agent: *\nDisallow: /admin/\n")
	typo := filepath.Join(dir, "wwww", "robots.txt")
	config := func(extra string) string {
		return fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\trobots_guard {\n\t\trobots %s\n%s\t}\n\troot * %s\n\tfile_server\n}\n", freePort(t), typo, extra, filepath.Dir(robots))
	}
	bad := writeTestFile(t, dir, "Caddyfile", config(""))
	want := fmt.Sprintf("robots_guard: robots: %s does not exist (a typo in the path?); to start without it on purpose, with no rules until it appears, add robots_optional, at %s:4", typo, bad)
	for _, cmd := range []string{"validate", "adapt", "run"} {
		out, code := caddyCmd(t, dir, cmd, "--config", bad)
		if code == 0 || !strings.Contains(out, want) || strings.Contains(out, "Valid configuration") {
			t.Errorf("caddy %s of robots %s: exit %d\n%s\nwant %q", cmd, typo, code, out, want)
		}
	}
	js := writeTestFile(t, dir, "bad.json", fmt.Sprintf(`{"admin": {"disabled": true}, "apps": {"http": {"servers": {"s": {"listen": ["127.0.0.1:%d"],
		"routes": [{"handle": [{"handler": "robots_guard", "verify": {"disabled": true}, "robots": %q}]}]}}}}}`, freePort(t), typo))
	want = fmt.Sprintf("robots_guard: robots: %s does not exist (a typo in the path?); to start without it on purpose, with no rules until it appears, add robots_optional", typo)
	if out, code := caddyCmd(t, dir, "validate", "--config", js); code == 0 || !strings.Contains(out, want) {
		t.Errorf("caddy validate of JSON robots %s: exit %d\n%s\nwant %q", typo, code, out, want)
	}
	optional := writeTestFile(t, dir, "optional.Caddyfile", config("\t\trobots_optional\n"))
	if out, code := caddyCmd(t, dir, "validate", "--config", optional); code != 0 || !strings.Contains(out, "Valid configuration") {
		t.Errorf("caddy validate with robots_optional: exit %d\n%s", code, out)
	}
}

// TestMistakeDirectiveLine (issue 26, mistake 3): the robots.txt file on
// the directive line, as root takes its folder, was read as a path matcher
// and "Valid configuration" guarded nothing; now caddy validate and adapt
// refuse it with the fix, and the same file in the block validates.
func TestMistakeDirectiveLine(t *testing.T) {
	need(t)
	dir := t.TempDir()
	robots := writeTestFile(t, dir, "www/robots.txt", "User-agent: *\nDisallow: /admin/\n")
	bad := writeTestFile(t, dir, "bad.Caddyfile", fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\trobots_guard %s\n\troot * %s\n\tfile_server\n}\n", freePort(t), robots, filepath.Dir(robots)))
	want := fmt.Sprintf("robots_guard: '%s' would be read as a request matcher (only requests for that path would be guarded); name the robots.txt file in the block: robots_guard { robots %s }, at %s:3", robots, robots, bad)
	for _, cmd := range []string{"validate", "adapt"} {
		out, code := caddyCmd(t, dir, cmd, "--config", bad)
		if code == 0 || !strings.Contains(out, want) || strings.Contains(out, "Valid configuration") {
			t.Errorf("caddy %s of robots_guard %s: exit %d\n%s\nwant %q", cmd, robots, code, out, want)
		}
	}
	good := writeTestFile(t, dir, "good.Caddyfile", fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\trobots_guard {\n\t\trobots %s\n\t}\n\troot * %s\n\tfile_server\n}\n", freePort(t), robots, filepath.Dir(robots)))
	if out, code := caddyCmd(t, dir, "validate", "--config", good); code != 0 || !strings.Contains(out, "Valid configuration") {
		t.Errorf("caddy validate with robots in the block: exit %d\n%s", code, out)
	}
	// A real path matcher keeps working: the guard covers /blog/* only.
	blog := writeTestFile(t, dir, "blog.Caddyfile", fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\trobots_guard /blog/* {\n\t\trobots %s\n\t}\n\tfile_server\n}\n", freePort(t), robots))
	out, code := caddyCmd(t, dir, "adapt", "--config", blog)
	if code != 0 || !strings.Contains(out, `"match":[{"path":["/blog/*"]}],"handle":[{"handler":"robots_guard"`) {
		t.Errorf("caddy adapt of robots_guard /blog/*: exit %d\n%s", code, out)
	}
}

// TestMistakeJSONDurations (issue 26, mistake 8): "crawl_delay": 2 and
// "cooldown": 900 validated as 2ns and 900ns; a duration without a unit
// failed with "time: missing unit" and no field; a store given as a URL
// string with a Go unmarshal message. Now each is refused by caddy
// validate and caddy run, every one named by its field, in plain words, in
// one message; the same config written with units validates.
func TestMistakeJSONDurations(t *testing.T) {
	need(t)
	dir := t.TempDir()
	config := func(handler string) string {
		return fmt.Sprintf(`{"admin": {"disabled": true}, "apps": {"http": {"servers": {"s": {"listen": ["127.0.0.1:%d"],
			"routes": [{"handle": [{"handler": "robots_guard", "verify": {"disabled": true}, %s}]}]}}}}}`, freePort(t), handler)
	}
	bad := writeTestFile(t, dir, "bad.json", config(`"crawl_delay": 2, "cooldown": 900, "rates": {"script": "1"}, "store": "redis://127.0.0.1:6379", "block_class": ["ai"]`))
	wants := []string{ // in the order of the fields' documentation
		`robots_guard: crawl_delay: must be at least 1ms, got 2ns (JSON numbers are nanoseconds; write \"2s\")`,
		`robots_guard: rates.script: \"1\" has no unit: write \"1s\" for seconds, \"1ms\" for milliseconds`,
		`robots_guard: cooldown: must be at least 1s, got 900ns (JSON numbers are nanoseconds; write \"900s\")`,
		`robots_guard: store: want an object such as {\"module\": \"redis\", \"url\": \"redis://127.0.0.1:6379\"}, got \"redis://127.0.0.1:6379\"`,
		`robots_guard: block_class: unknown field (did you mean 'block_classes'?)`,
	}
	for _, cmd := range []string{"validate", "run"} {
		out, code := caddyCmd(t, dir, cmd, "--config", bad)
		if code == 0 {
			t.Errorf("caddy %s accepted nanosecond durations:\n%s", cmd, out)
		}
		if got := strings.Join(wants, `\n`); !strings.Contains(out, got) {
			t.Errorf("caddy %s:\n%s\nwant every field named, in this order:\n%s", cmd, out, got)
		}
		if strings.Contains(out, "time: missing unit") || strings.Contains(out, "cannot unmarshal") {
			t.Errorf("caddy %s shows Go's message:\n%s", cmd, out)
		}
	}
	good := writeTestFile(t, dir, "good.json", config(`"crawl_delay": "2s", "cooldown": "15m", "rates": {"script": "1s"}, "block_classes": ["ai"]`))
	if out, code := caddyCmd(t, dir, "validate", "--config", good); code != 0 || !strings.Contains(out, "Valid configuration") {
		t.Errorf("caddy validate with units: exit %d\n%s", code, out)
	}
}

// TestMistakeCaddyfileNames: a Caddyfile that uses JSON names gets the
// Caddyfile spelling, and several bad values are all reported, each at its
// line, in line order (before, the first one alone, with "unrecognized").
func TestMistakeCaddyfileNames(t *testing.T) {
	need(t)
	dir := t.TempDir()
	writeTestFile(t, dir, "Caddyfile", fmt.Sprintf(`:%d {
	bind 127.0.0.1
	robots_guard {
		tarpit 10s
		tarpit_max 50
		block_classes ai
		crawl_delay soon
		max_cooldown 1h
		burst 0
	}
	file_server
}
`, freePort(t)))
	wants := []string{
		"robots_guard: unrecognized option 'tarpit_max' (did you mean 'tarpit <duration> <max held>'? tarpit_max is the JSON name), at Caddyfile:5",
		"robots_guard: unrecognized option 'block_classes' (did you mean 'block_class'? block_classes is the JSON name), at Caddyfile:6",
		"robots_guard: crawl_delay: 'soon' is not a duration, at Caddyfile:7",
		"robots_guard: unrecognized option 'max_cooldown' (did you mean 'cooldown <duration> <max>'? max_cooldown is the JSON name), at Caddyfile:8",
		"robots_guard: burst: must be at least 1, got 0, at Caddyfile:9",
	}
	for _, cmd := range []string{"adapt", "validate"} {
		out, code := caddyCmd(t, dir, cmd, "--config", "Caddyfile")
		if got := strings.Join(wants, `\n`); code == 0 || !strings.Contains(out, got) {
			t.Errorf("caddy %s: exit %d\n%s\nwant\n%s", cmd, code, out, got)
		}
	}
	good := writeTestFile(t, dir, "good.Caddyfile", fmt.Sprintf(":%d {\n\tbind 127.0.0.1\n\trobots_guard {\n\t\ttarpit 10s 50\n\t\tblock_class ai\n\t\tcooldown 15m 1h\n\t}\n\tfile_server\n}\n", freePort(t)))
	if out, code := caddyCmd(t, dir, "validate", "--config", good); code != 0 {
		t.Errorf("caddy validate with the Caddyfile spellings: exit %d\n%s", code, out)
	}
}

// TestMistakeReportFilter (issue 26, mistake 9): report --reason disallow
// (the reason is disallowed) printed "0 decisions (N filtered out)" and
// exited 0, as if nothing had been refused; now it exits 1 naming the
// valid reasons, and so does an unknown --class or --action; --reason
// disallowed and --action deny count the refusals. unblock of a bad address says so in a sentence.
func TestMistakeReportFilter(t *testing.T) {
	need(t)
	dir := t.TempDir()
	var log strings.Builder
	for i := range 5 {
		fmt.Fprintf(&log, `{"level":"info","ts":%d,"logger":"http.handlers.robots_guard","msg":"request refused","client_ip":"192.0.2.%d","user_agent":"GPTBot/1.2","class":"ai","tokens":["gptbot"],"method":"GET","host":"example.com","uri":"/admin/","action":"deny","reason":"disallowed","group":"*"}`+"\n", 1_800_000_000+i, i+1)
	}
	logFile := writeTestFile(t, dir, "robots_guard.log", log.String())
	out, code := caddyCmd(t, dir, "robots", "report", "--reason", "disallow", logFile)
	want := `--reason: unknown reason "disallow" (did you mean 'disallowed'?); want one of none, robots_txt, allowlisted, disallowed, `
	if code != 1 || !strings.Contains(out, want) || strings.Contains(out, "filtered out") {
		t.Errorf("report --reason disallow: exit %d\n%s\nwant %q", code, out, want)
	}
	for _, r := range []string{" crawl_delay,", " address_rate,", " blocked_class,", " content_usage"} { // every reason the engine gives
		if !strings.Contains(out, r) {
			t.Errorf("report --reason disallow does not list %s:\n%s", r, out)
		}
	}
	out, code = caddyCmd(t, dir, "robots", "report", "--class", "AI,robots", logFile)
	want = `--class: unknown class "robots"; want one of unknown, browser, search, ai, seo, social, monitor, script, bad, bot, poser`
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("report --class robots: exit %d\n%s\nwant %q", code, out, want)
	}
	out, code = caddyCmd(t, dir, "robots", "report", "--reason", "disallowed", "--class", "ai", logFile)
	if code != 0 || !strings.Contains(out, "5 decisions") {
		t.Errorf("report --reason disallowed: exit %d\n%s", code, out)
	}
	// --action is checked the same way: "refused" is no action.
	out, code = caddyCmd(t, dir, "robots", "report", "--action", "refused", logFile)
	want = `--action: unknown action "refused"; want one of allow, throttle, deny, tarpit`
	if code != 1 || !strings.Contains(out, want) || strings.Contains(out, "filtered out") {
		t.Errorf("report --action refused: exit %d\n%s\nwant %q", code, out, want)
	}
	out, code = caddyCmd(t, dir, "robots", "report", "--action", "dny", logFile)
	if want = `--action: unknown action "dny" (did you mean 'deny'?)`; code != 1 || !strings.Contains(out, want) {
		t.Errorf("report --action dny: exit %d\n%s\nwant %q", code, out, want)
	}
	if out, code = caddyCmd(t, dir, "robots", "report", "--action", "Deny", logFile); code != 0 || !strings.Contains(out, "5 decisions") {
		t.Errorf("report --action Deny: exit %d\n%s", code, out)
	}
	if out, code = caddyCmd(t, dir, "robots", "report", "--action", "throttle,tarpit", logFile); code != 0 || !strings.Contains(out, "0 decisions\n(5 filtered out)") {
		t.Errorf("report --action throttle,tarpit: exit %d\n%s", code, out)
	}
	out, code = caddyCmd(t, dir, "robots", "unblock", "not-an-ip", "--address", fmt.Sprintf("127.0.0.1:%d", freePort(t)))
	want = `IP: "not-an-ip" is not an IP address or CIDR range (e.g. 203.0.113.7, 2001:db8::7 or 198.51.100.0/24)`
	if code != 1 || !strings.Contains(out, want) || strings.Contains(out, "ParseAddr") {
		t.Errorf("unblock not-an-ip: exit %d\n%s\nwant %q", code, out, want)
	}
}
