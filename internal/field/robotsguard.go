package field

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// DurationFloors are the least durations that make sense in robots_guard's
// config, by JSON path ([Floors]): below them a value is a mistake, most
// often a JSON number read as nanoseconds ("cooldown": 900 is 900ns, not
// 15 minutes). Zero keeps its meaning (the default, or off).
// docs/troubleshooting.md lists them.
var DurationFloors = map[string]time.Duration{
	// Intervals between requests, holds and waits: a millisecond.
	"crawl_delay": time.Millisecond, "rates.*": time.Millisecond, "tarpit": time.Millisecond,
	"log_repeats": time.Millisecond, "verify.wait": time.Millisecond, "verify.lookup_timeout": time.Millisecond,
	"web_bot_auth.clock_skew": time.Millisecond, "store.timeout": time.Millisecond,
	// Memories and refreshes: a second.
	"window": time.Second, "cooldown": time.Second, "max_cooldown": time.Second, "state_ttl": time.Second,
	"robots_refresh": time.Second, "verify.ttl": time.Second, "verify.ranges_refresh": time.Second, "web_bot_auth.max_validity": time.Second,
}

// Dependents are the fields of robots_guard's config that mean nothing
// without the field they are listed under: when that field is bad, [All]
// does not report them too.
var Dependents = map[string][]string{"robots": {"robots_optional", "robots_host", "robots_headers", "robots_refresh"}}

// CaddyfileSpellings are the Caddyfile spellings of the JSON fields of
// robots_guard that an option of another name sets, for the hint to a JSON
// name written in a Caddyfile ([Suggest]). The other fields are written as
// their option, or its plural for a repeatable option (the caddymodule
// test TestConfigNamesAgree checks that this covers every field).
var CaddyfileSpellings = map[string]string{
	"max_cooldown": "cooldown <duration> <max>", "tarpit_max": "tarpit <duration> <max held>",
	"address_strikes": "strikes <n> <per address>", "deny_status": "deny <status> [<body>]",
	"deny_body": "deny <status> <body>", "throttle_status": "throttle <status> [<body>]",
	"throttle_body": "throttle <status> <body>",
}

// RobotsFileArg reports whether a directive-line argument that Caddy would
// read as a path matcher names a robots.txt file instead: it starts with
// '/' (a path matcher) and ends in robots.txt, or is an existing file.
func RobotsFileArg(arg string) bool {
	if !strings.HasPrefix(arg, "/") {
		return false
	}
	fi, err := os.Stat(arg)
	return strings.HasSuffix(strings.ToLower(arg), "robots.txt") || err == nil && fi.Mode().IsRegular()
}

// Lines collects the errors of a Caddyfile block with their lines. The
// zero value is empty.
type Lines struct{ errs []lineError }

type lineError struct {
	line int
	err  error
}

// Add records err at line.
func (l *Lines) Add(line int, err error) { l.errs = append(l.errs, lineError{line, err}) }

// Err returns the errors joined, in line order, the first of each line
// only (a bad option's syntax error hides what its value's check would
// add); nil when there are none.
func (l *Lines) Err() error {
	slices.SortStableFunc(l.errs, func(a, b lineError) int { return a.line - b.line })
	var errs []error
	for i, e := range l.errs {
		if i == 0 || e.line != l.errs[i-1].line {
			errs = append(errs, e.err)
		}
	}
	return errors.Join(errs...)
}

// Join returns errs joined (errors.Join), each with prefix before it.
func Join(prefix string, errs []error) error {
	for i, e := range errs {
		errs[i] = fmt.Errorf("%s%w", prefix, e)
	}
	return errors.Join(errs...)
}

// Size reads a size with units as Caddy's own options take them ("4MiB",
// "512KB", "1048576"), above zero.
func Size(s string) (int, error) {
	n, err := humanize.ParseBytes(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("'%s' is not a size (e.g. 4MiB)", s)
	case n == 0:
		return 0, fmt.Errorf("must be above 0, got %s", s)
	case n > math.MaxInt:
		return 0, fmt.Errorf("%s is too large", s)
	}
	return int(n), nil
}

// Each checks every element of the list at path with check and returns
// the first error, as the *Error of its element ("sitemaps[2]").
func Each[E any](path string, list []E, check func(E) error) error {
	for i, e := range list {
		if err := check(e); err != nil {
			return Wrap(fmt.Sprintf("%s[%d]", path, i), err)
		}
	}
	return nil
}

// Map makes each element of list at path into what f makes of it; an
// error is the first element's, named path[i].
func Map[E, R any](path string, list []E, f func(E) (R, error)) ([]R, error) {
	var out []R
	for i, e := range list {
		r, err := f(e)
		if err != nil {
			return nil, Wrap(fmt.Sprintf("%s[%d]", path, i), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// ErrorStatus checks the status code of a refusal at path (400-599; 0
// reads as def) and returns it.
func ErrorStatus(path string, code, def int) (int, error) {
	if code == 0 {
		code = def
	}
	if code < 400 || code > 599 {
		return code, Errorf(path, "%d is not an error status (400-599)", code)
	}
	return code, nil
}
