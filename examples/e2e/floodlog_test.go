package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// floodPaths are what the flooding bot asks for: the demo site's
// disallowed pages, a few allowed ones (throttled, then refused once the
// client is blocked) and the trap.
var floodPaths = []string{"/private/report.html", "/private/index.html", "/~sam/notes.html", "/private/", "/~sam/", "/", "/about.html", "/docs/rules.html"}

// floodClients are the handful of addresses the flood comes from (through
// X-Forwarded-For from loopback, a trusted proxy).
var floodClients = []string{"198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4", "2001:db8:77::1"}

// flood sends requests from floodClients, two connections each, for d,
// and returns the responses by status.
func flood(t *testing.T, base string, d time.Duration) map[int]int {
	t.Helper()
	const ua = "FloodBot/3.0 (+https://flood.example/bot)"
	tr := &http.Transport{MaxIdleConnsPerHost: 2 * len(floodClients)}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var mu sync.Mutex
	statuses := map[int]int{}
	var failed atomic.Pointer[error]
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := range 2 * len(floodClients) {
		ip := floodClients[i%len(floodClients)]
		wg.Go(func() {
			mine := map[int]int{}
		loop:
			for n := i; time.Now().Before(deadline); n++ {
				req, _ := http.NewRequest("GET", base+floodPaths[n%len(floodPaths)], nil)
				req.Header.Set("User-Agent", ua)
				req.Header.Set("X-Forwarded-For", ip)
				resp, err := client.Do(req)
				if err != nil {
					failed.Store(&err)
					break loop
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mine[resp.StatusCode]++
			}
			mu.Lock()
			for k, v := range mine {
				statuses[k] += v
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		t.Fatalf("flood: %v", *err)
	}
	return statuses
}

// loggedMetrics reads the decisions the metrics counted that the decision
// log records (refusals and violations: all but allowed requests with no
// reason, for robots.txt or by an allow list), by "action reason class".
func loggedMetrics(t *testing.T, admin string) map[string]int {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "caddy_robots_guard_decisions_total{") {
			continue
		}
		labels, value, _ := strings.Cut(strings.TrimPrefix(line, "caddy_robots_guard_decisions_total{"), "} ")
		l := map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			l[k] = strings.Trim(v, `"`)
		}
		if l["action"] == "allow" && (l["reason"] == "none" || l["reason"] == "robots_txt" || l["reason"] == "allowlisted") {
			continue
		}
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		if n > 0 {
			out[l["action"]+" "+l["reason"]+" "+l["class"]] += int(n)
		}
	}
	return out
}

// reportTotals runs "caddy robots report --json" on a log and returns its
// decisions, by action, reason and class.
type reportTotals struct {
	Decisions int            `json:"decisions"`
	ByAction  map[string]int `json:"by_action"`
	ByReason  map[string]int `json:"by_reason"`
	ByClass   map[string]int `json:"by_class"`
}

func report(t *testing.T, log string) reportTotals {
	t.Helper()
	out, err := exec.Command(caddyBin, "robots", "report", "--json", log).Output()
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	var r reportTotals
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// totals sums metrics by "action reason class" into the report's shape.
func totals(m map[string]int) reportTotals {
	r := reportTotals{ByAction: map[string]int{}, ByReason: map[string]int{}, ByClass: map[string]int{}}
	for k, n := range m {
		f := strings.Fields(k)
		r.Decisions += n
		r.ByAction[f[0]] += n
		r.ByReason[f[1]] += n
		r.ByClass[f[2]] += n
	}
	return r
}

func (r reportTotals) String() string {
	show := func(m map[string]int) string {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%d decisions; %s; %s; %s", r.Decisions, show(r.ByAction), show(r.ByReason), show(r.ByClass))
}

// TestFloodLog (issue 16): a 30 s flood of refusals from a handful of
// clients, with a config reload half way, writes at most 1% of the log
// bytes per refused request that logging every refusal writes (measured on
// a second Caddy with log_repeats 0), and "caddy robots report" over the
// folded log counts what the metrics count, by action, reason and class,
// once the last repeats are written: no count is lost at the reload, where
// the old handler's Cleanup writes the repeats it counted. (robotsguard's
// counters are process-wide and survive the reload, so the metrics read
// after the flood count both halves.)
func TestFloodLog(t *testing.T) {
	need(t)
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := start(t, options{admin: admin, trustProxy: true})
	duration := 30 * time.Second

	statuses := flood(t, s.front, duration/2)
	before := loggedMetrics(t, admin)
	cfgPath := filepath.Join(s.dir, "Caddyfile")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	reloaded := strings.Replace(string(cfg), "verify off", "verify off\n\t\tlog_repeats 9s", 1)
	if err := os.WriteFile(cfgPath, []byte(reloaded), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(caddyBin, "reload", "--config", cfgPath, "--adapter", "caddyfile", "--address", admin).CombinedOutput(); err != nil {
		t.Fatalf("reload: %v\n%s", err, out)
	}
	for code, n := range flood(t, s.front, duration/2) {
		statuses[code] += n
	}
	requests := 0
	for code, n := range statuses {
		requests += n
		if code != 200 && code != 403 && code != 429 {
			t.Errorf("%d responses with status %d", n, code)
		}
	}
	if statuses[403] < requests/2 {
		t.Fatalf("the flood was not refused: %v", statuses)
	}

	// The report counts what the metrics count once the last summary lines
	// are written (every log_repeats interval); the wait is bounded, not
	// timed.
	want := totals(loggedMetrics(t, admin))
	if b := totals(before); want.Decisions <= b.Decisions {
		t.Errorf("the counters did not survive the reload: %d decisions before it, %d after the flood", b.Decisions, want.Decisions)
	}
	var got reportTotals
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if got = report(t, s.moduleLog); got.String() == want.String() {
			break
		}
	}
	if got.String() != want.String() {
		t.Errorf("report and metrics differ after the flood:\nreport  %v\nmetrics %v", got, want)
	}
	st, err := os.Stat(s.moduleLog)
	if err != nil {
		t.Fatal(err)
	}
	folded := float64(st.Size()) / float64(want.Decisions)

	// Today's log: every refusal logged, on a second Caddy, for a few
	// seconds of the same flood.
	everyAdmin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	every := start(t, options{admin: everyAdmin, trustProxy: true, guard: "log_repeats 0"})
	flood(t, every.front, 3*time.Second)
	everyWant := totals(loggedMetrics(t, everyAdmin))
	if got := report(t, every.moduleLog); got.String() != everyWant.String() {
		t.Errorf("log_repeats 0: report and metrics differ:\nreport  %v\nmetrics %v", got, everyWant)
	}
	est, err := os.Stat(every.moduleLog)
	if err != nil {
		t.Fatal(err)
	}
	perRefusal := float64(est.Size()) / float64(everyWant.Decisions)

	lines, summaries := 0, 0
	data, _ := os.ReadFile(s.moduleLog)
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `"action"`) {
			lines++
			if strings.Contains(line, `"repeats":`) {
				summaries++
			}
		}
	}
	t.Logf("flood of %v from %d clients: %d requests %v; %s", duration, len(floodClients), requests, statuses, want)
	t.Logf("decision log: %d bytes, %d lines (%d summary lines), %.3f bytes per logged decision; with every refusal logged: %.0f bytes per refusal; ratio %.4f%%",
		st.Size(), lines, summaries, folded, perRefusal, 100*folded/perRefusal)
	if summaries == 0 {
		t.Error("no summary line was written")
	}
	if folded > perRefusal/100 {
		t.Errorf("the folded log writes %.2f bytes per refusal, more than 1%% of %.0f", folded, perRefusal)
	}
}
