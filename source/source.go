package source

import (
	"errors"
	"io/fs"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/policy"
)

// Source loads the site's robots.txt, keeps the current snapshot, and
// reloads it when the file changes and has settled, or, for a robots.txt
// read from a URL (see [NewRemote]), when a refresh fetches a new one. Its
// methods are safe for concurrent use.
type Source struct {
	path      string
	remote    *remote
	additions func(*policy.Robots) policy.Added
	from      string // see Options.From
	logger    *zap.Logger
	counters  Counters
	// settle is how long a changed file must stay unchanged before it is
	// installed; see DefaultSettle.
	settle time.Duration

	cur     atomic.Pointer[Snapshot]
	mu      sync.Mutex // serialises loads and guards the fields below
	watcher *fsnotify.Watcher
	// watchedDir is the directory the watcher watches, to notice that it
	// was replaced (nil while no watch is in place).
	watchedDir os.FileInfo
	// lastStat is what the poller saw last.
	lastStat statStamp
	// pending is the changed file waiting to settle, seen first at
	// pendingSince; changingSince is when the file was first seen to
	// differ from the rules in force (zero when it does not).
	pending       fileStamp
	pendingSince  time.Time
	changingSince time.Time
	warnedLong    bool
	// refused is the last file refused as invalid or cut short, so that
	// it is reported once.
	refused fileStamp
	// missingSince is when the file was found missing (zero while it
	// exists); missingLogged is when that was last logged.
	missingSince  time.Time
	missingLogged time.Time
	// retry loads again when a pending file may have settled.
	retry  *time.Timer
	closed bool
}

// Options are what a Source needs besides where its robots.txt is.
type Options struct {
	// Additions returns the handler's own lines (traps, blocked classes,
	// sitemaps) for the site's file, appended to it in the robots.txt it
	// serves and enforces (policy.Serve).
	Additions func(owner *policy.Robots) policy.Added
	// Logger gets the reload messages (nil: none).
	Logger *zap.Logger
	// Counters record the loads and fetches.
	Counters Counters
	// From names where the robots.txt comes from in the logs, in place of
	// its URL or file ("" for those).
	From string
}

// DefaultSettle is how long a changed robots.txt must stay exactly the same
// (size, time and content) before it replaces the rules in force. A file
// written in place is truncated and then written, possibly in pieces: a
// writer that pauses between pieces (a slow disk, a loaded machine, a save
// that streams) leaves a partial file for a moment, and a partial robots.txt
// is a robots.txt without its last rules. A file that is being written keeps
// changing; one second without change is the sign that the writer is done.
// An atomic save by rename settles as well, one second late.
const DefaultSettle = time.Second

// emptySettle is how many settle times an emptied file must stay empty
// before it replaces rules in force. An empty file is the one state every
// in-place save passes through (truncate, then write), so a writer stalled
// between the two on a loaded machine shows exactly this, and believing it
// would lift every rule at once; a site that really empties its robots.txt
// is rare and loses nothing by waiting ten seconds.
const emptySettle = 10

// keepsChanging is how long a file may keep changing before a warning says
// that the rules in force stay until it settles.
const keepsChanging = 30 * time.Second

// missingRelog is how often a missing robots.txt is logged again.
const missingRelog = time.Minute

// fileStamp identifies one state of the file: what was read of it (the
// first policy.MaxSize+1 bytes, all that policy.ParseHead uses) and its size
// and time.
type fileStamp struct {
	size     int64
	modTime  time.Time
	hash     [32]byte
	endsLine bool // the file is empty or ends with a line end
	read     bool // the file was read (not missing, not unreadable)
}

// same reports whether two stamps are of the same file state.
func (f fileStamp) same(g fileStamp) bool {
	return f.read && g.read && f.size == g.size && f.modTime.Equal(g.modTime) && f.hash == g.hash
}

// sameContent reports whether two stamps are of the same content, whatever
// the file's time.
func (f fileStamp) sameContent(g fileStamp) bool {
	return f.read && g.read && f.size == g.size && f.hash == g.hash
}

// New returns a Source that reads the robots.txt file at path ("" for
// none: no rules). Nothing is read until [Source.Load].
func New(path string, o Options) *Source {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return &Source{path: path, additions: o.Additions, logger: o.Logger, counters: o.Counters, from: o.From, settle: DefaultSettle}
}

// Snapshot returns the rules in force. It never blocks: one atomic load,
// no lock, no allocation.
func (s *Source) Snapshot() *Snapshot { return s.cur.Load() }

