// Package field names a bad configuration value by its JSON path, so that
// the packages that check their own options (enforce, enforce/redisstore,
// source) and the Caddy module that maps them onto its JSON share one
// error type, and the Caddyfile adapter can point at the line that set the
// value.
package field

import (
	"fmt"
	"strings"
	"time"
)

// Error is a bad value: Path names it as the configuration's JSON does
// ("tarpit", "block_classes[1]", "rates.ai", "store.url"), "" for the
// configuration as a whole.
type Error struct {
	Path string
	Err  error
	// Hint, when set, follows the message in parentheses: what the author
	// of a JSON config most likely meant ("JSON numbers are nanoseconds;
	// write \"2s\""). A Caddyfile error shows Err alone, at its line.
	Hint string
}

func (e *Error) Error() string {
	msg := e.Err.Error()
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	if e.Path == "" {
		return msg
	}
	return e.Path + ": " + msg
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Wrap returns an *Error of path for err.
func Wrap(path string, err error) error { return &Error{Path: path, Err: err} }

// Errorf returns an *Error of path with a formatted message.
func Errorf(path, format string, args ...any) error {
	return &Error{Path: path, Err: fmt.Errorf(format, args...)}
}

// AboveZero and AtLeast are the messages for out-of-range values, shared
// by the checks and the Caddyfile reader, which refuses an explicit zero
// where the JSON form reads zero as "the default".
func AboveZero(d time.Duration) error { return fmt.Errorf("must be above 0, got %v", d) }

// AtLeast: see [AboveZero].
func AtLeast(least, n int) error { return fmt.Errorf("must be at least %d, got %d", least, n) }

// Parent drops the last element of a JSON path: "a.b[2]" -> "a.b",
// "a.b" -> "a", "a" -> "".
func Parent(path string) string {
	if i := strings.LastIndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return ""
}
