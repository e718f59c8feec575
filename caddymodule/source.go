package caddymodule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/metrics"
	"github.com/robotsguard/robotsguard/policy"
)

// snapshot is one immutable version of the site's rules: the compiled
// policy the engine enforces and the robots.txt the handler serves. Requests
// load it with one atomic read and never wait on a lock.
type snapshot struct {
	policy  *policy.Policy
	served  []byte
	etag    string
	modTime time.Time
	file    fileStamp // of the source file, to skip reloads that change nothing
	// missing is set when no file was ever read: no rules are in force, so
	// the first file that appears is installed without waiting.
	missing bool
	// body is the site's file as read, and version the first 12 hex
	// digits of its hash ("" without a file): the logs and the review page
	// name the robots.txt each decision was judged against.
	body    []byte
	version string
}

// source loads the site's robots.txt, keeps the current snapshot, and
// reloads it when the file changes and has settled, or, for a robots.txt
// read from a URL (remote set), when a refresh fetches a new one (see
// upstream.go).
type source struct {
	path      string
	remote    *remote
	additions func(*policy.Robots)
	logger    *zap.Logger
	metrics   *metrics.Collectors
	// settle is how long a changed file must stay unchanged before it is
	// installed; see defaultSettle.
	settle time.Duration

	cur     atomic.Pointer[snapshot]
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

// defaultSettle is how long a changed robots.txt must stay exactly the same
// (size, time and content) before it replaces the rules in force. A file
// written in place is truncated and then written, possibly in pieces: a
// writer that pauses between pieces (a slow disk, a loaded machine, a save
// that streams) leaves a partial file for a moment, and a partial robots.txt
// is a robots.txt without its last rules. A file that is being written keeps
// changing; one second without change is the sign that the writer is done.
// An atomic save by rename settles as well, one second late.
const defaultSettle = time.Second

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

// maxRangesFile bounds the size of a verify ranges file.
const maxRangesFile = 16 << 20

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

// statStamp is the size and time the poller compares.
type statStamp struct {
	size    int64
	modTime time.Time
	ok      bool
}

// errChanging reports that the file changed while it was read.
var errChanging = errors.New("robots.txt changed while it was read")

func newSource(path string, additions func(*policy.Robots), logger *zap.Logger, m *metrics.Collectors) *source {
	return &source{path: path, additions: additions, logger: logger, metrics: m, settle: defaultSettle}
}

func (s *source) snapshot() *snapshot { return s.cur.Load() }

// load reads the file and installs it once it has settled. An unreadable,
// invalid, still changing or cut-short file keeps the last good snapshot.
// At start (no snapshot yet), and while no file was ever read, a file is
// installed at once: no rules are in force to protect, and a file still
// being written is installed again when it settles. A missing file at start
// means no rules, as RFC 9309 treats an unavailable robots.txt.
func (s *source) load() {
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
	noRules := prev == nil || prev.missing
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.fileMissing(now, prev)
		return
	case errors.Is(err, errChanging) && !noRules:
		s.wait(now, fileStamp{size: -1}) // never equal to a real stamp
		return
	case err != nil && !errors.Is(err, errChanging):
		s.logger.Error("reading robots.txt failed; keeping the last good rules", zap.String("file", s.path), zap.Error(err))
		s.metrics.Reload("error")
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
func (s *source) accept(data []byte, file fileStamp, modTime time.Time, prev *snapshot, now time.Time) bool {
	noRules := prev == nil || prev.missing
	r := policy.ParseHead(data, file.size)
	if err := r.Err(); err != nil {
		if prev == nil {
			s.install(policy.Parse(nil), nil, fileStamp{}, now, true)
		}
		if !file.same(s.refused) {
			s.refused = file
			s.logger.Error("robots.txt is invalid; keeping the last good rules", s.where(), zap.Error(err))
			s.metrics.Reload("invalid")
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
			s.metrics.Reload("incomplete")
		}
		return false
	}
	diags := r.Lint()
	// The most serious findings first: only the first ten are logged.
	sort.SliceStable(diags, func(i, j int) bool { return diags[i].Severity > diags[j].Severity })
	for i, d := range diags {
		if i == 10 {
			s.logger.Warn("more robots.txt lint findings", s.where(), zap.Int("count", len(diags)-10))
			break
		}
		if d.Severity >= policy.Warning {
			s.logger.Warn("robots.txt lint", s.where(), zap.Int("line", d.Line), zap.String("message", d.Message))
		}
	}
	s.install(r, data, file, modTime, false)
	s.metrics.Reload("ok")
	if prev != nil {
		s.logger.Info("robots.txt reloaded", s.where(), zap.Int("groups", len(r.Groups)), zap.Int("lint_findings", len(diags)))
	}
	return true
}

// where names the source in logs: its file or its URL.
func (s *source) where() zap.Field {
	if s.remote != nil {
		return zap.String("url", s.remote.fetcher.URL())
	}
	return zap.String("file", s.path)
}

// settleFor is how long the changed file must stay the same before it
// replaces the rules in force: the settle time, and emptySettle times it
// for an emptied file.
func (s *source) settleFor(file fileStamp) time.Duration {
	if file.size == 0 {
		return emptySettle * s.settle
	}
	return s.settle
}

// settled ends a spell of changes. The caller holds s.mu.
func (s *source) settled() {
	s.pending, s.changingSince, s.warnedLong = fileStamp{}, time.Time{}, false
}

// wait records a changed file that has not settled yet and schedules a
// load for when it may have. A file that keeps changing is reported once
// when it starts and once more if it goes on for long. The caller holds
// s.mu.
func (s *source) wait(now time.Time, file fileStamp) {
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
func (s *source) fileMissing(now time.Time, prev *snapshot) {
	s.settled()
	if prev == nil {
		s.install(policy.Parse(nil), nil, fileStamp{}, now, true)
	}
	if !s.missingSince.IsZero() {
		return
	}
	s.missingSince, s.missingLogged = now, now
	s.metrics.Reload("missing")
	s.metrics.RobotsMissing(+1)
	if prev == nil || prev.missing {
		s.logger.Warn("robots.txt not found: no rules are enforced until it appears (RFC 9309: unavailable means allow all)", zap.String("file", s.path))
	} else {
		s.logger.Warn("robots.txt not found; keeping the last good rules until it appears", zap.String("file", s.path))
	}
}

// filePresent ends a missing spell. The caller holds s.mu.
func (s *source) filePresent() {
	if s.missingSince.IsZero() {
		return
	}
	s.logger.Info("robots.txt found again", zap.String("file", s.path), zap.Duration("missing_for", time.Since(s.missingSince)))
	s.missingSince, s.missingLogged = time.Time{}, time.Time{}
	s.metrics.RobotsMissing(-1)
}

// remindMissing logs a missing robots.txt again every missingRelog.
func (s *source) remindMissing(now time.Time) {
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
func (s *source) retryLater(d time.Duration) {
	if s.retry == nil {
		s.retry = time.AfterFunc(d, s.load)
		return
	}
	s.retry.Reset(d)
}

// install builds and publishes the snapshot for r. The caller holds s.mu.
func (s *source) install(r *policy.Robots, body []byte, file fileStamp, modTime time.Time, missing bool) {
	served := r.Clone()
	s.additions(served)
	text := served.Generate()
	sum := sha256.Sum256(text)
	version := ""
	if !missing {
		version = hex.EncodeToString(file.hash[:6])
	}
	s.cur.Store(&snapshot{
		policy:  policy.Compile(served),
		served:  text,
		etag:    `"` + hex.EncodeToString(sum[:12]) + `"`,
		modTime: modTime.UTC().Truncate(time.Second),
		file:    file,
		missing: missing,
		body:    body,
		version: version,
	})
}

// readRobots reads the start of the file that policy.ParseHead uses (the
// first policy.MaxSize+1 bytes; the rest of a larger file is never read),
// following symbolic links (Kubernetes ConfigMaps). Only a regular file is
// read: a FIFO or a device could block or never end. It returns
// errChanging, with what it read, when the file's size or time changed
// during the read.
func readRobots(path string) ([]byte, fileStamp, error) {
	// Refuse anything but a regular file before opening it: opening a FIFO
	// blocks until a writer comes.
	if st, err := os.Stat(path); err != nil {
		return nil, fileStamp{}, err
	} else if !st.Mode().IsRegular() {
		return nil, fileStamp{}, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fileStamp{}, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return nil, fileStamp{}, err
	}
	if !before.Mode().IsRegular() {
		return nil, fileStamp{}, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, policy.MaxSize+1))
	if err != nil {
		return nil, fileStamp{}, err
	}
	file := fileStamp{size: before.Size(), modTime: before.ModTime(), hash: sha256.Sum256(data), read: true}
	last := data
	if file.size > int64(len(data)) {
		// Only the last byte of the rest: whether the file ends a line.
		last = make([]byte, 1)
		if _, err := f.ReadAt(last, file.size-1); err != nil {
			last = nil
		}
	}
	file.endsLine = len(last) == 0 && file.size == 0 || len(last) > 0 && (last[len(last)-1] == '\n' || last[len(last)-1] == '\r')
	after, err := f.Stat()
	if err != nil {
		return nil, fileStamp{}, err
	}
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) || file.size <= policy.MaxSize && int64(len(data)) != file.size {
		return data, file, errChanging
	}
	return data, file, nil
}

// debounce is how long the watcher waits for a burst of events (an editor's
// save, a rename, a ConfigMap flip) to settle before reloading.
const debounce = 50 * time.Millisecond

// watch watches the file's directory, not the file: atomic saves by rename,
// editor swap files, delete-and-recreate and symlink flips all replace the
// file's inode, which a watch on the file itself would lose. A directory
// that is itself replaced (moved away and made again) is watched again, at
// once when its removal is seen, else by the poller.
func (s *source) watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.watcher = w
	err = s.watchDirLocked()
	s.mu.Unlock()
	dir := filepath.Dir(s.path)
	go func() {
		var timer *time.Timer
		var fire <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				if timer != nil {
					timer.Stop()
				}
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if ev.Name == dir && ev.Has(fsnotify.Remove|fsnotify.Rename) {
					// The directory itself went away; its watch is gone.
					s.rewatch(true)
				}
				// Any change in the directory may be the file's: a
				// ConfigMap flips a "..data" symlink, an editor renames a
				// swap file. The reload compares content, so extra events
				// cost a read. The timer runs from the first event of a
				// burst and is not pushed back by later ones.
				if fire != nil {
					continue
				}
				if timer == nil {
					timer = time.NewTimer(debounce)
				} else {
					timer.Reset(debounce)
				}
				fire = timer.C
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				s.logger.Warn("robots.txt watcher error", zap.String("file", s.path), zap.Error(err))
			case <-fire:
				fire = nil
				s.load()
			}
		}
	}()
	return err
}

