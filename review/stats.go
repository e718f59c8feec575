// Package review shows what the bots do: bounded live statistics per zone
// (per bot: class, verification, allowed, refused, throttled and blocked
// requests, robots.txt reads, the rules it broke and the robots.txt
// version each was judged against, its top paths; per class a per-minute
// series), their JSON view, and the review page that renders it, with every
// asset embedded; they count each decision's record ([Stats.Add],
// record.Record, by the record's rules). [Admin] serves the admin
// endpoints (the live view, the blocks, unblock), "caddy robots report
// --html" the same page built from decision logs. It does not import
// Caddy.
package review

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/record"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Outcome is what became of a request (record.Outcome).
type Outcome = record.Outcome

// Outcomes (record's).
const (
	Allowed     = record.Allowed
	Refused     = record.Refused
	Throttled   = record.Throttled
	Blocked     = record.Blocked
	numOutcomes = record.NumOutcomes
)

// OutcomeOf returns the outcome of a decision's action and reason
// (record.OutcomeOf).
func OutcomeOf(action enforce.Action, reason enforce.Reason) Outcome {
	return record.OutcomeOf(action, reason)
}

// Event is one decision as the statistics count it: what a
// record.Record says, by the record's rules ([Stats.Add] makes it).
type Event struct {
	// Time is when the request was decided; zero for the Stats' coarse
	// clock (see Options.Clock).
	Time time.Time
	// Token is the most specific product token; "" for browsers and
	// clients without one, which are counted by class.
	Token string
	// Name and Operator name the bot-database entry, if any.
	Name, Operator string
	// Class and Verdict classify the client.
	Class   uaclass.Class
	Verdict uaclass.Verdict
	// Outcome is what became of the request.
	Outcome Outcome
	// Violation marks a request that broke the rules (also one only
	// logged); ReadRobots a client IP that had fetched robots.txt before
	// (RobotsAt says when it last did; zero when unknown, as in logs
	// written before the field existed); RobotsTxt a request for
	// /robots.txt itself; DryRun a decision that was not enforced.
	Violation, ReadRobots, RobotsTxt, DryRun bool
	RobotsAt                                 time.Time
	// Reason is the decision's reason: it names the cause of a rule the
	// guard added to the served robots.txt (block_class, trap).
	Reason enforce.Reason
	// Path is the request target; its query is dropped.
	Path string
	// Rule is the robots.txt rule that decided, if any.
	Rule *policy.Rule
	// Version identifies the robots.txt the request was judged against
	// (a hash prefix); VersionText is that file, kept the first time the
	// version is seen, when given.
	Version     string
	VersionText []byte
	// BrowserDisallowed marks a request whose User-Agent claims a browser
	// for a path the robots.txt "*" group disallows, served or refused
	// (enforce.Decision.BrowserDisallowed); Evidence is what was found
	// against its claim (the request's evidence.Verdict), if anything.
	BrowserDisallowed bool
	Evidence          evidence.Evidence
}

// ReadThenIgnored reports "read robots.txt, then ignored it"
// (record.ReadThenIgnored, the one definition): a request that broke the
// rules after its client's address had fetched robots.txt; the pages show
// when the address read it (Event.RobotsAt) in the same row.
func (e *Event) ReadThenIgnored() bool { return record.ReadThenIgnored(e.Violation, e.ReadRobots) }

// Bounds of the statistics of one zone. With them a zone's statistics
// take at most about 12 MiB (see docs/review.md): bots × (row +
// top paths + top rules) + the series + the versions' text.
const (
	// MaxBots is how many bots (product tokens) live statistics track by
	// default (Options.MaxBots); a new bot then replaces the one of its
	// shard with the fewest requests, whose counts move to the "(other
	// bots)" row, so that totals stay exact.
	MaxBots = 2048
	// TopPaths and TopRules are the sizes of each bot's top lists
	// (space-saving: counts may be overestimated by the "error" shown).
	TopPaths = 8
	TopRules = 5
	// MaxVersions and MaxVersionBytes bound the robots.txt versions kept.
	MaxVersions     = 16
	MaxVersionBytes = 4 << 20

	numShards = 32
	// maxKeep is the longest path or pattern kept as is; longer ones are
	// cut.
	maxKeep = 256
)

