package report

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
)

// Report accumulates decisions and module messages into a Summary.
type Report struct {
	entries, dryRun    int
	folded, summaries  int // decisions counted from summary lines, and those lines
	from, to           time.Time
	byAction, byReason map[string]int
	byClass, bySite    map[string]int
	// byPath, byToken and byIP are keyed by site and key (siteKey): every
	// row names its site, and no row mixes two sites' robots.txt files.
	byPath   map[string]int
	byToken  map[string]*tally
	byIP     map[string]*tally
	hourly   map[time.Time]int
	problems map[problemKey]*Problem
	claims   claims // browser claims on disallowed paths (claims.go)
}

// tally counts one bot or IP's decisions.
type tally struct {
	count      int
	actions    map[string]int
	tokens     map[string]int
	readRobots bool      // a violation was made after the address read robots.txt
	robotsAt   time.Time // when it last read it before one (zero: not logged)
	violations int
}

type problemKey struct {
	level, logger, msg, file, url, err, detail string
	line                                       int
}

// New returns an empty report.
func New() *Report {
	return &Report{
		byAction: map[string]int{}, byReason: map[string]int{}, byClass: map[string]int{}, bySite: map[string]int{},
		byPath: map[string]int{}, byToken: map[string]*tally{}, byIP: map[string]*tally{},
		hourly: map[time.Time]int{}, problems: map[problemKey]*Problem{}, claims: newClaims(),
	}
}

// Violation reports whether a decision broke the rules, as the live
// statistics count it (record.Violation): a refusal, or an allowed
// request with a reason other than robots.txt, an allowlist or a feed
// served (a first slip that was only logged).
func Violation(e *Entry) bool {
	r := e.Record()
	return r.Violation()
}

// Add counts one decision entry: a summary line of log_repeats counts as
// the decisions it stands for (Entry.Weight), under its own client,
// action, reason, class and bot, and under the path of the request it
// follows up, the only path it names.
func (r *Report) Add(e *Entry) {
	w := e.Weight()
	r.entries += w
	if e.Repeats > 0 {
		r.folded += w
		r.summaries++
	}
	if e.DryRun {
		r.dryRun += w
	}
	reason := e.Reason
	if reason == "" {
		reason = "none"
	}
	rec := e.Record()
	site := rec.SiteName()
	r.byAction[e.Action] += w
	r.byReason[reason] += w
	r.byClass[e.Class] += w
	r.bySite[site] += w
	path, _, _ := strings.Cut(e.URI, "?")
	r.byPath[siteKey(site, path)] += w
	r.claims.add(&rec, w)
	violation := rec.Violation()
	ignored := rec.ReadThenIgnored() // the review page's definition
	token := e.Token()
	switch {
	case token == "":
		token = "(none)"
	case e.Verification == "impostor":
		// As on the review page: requests that claimed the bot and failed
		// its verification are not the bot's.
		token += " (impostor)"
	}
	for key, m := range map[string]map[string]*tally{siteKey(site, token): r.byToken, siteKey(site, e.ClientIP): r.byIP} {
		t := m[key]
		if t == nil {
			t = &tally{actions: map[string]int{}, tokens: map[string]int{}}
			m[key] = t
		}
		t.count += w
		t.actions[e.Action] += w
		t.tokens[token] += w
		if violation {
			t.violations += w
		}
		if ignored {
			t.readRobots = true
			if e.RobotsAt != nil && e.RobotsAt.After(t.robotsAt) {
				t.robotsAt = e.RobotsAt.Time
			}
		}
	}
	if ts := e.TS.Time; !ts.IsZero() {
		r.see(ts)
		r.hourly[ts.Truncate(time.Hour)] += w
	}
}

func (r *Report) see(ts time.Time) {
	if r.from.IsZero() || ts.Before(r.from) {
		r.from = ts
	}
	if ts.After(r.to) {
		r.to = ts
	}
}

// AddMessage records one of the module's other messages: warnings and
// errors (an invalid robots.txt kept out, a missing file, a failed read)
// are listed as problems, the same message counted once with its first
// and last time; informational ones (a reload) are not listed.
func (r *Report) AddMessage(e *Entry) {
	if e.Level != "warn" && e.Level != "error" && e.Level != "fatal" && e.Level != "panic" && e.Level != "dpanic" {
		return
	}
	k := problemKey{e.Level, e.Logger, e.Msg, e.File, e.URL, e.Error, e.Detail, e.Line}
	p := r.problems[k]
	if p == nil {
		p = &Problem{Level: e.Level, Logger: e.Logger, Message: e.Msg, File: e.File, URL: e.URL, Error: e.Error, Line: e.Line, Detail: e.Detail}
		r.problems[k] = p
	}
	p.Count++
	if ts := e.TS.Time; !ts.IsZero() {
		if p.First == nil || ts.Before(p.First.Time) {
			p.First = &Time{ts}
		}
		if p.Last == nil || ts.After(p.Last.Time) {
			p.Last = &Time{ts}
		}
	}
}

