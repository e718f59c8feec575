package report

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"net/netip"
	"slices"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/record"
	"github.com/robotsguard/robotsguard/review"
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
	// First pass: the span, the module's problems, and the robots.txt
	// reads the logged decisions report but the log does not hold.
	rep := New()
	var from, to time.Time
	see := func(t time.Time) {
		if !t.IsZero() && (from.IsZero() || t.Before(from)) {
			from = t
		}
		if t.After(to) {
			to = t
		}
	}
	reads := newReads()
	var lifted []unblocked
	lines, err := ReadFiles(files, nil, f, func(e *Entry) {
		see(e.TS.Time)
		reads.note(e)
	}, func(e *Entry) {
		if p, err := netip.ParsePrefix(e.ClientIP); err == nil && e.Msg == UnblockedMsg {
			lifted = append(lifted, unblocked{e.TS.Time, p, e.Zone})
		}
		rep.AddMessage(e)
	})
	if err != nil {
		return nil, err
	}
	for _, at := range reads.unlogged() {
		see(at)
	}
	step := time.Minute
	if span := to.Sub(from); span > 1440*time.Minute {
		step = (span/1440 + time.Minute - 1).Truncate(time.Minute)
	}
	texts := map[string][]byte{}
	for _, t := range robotsFiles {
		texts[VersionID(t)] = t
	}
	// A zone's sites are counted apart (siteKey): no row mixes two
	// robots.txt files.
	zones := map[string]*review.Stats{}
	blocks := map[string]map[string]review.BlockedClient{} // zone and site, client IP
	_, err = ReadFiles(files, nil, f, func(e *Entry) {
		rec := e.Record()
		zone := cmp.Or(e.Zone, "default")
		key := siteKey(zone, cmp.Or(rec.SiteName(), zone))
		if e.BlockedUntil != nil && !e.BlockedUntil.IsZero() && !liftedAfter(lifted, e, zone) {
			noteBlock(blocks, key, e)
		}
		s := zones[key]
		if s == nil {
			s = review.New(review.Options{Step: step, Slots: 1440, MaxBots: 1 << 20})
			zones[key] = s
		}
		if read, ok := reads.take(&rec); ok {
			s.Add(&read)
		}
		rec.VersionText = texts[rec.Version]
		// A summary line of log_repeats stands for Weight decisions.
		for range rec.Weight() {
			s.Add(&rec)
		}
	}, nil)
	if err != nil {
		return nil, err
	}
	v := &review.View{Generated: time.Now().UTC(), Source: "logs", Zones: []review.ZoneView{}}
	for _, key := range slices.Sorted(maps.Keys(zones)) {
		zone, site := splitSiteKey(key)
		zv := zones[key].View(zone, to)
		zv.Site, zv.Since = site, from
		zv.Blocked = blockedAt(blocks[key], to)
		for i := range zv.Blocked {
			zv.Blocked[i].Site = site
		}
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
	v.Notes = append(v.Notes, "Built from decision logs: they record every refusal and violation, but allowed requests only as sampled by log_allowed, so allowed counts and robots.txt reads are those logged, with the reads that the logged violations report (read_robots, robots_at) where the read itself was not logged.")
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

// unblocked is a line of caddy robots unblock in the decision log: the
// blocks of the range in the zone ("": every zone) were lifted at time.
type unblocked struct {
	time time.Time
	p    netip.Prefix
	zone string
}

// liftedAfter reports whether a decision's block was lifted later by
// caddy robots unblock.
func liftedAfter(lifted []unblocked, e *Entry, zone string) bool {
	ip, err := netip.ParsePrefix(e.ClientIP)
	if err != nil {
		a, aerr := netip.ParseAddr(e.ClientIP)
		if aerr != nil {
			return false
		}
		ip = netip.PrefixFrom(a, a.BitLen())
	}
	return slices.ContainsFunc(lifted, func(u unblocked) bool {
		return u.time.After(e.TS.Time) && (u.zone == "" || u.zone == zone) && u.p.Overlaps(ip)
	})
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

// reads are the robots.txt reads of a decision log: those it holds (the
// requests for /robots.txt logged, by zone) and those its decisions report
// (read_robots with robots_at: when the client's address last read it).
// A read that a decision reports and the log does not hold, because
// log_allowed did not sample it, counts as a robots.txt request of the
// client of the first decision that reports it, at the time it reports,
// so that a row marked "read robots.txt, ignored it" says when it read
// it, as the live page does, not "never".
type reads struct {
	logged   map[string][]time.Time // zone: the logged reads' times
	reported map[readKey]bool       // the reads the decisions report; true once counted
}

// readKey is one read a decision reports.
type readKey struct {
	zone, ip string
	at       int64 // Unix nanoseconds
}

// readSlack is how far a logged read's time may be from the time a
// decision reports for it: the log's time stamp is the line's, a moment
// after the decision.
const readSlack = 2 * time.Second

func newReads() *reads {
	return &reads{logged: map[string][]time.Time{}, reported: map[readKey]bool{}}
}

// note records what e says of robots.txt reads.
func (rs *reads) note(e *Entry) {
	zone := cmp.Or(e.Zone, "default")
	switch {
	case e.Reason == string(enforce.ReasonRobotsTxt):
		rs.logged[zone] = append(rs.logged[zone], e.TS.Time)
	case e.ReadRobots && e.RobotsAt != nil && !e.RobotsAt.IsZero():
		rs.reported[readKey{zone, e.ClientIP, e.RobotsAt.UnixNano()}] = false
	}
}

// isLogged reports whether the log holds a read of zone near at.
func (rs *reads) isLogged(zone string, at time.Time) bool {
	for _, t := range rs.logged[zone] {
		if d := t.Sub(at); d > -readSlack && d < readSlack {
			return true
		}
	}
	return false
}

// unlogged returns the times of the reported reads the log does not hold.
func (rs *reads) unlogged() []time.Time {
	var out []time.Time
	for k := range rs.reported {
		if at := time.Unix(0, k.at).UTC(); !rs.isLogged(k.zone, at) {
			out = append(out, at)
		}
	}
	return out
}

// take returns the record of the read that r reports, the first time a
// record reports a read the log does not hold: a request for /robots.txt
// by r's client, served, at the time r reports.
func (rs *reads) take(r *record.Record) (record.Record, bool) {
	if !r.ReadRobots || r.RobotsAt.IsZero() {
		return record.Record{}, false
	}
	k := readKey{cmp.Or(r.Zone, "default"), r.ClientIP.String(), r.RobotsAt.UnixNano()}
	if counted, ok := rs.reported[k]; !ok || counted || rs.isLogged(k.zone, r.RobotsAt) {
		return record.Record{}, false
	}
	rs.reported[k] = true
	return record.Record{
		Time: r.RobotsAt, Zone: r.Zone, ClientIP: r.ClientIP, UserAgent: r.UserAgent,
		Class: r.Class, Tokens: r.Tokens, Bot: r.Bot, Operator: r.Operator, Verdict: r.Verdict,
		Method: "GET", Host: r.Host, URI: "/robots.txt", Path: "/robots.txt",
		Action: enforce.Allow, Reason: enforce.ReasonRobotsTxt,
	}, true
}
