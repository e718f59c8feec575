package caddymodule

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/robotsguard/robotsguard/policy"
)

func newTestSource(t *testing.T, path string) (*source, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	return newSource(path, func(*policy.Robots) {}, zap.New(core), nil), logs
}

func allowedBy(s *source, target string) bool {
	return s.snapshot().policy.Match([]string{"examplebot"}, target).Allowed
}

// TestSourceMissingAtStart: a missing file means no rules (RFC 9309:
// unavailable), with a warning, until the file appears.
func TestSourceMissingAtStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "robots.txt")
	s, logs := newTestSource(t, path)
	s.load(true)
	if !allowedBy(s, "/private") {
		t.Error("missing robots.txt should allow everything")
	}
	if logs.FilterMessageSnippet("robots.txt not found").Len() != 1 {
		t.Errorf("no warning for a missing file: %v", logs.All())
	}
	if err := os.WriteFile(path, []byte("User-agent: *\nDisallow: /private\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.load(false)
	if allowedBy(s, "/private") {
		t.Error("the file that appeared was not loaded")
	}
}

// TestSourceInvalid: an invalid file at start gives no rules and an error
// with the line; an invalid edit keeps the last good rules.
func TestSourceInvalid(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(path, []byte("\n\n<html><body>oops</body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, logs := newTestSource(t, path)
	s.load(true)
	if !allowedBy(s, "/x") {
		t.Error("an invalid file at start should give no rules")
	}
	entries := logs.FilterMessageSnippet("robots.txt is invalid").All()
	if len(entries) != 1 || !strings.Contains(entries[0].ContextMap()["error"].(string), "robots.txt line 3: content looks like an HTML") {
		t.Errorf("error log: %+v", entries)
	}
	if err := os.WriteFile(path, []byte("User-agent: *\nDisallow: /x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.load(false)
	if allowedBy(s, "/x") {
		t.Fatal("good file not loaded")
	}
	if err := os.WriteFile(path, []byte("\x00\x01\x02binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.load(false)
	if allowedBy(s, "/x") {
		t.Error("a binary edit replaced the good rules")
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
		if err := os.WriteFile(filepath.Join(vdir, "robots.txt"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
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
	s.load(true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.watch(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if allowedBy(s, "/one") {
		t.Fatal("initial ConfigMap content not loaded")
	}
	// The flip: a new version directory, a new symlink renamed over ..data.
	write("..v2", "User-agent: *\nDisallow: /two\n")
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink("..v2", tmp); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for allowedBy(s, "/two") {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the ConfigMap flip was not picked up")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !allowedBy(s, "/one") {
		t.Error("old rules still apply after the flip")
	}
	t.Logf("ConfigMap flip took effect in %v", time.Since(start))
}

// TestSourceEmptiedFile: a file that had rules and is read empty (a write in
// place caught between truncate and write) keeps its rules; only a file that
// stays empty for emptyGrace is believed, by a reload the source schedules
// itself. A write in between cancels it.
func TestSourceEmptiedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "robots.txt")
	rules := []byte("User-agent: *\nDisallow: /x\n")
	if err := os.WriteFile(path, rules, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := newTestSource(t, path)
	defer s.close()
	s.load(true)

	// Emptied, then written again before the grace ends: never unprotected.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.load(false)
	if allowedBy(s, "/x") {
		t.Fatal("an empty read replaced the rules at once")
	}
	if err := os.WriteFile(path, rules, 0o644); err != nil {
		t.Fatal(err)
	}
	s.load(false)
	time.Sleep(emptyGrace + 200*time.Millisecond)
	if allowedBy(s, "/x") {
		t.Fatal("the scheduled reload installed an empty file that was rewritten")
	}

	// Emptied for good: believed after the grace, without any event.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.load(false)
	for !allowedBy(s, "/x") {
		if time.Since(start) > emptyGrace+2*time.Second {
			t.Fatal("a file left empty was never believed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if waited := time.Since(start); waited < emptyGrace {
		t.Errorf("empty file believed after %v, before the %v grace", waited, emptyGrace)
	}
}
