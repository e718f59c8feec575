package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestAttackerCost (issue 29, item 8): a robots.txt of 8,000 wildcard
// rules like Disallow: /*abc*bcd*cde*def*zz$ and 16 KB request targets of
// near misses cost the server about 1.4 s of CPU per request when each
// rule was matched by backtracking (main at bd165c4: 28.45 s for these 21
// requests). With the rules compiled into one automaton the real binary
// answers them with 0.03 s of CPU in all, and still refuses the one target
// a rule matches, naming that rule. The bound checked, 5 s for all 21, is
// far above the one and far below the other.
func TestAttackerCost(t *testing.T) {
	// Rules over ten words, as the attack (and policy's
	// attackRules): every rule's words occur in the target in every
	// order, its final "zz" never, so a backtracking matcher tries every
	// split of every rule.
	words := []string{"abc", "bcd", "cde", "def", "efg", "fga", "gab", "hij", "ijk", "jkl"}
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := range 8000 {
		w := func(k int) string { return words[i/k%len(words)] }
		fmt.Fprintf(&b, "Disallow: /*%s*%s*%s*%s*zz$\n", w(1), w(10), w(100), w(1000))
	}
	var q strings.Builder
	for q.Len() < 16*1024 {
		q.WriteString(words[q.Len()%len(words)])
	}
	s := start(t, options{robots: b.String(), backend: "file_server", guard: "burst 30"})
	const ua = "scanbot/1.0"
	before := cpuTicks(t, s.pid)
	long := "/nothing?q=" + q.String() // in the query: file_server answers 400 to a path longer than PATH_MAX
	for i := range 20 {
		status, guard, body := curl(t, s.front, long+"&n="+strconv.Itoa(i)+"z", ua)
		if status != 404 || guard != "" {
			t.Fatalf("a 16 KB target no rule matches: %d %q %q, want the backend's 404", status, guard, body)
		}
	}
	status, guard, _ := curl(t, s.front, "/x/abc/bcd/cde/def/zz", ua)
	used := float64(cpuTicks(t, s.pid)-before) / 100
	t.Logf("21 requests (20 of 16 KB) against 8,000 wildcard rules: %.2f s of Caddy's CPU", used)
	if status != 403 || guard != "disallowed" {
		t.Errorf("/x/abc/bcd/cde/def/zz: %d %q, want 403 disallowed", status, guard)
	}
	rule := ""
	for _, e := range s.moduleEntries(t) {
		if e["uri"] == "/x/abc/bcd/cde/def/zz" {
			rule, _ = e["rule"].(string)
		}
	}
	if rule != "Disallow: /*abc*bcd*cde*def*zz$" {
		t.Errorf("the refusal names rule %q, want Disallow: /*abc*bcd*cde*def*zz$", rule)
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