// Summary is the report as "caddy robots report --json" writes it.
type Summary struct {
	Decisions int            `json:"decisions"`
	DryRun    int            `json:"dry_run"`
	Skipped   int            `json:"skipped_lines"`
	Filtered  int            `json:"filtered_out,omitempty"`
	From      *time.Time     `json:"from,omitempty"`
	To        *time.Time     `json:"to,omitempty"`
	ByAction  map[string]int `json:"by_action"`
	ByReason  map[string]int `json:"by_reason"`
	ByClass   map[string]int `json:"by_class"`
	// BySite counts the decisions by the site they were made for (the
	// zone, in logs written before decisions named their site).
	BySite      map[string]int `json:"by_site"`
	TopBots     []TopEntry     `json:"top_bots"`
	TopIPs      []TopEntry     `json:"top_ips"`
	TopPaths    []TopEntry     `json:"top_paths"`
	ReadIgnored []TopEntry     `json:"read_robots_and_ignored"`
	Hourly      []HourCount    `json:"hourly"`
	Problems    []Problem      `json:"problems"`
	// BrowserDisallowed: the requests whose User-Agent claims a browser
	// for a path the "*" group disallows, served or refused.
	BrowserDisallowed ClaimsSummary `json:"browser_disallowed"`

	// Folded is how many of the decisions were counted from summary lines
	// (log_repeats), and SummaryLines how many such lines there were.
	Folded       int `json:"folded,omitempty"`
	SummaryLines int `json:"summary_lines,omitempty"`
}

// TopEntry is one row of a ranking: one key (a bot, an address, a
// path, a rule) on one site.
type TopEntry struct {
	Key        string         `json:"key"`
	Site       string         `json:"site"`
	Count      int            `json:"count"`
	Violations int            `json:"violations,omitempty"`
	Actions    map[string]int `json:"actions,omitempty"`
	Tokens     []string       `json:"tokens,omitempty"`
	// ReadRobots: it broke a rule after its address had read robots.txt,
	// last at RobotsAt (absent when the log does not say).
	ReadRobots bool       `json:"read_robots,omitempty"`
	RobotsAt   *time.Time `json:"robots_at,omitempty"`
}

// HourCount is one bar of the hourly histogram.
type HourCount struct {
	Hour  time.Time `json:"hour"`
	Count int       `json:"count"`
}

// Problem is one of the module's warnings or errors (a reload that kept
// the last good rules, a missing robots.txt, a failed read), counted.
type Problem struct {
	Level   string `json:"level"`
	Logger  string `json:"logger"`
	Message string `json:"message"`
	File    string `json:"file,omitempty"`
	URL     string `json:"url,omitempty"`
	Error   string `json:"error,omitempty"`
	Line    int    `json:"line,omitempty"`
	// Detail is the message's "message" field: a lint finding, what a
	// reload lifted or lost to the 500 KiB cut.
	Detail string `json:"detail,omitempty"`
	Count  int    `json:"count"`
	First  *Time  `json:"first,omitempty"`
	Last   *Time  `json:"last,omitempty"`
}

// Summary ranks what was added; top bounds each ranking.
func (r *Report) Summary(top int, lines Lines) Summary {
	s := Summary{Decisions: r.entries, Folded: r.folded, SummaryLines: r.summaries, DryRun: r.dryRun, Skipped: lines.Other, Filtered: lines.Filtered,
		ByAction: r.byAction, ByReason: r.byReason, ByClass: r.byClass, BySite: r.bySite}
	if !r.from.IsZero() {
		from, to := r.from, r.to
		s.From, s.To = &from, &to
	}
	s.TopBots = rankTallies(r.byToken, top, func(*tally) bool { return true })
	s.TopIPs = rankTallies(r.byIP, top, func(*tally) bool { return true })
	s.ReadIgnored = rankTallies(r.byIP, top, func(t *tally) bool { return t.readRobots && t.violations > 0 })
	s.TopPaths = []TopEntry{}
	for k, n := range r.byPath {
		site, path := splitSiteKey(k)
		s.TopPaths = append(s.TopPaths, TopEntry{Key: path, Site: site, Count: n})
	}
	sortTop(s.TopPaths)
	if len(s.TopPaths) > top {
		s.TopPaths = s.TopPaths[:top]
	}
	s.BrowserDisallowed = r.claims.summary(top)
	s.Hourly = []HourCount{}
	for _, h := range slices.SortedFunc(maps.Keys(r.hourly), time.Time.Compare) {
		s.Hourly = append(s.Hourly, HourCount{h, r.hourly[h]})
	}
	s.Problems = []Problem{}
	for _, p := range r.problems {
		s.Problems = append(s.Problems, *p)
	}
	slices.SortFunc(s.Problems, func(a, b Problem) int {
		var at, bt time.Time
		if a.First != nil {
			at = a.First.Time
		}
		if b.First != nil {
			bt = b.First.Time
		}
		return cmp.Or(at.Compare(bt), cmp.Compare(a.Message, b.Message), cmp.Compare(a.File, b.File), cmp.Compare(a.Error, b.Error))
	})
	return s
}

func rankTallies(m map[string]*tally, top int, keep func(*tally) bool) []TopEntry {
	out := []TopEntry{}
	for k, t := range m {
		if !keep(t) {
			continue
		}
		site, key := splitSiteKey(k)
		e := TopEntry{Key: key, Site: site, Count: t.count, Violations: t.violations, Actions: t.actions, ReadRobots: t.readRobots}
		if !t.robotsAt.IsZero() {
			at := t.robotsAt
			e.RobotsAt = &at
		}
		e.Tokens = slices.Sorted(maps.Keys(t.tokens))
		out = append(out, e)
	}
	sortTop(out)
	if len(out) > top {
		out = out[:top]
	}
	return out
}

func sortTop(es []TopEntry) {
	slices.SortFunc(es, func(a, b TopEntry) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Site, b.Site))
	})
}

// siteKey keys a ranking by site and key; splitSiteKey reads it back.
func siteKey(site, key string) string { return site + "\x00" + key }

func splitSiteKey(k string) (site, key string) {
	if site, key, ok := strings.Cut(k, "\x00"); ok {
		return site, key
	}
	return "", k
}
