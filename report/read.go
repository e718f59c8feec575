package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Filter selects decisions. Empty lists and zero times select everything;
// each list matches any of its values.
type Filter struct {
	// Since and Until bound the entries' times (Since inclusive, Until
	// exclusive). Module messages are filtered by time too.
	Since, Until time.Time
	// Hosts, Actions, Reasons, Classes and Tokens select decisions by
	// request host, action (allow, throttle, deny, tarpit), reason ("none"
	// for an ordinary request), User-Agent class and product token (any
	// of the entry's tokens).
	Hosts, Actions, Reasons, Classes, Tokens []string
}

// keepTime reports whether t is within the filter's times. An entry
// without a time is kept only when no time bound is set.
func (f *Filter) keepTime(t time.Time) bool {
	if f.Since.IsZero() && f.Until.IsZero() {
		return true
	}
	if t.IsZero() {
		return false
	}
	return (f.Since.IsZero() || !t.Before(f.Since)) && (f.Until.IsZero() || t.Before(f.Until))
}

// Keep reports whether the filter selects the decision e.
func (f *Filter) Keep(e *Entry) bool {
	if !f.keepTime(e.TS.Time) {
		return false
	}
	if len(f.Hosts) > 0 && !slices.ContainsFunc(f.Hosts, func(h string) bool { return strings.EqualFold(h, hostOnly(e.Host)) || strings.EqualFold(h, e.Host) }) {
		return false
	}
	if len(f.Actions) > 0 && !slices.Contains(f.Actions, e.Action) {
		return false
	}
	reason := e.Reason
	if reason == "" {
		reason = "none"
	}
	if len(f.Reasons) > 0 && !slices.Contains(f.Reasons, reason) {
		return false
	}
	if len(f.Classes) > 0 && !slices.Contains(f.Classes, e.Class) {
		return false
	}
	if len(f.Tokens) > 0 && !slices.ContainsFunc(e.Tokens, func(t string) bool { return slices.Contains(f.Tokens, strings.ToLower(t)) }) {
		return false
	}
	return true
}

func hostOnly(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		return h[:i]
	}
	return h
}

// Lines counts what a read saw.
type Lines struct {
	// Decisions and Messages are the module's decision entries and other
	// messages that the filter kept; Filtered those it dropped; Other the
	// lines of other loggers and lines that are not JSON.
	Decisions, Messages, Filtered, Other int
}

// Read calls decision for each decision entry and message for each of the
// module's other messages (reloads, provisioning, lint) in in, as the
// filter selects them. Lines up to 4 MiB are read.
func Read(in io.Reader, f *Filter, decision, message func(*Entry)) (Lines, error) {
	var n Lines
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		var e Entry
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			n.Other++
			continue
		}
		switch {
		case e.IsDecision():
			if !f.Keep(&e) {
				n.Filtered++
				continue
			}
			n.Decisions++
			if decision != nil {
				decision(&e)
			}
		case e.IsModuleMessage():
			if !f.keepTime(e.TS.Time) {
				n.Filtered++
				continue
			}
			n.Messages++
			if message != nil {
				message(&e)
			}
		default:
			n.Other++
		}
	}
	return n, sc.Err()
}

// Open opens a log file for reading, decompressing it when it is gzip (as
// Caddy rolls its logs: name.log.gz), whatever its name.
func Open(name string) (io.ReadCloser, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		zr.Multistream(true)
		return readCloser{zr, f}, nil
	}
	return readCloser{br, f}, nil
}

type readCloser struct {
	io.Reader
	f *os.File
}

func (r readCloser) Close() error { return r.f.Close() }

// ExpandFiles expands the glob patterns among names (a shell expands them
// already; a quoted pattern or a pattern in a script is expanded here) and
// returns the files in order, each once. A pattern that matches nothing is
// an error, as is a missing file.
func ExpandFiles(names []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, name := range names {
		matches := []string{name}
		if strings.ContainsAny(name, "*?[") {
			m, err := filepath.Glob(name)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			if len(m) == 0 {
				if _, err := os.Stat(name); err != nil {
					return nil, fmt.Errorf("%s: no file matches", name)
				}
				m = []string{name}
			}
			matches = m
		}
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// ReadFiles reads each file in turn (standard input when there are none,
// given as stdin) and adds up the lines seen.
func ReadFiles(names []string, stdin io.Reader, f *Filter, decision, message func(*Entry)) (Lines, error) {
	var total Lines
	add := func(n Lines) {
		total.Decisions += n.Decisions
		total.Messages += n.Messages
		total.Filtered += n.Filtered
		total.Other += n.Other
	}
	if len(names) == 0 {
		if stdin == nil {
			return total, errors.New("no log file given")
		}
		n, err := Read(stdin, f, decision, message)
		add(n)
		return total, err
	}
	for _, name := range names {
		r, err := Open(name)
		if err != nil {
			return total, err
		}
		n, err := Read(r, f, decision, message)
		r.Close()
		add(n)
		if err != nil {
			return total, fmt.Errorf("%s: %v", name, err)
		}
	}
	return total, nil
}

// ParseTime reads a --since or --until value: an RFC 3339 time, a date
// (2006-01-02) or date and time (2006-01-02 15:04[:05]) in UTC, or a
// duration before now ("24h", "90m").
func ParseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q: a duration before now must not be negative", s)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time (2026-11-30, 2026-11-30 15:04, RFC 3339) or a duration before now (24h)", s)
}
