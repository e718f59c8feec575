package report

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/record"
	"github.com/robotsguard/robotsguard/uaclass"
)

// TestEntryRecordRoundTrip (issue 36, "one record"): a record written as a
// log line (EntryOf, MarshalLogObject) and read back (Entry.Record) is the
// record, but for what a line does not carry (the robots.txt text, a
// dropped block, the evidence's claim, the normal form of the target) and
// times kept to the millisecond; and the rules read it alike: outcome,
// violation, read-then-ignored, the browser claim.
func TestEntryRecordRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	rule := &policy.Rule{Pattern: "/private/", Line: 3}
	usage := &policy.Rule{Key: policy.KeyContentUsage, Pattern: "train-ai=n", Line: 7}
	for _, r := range []record.Record{
		{Action: enforce.Deny, Reason: enforce.ReasonDisallowed, Rule: rule, Group: "*", Strikes: 2, AddressStrikes: 9, Site: "shop.example.com", Zone: "shop", ReadRobots: true, RobotsAt: at.Add(-time.Minute),
			Class: uaclass.OtherBot, Tokens: []string{"roguebot"}, Verdict: uaclass.NotClaimed, UserAgent: "RogueBot/2.0", URI: "/private/x?y=1"},
		{Action: enforce.Throttle, Reason: enforce.ReasonCrawlDelay, RetryAfter: 1500 * time.Millisecond, ReadRobots: true, RobotsAt: at.Add(-time.Second),
			Class: uaclass.AI, Tokens: []string{"gptbot"}, Bot: "GPTBot", Operator: "OpenAI", Verdict: uaclass.Verified, URI: "/a"},
		{Action: enforce.Allow, Reason: enforce.ReasonContentUsage, Rule: usage, Class: uaclass.AI, Tokens: []string{"ccbot"}, URI: "/b"},
		{Action: enforce.Allow, Rule: rule, Group: "*", Class: uaclass.Browser, BrowserDisallowed: true, JA4: "t13d1516h2_8daaf6152771_02713d6af862",
			Evidence: evidence.Verdict{Evidence: evidence.SecCHUA}, URI: "/private/report.html"},
		{Action: enforce.Deny, Reason: enforce.ReasonDisallowed, Rule: rule, Group: "*", Class: uaclass.Poser, BrowserDisallowed: true,
			Evidence: evidence.Verdict{Evidence: evidence.TLSStack | evidence.SecFetch | evidence.QUICStack | evidence.FramingStack}, JA4: "q13d0310h3_55b375c5d22e_cd85d2d88918", QUIC: "q1_g.5.6.7.4.8.9.1.3.b.e.f", Framing: "h3:1:0;6:16384;7:16;33:1", URI: "/private/c"},
		{Action: enforce.Tarpit, Reason: enforce.ReasonBlockedClient, BlockedUntil: at.Add(15 * time.Minute), BlockReason: "trap", DryRun: true, Class: uaclass.Script, Tokens: []string{"curl"}, URI: "/"},
		{Action: enforce.Deny, Reason: enforce.ReasonImpostor, Class: uaclass.AI, Signature: "invalid", SignatureAgent: "https://chatgpt.com", SignatureError: "bad signature", URI: "/", Repeats: 41},
		{Action: enforce.Allow, Reason: enforce.ReasonRobotsTxt, Class: uaclass.Search, Tokens: []string{"googlebot"}, URI: "/robots.txt"},
	} {
		r.Time, r.Zone, r.Version, r.Method, r.Host, r.Path = at, "default", "0123456789ab", "GET", "example.com", r.URI
		r.ClientIP = netip.MustParseAddr("192.0.2.7")
		e := EntryOf(&r)
		b, err := json.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		var back Entry
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		back.TS = Time{at}
		got := back.Record()
		want := r
		want.EvidenceReason, want.Noteworthy = e.EvidenceReason, true
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s: read back\n %+v\nwant\n %+v", r.Action, r.Reason, got, want)
		}
		gc, gok := got.Claim()
		wc, wok := r.Claim()
		if got.Outcome() != r.Outcome() || got.Violation() != r.Violation() || got.ReadThenIgnored() != r.ReadThenIgnored() || gc != wc || gok != wok || got.Message() != r.Message() {
			t.Errorf("%s %s: the rules read the line otherwise", r.Action, r.Reason)
		}
	}
}

// TestViewReadsNotLogged (issue 36): a bot fetches robots.txt, then goes
// faster than its Crawl-delay, and the log holds no allowed request
// (log_allowed 0): report --html's row says when it read robots.txt, as
// the live page does, not "never"; a read the log holds is counted once,
// under the bot that made it, not under another one of its address that
// broke the rules after it.
func TestViewReadsNotLogged(t *testing.T) {
	base := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	read := Time{base.Add(250 * time.Millisecond)}
	var es []Entry
	for i := range 4 {
		es = append(es, Entry{TS: Time{base.Add(time.Duration(i+1) * time.Second)}, Level: "info", Logger: LoggerName, Msg: "request refused",
			ClientIP: "192.0.2.20", UserAgent: "SpeedBot/1.0", Class: "bot", Tokens: []string{"speedbot"}, Verification: "none", URI: "/page",
			Action: "throttle", Reason: "crawl_delay", Group: "*", ReadRobots: true, RobotsAt: &read, RetryAfter: 4, Zone: "default"})
	}
	// Another address: politebot's read is logged, speedybot breaks the
	// rules after it.
	polite := Time{base.Add(10 * time.Second)}
	es = append(es,
		Entry{TS: polite, Level: "info", Logger: LoggerName, Msg: "request allowed", ClientIP: "192.0.2.21", UserAgent: "politebot/1.0", Class: "bot",
			Tokens: []string{"politebot"}, Verification: "none", URI: "/robots.txt", Action: "allow", Reason: "robots_txt", Zone: "default"},
		Entry{TS: Time{base.Add(11 * time.Second)}, Level: "info", Logger: LoggerName, Msg: "request refused", ClientIP: "192.0.2.21", UserAgent: "speedybot/1.0",
			Class: "bot", Tokens: []string{"speedybot"}, Verification: "none", URI: "/private/a", Action: "deny", Reason: "disallowed", Group: "*",
			RuleLine: 2, Rule: "Disallow: /private/", ReadRobots: true, RobotsAt: &Time{polite.Add(-200 * time.Microsecond)}, Zone: "default"})
	name := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(name, logLines(t, es...), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := View([]string{name}, &Filter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]struct {
		reads, ignored uint64
		at             *time.Time
	}{}
	for _, b := range v.Zones[0].Bots {
		rows[b.Key] = struct {
			reads, ignored uint64
			at             *time.Time
		}{b.RobotsReads, b.ReadIgnored, b.RobotsAt}
	}
	if r := rows["speedbot"]; r.reads != 1 || r.at == nil || !r.at.Equal(read.Time) || r.ignored != 4 {
		t.Errorf("speedbot: %d reads, last %v, %d read then ignored; want 1 read at %v, 4", r.reads, r.at, r.ignored, read.Time)
	}
	if r := rows["politebot"]; r.reads != 1 {
		t.Errorf("politebot: %d reads, want its logged one", r.reads)
	}
	if r := rows["speedybot"]; r.reads != 0 || r.ignored != 1 {
		t.Errorf("speedybot: %d reads, %d read then ignored; want none of its own (its address's was politebot's), 1", r.reads, r.ignored)
	}
	if !bytes.Contains([]byte(v.Notes[0]), []byte("where the read itself was not logged")) {
		t.Errorf("notes: %q", v.Notes)
	}
}
