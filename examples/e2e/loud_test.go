package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mainLogLine waits (up to limit) for the line of Caddy's main log whose
// msg starts with msg and returns it.
func mainLogLine(t *testing.T, s *server, msg string, limit time.Duration) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(100 * time.Millisecond) {
		for _, line := range strings.Split(s.output.String(), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil {
				if m, _ := e["msg"].(string); strings.HasPrefix(m, msg) {
					return e
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q was never logged:\n%s", msg, s.output.String())
		}
	}
}

// reloadMetric returns policy_reloads_total{result} on the admin API.
func reloadMetric(t *testing.T, admin, result string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	series := `caddy_robots_guard_policy_reloads_total{result="` + result + `"} `
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		if v, ok := strings.CutPrefix(sc.Text(), series); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// reportOfMainLog runs caddy robots report on what Caddy logged so far.
func reportOfMainLog(t *testing.T, s *server) string {
	t.Helper()
	file := writeTestFile(t, t.TempDir(), "caddy.log", s.output.String())
	out, code := caddyCmd(t, s.dir, "robots", "report", file)
	if code != 0 {
		t.Fatalf("caddy robots report: exit %d\n%s", code, out)
	}
	return out
}

// TestMistakeRulesLifted (issue 26, mistake 6): a deploy that empties
// robots.txt lifted every rule with one INFO line "robots.txt reloaded,
// groups 0", the no-rules lint finding never logged and the reload metric
// at ok. Now the emptied file is still installed (an empty robots.txt is
// a valid choice; a bot reads /private/ again) but logged at error with
// the rules it lifts, counted result="no_rules", and listed by caddy
// robots report with its message.
func TestMistakeRulesLifted(t *testing.T) {
	need(t, "curl")
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := start(t, options{guard: faultGuard, admin: admin})
	if code, _, _ := curl(t, s.front, "/private/report.html", faultBot); code != 403 {
		t.Fatalf("/private/ at start: %d", code)
	}
	ok := reloadMetric(t, admin, "ok")
	if err := os.WriteFile(s.robots, nil, 0o644); err != nil { // a deploy that truncates the file
		t.Fatal(err)
	}
	e := mainLogLine(t, s, "robots.txt has no Allow or Disallow rules", 40*time.Second) // an emptied file settles for 10s
	const want = `lifted: the 5 rules in force (3 for "*")`
	if e["level"] != "error" || e["message"] != want || e["file"] != s.robots {
		t.Errorf("emptied robots.txt logged %v, want level error, message %q, file %s", e, want, s.robots)
	}
	if code, _, _ := curl(t, s.front, "/private/report.html", faultBot); code != 200 {
		t.Errorf("the empty robots.txt is not installed: /private/ %d", code)
	}
	if n := reloadMetric(t, admin, "no_rules"); n != 1 || reloadMetric(t, admin, "ok") != ok {
		t.Errorf(`policy_reloads_total{result="no_rules"} = %v, ok %v (was %v)`, n, reloadMetric(t, admin, "ok"), ok)
	}
	rep := reportOfMainLog(t, s)
	if line := "error robots.txt has no Allow or Disallow rules: every crawler may fetch everything; installed, as an empty robots.txt is a valid choice: restore the file if this was not meant (" + s.robots + "): " + want; !strings.Contains(rep, line) {
		t.Errorf("caddy robots report:\n%s\nwant the line %q", rep, line)
	}
	t.Logf("logged: %v", e)
}

// TestMistakeLargeRobots (issue 26, mistake 7): a 20 MB robots.txt: the
// module logged that 1 rule of group "BigBot" was lost while caddy robots
// lint on the same file counted 524,606 rules and the whole "*" group,
// and report showed "robots.txt lint (…:1) [4 times]". Now the module's
// error line carries lint's finding word for word, the reload counts
// result="truncated", and report prints the finding.
func TestMistakeLargeRobots(t *testing.T) {
	need(t, "curl")
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := start(t, options{guard: faultGuard, admin: admin})
	var big bytes.Buffer
	big.WriteString("User-agent: BigBot\n")
	for i := 0; big.Len() < 600<<10; i++ {
		fmt.Fprintf(&big, "Disallow: /big/%d\n", i)
	}
	big.WriteString("\nUser-agent: *\nDisallow: /private/\n")
	for i := 0; big.Len() < 20<<20; i++ {
		fmt.Fprintf(&big, "Disallow: /generated/%d\n", i)
	}
	big.WriteString("\nUser-agent: GPTBot\nDisallow: /\n")
	path := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(path, big.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := caddyCmd(t, s.dir, "robots", "lint", path)
	_, lint, found := strings.Cut(out, path+":")
	lint, _, _ = strings.Cut(lint, "\n")
	_, lint, _ = strings.Cut(lint, ": warning: ")
	lint, _, _ = strings.Cut(lint, " [truncated]")
	if !found || !strings.Contains(lint, `the end of the group for "BigBot" (line 1) and the groups for "*", "GPTBot" are lost; every rule for "*" is lost`) {
		t.Fatalf("caddy robots lint: %q\n%s", lint, out)
	}
	if err := os.Rename(path, s.robots); err != nil { // an atomic deploy
		t.Fatal(err)
	}
	e := mainLogLine(t, s, "robots.txt is larger than 500 KiB", 20*time.Second)
	if e["level"] != "error" || e["message"] != lint {
		t.Errorf("the module logged %v\nwant level error and lint's finding %q", e, lint)
	}
	if code, _, _ := curl(t, s.front, "/private/report.html", faultBot); code != 200 {
		t.Errorf("a rule beyond the cut is enforced: /private/ %d", code)
	}
	if code, _, _ := curl(t, s.front, "/private/report.html", "BigBot/1.0"); code != 200 {
		t.Errorf("BigBot /private/: %d", code)
	}
	if n := reloadMetric(t, admin, "truncated"); n != 1 {
		t.Errorf(`policy_reloads_total{result="truncated"} = %v`, n)
	}
	rep := reportOfMainLog(t, s)
	if !strings.Contains(rep, "error robots.txt is larger than 500 KiB (RFC 9309's limit): the rules after the cut are not enforced; move them up or shorten the file ("+s.robots+"): "+lint) {
		t.Errorf("caddy robots report:\n%s\nwant lint's finding %q", rep, lint)
	}
	t.Logf("caddy robots lint: %s", lint)
}