// Load reads the file and installs it once it has settled. An unreadable,
// invalid, still changing or cut-short file keeps the last good snapshot.
// At start (no snapshot yet), and while no file was ever read, a file is
// installed at once: no rules are in force to protect, and a file still
// being written is installed again when it settles. A missing file at start
// means no rules, as RFC 9309 treats an unavailable robots.txt.
func (s *Source) Load() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	prev := s.cur.Load()
	if s.path == "" {
		s.install(policy.Parse(nil), nil, fileStamp{}, time.Now(), true)
		return
	}
	data, file, err := readRobots(s.path)
	now := time.Now()
	noRules := prev == nil || prev.Missing
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.fileMissing(now, prev)
		return
	case errors.Is(err, errChanging) && !noRules:
		s.wait(now, fileStamp{size: -1}) // never equal to a real stamp
		return
	case err != nil && !errors.Is(err, errChanging):
		s.logger.Error("reading robots.txt failed; keeping the last good rules", zap.String("file", s.path), zap.Error(err))
		s.counters.reload("error")
		if prev == nil {
			s.install(policy.Parse(nil), nil, fileStamp{}, now, true)
		}
		return
	}
	s.filePresent()
	switch {
	case err != nil:
		// Still being written while no rules are in force: take what was
		// read now, and the whole file once it settles.
		s.wait(now, fileStamp{size: -1})
	case noRules:
		s.settled()
	case file.sameContent(prev.file):
		s.settled()
		return // touched, or changed back: nothing to do
	case !file.same(s.pending):
		s.wait(now, file)
		return
	case now.Sub(s.pendingSince) < s.settleFor(file):
		s.retryLater(s.settleFor(file) - now.Sub(s.pendingSince))
		return
	default:
		s.settled()
	}
	s.accept(data, file, file.modTime, prev, now)
}

// accept parses data, the start of a robots.txt whose stamp is file (all
// of it, or at least its first policy.MaxSize+1 bytes), and installs it
// unless it is invalid or looks cut short, which keep the last good rules.
// It logs and counts the result, a refused file once. It reports whether
// it installed the file. The caller holds s.mu.
func (s *Source) accept(data []byte, file fileStamp, modTime time.Time, prev *Snapshot, now time.Time) bool {
	noRules := prev == nil || prev.Missing
	r := s.parse(data, file)
	if err := r.Err(); err != nil {
		if prev == nil {
			s.install(policy.Parse(nil), nil, fileStamp{}, now, true)
		}
		if !file.same(s.refused) {
			s.refused = file
			s.logger.Error("robots.txt is invalid; keeping the last good rules", s.where(), zap.Error(err))
			s.counters.reload("invalid")
		}
		return false
	}
	if !noRules && prev.file.read && prev.file.endsLine && !file.endsLine {
		// Cut in the middle of a line where the rules in force ended
		// with a line end: a write that failed half way (a full disk)
		// leaves exactly this, and installing it would drop every rule
		// after the cut.
		if !file.same(s.refused) {
			s.refused = file
			cause := "a write that failed half way, a full disk?"
			if s.remote != nil {
				cause = "an application that stopped half way?"
			}
			s.logger.Error("robots.txt ends in the middle of a line, unlike the rules in force: it looks cut short ("+cause+"); keeping the last good rules until the file ends with a line end",
				s.where(), zap.Int64("size", file.size))
			s.counters.reload("incomplete")
		}
		return false
	}
	lost := judgeLoss(r, prev) // loss.go: rules lifted are logged loud
	diags := r.Lint()
	// The most serious findings first: only the first ten are logged.
	sort.SliceStable(diags, func(i, j int) bool { return diags[i].Severity > diags[j].Severity })
	for i, d := range diags {
		if i == 10 {
			s.logger.Warn("more robots.txt lint findings", s.where(), zap.Int("count", len(diags)-10))
			break
		}
		if d.Severity >= policy.Warning && !(d.Code == policy.CodeTruncated && lost.cut) {
			s.logger.Warn("robots.txt lint", s.where(), zap.Int("line", d.Line), zap.String("message", d.Message))
		}
	}
	s.install(r, data, file, modTime, false)
	if prev != nil {
		s.logger.Info("robots.txt reloaded", s.where(), zap.Int("groups", len(r.Groups)), zap.Int("lint_findings", len(diags)))
	}
	// After "reloaded": nothing later makes the loss good (the doctor
	// drops a warning that a later info line about its source follows).
	if lost.result != "" {
		lost.log(s.logger, s.where())
		s.counters.reload(lost.result)
	} else {
		s.counters.reload("ok")
	}
	return true
}

