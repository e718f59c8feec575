package review

import (
	"cmp"
	"slices"
	"time"

	"github.com/robotsguard/robotsguard/uaclass"
)

// View is what the review page shows: the JSON of GET /robots_guard/stats
// and the data of a "caddy robots report --html" page.
type View struct {
	// Generated is when the view was made.
	Generated time.Time `json:"generated"`
	// Source is "live" (the admin endpoint) or "logs" (report --html).
	Source string `json:"source"`
	// Zones are the zones' statistics, by name.
	Zones []ZoneView `json:"zones"`
	// Problems are the module's reload and provisioning problems found in
	// the logs (report --html only).
	Problems []Problem `json:"problems,omitempty"`
	// Notes say what the view leaves out (report --html only).
	Notes []string `json:"notes,omitempty"`
}

// Problem is one of the module's warnings or errors, counted.
type Problem struct {
	Level   string     `json:"level"`
	Message string     `json:"message"`
	File    string     `json:"file,omitempty"`
	Error   string     `json:"error,omitempty"`
	Count   int        `json:"count"`
	First   *time.Time `json:"first,omitempty"`
	Last    *time.Time `json:"last,omitempty"`
}

// ZoneView is one zone's statistics.
type ZoneView struct {
	// Zone is the per-client state's name, and Site the site whose
	// statistics these are: a zone's sites are counted apart, so that no
	// row mixes two robots.txt files.
	Zone string `json:"zone"`
	Site string `json:"site"`
	// Since is when the statistics began (the zone's first use in this
	// process, or the first log entry).
	Since time.Time `json:"since"`
	// Totals count requests by outcome; DryRun those not enforced.
	Totals map[string]uint64 `json:"totals"`
	DryRun uint64            `json:"dry_run"`
	// Bots are the tracked bots and, per class, the clients without a
	// product token ("(browser)", "(unknown)"), and "(other bots)" for
	// those evicted to keep the table bounded.
	Bots []BotView `json:"bots"`
	// Series is the per-step series by class and outcome.
	Series SeriesView `json:"series"`
	// Versions are the robots.txt versions that violations were judged
	// against, oldest first.
	Versions []VersionView `json:"versions"`
	// Blocked are the clients blocked now: live, the zone's store's list
	// (filled by the caller, which holds the store); in a report --html
	// page, the blocks the logged decisions show in force at the end of
	// the logs.
	Blocked []BlockedClient `json:"blocked,omitempty"`
	// BrowserDisallowed are the requests whose User-Agent claims a
	// browser for a path the robots.txt "*" group disallows, served or
	// refused.
	BrowserDisallowed ClaimsView `json:"browser_disallowed"`
}

// BlockedClient is one client blocked now.
type BlockedClient struct {
	IP    string    `json:"ip"`
	Token string    `json:"token,omitempty"`
	Until time.Time `json:"until"`
	// Reason is what made the block (enforce.BlockReason: "trap",
	// "disallowed", "rate", "class", "invalid", "bad_agent", "impostor",
	// "unknown").
	Reason string `json:"reason,omitempty"`
	// Offenses and ReadRobots are known live only.
	Offenses   int  `json:"offenses,omitempty"`
	ReadRobots bool `json:"read_robots,omitempty"`
	DryRun     bool `json:"dry_run,omitempty"`
	// Site is the site whose decision made the block, where known.
	Site string `json:"site,omitempty"`
}

