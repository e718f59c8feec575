package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/record"
	"github.com/robotsguard/robotsguard/signature"
	"github.com/robotsguard/robotsguard/uaclass"
)

// syncBuffer is a buffer that a logger writes to while a test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Sync() error { return nil }

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testLog returns a decision log of zone "test" that writes JSON lines as
// Caddy's encoder does, at level, into the returned buffer, folding
// repeats over interval (0: none). Clients are told apart by /24 and /64.
func testLog(t testing.TB, level zapcore.Level, interval time.Duration) (*DecisionLog, *syncBuffer) {
	t.Helper()
	buf := &syncBuffer{}
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{
		TimeKey: "ts", LevelKey: "level", NameKey: "logger", MessageKey: "msg",
		EncodeTime: zapcore.EpochTimeEncoder, EncodeLevel: zapcore.LowercaseLevelEncoder,
	})
	logger := zap.New(zapcore.NewCore(enc, buf, level)).Named(LoggerName)
	ctx, cancel := context.WithCancel(context.Background())
	l := NewDecisionLog(ctx, logger, DecisionLogOptions{Zone: "test", Repeats: interval, ClientPrefix: func(a netip.Addr) netip.Prefix {
		bits := 24
		if a.Is6() {
			bits = 64
		}
		p, _ := a.Prefix(bits)
		return p
	}})
	t.Cleanup(func() {
		cancel()
		l.Close()
	})
	return l, buf
}

// entriesOf reads back the decisions of a log.
func entriesOf(t testing.TB, log string) (full, summaries []Entry) {
	t.Helper()
	lines, err := Read(strings.NewReader(log), &Filter{}, func(e *Entry) {
		if e.Repeats > 0 {
			summaries = append(summaries, *e)
		} else {
			full = append(full, *e)
		}
	}, nil)
	if err != nil || lines.Other > 0 {
		t.Fatalf("%v; %d lines not read:\n%s", err, lines.Other, log)
	}
	return full, summaries
}

var (
	ruleA     = &policy.Rule{Pattern: "/a/", Line: 2}
	ruleB     = &policy.Rule{Pattern: "/b/", Line: 3}
	rogue     = uaclass.Result{Class: uaclass.OtherBot, Tokens: []string{"roguebot"}}
	disallowA = enforce.Decision{Action: enforce.Deny, Reason: enforce.ReasonDisallowed, Rule: ruleA, Group: "*", Strikes: 1}
)

// write writes the record of d on req, whose User-Agent is ua and URI
// uri, judged against robots.txt version, with the outcome of Web Bot Auth
// sig (nil: none), to l, as the handler writes it.
func write(l *DecisionLog, req *enforce.Request, d *enforce.Decision, ua, uri, version string, sig *signature.Result) {
	rd := enforce.Reading{Request: *req, UserAgent: ua, URI: uri}
	if sig != nil {
		rd.Signature = *sig
	}
	r := record.New(&rd, d, "", version, nil)
	l.Write(&r)
}

func request(ip string) *enforce.Request {
	return &enforce.Request{IP: netip.MustParseAddr(ip), UA: rogue, Method: "GET", Host: "example.com"}
}

