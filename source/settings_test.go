package source

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/internal/field"
)

// TestSettingsCheck: a file needs no fetcher and refuses the URL-only
// options; a URL gets a fetcher and the default refresh; each bad value
// is a *field.Error with its configuration path.
func TestSettingsCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(file, []byte("User-agent: *\nDisallow: /admin/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, refresh, err := (Settings{Robots: file}).Check(); f != nil || refresh != 0 || err != nil {
		t.Errorf("file: %v %v %v", f, refresh, err)
	}
	// None: the site's own robots.txt, fetched every refresh.
	if f, refresh, err := (Settings{}).Check(); f != nil || refresh != DefaultRefresh || err != nil {
		t.Errorf("none: %v %v %v", f, refresh, err)
	}
	if _, refresh, err := (Settings{Refresh: 5 * time.Second}).Check(); refresh != 5*time.Second || err != nil {
		t.Errorf("none, robots_refresh 5s: %v %v", refresh, err)
	}
	f, refresh, err := Settings{Robots: "http://127.0.0.1:3000/robots.txt", Host: "www.example.com", Headers: map[string]string{"X-Forwarded-Proto": "https"}}.Check()
	if f == nil || refresh != DefaultRefresh || err != nil {
		t.Errorf("url: %v %v %v", f, refresh, err)
	}
	const url = "http://127.0.0.1:3000/robots.txt"
	for _, tc := range []struct {
		path string
		s    Settings
	}{
		{"robots", Settings{Robots: "ftp://example.com/robots.txt"}},
		{"robots_host", Settings{Robots: "/srv/robots.txt", Host: "example.com"}},
		{"robots_headers.A", Settings{Robots: "/srv/robots.txt", Headers: map[string]string{"B": "1", "A": "2"}}},
		{"robots_refresh", Settings{Robots: "/srv/robots.txt", Refresh: time.Minute}},
		{"robots", Settings{Robots: "http://"}},
		{"robots_host", Settings{Robots: url, Host: "example.com/x"}},
		{"robots_headers.If-None-Match", Settings{Robots: url, Headers: map[string]string{"If-None-Match": "*"}}},
		{"robots_refresh", Settings{Robots: url, Refresh: 100 * time.Millisecond}},
		{"robots_refresh", Settings{Robots: url, Refresh: -1}},
		{"robots", Settings{Robots: filepath.Join(dir, "typo", "robots.txt")}},
		{"robots", Settings{Robots: dir}},
		{"robots", Settings{Robots: dir, Optional: true}},
		{"robots_optional", Settings{Optional: true}},
		{"robots_optional", Settings{Robots: url, Optional: true}},
		{"robots_refresh", Settings{Refresh: 10 * time.Millisecond}},
	} {
		_, _, err := tc.s.Check()
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Path != tc.path {
			t.Errorf("%+v: %v, want an error of %s", tc.s, err, tc.path)
		}
	}
}

// TestSettingsMissingFile: a robots file that does not exist is an error
// that names the path and the option that allows it; with Optional it
// passes.
func TestSettingsMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wwww", "robots.txt")
	_, _, err := Settings{Robots: path}.Check()
	want := "robots: " + path + " does not exist (a typo in the path?); to start without it on purpose, with no rules until it appears, add robots_optional"
	if err == nil || err.Error() != want {
		t.Errorf("missing file: %v\nwant %s", err, want)
	}
	if _, _, err := (Settings{Robots: path, Optional: true}).Check(); err != nil {
		t.Errorf("missing file, optional: %v", err)
	}
}