// BotView is one row of the bots table.
type BotView struct {
	// Key is the row's key: the product token, "(class)" for clients
	// without one, or "(other bots)".
	Key      string `json:"key"`
	Token    string `json:"token,omitempty"`
	Name     string `json:"name,omitempty"`
	Operator string `json:"operator,omitempty"`
	Class    string `json:"class"`
	// Verification is the latest verdict; Verifications counts them all.
	Verification  string            `json:"verification,omitempty"`
	Verifications map[string]uint64 `json:"verifications,omitempty"`
	Allowed       uint64            `json:"allowed"`
	Refused       uint64            `json:"refused"`
	Throttled     uint64            `json:"throttled"`
	Blocked       uint64            `json:"blocked"`
	Violations    uint64            `json:"violations"`
	// ReadIgnored counts the violations made after the client's address
	// had read robots.txt ([Event.ReadThenIgnored]): it read the rules and
	// ignored them. AddressRobotsAt is when the address last read it
	// before such a violation (absent when the logs do not say).
	ReadIgnored     uint64     `json:"read_ignored"`
	AddressRobotsAt *time.Time `json:"address_robots_at,omitempty"`
	DryRun          uint64     `json:"dry_run,omitempty"`
	// RobotsReads counts its own requests for robots.txt (this token's,
	// this row's); RobotsAt is the last one.
	RobotsReads uint64     `json:"robots_reads"`
	RobotsAt    *time.Time `json:"robots_at,omitempty"`
	First       *time.Time `json:"first,omitempty"`
	Last        *time.Time `json:"last,omitempty"`
	// Impostor marks the row of the requests that claimed the bot of
	// Token and failed its verification (Key "token (impostor)"): kept
	// apart from the bot's own row.
	Impostor bool `json:"impostor,omitempty"`
	// Bots counts the bots folded into "(other bots)".
	Bots  uint64      `json:"bots,omitempty"`
	Rules []RuleCount `json:"rules,omitempty"`
	Paths []PathCount `json:"paths,omitempty"`
}

// RuleCount is a rule a bot broke, with the robots.txt version it was
// last judged against and its line there (0: a rule the guard added to
// the served robots.txt, for Reason: "blocked_class", "trap"). The same
// rule broken under several versions is one RuleCount; Older lists the
// versions before the latest (the most recent first, up to three).
type RuleCount struct {
	Version string   `json:"version,omitempty"`
	Older   []string `json:"older,omitempty"`
	Line    int      `json:"line"`
	Rule    string   `json:"rule"`
	Reason  string   `json:"reason,omitempty"`
	Count   uint64   `json:"count"`
	// Error is how much Count may overstate (space-saving).
	Error uint64 `json:"error,omitempty"`
}

// PathCount is a path a bot asked for.
type PathCount struct {
	Path  string `json:"path"`
	Count uint64 `json:"count"`
	Error uint64 `json:"error,omitempty"`
}

// SeriesView is a time series: Points steps of Step seconds from Start,
// per class and outcome; classes without requests are left out, and so are
// outcomes without any.
type SeriesView struct {
	Start   time.Time                      `json:"start"`
	Step    float64                        `json:"step"`
	Points  int                            `json:"points"`
	Classes map[string]map[string][]uint32 `json:"classes"`
}

// VersionView is one robots.txt version.
type VersionView struct {
	ID          string    `json:"id"`
	First       time.Time `json:"first"`
	Last        time.Time `json:"last"`
	Violations  uint64    `json:"violations"`
	RobotsReads uint64    `json:"robots_reads"`
	// HasText says whether the text is kept (GET
	// /robots_guard/robots?zone=Z&version=ID serves it); Text carries it
	// in a report --html page.
	HasText bool   `json:"has_text"`
	Text    string `json:"text,omitempty"`
}

// View returns the zone's statistics, with the series ending at end.
func (s *Stats) View(zone string, end time.Time) ZoneView {
	v := ZoneView{Zone: zone, Since: s.start.UTC(), Totals: map[string]uint64{}, DryRun: s.dryRun.Load(), Bots: []BotView{}, Versions: []VersionView{}}
	for o := range numOutcomes {
		v.Totals[o.String()] = 0
	}
	count := func(b *BotView) {
		v.Totals["allowed"] += b.Allowed
		v.Totals["refused"] += b.Refused
		v.Totals["throttled"] += b.Throttled
		v.Totals["blocked"] += b.Blocked
		v.Bots = append(v.Bots, *b)
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for _, b := range sh.bots {
			bv := b.view()
			count(&bv)
		}
		sh.mu.Unlock()
	}
	for c := range s.classes[:numClasses] {
		if bv, ok := s.classes[c].view(uaclass.Class(c)); ok {
			count(&bv)
		}
	}
	s.other.mu.Lock()
	if s.other.bots > 0 {
		o := &s.other
		count(&BotView{Key: "(other bots)", Class: "bot", Bots: o.bots, Allowed: o.counts[Allowed], Refused: o.counts[Refused],
			Throttled: o.counts[Throttled], Blocked: o.counts[Blocked], Violations: o.violations, ReadIgnored: o.readIgnored})
	}
	s.other.mu.Unlock()
	slices.SortFunc(v.Bots, func(a, b BotView) int {
		return cmp.Or(cmp.Compare(b.Allowed+b.Refused+b.Throttled+b.Blocked, a.Allowed+a.Refused+a.Throttled+a.Blocked), cmp.Compare(a.Key, b.Key))
	})
	v.Series = s.series.view(end)
	v.BrowserDisallowed = s.claims.view()
	s.versions.mu.Lock()
	for _, ver := range s.versions.list {
		v.Versions = append(v.Versions, VersionView{ID: ver.id, First: unixTime(ver.first), Last: unixTime(ver.last.Load()),
			Violations: ver.violations.Load(), RobotsReads: ver.robotsReads.Load(), HasText: ver.text != nil})
	}
	s.versions.mu.Unlock()
	return v
}