// TestDecisionLog: a decision is written in full with every field; with
// repeats, its repeats from the client's prefix are only counted, and
// written as one summary line by Flush; another rule is written at once,
// a block's repeats are folded whatever the rule; Close writes every count
// and from then on every decision is written in full.
func TestDecisionLog(t *testing.T) {
	l, buf := testLog(t, zap.InfoLevel, time.Minute)
	if l.Interval() != time.Minute {
		t.Errorf("Interval() = %v", l.Interval())
	}
	until := time.Now().Add(time.Hour)
	sig := &signature.Result{Outcome: signature.Invalid, Agent: "https://rogue.example", Err: errors.New("bad signature")}
	write(l, request("192.0.2.1"), &disallowA, "RogueBot/2.0", "/a/1", "0123456789ab", sig)
	for i := range 9 {
		write(l, request(fmt.Sprintf("192.0.2.%d", i+2)), &disallowA, "RogueBot/2.0", fmt.Sprint("/a/", i), "0123456789ab", nil)
	}
	disallowB := disallowA
	disallowB.Rule = ruleB
	write(l, request("192.0.2.1"), &disallowB, "RogueBot/2.0", "/b/1", "0123456789ab", nil)
	blocked := enforce.Decision{Action: enforce.Deny, Reason: enforce.ReasonBlockedClient, Rule: ruleA, BlockedUntil: until}
	write(l, request("198.51.100.1"), &blocked, "RogueBot/2.0", "/a/x", "0123456789ab", nil)
	blocked.Rule = ruleB
	write(l, request("198.51.100.1"), &blocked, "RogueBot/2.0", "/b/x", "0123456789ab", nil)
	if g := l.Groups(); g != 3 {
		t.Errorf("%d groups, want 3", g)
	}

	full, summaries := entriesOf(t, buf.String())
	if len(full) != 3 || len(summaries) != 0 {
		t.Fatalf("%d full lines, %d summaries before the flush, want 3 and 0:\n%s", len(full), len(summaries), buf.String())
	}
	want := Entry{Level: "info", Logger: LoggerName, Msg: "request refused",
		ClientIP: "192.0.2.1", UserAgent: "RogueBot/2.0", Class: "bot", Tokens: []string{"roguebot"}, Verification: "none",
		Method: "GET", Host: "example.com", URI: "/a/1", Action: "deny", Reason: "disallowed", Group: "*", Strikes: 1,
		RuleLine: 2, Rule: "Disallow: /a/", Zone: "test", RobotsVersion: "0123456789ab",
		Signature: "invalid", SignatureAgent: "https://rogue.example", SignatureError: "bad signature"}
	got := full[0]
	got.TS = Time{}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("full line\n got %+v\nwant %+v", got, want)
	}
	if full[1].Rule != "Disallow: /b/" || full[2].Reason != "blocked_client" || full[2].BlockedUntil == nil || !full[2].BlockedUntil.Equal(until.Truncate(time.Millisecond)) {
		t.Errorf("full lines %+v", full[1:])
	}

	l.Flush(time.Now())
	full, summaries = entriesOf(t, buf.String())
	// The groups are flushed in the table's order.
	slices.SortFunc(summaries, func(a, b Entry) int { return int(b.Repeats - a.Repeats) })
	if len(full) != 3 || len(summaries) != 2 || summaries[0].Repeats != 9 || summaries[1].Repeats != 1 ||
		!strings.HasPrefix(summaries[0].Msg, "9 more like this in ") || summaries[0].URI != "/a/1" || summaries[1].Reason != "blocked_client" {
		t.Fatalf("after the flush: %d full lines, summaries %+v", len(full), summaries)
	}
	write(l, request("192.0.2.1"), &disallowA, "RogueBot/2.0", "/a/2", "0123456789ab", nil)
	l.Close()
	l.Close() // again: nothing more
	full, summaries = entriesOf(t, buf.String())
	if len(full) != 3 || len(summaries) != 3 || summaries[2].Repeats != 1 || l.Groups() != 0 {
		t.Fatalf("after Close: %d full lines, summaries %+v, %d groups", len(full), summaries, l.Groups())
	}
	write(l, request("192.0.2.1"), &disallowA, "RogueBot/2.0", "/a/3", "0123456789ab", nil)
	if full, _ = entriesOf(t, buf.String()); len(full) != 4 || full[3].URI != "/a/3" {
		t.Errorf("after Close, a decision was not written in full")
	}
}