// where names the source in logs: its file or its URL.
func (s *Source) where() zap.Field {
	if s.from != "" {
		return zap.String("from", s.from)
	}
	if s.remote != nil {
		return zap.String("url", s.remote.fetcher.URL())
	}
	return zap.String("file", s.path)
}

// settleFor is how long the changed file must stay the same before it
// replaces the rules in force: the settle time, and emptySettle times it
// for an emptied file.
func (s *Source) settleFor(file fileStamp) time.Duration {
	if file.size == 0 {
		return emptySettle * s.settle
	}
	return s.settle
}

// settled ends a spell of changes. The caller holds s.mu.
func (s *Source) settled() {
	s.pending, s.changingSince, s.warnedLong = fileStamp{}, time.Time{}, false
}

// wait records a changed file that has not settled yet and schedules a
// load for when it may have. A file that keeps changing is reported once
// when it starts and once more if it goes on for long. The caller holds
// s.mu.
func (s *Source) wait(now time.Time, file fileStamp) {
	s.pending, s.pendingSince = file, now
	if s.changingSince.IsZero() {
		s.changingSince = now
		s.logger.Info("robots.txt changed; it replaces the rules in force once it has stayed unchanged for the settle time",
			zap.String("file", s.path), zap.Duration("settle", s.settle))
	} else if !s.warnedLong && now.Sub(s.changingSince) >= keepsChanging {
		s.warnedLong = true
		s.logger.Warn("robots.txt keeps changing; the last good rules stay in force until it settles",
			zap.String("file", s.path), zap.Duration("changing_for", now.Sub(s.changingSince)), zap.Duration("settle", s.settle))
	}
	s.retryLater(s.settle)
}

// fileMissing handles a robots.txt that does not exist: at start it means
// no rules (RFC 9309: unavailable means allow all); later the last good
// rules stay. Either way it is logged, again every missingRelog while it
// lasts, and counted. The caller holds s.mu.
func (s *Source) fileMissing(now time.Time, prev *Snapshot) {
	s.settled()
	if prev == nil {
		s.install(policy.Parse(nil), nil, fileStamp{}, now, true)
	}
	if !s.missingSince.IsZero() {
		return
	}
	s.missingSince, s.missingLogged = now, now
	s.counters.reload("missing")
	s.counters.robotsMissing(+1)
	if prev == nil || prev.Missing {
		s.logger.Warn("robots.txt not found: no rules are enforced until it appears (RFC 9309: unavailable means allow all)", zap.String("file", s.path))
	} else {
		s.logger.Warn("robots.txt not found; keeping the last good rules until it appears", zap.String("file", s.path))
	}
}

// filePresent ends a missing spell. The caller holds s.mu.
func (s *Source) filePresent() {
	if s.missingSince.IsZero() {
		return
	}
	s.logger.Info("robots.txt found again", zap.String("file", s.path), zap.Duration("missing_for", time.Since(s.missingSince)))
	s.missingSince, s.missingLogged = time.Time{}, time.Time{}
	s.counters.robotsMissing(-1)
}

// remindMissing logs a missing robots.txt again every missingRelog.
func (s *Source) remindMissing(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.missingSince.IsZero() || now.Sub(s.missingLogged) < missingRelog {
		return
	}
	s.missingLogged = now
	s.logger.Warn("robots.txt is still missing", zap.String("file", s.path), zap.Duration("missing_for", now.Sub(s.missingSince)))
}

// retryLater schedules one more load after d, replacing any pending one.
// The caller holds s.mu.
func (s *Source) retryLater(d time.Duration) {
	if s.retry == nil {
		s.retry = time.AfterFunc(d, s.Load)
		return
	}
	s.retry.Reset(d)
}

// Close stops the watcher and any pending reload; it is safe to call more
// than once.
func (s *Source) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && !s.missingSince.IsZero() {
		s.counters.robotsMissing(-1)
	}
	if !s.closed && s.remote != nil {
		s.closeRemote()
	}
	s.closed = true
	if s.retry != nil {
		s.retry.Stop()
	}
	if s.watcher != nil {
		s.watcher.Close()
		s.watcher = nil
	}
}
