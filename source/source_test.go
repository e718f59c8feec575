package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/robotsguard/robotsguard/policy"
)

func newTestSource(t *testing.T, path string) (*Source, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	c := &testCounters{}
	s := New(path, Options{Additions: func(*policy.Robots) policy.Added { return policy.Added{} }, Logger: zap.New(core), Counters: c.counters()})
	testCountersOf.Store(s, c)
	t.Cleanup(s.Close)
	return s, logs
}

// testCounters counts what a Source records, as the handler's metrics do:
// "reload:<result>", "fetch:<result>", "missing" and "unreachable".
type testCounters struct {
	mu sync.Mutex
	n  map[string]float64
}

var testCountersOf sync.Map // *Source -> *testCounters

func (c *testCounters) add(key string, delta float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]float64{}
	}
	c.n[key] += delta
}

func (c *testCounters) counters() Counters {
	return Counters{
		Reload:      func(result string) { c.add("reload:"+result, 1) },
		Fetch:       func(result string) { c.add("fetch:"+result, 1) },
		Missing:     func(delta int) { c.add("missing", float64(delta)) },
		Unreachable: func(delta int) { c.add("unreachable", float64(delta)) },
	}
}

// counted returns what s counted under key.
func counted(s *Source, key string) float64 {
	v, _ := testCountersOf.Load(s)
	c := v.(*testCounters)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

func allowedBy(s *Source, target string) bool {
	return s.Snapshot().Policy.Match([]string{"examplebot"}, target).Allowed
}

// eventually waits for cond, polling, within a generous limit; it returns
// how long it took.
func eventually(t *testing.T, what string, limit time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// guardWhile checks, every millisecond until stop is closed, that target
// stays disallowed; it returns how many checks failed.
func guardWhile(s *Source, target string, stop <-chan struct{}) <-chan int {
	out := make(chan int, 1)
	go func() {
		fails := 0
		for {
			select {
			case <-stop:
				out <- fails
				return
			default:
			}
			if allowedBy(s, target) {
				fails++
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return out
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSourceMissingAtStart: a missing file means no rules (RFC 9309:
// unavailable), with a warning that is repeated while it lasts and a gauge,
// until the file appears; the first file is installed at once.
func TestSourceMissingAtStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "robots.txt")
	s, logs := newTestSource(t, path)
	s.Load()
	if !allowedBy(s, "/private") {
		t.Error("missing robots.txt should allow everything")
	}
	if logs.FilterMessageSnippet("robots.txt not found").Len() != 1 {
		t.Errorf("no warning for a missing file: %v", logs.All())
	}
	if got := counted(s, "missing"); got != 1 {
		t.Errorf("robots_missing = %v, want 1", got)
	}
	if got := counted(s, "reload:missing"); got != 1 {
		t.Errorf(`policy_reloads_total{result="missing"} = %v, want 1`, got)
	}
	s.remindMissing(time.Now().Add(10 * time.Second))
	s.remindMissing(time.Now().Add(missingRelog + time.Second))
	s.remindMissing(time.Now().Add(missingRelog + 2*time.Second))
	if n := logs.FilterMessageSnippet("robots.txt is still missing").Len(); n != 1 {
		t.Errorf("reminders after a minute: %d, want 1", n)
	}
	writeFile(t, path, "User-agent: *\nDisallow: /private\n")
	s.Load()
	if allowedBy(s, "/private") {
		t.Error("the file that appeared was not installed at once")
	}
	if got := counted(s, "missing"); got != 0 {
		t.Errorf("robots_missing = %v after the file appeared, want 0", got)
	}
	if logs.FilterMessageSnippet("robots.txt found again").Len() != 1 {
		t.Error("no log when the file appeared")
	}
}

// TestSourceRemovedLater: a file removed after it was loaded keeps the
// last good rules, with a warning and the gauge.
func TestSourceRemovedLater(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "robots.txt")
	writeFile(t, path, "User-agent: *\nDisallow: /x\n")
	s, logs := newTestSource(t, path)
	s.Load()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	s.Load()
	if allowedBy(s, "/x") {
		t.Error("a removed robots.txt dropped the rules")
	}
	if logs.FilterMessageSnippet("keeping the last good rules until it appears").Len() != 1 || counted(s, "missing") != 1 {
		t.Errorf("removal not reported: %v", logs.All())
	}
}

// TestSourceInvalid: an invalid file at start gives no rules and an error
// with the line; an invalid edit keeps the last good rules.
func TestSourceInvalid(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "robots.txt")
	writeFile(t, path, "\n\n<html><body>oops</body></html>")
	s, logs := newTestSource(t, path)
	s.settle = 20 * time.Millisecond
	s.Load()
	if !allowedBy(s, "/x") {
		t.Error("an invalid file at start should give no rules")
	}
	entries := logs.FilterMessageSnippet("robots.txt is invalid").All()
	if len(entries) != 1 || !strings.Contains(entries[0].ContextMap()["error"].(string), "robots.txt line 3: content looks like an HTML") {
		t.Errorf("error log: %+v", entries)
	}
	writeFile(t, path, "User-agent: *\nDisallow: /x\n")
	s.Load()
	if allowedBy(s, "/x") {
		t.Fatal("good file not installed at once while no rules were in force")
	}
	writeFile(t, path, "\x00\x01\x02binary\n")
	s.Load()
	eventually(t, "the binary edit reported", 5*time.Second, func() bool {
		return logs.FilterMessageSnippet("robots.txt is invalid").Len() == 2
	})
	if allowedBy(s, "/x") {
		t.Error("a binary edit replaced the good rules")
	}
}

// TestSourceNotRegular: a FIFO or a device in place of robots.txt is
// refused without blocking or reading without end.
func TestSourceNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	dev := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", dev); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, dev, dir} {
		done := make(chan error, 1)
		go func() { _, _, err := readRobots(path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
				t.Errorf("readRobots(%s) = %v, want a refusal", path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("readRobots(%s) blocked", path)
		}
	}
}

// TestSourceUnreadableAtStart: a robots path that cannot be read at start
// (here a folder) gives no rules and an error, not a handler without a
// policy.
func TestSourceUnreadableAtStart(t *testing.T) {
	s, logs := newTestSource(t, t.TempDir())
	s.Load()
	if s.Snapshot() == nil || !allowedBy(s, "/x") {
		t.Fatal("no policy installed for an unreadable file")
	}
	if logs.FilterMessageSnippet("reading robots.txt failed").Len() != 1 {
		t.Errorf("no error logged: %v", logs.All())
	}
}

// TestSourceConfigMapFlip: a Kubernetes ConfigMap mounts robots.txt as a
// symlink through "..data", which is flipped atomically to a new directory;
// the directory watch sees the flip.
func TestSourceConfigMapFlip(t *testing.T) {
	dir := t.TempDir()
	write := func(version, body string) {
		vdir := filepath.Join(dir, version)
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(vdir, "robots.txt"), body)
	}
	write("..v1", "User-agent: *\nDisallow: /one\n")
	if err := os.Symlink("..v1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "robots.txt")
	if err := os.Symlink("..data/robots.txt", path); err != nil {
		t.Fatal(err)
	}
	s, _ := newTestSource(t, path)
	s.Load()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	if allowedBy(s, "/one") {
		t.Fatal("initial ConfigMap content not loaded")
	}
	// The flip: a new version directory, a new symlink renamed over ..data.
	write("..v2", "User-agent: *\nDisallow: /two\n")
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink("..v2", tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	took := eventually(t, "the ConfigMap flip picked up", 10*time.Second, func() bool { return !allowedBy(s, "/two") })
	if !allowedBy(s, "/one") {
		t.Error("old rules still apply after the flip")
	}
	t.Logf("ConfigMap flip took effect in %v (settle %v)", took, s.settle)
}

// privateRobots is a robots.txt whose rule for /private/ comes last, so
// that any cut of it lacks that rule.
var privateRobots = "User-agent: *\n" + strings.Repeat("Disallow: /filler/\n", 40) + "Disallow: /private/\n"

// TestSourcePausedWriter: a writer that saves in place in two pieces, 600 ms
// apart, never has its first piece installed: the rules stay whole all the
// time, and the whole new file is installed once it has settled, with a log
// line that says the change waits.
func TestSourcePausedWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "robots.txt")
	writeFile(t, path, "User-agent: *\nDisallow: /private/\n")
	s, logs := newTestSource(t, path) // the default settle time
	s.Load()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	fails := guardWhile(s, "/private/x", stop)

	at := strings.Index(privateRobots, "Disallow: /private/")
	for i, cut := range []int{at + 5, at} { // in the middle of a line, then at a line end
		next := privateRobots + fmt.Sprintf("Disallow: /new%d/\n", i)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(next[:cut]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(600 * time.Millisecond) // the writer pauses
		if _, err := f.WriteString(next[cut:]); err != nil {
			t.Fatal(err)
		}
		f.Close()
		took := eventually(t, "the whole file installed", 10*time.Second, func() bool { return !allowedBy(s, fmt.Sprintf("/new%d/x", i)) })
		t.Logf("cut at byte %d, 600 ms pause: the whole file installed %v after the last write", cut, took)
	}
	close(stop)
	if n := <-fails; n > 0 {
		t.Errorf("/private/ was allowed in %d checks while the writer paused", n)
	}
	if logs.FilterMessageSnippet("once it has stayed unchanged").Len() == 0 {
		t.Error("no log line says that the change waits to settle")
	}
}

// TestSourceSettleIsOneMechanism: an emptied file is an unsettled change
// like any other: emptied and rewritten within the settle time, it is never
// installed; left empty, it is, after emptySettle settle times (an empty file
// is what a stalled in-place save shows), by a load the source schedules
// itself.
func TestSourceSettleIsOneMechanism(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "robots.txt")
	rules := "User-agent: *\nDisallow: /x\n"
	writeFile(t, path, rules)
	s, _ := newTestSource(t, path)
	s.settle = 300 * time.Millisecond
	s.Load()

	writeFile(t, path, "")
	s.Load()
	if allowedBy(s, "/x") {
		t.Fatal("an empty read replaced the rules at once")
	}
	writeFile(t, path, rules)
	s.Load()
	time.Sleep(s.settle + 300*time.Millisecond)
	if allowedBy(s, "/x") {
		t.Fatal("the scheduled load installed an empty file that was rewritten")
	}

	writeFile(t, path, "")
	start := time.Now()
	s.Load()
	eventually(t, "a file left empty believed", emptySettle*s.settle+5*time.Second, func() bool { return allowedBy(s, "/x") })
	if waited := time.Since(start); waited < emptySettle*s.settle {
		t.Errorf("empty file believed after %v, before %v", waited, emptySettle*s.settle)
	}
}

// TestSourceStorm: a file rewritten every 5 ms is never installed while it
// changes, and every snapshot is one whole file; the last one is installed
// once the writes stop.
func TestSourceStorm(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "robots.txt")
	writeFile(t, path, "User-agent: *\nDisallow: /private/\n")
	s, logs := newTestSource(t, path)
	s.settle = 200 * time.Millisecond
	s.Load()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	fails := guardWhile(s, "/private/x", stop)
	var writes atomic.Int64
	for start := time.Now(); time.Since(start) < 2*time.Second; {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		body := privateRobots + fmt.Sprintf("Disallow: /storm%d/\n", writes.Load())
		f.WriteString(body[:len(body)/2])
		time.Sleep(time.Millisecond)
		f.WriteString(body[len(body)/2:])
		f.Close()
		writes.Add(1)
		time.Sleep(5 * time.Millisecond)
	}
	if !allowedBy(s, "/storm0/") {
		t.Error("a file that kept changing was installed")
	}
	last := fmt.Sprintf("/storm%d/x", writes.Load()-1)
	took := eventually(t, "the last file installed after the storm", 10*time.Second, func() bool { return !allowedBy(s, last) })
	close(stop)
	if n := <-fails; n > 0 {
		t.Errorf("/private/ was allowed in %d checks during the storm", n)
	}
	t.Logf("%d writes; the last installed %v after the storm", writes.Load(), took)
	if logs.FilterMessageSnippet("robots.txt changed").Len() != 1 {
		t.Errorf("the storm should be logged once when it starts, got %d", logs.FilterMessageSnippet("robots.txt changed").Len())
	}
}

// TestSourceCutShort: a save that fails half way (as on a full disk) leaves
// a file cut in the middle of a line, which stays that way: it is never
// installed, the error says why, and completing the file installs it.
func TestSourceCutShort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "robots.txt")
	writeFile(t, path, privateRobots)
	s, logs := newTestSource(t, path)
	s.settle = 100 * time.Millisecond
	s.Load()
	next := privateRobots + "Disallow: /new/\n"
	writeFile(t, path, next[:strings.Index(next, "Disallow: /private/")+12]) // "Disallow: /p"
	s.Load()
	eventually(t, "the cut file reported", 5*time.Second, func() bool {
		return logs.FilterMessageSnippet("it looks cut short").Len() == 1
	})
	time.Sleep(3 * s.settle)
	if allowedBy(s, "/private/x") || logs.FilterMessageSnippet("it looks cut short").Len() != 1 {
		t.Fatal("a file cut short replaced the rules, or was reported more than once")
	}
	if got := counted(s, "reload:incomplete"); got != 1 {
		t.Errorf(`policy_reloads_total{result="incomplete"} = %v, want 1`, got)
	}
	writeFile(t, path, next)
	s.Load()
	eventually(t, "the completed file installed", 5*time.Second, func() bool { return !allowedBy(s, "/new/x") })
	if allowedBy(s, "/private/x") {
		t.Error("the completed file lost /private/")
	}
}

