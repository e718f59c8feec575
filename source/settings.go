package source

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/upstream"
)

// Settings are where the rules come from, as a configuration writes them:
// a file, or an http(s) URL where the application serves its robots.txt,
// with the options of its fetches.
type Settings struct {
	Robots  string            // a file or an http(s) URL; "": the site's own (see NewOwn)
	Host    string            // the fetches' Host header (URL only)
	Headers map[string]string // header fields of the fetches (URL only)
	Refresh time.Duration     // how often the URL is fetched; 0: DefaultRefresh (URL only)
	// Optional lets a file that does not exist yet pass the check: no
	// rules until it appears (file only).
	Optional bool
}

// Check checks s and returns, for a URL, the fetcher and the refresh
// interval (with its default); for the site's own robots.txt (Robots ""),
// nil and the refresh interval; for a file, nil and 0. Its errors are
// *field.Error with the configuration's paths: robots, robots_host,
// robots_headers.<Field>, robots_refresh, robots_optional.
//
// A file that does not exist is an error unless Optional is set: a typo in
// the path would otherwise start a guard that enforces nothing, with one
// warning at run time. A folder is an error too.
func (s Settings) Check() (*upstream.Fetcher, time.Duration, error) {
	if s.Optional && (s.Robots == "" || upstream.IsURL(s.Robots)) {
		return nil, 0, field.Errorf("robots_optional", "only for a robots.txt file (robots /path/to/robots.txt), which may then be missing at start")
	}
	if !upstream.IsURL(s.Robots) {
		if scheme, _, ok := strings.Cut(s.Robots, "://"); ok && !strings.ContainsAny(scheme, "/.") {
			return nil, 0, field.Errorf("robots", "%q: only http and https URLs can be fetched", s.Robots)
		}
		headers := "robots_headers"
		if len(s.Headers) > 0 {
			headers += "." + slices.Sorted(maps.Keys(s.Headers))[0]
		}
		for _, o := range []struct {
			path string
			set  bool
		}{{"robots_host", s.Host != ""}, {headers, len(s.Headers) > 0}, {"robots_refresh", s.Refresh != 0 && s.Robots != ""}} {
			if o.set {
				return nil, 0, field.Errorf(o.path, "only for a robots.txt read from a URL (robots http://... or https://...)")
			}
		}
		if s.Robots != "" {
			return nil, 0, checkFile(s.Robots, s.Optional)
		}
	}
	refresh, err := s.refresh()
	if err != nil || s.Robots == "" {
		return nil, refresh, err
	}
	if _, err := upstream.ParseURL(s.Robots); err != nil {
		return nil, 0, field.Wrap("robots", err)
	}
	if s.Host != "" {
		if err := upstream.CheckHost(s.Host); err != nil {
			return nil, 0, field.Wrap("robots_host", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
		if err := upstream.CheckHeader(name, s.Headers[name]); err != nil {
			return nil, 0, field.Wrap("robots_headers."+name, err)
		}
	}
	f, err := upstream.New(FetchOptions(s.Robots, s.Host, s.Headers))
	if err != nil {
		return nil, 0, field.Wrap("robots", err)
	}
	return f, refresh, nil
}

// refresh returns the refresh interval, with its default.
func (s Settings) refresh() (time.Duration, error) {
	switch {
	case s.Refresh == 0:
		return DefaultRefresh, nil
	case s.Refresh < time.Second:
		return 0, field.Wrap("robots_refresh", fmt.Errorf("must be at least 1s, got %v", s.Refresh))
	}
	return s.Refresh, nil
}

// checkFile checks that the robots.txt file exists ("" names none), unless
// optional, and is no folder.
func checkFile(path string, optional bool) error {
	if path == "" {
		return nil
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !optional:
		return field.Errorf("robots", "%s does not exist (a typo in the path?); to start without it on purpose, with no rules until it appears, add robots_optional", path)
	case err == nil && st.IsDir():
		return field.Errorf("robots", "%s is a folder; name the robots.txt file in it", path)
	}
	return nil
}