// numClasses is the number of User-Agent classes.
var numClasses = len(uaclass.Classes())

// Stats are the live statistics of one zone. Record is safe for
// concurrent use and does not allocate for a bot already tracked; counts
// of browsers and of clients without a product token take no lock.
type Stats struct {
	start    time.Time
	seed     maphash.Seed
	shards   [numShards]shard
	classes  [16]classRow // tokenless clients, by class
	other    otherRow     // bots evicted to make room
	series   *series
	versions versions
	claims   claimStats // browser claims on disallowed paths (claims.go)
	patterns interned   // the rule patterns the top lists hold (topk.go)
	dryRun   atomic.Uint64
	// clock is a coarse clock (Unix nanoseconds) for events without a
	// time, set by a ticker: reading the time costs more than recording.
	clock atomic.Int64
	stop  chan struct{}
	once  sync.Once
	// perShard is how many bots each shard tracks.
	perShard int
}

// Options size a Stats.
type Options struct {
	// Step and Slots shape the time series: Slots buckets of Step.
	// Defaults: one minute, 1440 (the last 24 hours).
	Step  time.Duration
	Slots int
	// Clock, when set, is how often a ticker updates the time that
	// events without one get; Close stops it. Live statistics use it:
	// reading the time costs more than recording an event.
	Clock time.Duration
	// MaxBots bounds the bots tracked. Default: MaxBots.
	MaxBots int
}

// New returns empty statistics.
func New(o Options) *Stats {
	if o.Step <= 0 {
		o.Step = time.Minute
	}
	if o.Slots <= 0 {
		o.Slots = 1440
	}
	if o.MaxBots <= 0 {
		o.MaxBots = MaxBots
	}
	s := &Stats{start: time.Now(), seed: maphash.MakeSeed(), series: newSeries(o.Step, o.Slots), perShard: max(1, o.MaxBots/numShards)}
	for i := range s.shards {
		s.shards[i].bots = make(map[botKey]*botRow, min(s.perShard, 64))
	}
	s.clock.Store(time.Now().UnixNano())
	if o.Clock > 0 {
		s.stop = make(chan struct{})
		go s.tick(o.Clock)
	}
	return s
}

func (s *Stats) tick(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.clock.Store(now.UnixNano())
		}
	}
}

// Close stops the clock's ticker; it is safe to call more than once.
func (s *Stats) Close() {
	s.once.Do(func() {
		if s.stop != nil {
			close(s.stop)
		}
	})
}

type shard struct {
	mu   sync.Mutex
	bots map[botKey]*botRow
}

// botKey keys a bot's row: its token, and whether the requests failed
// the verification of the bot they claim to be. Impostors get a row of
// their own, so that an attacker cannot make a real crawler's row look
// like it breaks the rules.
type botKey struct {
	token    string
	impostor bool
}

// botRow is one bot's statistics.
type botRow struct {
	key                   botKey
	token, name, operator string
	class                 uaclass.Class
	verdict               uaclass.Verdict // the latest
	verdicts              [4]uint64
	counts                [numOutcomes]uint64
	total                 uint64
	violations            uint64
	readIgnored           uint64 // violations after the IP read robots.txt
	dryRun                uint64
	robotsReads           uint64
	first, last, robotsAt int64 // Unix nanoseconds
	// addrRobotsAt is when its address last fetched robots.txt before a
	// violation (ReadThenIgnored), as the decision said.
	addrRobotsAt int64
	rules        top[ruleKey]
	paths        top[string]
}

// ruleKey is a rule broken: its text, and for a rule the guard added to
// the served robots.txt (Line 0) the reason it was added for. The same
// rule broken under several robots.txt versions is one item (see
// addRule): version and rule.Line are those of the latest, older the
// versions before it (the most recent first, up to three).
type ruleKey struct {
	version string
	rule    policy.Rule
	reason  enforce.Reason
	older   [3]string
}

