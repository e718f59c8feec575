package report

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/review"
	"github.com/robotsguard/robotsguard/uaclass"
)

// VersionID returns the version a decision log names for a robots.txt
// file: the first 12 hex digits of its SHA-256.
func VersionID(file []byte) string {
	sum := sha256.Sum256(file)
	return hex.EncodeToString(sum[:6])
}

// View builds the review page's view from decision logs, as the filter selects them: the same
// statistics the admin endpoint keeps live, per zone, with a series whose
// step fits the logs' span in at most 1440 points. Files are read twice,
// so standard input will not do. robotsFiles are
// robots.txt texts to show for the versions the logs name (matched by
// hash).
func View(files []string, f *Filter, robotsFiles [][]byte) (*review.View, error) {
	if len(files) == 0 {
		return nil, errors.New("--html needs log files (standard input cannot be read twice)")
	}
	// First pass: the span, and the module's problems.
	rep := New()
	var from, to time.Time
	lines, err := ReadFiles(files, nil, f, func(e *Entry) {
		if t := e.TS.Time; !t.IsZero() {
			if from.IsZero() || t.Before(from) {
				from = t
			}
			if t.After(to) {
				to = t
			}
		}
	}, rep.AddMessage)
	if err != nil {
		return nil, err
	}
	step := time.Minute
	if span := to.Sub(from); span > 1440*time.Minute {
		step = (span/1440 + time.Minute - 1).Truncate(time.Minute)
	}
	texts := map[string][]byte{}
	for _, t := range robotsFiles {
		texts[VersionID(t)] = t
	}
	zones := map[string]*review.Stats{}
	blocks := map[string]map[string]review.BlockedClient{} // zone, client IP
	_, err = ReadFiles(files, nil, f, func(e *Entry) {
		zone := cmp.Or(e.Zone, "default")
		if e.BlockedUntil != nil && !e.BlockedUntil.IsZero() {
			noteBlock(blocks, zone, e)
		}
		s := zones[zone]
		if s == nil {
			s = review.New(review.Options{Step: step, Slots: 1440, MaxBots: 1 << 20})
			zones[zone] = s
		}
		ev := Event(e)
		ev.VersionText = texts[ev.Version]
		// A summary line of log_repeats stands for Weight decisions.
		for range e.Weight() {
			s.Record(&ev)
		}
	}, nil)
	if err != nil {
		return nil, err
	}
	v := &review.View{Generated: time.Now().UTC(), Source: "logs", Zones: []review.ZoneView{}}
	for _, name := range slices.Sorted(maps.Keys(zones)) {
		zv := zones[name].View(name, to)
		zv.Since = from
		zv.Blocked = blockedAt(blocks[name], to)
		for i := range zv.Versions {
			if t, ok := texts[zv.Versions[i].ID]; ok {
				zv.Versions[i].Text = string(t)
			}
		}
		v.Zones = append(v.Zones, zv)
	}
	for _, p := range rep.Summary(0, lines).Problems {
		rp := review.Problem{Level: p.Level, Message: p.Message, File: p.File + p.URL, Error: p.Error, Count: p.Count}
		if p.Detail != "" {
			rp.Message += ": " + p.Detail
		}
		if p.First != nil {
			rp.First, rp.Last = &p.First.Time, &p.Last.Time
		}
		v.Problems = append(v.Problems, rp)
	}
	v.Notes = append(v.Notes, "Built from decision logs: they record every refusal and violation, but allowed requests only as sampled by log_allowed, so allowed counts and robots.txt reads are those logged.")
	if lines.Filtered > 0 {
		v.Notes = append(v.Notes, Plural(lines.Filtered, "log entry")+" left out by the filters.")
	}
	return v, nil
}

// noteBlock keeps, per zone and client IP, the latest block a decision
// logged: its end, its reason and the token of the request.
func noteBlock(blocks map[string]map[string]review.BlockedClient, zone string, e *Entry) {
	m := blocks[zone]
	if m == nil {
		m = map[string]review.BlockedClient{}
		blocks[zone] = m
	}
	if b, ok := m[e.ClientIP]; ok && !e.BlockedUntil.After(b.Until) {
		return
	}
	b := review.BlockedClient{IP: e.ClientIP, Token: e.Token(), Until: e.BlockedUntil.UTC(), Reason: cmp.Or(e.BlockReason, "unknown"), DryRun: e.DryRun}
	if b.Reason == "trap" {
		b.Token = "" // a trap blocks the whole address
	}
	m[e.ClientIP] = b
}

// blockedAt lists the blocks still in force at end, by IP.
func blockedAt(m map[string]review.BlockedClient, end time.Time) []review.BlockedClient {
	out := []review.BlockedClient{}
	for _, ip := range slices.Sorted(maps.Keys(m)) {
		if m[ip].Until.After(end) {
			out = append(out, m[ip])
		}
	}
	return out
}

// Event turns a decision entry into a review event.
func Event(e *Entry) review.Event {
	ev := review.Event{
		Time:       e.TS.Time,
		Token:      e.Token(),
		Name:       e.Bot,
		Operator:   e.Operator,
		Outcome:    outcome(e.Action, e.Reason),
		Violation:  Violation(e),
		ReadRobots: e.ReadRobots,
		Reason:     enforce.Reason(e.Reason),
		RobotsTxt:  e.Reason == "robots_txt",
		DryRun:     e.DryRun,
		Path:       e.URI,
		Version:    e.RobotsVersion,

		BrowserDisallowed: e.BrowserDisallowed,
		Evidence:          EntryEvidence(e),
	}
	if e.RobotsAt != nil {
		ev.RobotsAt = e.RobotsAt.Time
	}
	if c, err := uaclass.ParseClass(e.Class); err == nil {
		ev.Class = c
	}
	for v := uaclass.NotClaimed; v <= uaclass.Unverified; v++ {
		if v.String() == e.Verification {
			ev.Verdict = v
		}
	}
	if e.Rule != "" {
		verb, pattern, _ := strings.Cut(e.Rule, ": ")
		ev.Rule = &policy.Rule{Allow: verb == "Allow", Pattern: pattern, Line: e.RuleLine}
		if verb == policy.KeyContentUsage || verb == policy.KeyContentSignal {
			ev.Rule.Key = verb // a preference line (reason content_usage)
		}
	}
	return ev
}

// outcome is review.OutcomeOf for the logged action and reason.
func outcome(action, reason string) review.Outcome {
	switch {
	case action == "allow":
		return review.Allowed
	case action == "throttle":
		return review.Throttled
	case action == "tarpit" || reason == "blocked_client" || reason == "trap":
		return review.Blocked
	}
	return review.Refused
}
