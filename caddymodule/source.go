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

	"github.com/robotsguard/robotsguard/policy"
)

// maxRobotsFile bounds how much of a robots.txt file is read from disk;
// the parser itself reads the first 500 KiB.
const maxRobotsFile = 16 << 20

// snapshot is one immutable version of the site's rules: the compiled
// policy the engine enforces and the robots.txt the handler serves. Requests
// load it with one atomic read and never wait on a lock.
type snapshot struct {
	policy  *policy.Policy
	served  []byte
	etag    string
	modTime time.Time
	hash    [32]byte // of the source file, to skip reloads that change nothing
	missing bool
	// file is the site's file as read, and version the first 12 hex
	// digits of its hash ("" without a file): the logs and the review page
	// name the robots.txt each decision was judged against.
	file    []byte
	version string
}

// source loads the site's robots.txt, keeps the current snapshot, and
// reloads it when the file changes.
type source struct {
	path      string
	additions func(*policy.Robots)
	logger    *zap.Logger
	metrics   *metrics

	cur     atomic.Pointer[snapshot]
	mu      sync.Mutex // serialises reloads
	watcher *fsnotify.Watcher
	// lastStat is what the poller saw last.
	lastStat fileStamp
	// emptySince and emptyMod record when, and at which file time, the
	// file was first read empty while rules were in force; see emptyGrace.
	emptySince time.Time
	emptyMod   time.Time
	// retry reloads later when a read could not be trusted yet.
	retry  *time.Timer
	closed bool
}

// emptyGrace is how long a robots.txt that had content must stay empty, at
// the same file time, before the empty file is believed and its "no rules"
// installed. A file written in place is truncated first and written after,
// and on a loaded machine the writer can stall between the two for tens of
// milliseconds (CI caught it at 80 ms); believing that moment would let every
// bot in. An operator who really empties the file waits one second.
const emptyGrace = time.Second

// errUnsettled reports that the file kept changing while it was read.
var errUnsettled = errors.New("robots.txt kept changing while it was read")

type fileStamp struct {
	size    int64
	modTime time.Time
	ok      bool
}

func newSource(path string, additions func(*policy.Robots), logger *zap.Logger, m *metrics) *source {
	return &source{path: path, additions: additions, logger: logger, metrics: m}
}

func (s *source) snapshot() *snapshot { return s.cur.Load() }

// load reads, parses and compiles the file and swaps the new snapshot in.
// An unreadable or invalid file keeps the last good snapshot. At start (no
// snapshot yet) a missing file means no rules, as RFC 9309 treats an
// unavailable robots.txt.
func (s *source) load(initial bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	prev := s.cur.Load()
	if s.path == "" {
		s.install(policy.Parse(nil), nil, [32]byte{}, time.Now(), true)
		return
	}
	data, modTime, err := readRobots(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && prev == nil:
		s.logger.Warn("robots.txt not found: no rules until it appears (RFC 9309: unavailable means allow all)", zap.String("file", s.path))
		s.install(policy.Parse(nil), nil, [32]byte{}, time.Now(), true)
		s.metrics.reload("missing")
		return
	case errors.Is(err, errUnsettled):
		s.logger.Debug("robots.txt is being written; reading it again shortly", zap.String("file", s.path))
		s.retryLater(debounce)
		return
	case err != nil:
		s.logger.Error("reading robots.txt failed; keeping the last good rules", zap.String("file", s.path), zap.Error(err))
		s.metrics.reload("error")
		return
	}
	if len(data) == 0 && prev != nil && !prev.missing && prev.hash != emptyHash {
		if s.emptySince.IsZero() || !s.emptyMod.Equal(modTime) {
			s.emptySince, s.emptyMod = time.Now(), modTime
		}
		if wait := emptyGrace - time.Since(s.emptySince); wait > 0 {
			s.logger.Debug("robots.txt read empty; keeping the rules unless it stays empty", zap.String("file", s.path), zap.Duration("grace", emptyGrace))
			s.retryLater(wait)
			return
		}
	}
	s.emptySince, s.emptyMod = time.Time{}, time.Time{}
	hash := sha256.Sum256(data)
	if prev != nil && !prev.missing && prev.hash == hash {
		return // touched but unchanged
	}
	r := policy.Parse(data)
	if err := r.Err(); err != nil {
		if prev == nil {
			s.install(policy.Parse(nil), nil, [32]byte{}, time.Now(), true)
		}
		s.logger.Error("robots.txt is invalid; keeping the last good rules", zap.String("file", s.path), zap.Error(err))
		s.metrics.reload("invalid")
		return
	}
	diags := r.Lint()
	// The most serious findings first: only the first ten are logged.
	sort.SliceStable(diags, func(i, j int) bool { return diags[i].Severity > diags[j].Severity })
	for i, d := range diags {
		if i == 10 {
			s.logger.Warn("more robots.txt lint findings", zap.String("file", s.path), zap.Int("count", len(diags)-10))
			break
		}
		if d.Severity >= policy.Warning {
			s.logger.Warn("robots.txt lint", zap.String("file", s.path), zap.Int("line", d.Line), zap.String("message", d.Message))
		}
	}
	s.install(r, data, hash, modTime, false)
	s.metrics.reload("ok")
	if !initial {
		s.logger.Info("robots.txt reloaded", zap.String("file", s.path), zap.Int("groups", len(r.Groups)), zap.Int("lint_findings", len(diags)))
	}
}

