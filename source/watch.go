package source

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
)

// statStamp is the size and time the poller compares.
type statStamp struct {
	size    int64
	modTime time.Time
	ok      bool
}

// debounce is how long the watcher waits for a burst of events (an editor's
// save, a rename, a ConfigMap flip) to settle before reloading.
const debounce = 50 * time.Millisecond

// Watch watches the file's directory, not the file: atomic saves by rename,
// editor swap files, delete-and-recreate and symlink flips all replace the
// file's inode, which a watch on the file itself would lose. A directory
// that is itself replaced (moved away and made again) is watched again, at
// once when its removal is seen, else by the poller.
func (s *Source) Watch(ctx context.Context) error {
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
				s.Load()
			}
		}
	}()
	return err
}

// watchDirLocked (re)watches the file's directory and remembers which
// directory it is. The caller holds s.mu.
func (s *Source) watchDirLocked() error {
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
func (s *Source) rewatch(lost bool) bool {
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
	s.Load()
	return true
}

// OpenFile returns the Source of the robots.txt file at path, loaded
// (Load), watched (Watch; where watching fails, a warning, and polling
// picks the changes up while the watch is tried again) and polled every
// two seconds until ctx is done. A file whose groups contradict the
// configured additions is an error (Contradicted).
func OpenFile(ctx context.Context, path string, o Options) (*Source, error) {
	s := New(path, o)
	s.Load()
	if cs := s.Snapshot().Contradictions; len(cs) > 0 {
		return nil, Contradicted(path, cs)
	}
	if err := s.Watch(ctx); err != nil {
		s.logger.Warn("watching the robots.txt folder failed; changes are picked up by polling, and the watch is tried again", zap.String("file", path), zap.Error(err))
	}
	go s.Poll(ctx, 2*time.Second)
	return s, nil
}

// Poll re-checks the file's size and time every interval, a safety net for
// file systems where change events do not arrive; it also re-establishes a
// lost directory watch and reminds of a missing file.
func (s *Source) Poll(ctx context.Context, interval time.Duration) {
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
				s.Load()
			}
			s.remindMissing(now)
		}
	}
}