// classRow counts the clients of one class that have no product token
// (browsers, empty or junk User-Agents).
type classRow struct {
	counts      [numOutcomes]atomic.Uint64
	violations  atomic.Uint64
	readIgnored atomic.Uint64
	robotsReads atomic.Uint64
	first, last atomic.Int64
	// addrRobotsAt: as botRow's.
	addrRobotsAt atomic.Int64
	// Refused requests' rules and paths (people's ordinary paths are not
	// the review's business).
	mu    sync.Mutex
	rules top[ruleKey]
	paths top[string]
}

// otherRow sums the bots evicted from the table.
type otherRow struct {
	mu          sync.Mutex
	bots        uint64
	counts      [numOutcomes]uint64
	violations  uint64
	readIgnored uint64
}

// Record counts one decision.
func (s *Stats) Record(e *Event) {
	t := s.clock.Load()
	if !e.Time.IsZero() {
		t = e.Time.UnixNano()
	}
	s.series.add(t, e.Class, e.Outcome)
	if e.DryRun {
		s.dryRun.Add(1)
	}
	if e.Version != "" && (e.Violation || e.RobotsTxt || e.BrowserDisallowed) {
		s.versions.note(e.Version, e.VersionText, t, e.Violation)
	}
	path := cutQuery(e.Path)
	if e.BrowserDisallowed {
		s.claims.record(e, path, &s.patterns)
	}
	if e.Token == "" {
		s.recordClass(e, t, path)
		return
	}
	sh := &s.shards[maphash.String(s.seed, e.Token)%numShards]
	k := botKey{e.Token, e.Verdict == uaclass.Impostor}
	sh.mu.Lock()
	b := sh.bots[k]
	if b == nil {
		b = s.newRow(sh, k, e)
	}
	if b.first == 0 {
		b.first = t
	}
	b.counts[e.Outcome]++
	b.total++
	b.last = t
	b.verdict = e.Verdict
	if int(e.Verdict) < len(b.verdicts) {
		b.verdicts[e.Verdict]++
	}
	if e.DryRun {
		b.dryRun++
	}
	if e.RobotsTxt {
		b.robotsReads++
		b.robotsAt = t
	}
	if e.Violation {
		b.violations++
		if e.ReadThenIgnored() {
			b.readIgnored++
			b.addrRobotsAt = max(b.addrRobotsAt, unixNano(e.RobotsAt))
		}
		if e.Rule != nil {
			addRule(&b.rules, e, &s.patterns)
		}
	}
	if !e.RobotsTxt {
		b.paths.add(keepString(path), TopPaths, nil)
	}
	sh.mu.Unlock()
}

// newRow adds a row for e's bot to the shard, replacing the row with the
// fewest requests when the shard is full. The caller holds sh.mu.
func (s *Stats) newRow(sh *shard, k botKey, e *Event) *botRow {
	var b *botRow
	if len(sh.bots) >= s.perShard {
		for _, r := range sh.bots {
			if b == nil || r.total < b.total || r.total == b.total && r.last < b.last {
				b = r
			}
		}
		delete(sh.bots, b.key)
		s.other.add(b)
		*b = botRow{rules: b.rules[:0:0], paths: b.paths[:0:0]}
	} else {
		b = &botRow{}
	}
	// The token is copied: it may be a piece of a long User-Agent.
	b.token = strings.Clone(cut(e.Token, 64))
	b.key = botKey{b.token, k.impostor}
	b.name, b.operator, b.class = e.Name, e.Operator, e.Class
	sh.bots[b.key] = b
	return b
}

func (o *otherRow) add(b *botRow) {
	o.mu.Lock()
	o.bots++
	for i, n := range b.counts {
		o.counts[i] += n
	}
	o.violations += b.violations
	o.readIgnored += b.readIgnored
	o.mu.Unlock()
}

