package caddymodule

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// loggerName is the name of the handler's logger in Caddy's logs.
const loggerName = "http.handlers.robots_guard"

func reportCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "report [LOGFILE...]",
		Short: "Summarises robots_guard decisions from Caddy JSON logs",
	}
	c.Flags().Bool("json", false, "write the report as JSON")
	c.Flags().Int("top", 10, "how many bots, IPs and paths to list")
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		asJSON, _ := cmd.Flags().GetBool("json")
		top, _ := cmd.Flags().GetInt("top")
		rep := newReport()
		if len(args) == 0 {
			if err := rep.read(cmd.InOrStdin()); err != nil {
				return err
			}
		}
		for _, name := range args {
			f, err := os.Open(name)
			if err != nil {
				return err
			}
			err = rep.read(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
		}
		sum := rep.summary(top)
		if asJSON {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(sum)
		}
		sum.writeText(cmd.OutOrStdout())
		return nil
	})
	return c
}

// logEntry holds the fields of a robots_guard log entry that the report
// reads.
type logEntry struct {
	TS         any      `json:"ts"`
	Logger     string   `json:"logger"`
	ClientIP   string   `json:"client_ip"`
	Class      string   `json:"class"`
	Tokens     []string `json:"tokens"`
	URI        string   `json:"uri"`
	Action     string   `json:"action"`
	Reason     string   `json:"reason"`
	ReadRobots bool     `json:"read_robots"`
	DryRun     bool     `json:"dry_run"`
}

// report accumulates decisions.
type report struct {
	entries, skipped, dryRun int
	from, to                 time.Time
	byAction, byReason       map[string]int
	byClass, byPath          map[string]int
	byToken                  map[string]*tally
	byIP                     map[string]*tally
	hourly                   map[time.Time]int
}

// tally counts one bot or IP's decisions.
type tally struct {
	count      int
	actions    map[string]int
	tokens     map[string]int
	readRobots bool
	violations int
}

func newReport() *report {
	return &report{
		byAction: map[string]int{}, byReason: map[string]int{}, byClass: map[string]int{},
		byPath: map[string]int{}, byToken: map[string]*tally{}, byIP: map[string]*tally{},
		hourly: map[time.Time]int{},
	}
}

// read adds the robots_guard entries of a JSON log; other lines (other
// loggers, plain text) are counted as skipped.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e logEntry
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Logger != loggerName || e.Action == "" {
			r.skipped++
			continue
		}
		r.add(&e)
	}
	return sc.Err()
}

func (r *report) add(e *logEntry) {
	r.entries++
	if e.DryRun {
		r.dryRun++
	}
	reason := e.Reason
	if reason == "" {
		reason = "none"
	}
	r.byAction[e.Action]++
	r.byReason[reason]++
	r.byClass[e.Class]++
	path, _, _ := strings.Cut(e.URI, "?")
	r.byPath[path]++
	violation := e.Action != "allow" || reason != "none" && reason != "robots_txt" && reason != "allowlisted"
	token := "(none)"
	if len(e.Tokens) > 0 {
		token = e.Tokens[0]
	}
	for key, m := range map[string]map[string]*tally{token: r.byToken, e.ClientIP: r.byIP} {
		t := m[key]
		if t == nil {
			t = &tally{actions: map[string]int{}, tokens: map[string]int{}}
			m[key] = t
		}
		t.count++
		t.actions[e.Action]++
		t.tokens[token]++
		if violation {
			t.violations++
			t.readRobots = t.readRobots || e.ReadRobots
		}
	}
	if ts, ok := parseTS(e.TS); ok {
		if r.from.IsZero() || ts.Before(r.from) {
			r.from = ts
		}
		if ts.After(r.to) {
			r.to = ts
		}
		r.hourly[ts.Truncate(time.Hour)]++
	}
}

// parseTS reads Caddy's "ts" field: Unix seconds as a number (the default)
// or a formatted time string.
func parseTS(v any) (time.Time, bool) {
	switch ts := v.(type) {
	case float64:
		sec, frac := math.Modf(ts)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), true
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z0700", "2006/01/02 15:04:05.000"} {
			if t, err := time.Parse(layout, ts); err == nil {
				return t.UTC(), true
			}
		}
	}
	return time.Time{}, false
}

// Summary is the report as "caddy robots report --json" writes it.
type Summary struct {
	Decisions   int            `json:"decisions"`
	DryRun      int            `json:"dry_run"`
	Skipped     int            `json:"skipped_lines"`
	From        *time.Time     `json:"from,omitempty"`
	To          *time.Time     `json:"to,omitempty"`
	ByAction    map[string]int `json:"by_action"`
	ByReason    map[string]int `json:"by_reason"`
	ByClass     map[string]int `json:"by_class"`
	TopBots     []TopEntry     `json:"top_bots"`
	TopIPs      []TopEntry     `json:"top_ips"`
	TopPaths    []TopEntry     `json:"top_paths"`
	ReadIgnored []TopEntry     `json:"read_robots_and_ignored"`
	Hourly      []HourCount    `json:"hourly"`
}

