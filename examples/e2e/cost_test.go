package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestAttackerCost (issue 29, item 8): a robots.txt of 8,000 wildcard
// rules like Disallow: /*abc*def*zz$ and 16 KB request targets cost the
// server 0.55 s of CPU per request when each rule was matched by
// backtracking. With the rules compiled into one automaton, the real
// binary answers 20 such requests with a few milliseconds of CPU each,
// and still refuses the one target a rule matches, naming that rule. The
// bound checked, 5 s of CPU for all 21 requests, is more than 40 times
// what they cost now and half of what they cost before.
func TestAttackerCost(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := range 8000 {
		fmt.Fprintf(&b, "Disallow: /*abc%d*def*zz$\n", i)
	}
	s := start(t, options{robots: b.String(), backend: "file_server", guard: "burst 30"})
	const ua = "scanbot/1.0"
	before := cpuTicks(t, s.pid)
	long := "/nothing?q=" + strings.Repeat("abc1def", 16*1024/7) // in the query: file_server answers 400 to a path longer than PATH_MAX
	for i := range 20 {
		status, guard, body := curl(t, s.front, long+"&n="+strconv.Itoa(i), ua)
		if status != 404 || guard != "" {
			t.Fatalf("a 16 KB target no rule matches: %d %q %q, want the backend's 404", status, guard, body)
		}
	}
	status, guard, _ := curl(t, s.front, "/x/abc42/def/zz", ua)
	used := float64(cpuTicks(t, s.pid)-before) / 100
	t.Logf("21 requests (20 of 16 KB) against 8,000 wildcard rules: %.2f s of Caddy's CPU", used)
	if status != 403 || guard != "disallowed" {
		t.Errorf("/x/abc42/def/zz: %d %q, want 403 disallowed", status, guard)
	}
	rule := ""
	for _, e := range s.moduleEntries(t) {
		if e["uri"] == "/x/abc42/def/zz" {
			rule, _ = e["rule"].(string)
		}
	}
	if rule != "Disallow: /*abc42*def*zz$" {
		t.Errorf("the refusal names rule %q, want Disallow: /*abc42*def*zz$", rule)
	}
	if used > 5 {
		t.Errorf("21 requests cost %.2f s of CPU: matching is not linear in the target", used)
	}
}

// cpuTicks is the user and system CPU time of a process, in clock ticks
// (1/100 s), from /proc.
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	f := strings.Fields(rest)
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return utime + stime
}