// TestSourceFullDisk: a real full disk: a small tmpfs where an in-place
// save fails with ENOSPC half way. The rules in force stay. Needs root for
// the mount; skipped otherwise.
func TestSourceFullDisk(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8k"); err != nil {
		t.Skipf("mounting a small tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	path := filepath.Join(dir, "robots.txt")
	writeFile(t, path, privateRobots)
	s, logs := newTestSource(t, path)
	s.settle = 100 * time.Millisecond
	s.Load()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	// 12 KiB of rules, /private/ last, on an 8 KiB disk.
	big := "User-agent: *\n"
	for i := 0; len(big) < 12<<10; i++ {
		big += fmt.Sprintf("Disallow: /generated/%d\n", i)
	}
	big += "Disallow: /private/\n"
	err := os.WriteFile(path, []byte(big), 0o644)
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("writing 12 KiB to an 8 KiB disk: %v", err)
	}
	st, _ := os.Stat(path)
	t.Logf("the save failed: %v; %d bytes on disk", err, st.Size())
	time.Sleep(10 * s.settle)
	if allowedBy(s, "/private/x") {
		t.Fatal("a save that failed on a full disk replaced the rules")
	}
	if logs.FilterMessageSnippet("it looks cut short").Len() != 1 {
		t.Errorf("the cut file was not reported: %v", logs.All())
	}
}