// TestDecisionLogMessages: the message of each kind of decision, in full
// without repeats; a filtered logger writes nothing; an allowed request is
// never folded; SetLogger replaces the logger.
func TestDecisionLogMessages(t *testing.T) {
	l, buf := testLog(t, zap.InfoLevel, 0)
	if l.Interval() != 0 || l.Groups() != 0 {
		t.Errorf("without repeats: interval %v, %d groups", l.Interval(), l.Groups())
	}
	for _, d := range []enforce.Decision{
		{Action: enforce.Deny, Reason: enforce.ReasonTrap}, {Action: enforce.Deny, Reason: enforce.ReasonTrap},
		{Action: enforce.Throttle, Reason: enforce.ReasonCrawlDelay, RetryAfter: 1500 * time.Millisecond, DryRun: true},
		{Reason: enforce.ReasonDisallowed, Violation: true},
		{},
	} {
		write(l, request("192.0.2.1"), &d, "RogueBot/2.0", "/", "", nil)
	}
	full, _ := entriesOf(t, buf.String())
	var msgs []string
	for _, e := range full {
		msgs = append(msgs, e.Msg)
	}
	if want := "[request refused request refused request would be refused (dry run) robots.txt violation logged request allowed]"; fmt.Sprint(msgs) != want {
		t.Errorf("messages %v, want %s", msgs, want)
	}
	if full[2].RetryAfter != 1.5 || !full[2].DryRun {
		t.Errorf("throttle line %+v", full[2])
	}

	quiet, qbuf := testLog(t, zap.ErrorLevel, time.Minute)
	for range 3 {
		write(quiet, request("192.0.2.1"), &disallowA, "RogueBot/2.0", "/a/", "", nil)
	}
	quiet.Close()
	if qbuf.String() != "" || quiet.Groups() != 0 {
		t.Errorf("a filtered logger wrote:\n%s", qbuf.String())
	}

	folding, fbuf := testLog(t, zap.InfoLevel, time.Minute)
	for range 3 {
		write(folding, request("192.0.2.1"), &enforce.Decision{}, "Firefox", "/", "", nil)
	}
	if full, _ := entriesOf(t, fbuf.String()); len(full) != 3 || folding.Groups() != 0 {
		t.Errorf("sampled allowed requests: %d lines, %d groups", len(full), folding.Groups())
	}
	other := &syncBuffer{}
	folding.SetLogger(zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), other, zap.InfoLevel)))
	write(folding, request("192.0.2.1"), &enforce.Decision{}, "Firefox", "/", "", nil)
	if !strings.Contains(other.String(), `"uri":"/"`) {
		t.Errorf("SetLogger: the new logger got %q", other.String())
	}
}

// TestDecisionLogNoAlloc: a repeat costs no allocation.
func TestDecisionLogNoAlloc(t *testing.T) {
	l, _ := testLog(t, zap.InfoLevel, time.Minute)
	req := request("192.0.2.1")
	write(l, req, &disallowA, "RogueBot/2.0", "/a/", "", nil) // the first, logged in full
	if allocs := testing.AllocsPerRun(1000, func() { write(l, req, &disallowA, "RogueBot/2.0", "/a/", "", nil) }); allocs != 0 {
		t.Errorf("a repeat allocates %v times", allocs)
	}
}

// TestRoundSpan: a summary's span.
func TestRoundSpan(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10*time.Second + 4*time.Millisecond: "10s", 90 * time.Second: "1m30s", 2 * time.Minute: "2m",
		time.Hour: "1h", time.Hour + 30*time.Minute: "1h30m", 250 * time.Millisecond: "250ms", -time.Second: "0s",
	} {
		if got := roundSpan(d); got != want {
			t.Errorf("roundSpan(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestLogRepeatsKeepsShort: a group keeps at most maxKept bytes of what
// the client chose (a 10 kB User-Agent, a long URI), cut at a character
// boundary; the first line has them whole.
func TestLogRepeatsKeepsShort(t *testing.T) {
	l, buf := testLog(t, zap.InfoLevel, time.Minute)
	ua := "LongBot/1.0 " + strings.Repeat("é", 5000)
	uri := "/a/" + strings.Repeat("x", 1000)
	for range 3 {
		write(l, request("192.0.2.1"), &disallowA, ua, uri, "", nil)
	}
	l.Close()
	full, summaries := entriesOf(t, buf.String())
	if len(full) != 1 || len(summaries) != 1 || summaries[0].Repeats != 2 {
		t.Fatalf("%d full lines, %d summaries", len(full), len(summaries))
	}
	if full[0].UserAgent != ua || full[0].URI != uri {
		t.Errorf("the first line was cut")
	}
	s := summaries[0]
	if len(s.UserAgent) > maxKept || !strings.HasPrefix(ua, s.UserAgent) || len(s.URI) != maxKept || !strings.HasPrefix(uri, s.URI) || !utf8.ValidString(s.UserAgent) {
		t.Errorf("summary keeps %d bytes of the User-Agent, %d of the URI", len(s.UserAgent), len(s.URI))
	}
}