// VersionText returns the text of a robots.txt version, if it is kept.
func (s *Stats) VersionText(id string) ([]byte, bool) { return s.versions.text(id) }

// Start returns when the statistics began.
func (s *Stats) Start() time.Time { return s.start }

func (b *botRow) view() BotView {
	v := BotView{Key: b.token, Token: b.token, Name: b.name, Operator: b.operator, Class: b.class.String(),
		Allowed: b.counts[Allowed], Refused: b.counts[Refused], Throttled: b.counts[Throttled], Blocked: b.counts[Blocked],
		Violations: b.violations, ReadIgnored: b.readIgnored, AddressRobotsAt: timePtr(b.addrRobotsAt), DryRun: b.dryRun, RobotsReads: b.robotsReads,
		First: timePtr(b.first), Last: timePtr(b.last), RobotsAt: timePtr(b.robotsAt)}
	if b.key.impostor {
		// Requests that claimed the bot and failed its verification.
		// Requests that claimed the bot and failed its verification: the
		// operator did not send them.
		v.Key, v.Impostor, v.Operator = b.token+" (impostor)", true, ""
	}
	for verdict, n := range b.verdicts {
		if n > 0 && uaclass.Verdict(verdict) != uaclass.NotClaimed {
			if v.Verifications == nil {
				v.Verifications = map[string]uint64{}
			}
			v.Verifications[uaclass.Verdict(verdict).String()] = n
		}
	}
	if b.verdict != uaclass.NotClaimed {
		v.Verification = b.verdict.String()
	}
	v.Rules = ruleCounts(b.rules)
	v.Paths = pathCounts(b.paths)
	return v
}

func (c *classRow) view(class uaclass.Class) (BotView, bool) {
	v := BotView{Key: "(" + class.String() + ")", Class: class.String(),
		Allowed: c.counts[Allowed].Load(), Refused: c.counts[Refused].Load(), Throttled: c.counts[Throttled].Load(), Blocked: c.counts[Blocked].Load(),
		Violations: c.violations.Load(), ReadIgnored: c.readIgnored.Load(), AddressRobotsAt: timePtr(c.addrRobotsAt.Load()), RobotsReads: c.robotsReads.Load(),
		First: timePtr(c.first.Load()), Last: timePtr(c.last.Load())}
	if v.Allowed+v.Refused+v.Throttled+v.Blocked == 0 {
		return v, false
	}
	c.mu.Lock()
	v.Rules = ruleCounts(c.rules)
	v.Paths = pathCounts(c.paths)
	c.mu.Unlock()
	return v, true
}

func ruleCounts(t top[ruleKey]) []RuleCount {
	var out []RuleCount
	for _, it := range t {
		rc := RuleCount{Version: it.key.version, Line: it.key.rule.Line, Rule: it.key.rule.String(), Reason: string(it.key.reason), Count: it.count, Error: it.err}
		for _, o := range it.key.older {
			if o != "" {
				rc.Older = append(rc.Older, o)
			}
		}
		out = append(out, rc)
	}
	slices.SortFunc(out, func(a, b RuleCount) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Line, b.Line)) })
	return out
}

func pathCounts(t top[string]) []PathCount {
	var out []PathCount
	for _, it := range t {
		out = append(out, PathCount{Path: it.key, Count: it.count, Error: it.err})
	}
	slices.SortFunc(out, func(a, b PathCount) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Path, b.Path)) })
	return out
}

func unixTime(ns int64) time.Time { return time.Unix(0, ns).UTC() }

func timePtr(ns int64) *time.Time {
	if ns == 0 {
		return nil
	}
	t := unixTime(ns)
	return &t
}
