package source

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/robotsguard/robotsguard/policy"
)

// withTrap is a source of the file at path whose additions are a trap
// group (or none).
func withTrap(t *testing.T, path string, trap bool) (*Source, *observer.ObservedLogs) {
	core, logs := observer.New(zap.InfoLevel)
	s := New(path, Options{Logger: zap.New(core), Additions: func(owner *policy.Robots) policy.Added {
		if !trap {
			return policy.Added{}
		}
		return policy.Added{Groups: []policy.AddedGroup{{Note: "trap", Agents: append([]string{"*"}, owner.Agents()...), Rules: []policy.Rule{{Pattern: "/trap-here/"}}}}}
	}})
	t.Cleanup(s.Close)
	s.Load()
	return s, logs
}

// TestNoStale304 (issue 29, item 3): a reload that adds a trap to the same
// file changes the served bytes, and so their ETag and Last-Modified: a
// crawler that asks If-Modified-Since with the old Last-Modified gets the
// new file, not 304. The source file's time is not the served file's.
func TestNoStale304(t *testing.T) {
	path := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(path, []byte("User-agent: *\nDisallow: /admin/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-24 * time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	before, _ := withTrap(t, path, false)
	after, _ := withTrap(t, path, true) // the next configuration, same file
	b, a := before.Snapshot(), after.Snapshot()
	if b.ETag == a.ETag || !a.ModTime.After(b.ModTime) {
		t.Fatalf("served bytes changed, validators did not: ETag %s -> %s, Last-Modified %v -> %v", b.ETag, a.ETag, b.ModTime, a.ModTime)
	}
	if !bytes.Contains(a.Served, []byte("Disallow: /trap-here/")) {
		t.Fatalf("served:\n%s", a.Served)
	}
	serve := func(s *Snapshot, ims string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/robots.txt", nil)
		r.Header.Set("If-Modified-Since", ims)
		http.ServeContent(rec, r, "robots.txt", s.ModTime, bytes.NewReader(s.Served))
		return rec
	}
	ims := b.ModTime.UTC().Format(http.TimeFormat)
	if rec := serve(b, ims); rec.Code != http.StatusNotModified {
		t.Errorf("unchanged file: %d, want 304", rec.Code)
	}
	if rec := serve(a, ims); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "/trap-here/") {
		t.Errorf("after the trap was added: %d, want 200 with the trap", rec.Code)
	}
	// The same served bytes again (a reload that changes nothing): the
	// same Last-Modified, so crawlers keep their copy.
	again, _ := withTrap(t, path, true)
	if again.Snapshot().ModTime != a.ModTime || again.Snapshot().ETag != a.ETag {
		t.Errorf("same bytes, new validators: %v %s", again.Snapshot().ModTime, again.Snapshot().ETag)
	}
}

// TestContradictionLogged (issue 29, item 2): the site's Allow under the
// trap is logged at load with both lines.
func TestContradictionLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(path, []byte("User-agent: *\nAllow: /trap-here/open/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, logs := withTrap(t, path, true)
	es := logs.FilterMessageSnippet("allows what robots_guard's additions disallow").All()
	if len(es) != 1 {
		t.Fatalf("%d contradiction messages, want 1", len(es))
	}
	f := es[0].ContextMap()
	if f["line"] != int64(2) || f["rule"] != "Allow: /trap-here/open/" || f["added_rule"] != "Disallow: /trap-here/" || f["added_line"].(int64) <= 2 {
		t.Errorf("fields %v", f)
	}
	if !s.Snapshot().Policy.Match(nil, "/trap-here/open/x").Allowed {
		t.Error("the served file's reading refuses what it allows")
	}
}