// TestSourceLarge: only the first policy.MaxSize bytes of a large file are
// read, into bounded memory; their rules apply, and the lint warning counts
// the bytes ignored.
func TestSourceLarge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "robots.txt")
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /early/\n")
	for i := 0; b.Len() < 20<<20; i++ {
		fmt.Fprintf(&b, "Disallow: /generated/%d\n", i)
	}
	b.WriteString("Disallow: /late/\n")
	writeFile(t, path, b.String())
	s, logs := newTestSource(t, path)
	s.Load()
	if allowedBy(s, "/early/x") || !allowedBy(s, "/late/x") {
		t.Error("a 20 MiB file: the rules of its first 500 KiB should apply, and only those")
	}
	lint := logs.FilterMessageSnippet("robots.txt is larger than 500 KiB").All() // loss.go
	want := fmt.Sprintf("file is larger than %d bytes: the last", policy.MaxSize)
	found := false
	for _, e := range lint {
		msg := e.ContextMap()["message"].(string)
		if strings.Contains(msg, want) {
			found = true
			var n int
			fmt.Sscanf(msg[len(want):], " %d bytes", &n)
			if n < b.Len()-policy.MaxSize || n > b.Len()-policy.MaxSize+100 {
				t.Errorf("lint counts %d bytes ignored of %d", n, b.Len())
			}
		}
	}
	if !found {
		t.Errorf("no lint warning for a 20 MiB file: %v", lint)
	}

	// A 1 GiB sparse file is read in bounded memory.
	huge := filepath.Join(dir, "huge.txt")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("User-agent: *\nDisallow: /\n")
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	data, file, err := readRobots(huge)
	runtime.ReadMemStats(&after)
	if err != nil || len(data) != policy.MaxSize+1 || file.size != 1<<30 {
		t.Fatalf("readRobots(1 GiB) = %d bytes, size %d, %v", len(data), file.size, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading a 1 GiB file allocated %d bytes", alloc)
	} else {
		t.Logf("reading a 1 GiB file allocated %d bytes", alloc)
	}
}