// emptyHash is the hash of an empty file.
var emptyHash = sha256.Sum256(nil)

// retryLater schedules one more load after d, replacing any pending one.
// The caller holds s.mu.
func (s *source) retryLater(d time.Duration) {
	if s.retry == nil {
		s.retry = time.AfterFunc(d, func() { s.load(false) })
		return
	}
	s.retry.Reset(d)
}

// install builds and publishes the snapshot for r. The caller holds s.mu.
func (s *source) install(r *policy.Robots, file []byte, hash [32]byte, modTime time.Time, missing bool) {
	served := r.Clone()
	s.additions(served)
	text := served.Generate()
	sum := sha256.Sum256(text)
	version := ""
	if !missing {
		version = hex.EncodeToString(hash[:6])
	}
	s.cur.Store(&snapshot{
		policy:  policy.Compile(served),
		served:  text,
		etag:    `"` + hex.EncodeToString(sum[:12]) + `"`,
		modTime: modTime.UTC().Truncate(time.Second),
		hash:    hash,
		missing: missing,
		file:    file,
		version: version,
	})
}

// readRobots reads the file, following symbolic links (Kubernetes
// ConfigMaps), up to maxRobotsFile bytes. A non-empty read is returned only
// when the file's size and time did not change around it, so a write racing
// the read is never taken for the file; after a few tries it gives up with
// errUnsettled. An empty read is returned at once: load decides whether to
// believe it (see emptyGrace).
func readRobots(path string) ([]byte, time.Time, error) {
	const tries, pause = 5, 20 * time.Millisecond
	for i := 1; ; i++ {
		data, modTime, err := readRobotsOnce(path)
		if err != nil || len(data) == 0 {
			return data, modTime, err
		}
		st, err := os.Stat(path)
		if err == nil && st.Size() == int64(len(data)) && st.ModTime().Equal(modTime) {
			return data, modTime, nil
		}
		if i == tries {
			return nil, time.Time{}, errUnsettled
		}
		time.Sleep(pause)
	}
}

func readRobotsOnce(path string) ([]byte, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	if st.IsDir() {
		return nil, time.Time{}, fmt.Errorf("%s is a directory", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRobotsFile+1))
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(data) > maxRobotsFile {
		return nil, time.Time{}, fmt.Errorf("%s is larger than %d bytes", path, maxRobotsFile)
	}
	// The time after the read: a write that raced the read shows here.
	if st, err = f.Stat(); err != nil {
		return nil, time.Time{}, err
	}
	return data, st.ModTime(), nil
}

// debounce is how long the watcher waits for a burst of events (an editor's
// save, a rename, a ConfigMap flip) to settle before reloading.
const debounce = 50 * time.Millisecond

// watch watches the file's directory, not the file: atomic saves by rename,
// editor swap files, delete-and-recreate and symlink flips all replace the
// file's inode, which a watch on the file itself would lose.
func (s *source) watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if err := w.Add(filepath.Dir(s.path)); err != nil {
		w.Close()
		return err
	}
	s.mu.Lock()
	s.watcher = w
	s.mu.Unlock()
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
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				// Any change in the directory may be the file's: a
				// ConfigMap flips a "..data" symlink, an editor renames a
				// swap file. The reload compares content, so extra events
				// cost a read. The timer runs from the first event of a
				// burst and is not pushed back by later ones, so a file
				// rewritten without pause is still reloaded every debounce.
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
				s.logger.Warn("robots.txt watcher error", zap.Error(err))
			case <-fire:
				fire = nil
				s.load(false)
			}
		}
	}()
	return nil
}

// poll re-checks the file's size and time every interval: a safety net for
// file systems where change events do not arrive.
func (s *source) poll(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			st, err := os.Stat(s.path)
			stamp := fileStamp{}
			if err == nil {
				stamp = fileStamp{size: st.Size(), modTime: st.ModTime(), ok: true}
			}
			if stamp != s.lastStat {
				s.lastStat = stamp
				s.load(false)
			}
		}
	}
}

// close stops the watcher and any pending reload; it is safe to call more
// than once.
func (s *source) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.retry != nil {
		s.retry.Stop()
	}
	if s.watcher != nil {
		s.watcher.Close()
		s.watcher = nil
	}
}