func (s *Stats) recordClass(e *Event, t int64, path string) {
	if int(e.Class) >= len(s.classes) {
		return
	}
	c := &s.classes[e.Class]
	c.counts[e.Outcome].Add(1)
	if c.first.Load() == 0 {
		c.first.CompareAndSwap(0, t)
	}
	if c.last.Load() < t {
		c.last.Store(t)
	}
	if e.RobotsTxt {
		c.robotsReads.Add(1)
	}
	if !e.Violation {
		return
	}
	c.violations.Add(1)
	if e.ReadThenIgnored() {
		c.readIgnored.Add(1)
		for at := unixNano(e.RobotsAt); ; {
			old := c.addrRobotsAt.Load()
			if at <= old || c.addrRobotsAt.CompareAndSwap(old, at) {
				break
			}
		}
	}
	c.mu.Lock()
	if e.Rule != nil {
		addRule(&c.rules, e, &s.patterns)
	}
	c.paths.add(keepString(path), TopPaths, nil)
	c.mu.Unlock()
}

// addRule counts e's rule in a top list of rules: the same rule broken
// under another robots.txt version is the same item, which then names the
// latest version and line and remembers the older versions.
func addRule(t *top[ruleKey], e *Event, in *interned) {
	k := ruleKey{version: e.Version, rule: keepRule(*e.Rule)}
	if k.rule.Line == 0 {
		k.reason = e.Reason // an added rule: block_class, a trap
	}
	for i := range *t {
		it := &(*t)[i]
		if !sameRule(&it.key, &k) {
			continue
		}
		it.count++
		if it.key.version != k.version {
			older := it.key.version
			for j, v := range it.key.older {
				if v == k.version {
					// Back to an older version: it leaves the list.
					copy(it.key.older[j:], it.key.older[j+1:])
					it.key.older[len(it.key.older)-1] = ""
					break
				}
			}
			copy(it.key.older[1:], it.key.older[:len(it.key.older)-1])
			it.key.older[0] = older
			it.key.version, it.key.rule.Line = k.version, k.rule.Line
		}
		return
	}
	// Not in the list (sameRule found none, so neither is the key): a
	// new item, whose pattern the list owns.
	t.insert(k, TopRules, func(r ruleKey) ruleKey {
		r.rule.Pattern = in.own(r.rule.Pattern)
		return r
	})
}

// sameRule reports whether two rule keys are the same rule, whatever the
// version and line.
func sameRule(a, b *ruleKey) bool {
	return a.rule.Allow == b.rule.Allow && a.rule.Pattern == b.rule.Pattern && a.rule.Key == b.rule.Key &&
		(a.rule.Line == 0) == (b.rule.Line == 0) && a.reason == b.reason
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// keepString bounds what a top list keeps of a string from a request: a
// short string is kept as is (it holds on to at most a short request
// line), a long one is cut and copied.
func keepString(s string) string {
	if len(s) <= 2*maxKeep {
		return s
	}
	return strings.Clone(s[:maxKeep])
}

// keepRule keeps a rule without holding on to the file its pattern came
// from: top lists copy the pattern when they insert the key.
func keepRule(r policy.Rule) policy.Rule {
	r.Pattern = cut(r.Pattern, maxKeep)
	return r
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Add counts one decision, from its record: the event the record's
// rules make of it (its outcome, whether it broke the rules). A live
// record has no Time: a zone's statistics keep a coarse clock (100 ms),
// which is all their per-minute series and "last seen" need, and which
// saves a clock read per request. It does not allocate for a bot already
// tracked.
func (s *Stats) Add(r *record.Record) {
	e := Event{
		Time:        r.Time,
		Token:       r.Token(),
		Name:        r.Bot,
		Operator:    r.Operator,
		Class:       r.Class,
		Verdict:     r.Verdict,
		Outcome:     r.Outcome(),
		Violation:   r.Violation(),
		ReadRobots:  r.ReadRobots,
		RobotsAt:    r.RobotsAt,
		Reason:      r.Reason,
		RobotsTxt:   r.RobotsTxt(),
		DryRun:      r.DryRun,
		Path:        r.Path,
		Rule:        r.Rule,
		Version:     r.Version,
		VersionText: r.VersionText,

		BrowserDisallowed: r.BrowserDisallowed,
		Evidence:          r.Evidence.Evidence,
	}
	s.Record(&e)
}
