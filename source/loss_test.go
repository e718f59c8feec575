package source

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/robotsguard/robotsguard/policy"
)

// loudLine returns the one entry of logs whose message starts with msg, and
// its "message" field; it fails the test unless there is exactly one.
func loudLine(t *testing.T, logs *observer.ObservedLogs, msg string) (observer.LoggedEntry, string) {
	t.Helper()
	var found []observer.LoggedEntry
	for _, e := range logs.All() {
		if strings.HasPrefix(e.Message, msg) {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d lines %q in %v", len(found), msg, logs.All())
	}
	detail, _ := found[0].ContextMap()["message"].(string)
	return found[0], detail
}

// settleChange writes body and loads until it is installed (cond).
func settleChange(t *testing.T, s *Source, path, body string, cond func() bool) {
	t.Helper()
	writeFile(t, path, body)
	s.Load()
	eventually(t, "the change installed", 20*time.Second, func() bool { s.Load(); return cond() })
}

// TestSourceRulesLifted (issue 26, mistake 6): a reload that lifts every
// rule (an emptied file, a plain-text page) was one INFO line "robots.txt
// reloaded, groups 0" and counted ok; now it is installed (an empty
// robots.txt is a valid choice) and logged at error when it lifts the
// rules for "*" (counting them), at warn when there were none, and
// counted no_rules; a file that keeps other groups but drops "*" is
// logged at error and counted star_lifted.
func TestSourceRulesLifted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "robots.txt")
	writeFile(t, path, "User-agent: *\nDisallow: /private/\nDisallow: /tmp/\n\nUser-agent: BigBot\nDisallow: /\n")
	s, logs := newTestSource(t, path)
	s.settle = 20 * time.Millisecond
	s.Load()
	if counted(s, "reload:ok") != 1 || allowedBy(s, "/private/x") {
		t.Fatalf("start: ok %v", counted(s, "reload:ok"))
	}

	settleChange(t, s, path, "", func() bool { return allowedBy(s, "/private/x") })
	e, detail := loudLine(t, logs, "robots.txt has no Allow or Disallow rules")
	if e.Level != zapcore.ErrorLevel || detail != `lifted: the 3 rules in force (2 for "*")` || counted(s, "reload:"+ResultNoRules) != 1 || counted(s, "reload:ok") != 1 {
		t.Errorf("emptied: %v %q, counted %v", e.Level, detail, counted(s, "reload:"+ResultNoRules))
	}
	if e.ContextMap()["file"] != path {
		t.Errorf("emptied: no file named: %v", e.ContextMap())
	}

	logs.TakeAll()
	settleChange(t, s, path, "This is a plain-text page.\n", func() bool { return counted(s, "reload:"+ResultNoRules) == 2 })
	e, detail = loudLine(t, logs, "robots.txt has no Allow or Disallow rules")
	if e.Level != zapcore.WarnLevel || detail != "" {
		t.Errorf("no rules after none: %v %q", e.Level, detail)
	}

	settleChange(t, s, path, "User-agent: *\nDisallow: /private/\n", func() bool { return !allowedBy(s, "/private/x") })
	if counted(s, "reload:ok") != 2 {
		t.Errorf("rules back: ok %v", counted(s, "reload:ok"))
	}
	logs.TakeAll()
	settleChange(t, s, path, "User-agent: BigBot\nDisallow: /\n", func() bool { return allowedBy(s, "/private/x") })
	e, detail = loudLine(t, logs, `robots.txt has no rules for "*" any more`)
	if e.Level != zapcore.ErrorLevel || detail != `lifted: the 1 rule for "*" in force; left: 1 rule of other groups` || counted(s, "reload:"+ResultStarLifted) != 1 {
		t.Errorf("* dropped: %v %q", e.Level, detail)
	}
}

// TestSourceEmptyAtStart: an empty robots.txt at start is installed and
// logged at warn (nothing was in force to lift), counted no_rules.
func TestSourceEmptyAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "robots.txt")
	writeFile(t, path, "# nothing yet\n")
	s, logs := newTestSource(t, path)
	s.Load()
	e, detail := loudLine(t, logs, "robots.txt has no Allow or Disallow rules")
	if e.Level != zapcore.WarnLevel || detail != "" || counted(s, "reload:"+ResultNoRules) != 1 || counted(s, "reload:ok") != 0 {
		t.Errorf("empty at start: %v %q", e.Level, detail)
	}
}

// TestSourceLargeLoss (issue 26, mistake 7): a 20 MB robots.txt whose cut
// falls in a group for BigBot, with the whole "*" group after it: the
// module logged that 1 rule of group "BigBot" was lost while caddy robots
// lint counted 524,606 rules and the whole "*" group; now the module
// streams the rest of the file and logs, at error (no rule for "*" is
// left), the lint finding word for word, and counts truncated.
func TestSourceLargeLoss(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("User-agent: BigBot\n")
	for i := 0; b.Len() < policy.MaxSize+1000; i++ {
		fmt.Fprintf(&b, "Disallow: /big/%d\n", i)
	}
	b.WriteString("\nUser-agent: *\n")
	for i := 0; b.Len() < 20<<20; i++ {
		fmt.Fprintf(&b, "Disallow: /generated/%d\n", i)
	}
	path := filepath.Join(t.TempDir(), "robots.txt")
	writeFile(t, path, b.String())
	var lint string
	for _, d := range policy.Parse(b.Bytes()).Lint() { // as caddy robots lint reads it
		if d.Code == policy.CodeTruncated {
			lint = d.Message
		}
	}
	lost := policy.Parse(b.Bytes()).Lost()
	if !strings.Contains(lint, fmt.Sprintf("with %d rules", lost.Rules)) || lost.StarRules < 500000 {
		t.Fatalf("lint: %s", lint)
	}
	s, logs := newTestSource(t, path)
	s.Load()
	e, detail := loudLine(t, logs, "robots.txt is larger than 500 KiB")
	if e.Level != zapcore.ErrorLevel || detail != lint || counted(s, "reload:"+ResultTruncated) != 1 {
		t.Errorf("20 MB file: %v\n got %q\nwant %q (caddy robots lint)", e.Level, detail, lint)
	}
	if logs.FilterMessage("robots.txt lint").FilterField(zapcoreString("message", lint)).Len() != 0 {
		t.Error("the truncated finding is logged twice")
	}
	t.Logf("%s: %s", e.Message, detail)
}

func zapcoreString(k, v string) zapcore.Field {
	return zapcore.Field{Key: k, Type: zapcore.StringType, String: v}
}