// watchDirLocked (re)watches the file's directory and remembers which
// directory it is. The caller holds s.mu.
func (s *source) watchDirLocked() error {
	dir := filepath.Dir(s.path)
	st, err := os.Stat(dir)
	if err != nil {
		s.watchedDir = nil
		return err
	}
	_ = s.watcher.Remove(dir) // a stale watch on a replaced directory, if any
	if err := s.watcher.Add(dir); err != nil {
		s.watchedDir = nil
		return err
	}
	s.watchedDir = st
	return nil
}

// rewatch watches the directory again if it was replaced or its watch was
// lost (lost tells that the watcher saw it go), and then loads the file,
// whose events may have been missed. It reports whether it re-established
// the watch.
func (s *source) rewatch(lost bool) bool {
	s.mu.Lock()
	if s.watcher == nil || s.closed {
		s.mu.Unlock()
		return false
	}
	if lost {
		s.watchedDir = nil
	}
	if s.watchedDir != nil {
		if st, err := os.Stat(filepath.Dir(s.path)); err != nil || os.SameFile(st, s.watchedDir) {
			s.mu.Unlock()
			return false // the same directory, or none to watch yet
		}
	}
	err := s.watchDirLocked()
	s.mu.Unlock()
	if err != nil {
		return false
	}
	s.logger.Info("watching the robots.txt folder again (it was replaced)", zap.String("dir", filepath.Dir(s.path)))
	s.load()
	return true
}

// poll re-checks the file's size and time every interval, a safety net for
// file systems where change events do not arrive; it also re-establishes a
// lost directory watch and reminds of a missing file.
func (s *source) poll(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if s.rewatch(false) {
				continue
			}
			st, err := os.Stat(s.path)
			stamp := statStamp{}
			if err == nil {
				stamp = statStamp{size: st.Size(), modTime: st.ModTime(), ok: true}
			}
			s.mu.Lock()
			changed := stamp != s.lastStat
			s.lastStat = stamp
			s.mu.Unlock()
			if changed {
				s.load()
			}
			s.remindMissing(now)
		}
	}
}

// close stops the watcher and any pending reload; it is safe to call more
// than once.
func (s *source) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && !s.missingSince.IsZero() {
		s.metrics.RobotsMissing(-1)
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