// TestSourceRewatch: when the robots.txt folder is replaced (mv dir
// dir.old; mkdir dir), the new folder is watched: its changes are seen
// without the poller.
func TestSourceRewatch(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "www")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "robots.txt")
	writeFile(t, path, "User-agent: *\nDisallow: /one/\n")
	s, logs := newTestSource(t, path)
	s.settle = 50 * time.Millisecond
	s.Load()
	watchCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Watch(watchCtx); err != nil {
		t.Fatal(err)
	}
	pollCtx, stopPoll := context.WithCancel(context.Background())
	go s.Poll(pollCtx, 100*time.Millisecond)

	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the watcher sees the folder go
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "User-agent: *\nDisallow: /two/\n")
	eventually(t, "the new folder's file installed", 10*time.Second, func() bool { return !allowedBy(s, "/two/x") })
	eventually(t, "the new folder watched", 10*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		st, err := os.Stat(dir)
		return err == nil && s.watchedDir != nil && os.SameFile(st, s.watchedDir)
	})
	if logs.FilterMessageSnippet("watching the robots.txt folder again").Len() == 0 {
		t.Error("re-watching was not logged")
	}
	// Without the poller, a change in the new folder still arrives.
	stopPoll()
	time.Sleep(50 * time.Millisecond)
	writeFile(t, path, "User-agent: *\nDisallow: /three/\n")
	took := eventually(t, "a change in the new folder seen by the watch", 10*time.Second, func() bool { return !allowedBy(s, "/three/x") })
	t.Logf("change in the replaced folder took effect in %v", took)
}