// TopEntry is one row of a ranking.
type TopEntry struct {
	Key        string         `json:"key"`
	Count      int            `json:"count"`
	Violations int            `json:"violations,omitempty"`
	Actions    map[string]int `json:"actions,omitempty"`
	Tokens     []string       `json:"tokens,omitempty"`
	ReadRobots bool           `json:"read_robots,omitempty"`
}

// HourCount is one bar of the hourly histogram.
type HourCount struct {
	Hour  time.Time `json:"hour"`
	Count int       `json:"count"`
}

func (r *report) summary(top int) Summary {
	s := Summary{Decisions: r.entries, DryRun: r.dryRun, Skipped: r.skipped, ByAction: r.byAction, ByReason: r.byReason, ByClass: r.byClass}
	if !r.from.IsZero() {
		s.From, s.To = &r.from, &r.to
	}
	s.TopBots = rankTallies(r.byToken, top, func(*tally) bool { return true })
	s.TopIPs = rankTallies(r.byIP, top, func(*tally) bool { return true })
	s.ReadIgnored = rankTallies(r.byIP, top, func(t *tally) bool { return t.readRobots && t.violations > 0 })
	for path, n := range r.byPath {
		s.TopPaths = append(s.TopPaths, TopEntry{Key: path, Count: n})
	}
	sortTop(s.TopPaths)
	if len(s.TopPaths) > top {
		s.TopPaths = s.TopPaths[:top]
	}
	for h, n := range r.hourly {
		s.Hourly = append(s.Hourly, HourCount{h, n})
	}
	sort.Slice(s.Hourly, func(i, j int) bool { return s.Hourly[i].Hour.Before(s.Hourly[j].Hour) })
	return s
}

func rankTallies(m map[string]*tally, top int, keep func(*tally) bool) []TopEntry {
	var out []TopEntry
	for k, t := range m {
		if !keep(t) {
			continue
		}
		e := TopEntry{Key: k, Count: t.count, Violations: t.violations, Actions: t.actions, ReadRobots: t.readRobots}
		for tok := range t.tokens {
			e.Tokens = append(e.Tokens, tok)
		}
		sort.Strings(e.Tokens)
		out = append(out, e)
	}
	sortTop(out)
	if len(out) > top {
		out = out[:top]
	}
	return out
}

func sortTop(es []TopEntry) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].Count != es[j].Count {
			return es[i].Count > es[j].Count
		}
		return es[i].Key < es[j].Key
	})
}

func (s *Summary) writeText(w io.Writer) {
	fmt.Fprintf(w, "robots_guard report: %d decisions", s.Decisions)
	if s.From != nil {
		fmt.Fprintf(w, " from %s to %s", s.From.Format(time.DateTime), s.To.Format(time.DateTime))
	}
	fmt.Fprintf(w, " (%d other lines skipped)\n", s.Skipped)
	if s.DryRun > 0 {
		fmt.Fprintf(w, "dry run: %d decisions were reported, not enforced\n", s.DryRun)
	}
	fmt.Fprintf(w, "\nby action: %s\nby reason: %s\nby class:  %s\n", counts(s.ByAction), counts(s.ByReason), counts(s.ByClass))
	section := func(title string, es []TopEntry, showTokens bool) {
		fmt.Fprintf(w, "\n%s\n", title)
		if len(es) == 0 {
			fmt.Fprintln(w, "  (none)")
		}
		for _, e := range es {
			fmt.Fprintf(w, "  %-40s %6d", e.Key, e.Count)
			if len(e.Actions) > 0 {
				fmt.Fprintf(w, "  %s", counts(e.Actions))
			}
			if showTokens && len(e.Tokens) > 0 {
				fmt.Fprintf(w, "  tokens: %s", strings.Join(e.Tokens, ","))
			}
			if e.ReadRobots {
				fmt.Fprint(w, "  read robots.txt")
			}
			fmt.Fprintln(w)
		}
	}
	section("top bots (by product token):", s.TopBots, false)
	section("top client IPs:", s.TopIPs, true)
	section("top paths:", s.TopPaths, false)
	section("read robots.txt, then ignored it:", s.ReadIgnored, true)
	fmt.Fprintln(w, "\nhourly:")
	maxN := 0
	for _, h := range s.Hourly {
		maxN = max(maxN, h.Count)
	}
	for _, h := range s.Hourly {
		bar := strings.Repeat("#", max(1, h.Count*40/max(maxN, 1)))
		fmt.Fprintf(w, "  %s  %-40s %d\n", h.Hour.Format("2006-01-02 15:00"), bar, h.Count)
	}
}

// counts formats a map as "a 3, b 1", largest first.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, ", ")
}
