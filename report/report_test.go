package report

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsguard/robotsguard/review"
)

// logLine writes one decision as the handler does: a zap logger with
// Caddy's default JSON encoder settings and the Entry inlined.
func logLines(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	cfg := zap.NewProductionEncoderConfig()
	cfg.TimeKey, cfg.EncodeTime = "ts", zapcore.EpochTimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(cfg), zapcore.AddSync(&buf), zap.DebugLevel)
	for i := range entries {
		e := &entries[i]
		logger := zap.New(core).Named(e.Logger)
		ce := logger.Check(zapcore.InfoLevel, e.Msg)
		ce.Time = e.TS.Time
		ce.Write(zap.Inline(e))
	}
	return buf.Bytes()
}

// TestEntryFields: MarshalLogObject writes exactly the fields that the
// JSON tags name, and reading what it wrote gives the entry back.
func TestEntryFields(t *testing.T) {
	until := Time{time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)}
	read := Time{time.Date(2026, 11, 30, 10, 14, 0, 250_000_000, time.UTC)}
	e := Entry{
		TS: Time{time.Date(2026, 11, 30, 10, 15, 0, 500_000_000, time.UTC)}, Level: "info", Logger: LoggerName, Msg: "request refused",
		ClientIP: "192.0.2.1", UserAgent: "GPTBot/1.2", Class: "ai", Tokens: []string{"gptbot"}, Verification: "verified",
		Method: "GET", Host: "example.com", URI: "/private/x?y=1", Action: "deny", Reason: "disallowed", Group: "*",
		Strikes: 2, AddressStrikes: 7, ReadRobots: true, RobotsAt: &read, DryRun: true, Bot: "GPTBot", Operator: "OpenAI", RuleLine: 3, Rule: "Disallow: /private/",
		Site: "shop.example.com", Zone: "shop", RobotsVersion: "0123456789ab", RetryAfter: 1.5, BlockedUntil: &until, BlockReason: "trap", Crawler: "token gptbot", Signature: "invalid", SignatureAgent: "https://agent.example", SignatureError: "expired",
		Evidence: "sec-fetch", EvidenceReason: "claims Chrome 156 on Windows; sec-fetch: no Sec-Fetch-* headers", JA4: "t13d1516h2_8daaf6152771_02713d6af862", QUIC: "q1_g.5.6.7.4.8.9.1.3.b.e.f", Framing: "h2:2:0;4:4194304;5:16384;6:10485760|1073741824|0|a,m,p,s|0", BrowserDisallowed: true,
		Repeats: 41, File: "/srv/robots.txt", URL: "http://127.0.0.1:3000/robots.txt", Error: "boom", Line: 7, Detail: "the file has no Allow or Disallow rules",
	}
	// Every field is set: a new field left at its zero value would not be
	// checked.
	v := reflect.ValueOf(e)
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			t.Fatalf("test entry leaves %s unset", v.Type().Field(i).Name)
		}
	}
	line := logLines(t, e)
	var got Entry
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, e) {
		t.Errorf("round trip:\n got %+v\nwant %+v\nline %s", got, e, line)
	}
	var keys map[string]any
	if err := json.Unmarshal(line, &keys); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < v.NumField(); i++ {
		tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if _, ok := keys[tag]; !ok {
			t.Errorf("field %s (%q) not written", v.Type().Field(i).Name, tag)
		}
		delete(keys, tag)
	}
	if len(keys) > 0 {
		t.Errorf("written but not read: %v", keys)
	}
}

// TestTime: numbers (seconds, milliseconds, nanoseconds) and the string
// forms of Caddy's time_format options.
func TestTime(t *testing.T) {
	want := time.Date(2026, 11, 30, 10, 15, 3, 0, time.UTC)
	for _, in := range []string{"1796033703", "1796033703000", "1796033703000000000", `"2026-11-30T10:15:03Z"`, `"2026-11-30T10:15:03.000Z"`, `"2026/11/30 10:15:03.000"`, `"1796033703"`} {
		var tm Time
		if err := json.Unmarshal([]byte(in), &tm); err != nil || !tm.Equal(want) {
			t.Errorf("%s: %v %v", in, tm, err)
		}
	}
	var tm Time
	if err := json.Unmarshal([]byte(`"yesterday"`), &tm); err != nil || !tm.IsZero() {
		t.Errorf("junk: %v %v", tm, err)
	}
}

// sampleLog is a log the handler would write: decisions of two bots, a
// line of another logger, a plain line, and two module problems.
func sampleLog(t testing.TB) []byte {
	base := time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC)
	var es []Entry
	entry := func(at time.Duration, ip, class, token, uri, action, reason string, read bool) {
		tokens := []string{}
		if token != "" {
			tokens = []string{token}
		}
		es = append(es, Entry{TS: Time{base.Add(at)}, Level: "info", Logger: LoggerName, Msg: "request refused",
			ClientIP: ip, UserAgent: token + "/1.0", Class: class, Tokens: tokens, URI: uri, Host: "example.com:443",
			Action: action, Reason: reason, ReadRobots: read})
	}
	for i := range 5 {
		entry(time.Duration(i)*time.Second, "192.0.2.1", "bot", "roguebot", fmt.Sprintf("/private/%d?q=1", i), "deny", "disallowed", true)
	}
	entry(time.Hour, "192.0.2.1", "bot", "roguebot", "/trap/", "deny", "trap", true)
	entry(time.Hour+time.Second, "198.51.100.2", "script", "curl", "/a", "throttle", "rate", false)
	entry(time.Hour+2*time.Second, "198.51.100.2", "script", "curl", "/a", "allow", "rate", false)
	out := logLines(t, es...)
	out = append(out, `{"level":"info","ts":1,"logger":"http.log.access","msg":"handled request"}`+"\nplain text line\n"...)
	for range 2 {
		out = append(out, fmt.Sprintf(`{"level":"error","ts":%d,"logger":"http.handlers.robots_guard.policy","msg":"robots.txt is invalid; keeping the last good rules","file":"/srv/robots.txt","error":"line 1: content looks like an HTML page"}`+"\n", base.Add(30*time.Minute).Unix())...)
	}
	out = append(out, `{"level":"info","ts":1796033703,"logger":"http.handlers.robots_guard","msg":"robots.txt reloaded","file":"/srv/robots.txt"}`+"\n"...)
	return out
}

// TestReport: the summary of a log the handler wrote.
func TestReport(t *testing.T) {
	rep := New()
	lines, err := Read(bytes.NewReader(sampleLog(t)), &Filter{}, rep.Add, rep.AddMessage)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary(3, lines)
	if s.Decisions != 8 || s.Skipped != 2 || lines.Messages != 3 {
		t.Errorf("decisions %d, skipped %d, messages %d", s.Decisions, s.Skipped, lines.Messages)
	}
	if s.ByAction["deny"] != 6 || s.ByAction["throttle"] != 1 || s.ByReason["disallowed"] != 5 || s.ByReason["trap"] != 1 || s.ByClass["bot"] != 6 {
		t.Errorf("totals: %v %v %v", s.ByAction, s.ByReason, s.ByClass)
	}
	if len(s.TopBots) == 0 || s.TopBots[0].Key != "roguebot" || s.TopBots[0].Count != 6 || s.TopBots[0].Actions["deny"] != 6 {
		t.Errorf("top bots: %+v", s.TopBots)
	}
	if len(s.TopIPs) == 0 || s.TopIPs[0].Key != "192.0.2.1" || !s.TopIPs[0].ReadRobots {
		t.Errorf("top IPs: %+v", s.TopIPs)
	}
	if len(s.ReadIgnored) != 1 || s.ReadIgnored[0].Key != "192.0.2.1" || s.ReadIgnored[0].Violations != 6 {
		t.Errorf("read and ignored: %+v", s.ReadIgnored)
	}
	if len(s.TopPaths) != 3 || s.TopPaths[0].Key != "/a" || s.TopPaths[0].Count != 2 {
		t.Errorf("top paths: %+v", s.TopPaths)
	}
	if len(s.Hourly) != 2 || s.Hourly[0].Count != 5 || s.Hourly[1].Count != 3 || s.Hourly[0].Hour.Hour() != 10 {
		t.Errorf("hourly: %+v", s.Hourly)
	}
	// The invalid robots.txt is listed once, counted twice; the reload
	// (info) is not a problem.
	if len(s.Problems) != 1 || s.Problems[0].Count != 2 || s.Problems[0].File != "/srv/robots.txt" || !strings.Contains(s.Problems[0].Error, "HTML") {
		t.Errorf("problems: %+v", s.Problems)
	}
	var text bytes.Buffer
	s.WriteText(&text)
	for _, want := range []string{
		"robots_guard report: 8 decisions from 2026-11-30 10:15:00 to 2026-11-30 11:15:02 UTC\n",
		"(2 lines of other loggers skipped)",
		"reload and provisioning problems (2 messages):\n  error robots.txt is invalid; keeping the last good rules (/srv/robots.txt): line 1: content looks like an HTML page [2 times",
		"by action: deny 6, allow 1, throttle 1", "roguebot", "read robots.txt, then ignored it:\n  192.0.2.1", "2026-11-30 10:00",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
}

// TestWording: singular and plural, and no empty sections for an empty
// log.
func TestWording(t *testing.T) {
	if Plural(1, "finding") != "1 finding" || Plural(0, "finding") != "0 findings" || Plural(2, "decision") != "2 decisions" {
		t.Error("Plural")
	}
	rep := New()
	lines, _ := Read(strings.NewReader(`{"level":"info","ts":1,"logger":"`+LoggerName+`","msg":"request refused","action":"deny","reason":"trap","class":"browser","client_ip":"192.0.2.9","uri":"/t"}`+"\n"), &Filter{}, rep.Add, rep.AddMessage)
	s := rep.Summary(5, lines)
	var text bytes.Buffer
	s.WriteText(&text)
	if !strings.HasPrefix(text.String(), "robots_guard report: 1 decision from") {
		t.Errorf("got %q", text.String())
	}
	text.Reset()
	empty := New().Summary(5, Lines{})
	empty.WriteText(&text)
	if text.String() != "robots_guard report: 0 decisions\n" {
		t.Errorf("empty report: %q", text.String())
	}
}

// TestFilter: host, action, reason, class, token and time filters.
func TestFilter(t *testing.T) {
	base := time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		f    Filter
		want int
	}{
		{"none", Filter{}, 8},
		{"host without port", Filter{Hosts: []string{"EXAMPLE.com"}}, 8},
		{"other host", Filter{Hosts: []string{"example.org"}}, 0},
		{"reason", Filter{Reasons: []string{"trap", "rate"}}, 3},
		{"action", Filter{Actions: []string{"throttle", "allow"}}, 2},
		{"action and reason", Filter{Actions: []string{"deny"}, Reasons: []string{"trap"}}, 1},
		{"class", Filter{Classes: []string{"script"}}, 2},
		{"token", Filter{Tokens: []string{"roguebot"}}, 6},
		{"since", Filter{Since: base.Add(time.Hour)}, 3},
		{"until", Filter{Until: base.Add(2 * time.Second)}, 2},
		{"since and token", Filter{Since: base.Add(time.Hour), Tokens: []string{"roguebot"}}, 1},
	} {
		rep := New()
		var problems int
		lines, err := Read(bytes.NewReader(sampleLog(t)), &tc.f, rep.Add, func(*Entry) { problems++ })
		if err != nil {
			t.Fatal(err)
		}
		if lines.Decisions != tc.want {
			t.Errorf("%s: %d decisions (%+v), want %d", tc.name, lines.Decisions, lines, tc.want)
		}
	}
}

// TestReadFiles: a rotated gzip log and a plain one, named directly and by
// a glob, are read as one; a glob that matches nothing is an error.
func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	log := sampleLog(t)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(log)
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "robots_guard-2026-11-29T00-00-00.000.log.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "robots_guard.log"), log, 0o644); err != nil {
		t.Fatal(err)
	}
	names, err := ExpandFiles([]string{filepath.Join(dir, "robots_guard*"), filepath.Join(dir, "robots_guard.log")})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 {
		t.Fatalf("expanded to %v", names)
	}
	rep := New()
	lines, err := ReadFiles(names, nil, &Filter{}, rep.Add, rep.AddMessage)
	if err != nil {
		t.Fatal(err)
	}
	if lines.Decisions != 16 || lines.Messages != 6 {
		t.Errorf("read %+v, want 16 decisions and 6 messages", lines)
	}
	if _, err := ExpandFiles([]string{filepath.Join(dir, "nothing*.log")}); err == nil || !strings.Contains(err.Error(), "no file matches") {
		t.Errorf("empty glob: %v", err)
	}
	if _, err := ReadFiles([]string{filepath.Join(dir, "missing.log")}, nil, &Filter{}, nil, nil); err == nil {
		t.Error("missing file: no error")
	}
}

// TestParseTime: dates, times and durations before now; junk is an error
// that says what is accepted.
func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"24h":                  now.Add(-24 * time.Hour),
		"2026-11-29":           time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC),
		"2026-11-29 13:05":     time.Date(2026, 11, 29, 13, 5, 0, 0, time.UTC),
		"2026-11-29T13:05:06Z": time.Date(2026, 11, 29, 13, 5, 6, 0, time.UTC),
	} {
		if got, err := ParseTime(in, now); err != nil || !got.Equal(want) {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	if _, err := ParseTime("last tuesday", now); err == nil || !strings.Contains(err.Error(), "duration before now") {
		t.Errorf("junk: %v", err)
	}
}

// FuzzRead: any log input is read without panicking; every decision it
// counts comes from a line of the input, and the summary prints.
func FuzzRead(f *testing.F) {
	f.Add(sampleLog(f))
	f.Add([]byte("{\"logger\":\"http.handlers.robots_guard\",\"action\":\"allow\",\"ts\":\"2026-11-30T01:02:03Z\"}\nnot json\n{}"))
	f.Add([]byte(`{"logger":"http.handlers.robots_guard.x","level":"error","ts":1e300,"msg":"m"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep := New()
		lines, err := Read(bytes.NewReader(data), &Filter{}, rep.Add, rep.AddMessage)
		if err != nil {
			return
		}
		s := rep.Summary(5, lines)
		if n := bytes.Count(data, []byte("\n")) + 1; s.Decisions+lines.Messages > n {
			t.Fatalf("%d decisions and %d messages from %d lines", s.Decisions, lines.Messages, n)
		}
		var buf bytes.Buffer
		s.WriteText(&buf)
	})
}

// TestView: the review page's view built from logs: zones, bots, the rule
// each violation broke with its robots.txt version and text, problems.
func TestView(t *testing.T) {
	dir := t.TempDir()
	robots := []byte("User-agent: *\nDisallow: /private/\n")
	version := VersionID(robots)
	base := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	var es []Entry
	for i := range 3 {
		es = append(es, Entry{TS: Time{base.Add(time.Duration(i) * time.Minute)}, Level: "info", Logger: LoggerName, Msg: "request refused",
			ClientIP: "192.0.2.1", Class: "ai", Tokens: []string{"gptbot"}, Verification: "verified", URI: fmt.Sprintf("/private/%d", i),
			Action: "deny", Reason: "disallowed", RuleLine: 2, Rule: "Disallow: /private/", ReadRobots: true, Zone: "shop", RobotsVersion: version, Bot: "GPTBot", Operator: "OpenAI"})
	}
	es = append(es, Entry{TS: Time{base.Add(30 * time.Hour)}, Level: "info", Logger: LoggerName, Msg: "request refused", ClientIP: "192.0.2.9",
		Class: "browser", Tokens: []string{}, URI: "/trap/", Action: "deny", Reason: "trap"})
	log := append(logLines(t, es...), `{"level":"error","ts":1796036400,"logger":"http.handlers.robots_guard.policy","msg":"robots.txt is invalid; keeping the last good rules","file":"/srv/robots.txt","error":"HTML"}`+"\n"...)
	name := filepath.Join(dir, "robots_guard.log")
	if err := os.WriteFile(name, log, 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := View([]string{name}, &Filter{}, [][]byte{robots, []byte("unrelated")})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Zones) != 2 || v.Zones[0].Zone != "default" || v.Zones[1].Zone != "shop" {
		t.Fatalf("zones %+v", v.Zones)
	}
	shop := v.Zones[1]
	if len(shop.Bots) != 1 || shop.Bots[0].Key != "gptbot" || shop.Bots[0].Refused != 3 || shop.Bots[0].ReadIgnored != 3 || shop.Bots[0].Verification != "verified" {
		t.Errorf("shop bots %+v", shop.Bots)
	}
	if r := shop.Bots[0].Rules; len(r) != 1 || r[0].Version != version || r[0].Line != 2 || r[0].Rule != "Disallow: /private/" || r[0].Count != 3 {
		t.Errorf("rules %+v", r)
	}
	if len(shop.Versions) != 1 || shop.Versions[0].Text != string(robots) {
		t.Errorf("versions %+v", shop.Versions)
	}
	// 30 hours of logs: the step grows so the series stays at 1440 points.
	if shop.Series.Points != 1440 || shop.Series.Step != 120 {
		t.Errorf("series: %d points of %v s", shop.Series.Points, shop.Series.Step)
	}
	if len(v.Problems) != 1 || v.Problems[0].Count != 1 {
		t.Errorf("problems %+v", v.Problems)
	}
	if _, err := View(nil, &Filter{}, nil); err == nil {
		t.Error("no files: no error")
	}
}

// TestContentUsageCounted: a content_usage refusal is counted by its
// reason in the summary, and the review view keeps the preference line it
// names as that line, not as a Disallow rule.
func TestContentUsageCounted(t *testing.T) {
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var es []Entry
	for i := range 4 {
		es = append(es, Entry{TS: Time{base.Add(time.Duration(i) * time.Second)}, Level: "info", Logger: LoggerName, Msg: "request refused",
			ClientIP: "192.0.2.1", Class: "ai", Tokens: []string{"gptbot"}, URI: fmt.Sprintf("/a/%d", i), Action: "deny",
			Reason: "content_usage", Group: "*", RuleLine: 4, Rule: "Content-Usage: train-ai=n", Zone: "default", Bot: "GPTBot"})
	}
	es = append(es, Entry{TS: Time{base.Add(time.Minute)}, Level: "info", Logger: LoggerName, Msg: "robots.txt violation logged",
		ClientIP: "192.0.2.2", Class: "ai", Tokens: []string{"ccbot"}, URI: "/b", Action: "allow", Reason: "content_usage",
		RuleLine: 5, Rule: "Content-Signal: ai-train=no", Zone: "default", Bot: "CCBot"})
	data := logLines(t, es...)
	rep := New()
	lines, err := Read(bytes.NewReader(data), &Filter{}, rep.Add, rep.AddMessage)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary(5, lines)
	if s.ByReason["content_usage"] != 5 || s.ByAction["deny"] != 4 || s.ByAction["allow"] != 1 {
		t.Errorf("by reason %v, by action %v", s.ByReason, s.ByAction)
	}
	if !Violation(&es[4]) {
		t.Error("a logged content_usage decision is no violation")
	}
	for _, e := range es {
		ev := e.Record()
		if ev.Rule == nil || ev.Rule.String() != e.Rule || ev.Rule.Line != e.RuleLine || ev.Rule.Key == "" {
			t.Errorf("%s: rule %+v", e.Rule, ev.Rule)
		}
	}
}

// TestReportRepeats: a summary line of log_repeats counts as the decisions
// it stands for, in the totals, the rankings, the hourly histogram and the
// review page built from the logs.
func TestReportRepeats(t *testing.T) {
	base := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	first := Entry{TS: Time{base}, Level: "info", Logger: LoggerName, Msg: "request refused",
		ClientIP: "192.0.2.1", Class: "bot", Tokens: []string{"roguebot"}, Verification: "none", URI: "/w/index.php?title=x",
		Action: "deny", Reason: "disallowed", RuleLine: 153, Rule: "Disallow: /w/", Zone: "default"}
	summary := first
	summary.TS, summary.Msg, summary.Repeats = Time{base.Add(10 * time.Second)}, "4211 more like this in 10s", 4211
	other := first
	other.TS, other.ClientIP, other.URI = Time{base.Add(time.Hour)}, "192.0.2.2", "/api/x"
	dir := t.TempDir()
	name := filepath.Join(dir, "robots_guard.log")
	if err := os.WriteFile(name, logLines(t, first, summary, other), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := New()
	lines, err := ReadFiles([]string{name}, nil, &Filter{}, rep.Add, rep.AddMessage)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary(10, lines)
	if lines.Decisions != 3 || s.Decisions != 4213 || s.ByAction["deny"] != 4213 || s.ByReason["disallowed"] != 4213 || s.ByClass["bot"] != 4213 {
		t.Errorf("%d lines, totals %d %v %v %v", lines.Decisions, s.Decisions, s.ByAction, s.ByReason, s.ByClass)
	}
	if s.TopBots[0].Key != "roguebot" || s.TopBots[0].Count != 4213 || s.TopIPs[0].Key != "192.0.2.1" || s.TopIPs[0].Count != 4212 || s.TopIPs[0].Violations != 4212 {
		t.Errorf("top bots %+v, top IPs %+v", s.TopBots, s.TopIPs)
	}
	if s.TopPaths[0].Key != "/w/index.php" || s.TopPaths[0].Count != 4212 || s.Hourly[0].Count != 4212 || s.Hourly[1].Count != 1 {
		t.Errorf("top paths %+v, hourly %+v", s.TopPaths, s.Hourly)
	}
	var text bytes.Buffer
	s.WriteText(&text)
	if s.Folded != 4211 || s.SummaryLines != 1 || !strings.Contains(text.String(), "robots_guard report: 4213 decisions") || !strings.Contains(text.String(), "(4211 of them counted from 1 summary line of log_repeats)") {
		t.Errorf("text report:\n%s", text.String())
	}
	v, err := View([]string{name}, &Filter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b := v.Zones[0].Bots; len(b) != 1 || b[0].Refused != 4213 || len(b[0].Rules) != 1 || b[0].Rules[0].Count != 4213 {
		t.Errorf("review page from the logs: %+v", b)
	}
	// A line can stand for at most MaxInt32 decisions, and a negative
	// count for one.
	if w := (&Entry{Repeats: 1 << 40}).Weight(); w != 1<<31-1 {
		t.Errorf("weight of 2^40 repeats: %d", w)
	}
	if w := (&Entry{Repeats: -5}).Weight(); w != 1 {
		t.Errorf("weight of -5 repeats: %d", w)
	}
}

// TestReportProblemDetail (issue 26, mistake 7): the module's lint findings
// and the lines of a reload that lifts rules carry their detail in a
// "message" field; the report printed "robots.txt lint (…:1) [4 times]"
// with no message, and folded different findings into one. Now each
// finding is a problem of its own, printed with its message.
func TestReportProblemDetail(t *testing.T) {
	var log bytes.Buffer
	for i, m := range []string{"first finding", "second finding", "second finding"} {
		fmt.Fprintf(&log, `{"level":"warn","ts":%d,"logger":"robots_guard","msg":"robots.txt lint","file":"/srv/robots.txt","line":1,"message":%q}`+"\n", 1_800_000_000+i, m)
	}
	fmt.Fprintf(&log, `{"level":"error","ts":1800000010,"logger":"robots_guard","msg":"robots.txt is larger than 500 KiB (RFC 9309's limit): the rules after the cut are not enforced; move them up or shorten the file","url":"http://127.0.0.1:3000/robots.txt","message":"file is larger than 512000 bytes: the last 20459525 bytes are ignored, with 734677 rules: the groups for \"*\" are lost"}`+"\n")
	rep := New()
	lines, err := Read(&log, &Filter{}, rep.Add, rep.AddMessage)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary(3, lines)
	var text bytes.Buffer
	s.WriteText(&text)
	for _, want := range []string{
		"  warn  robots.txt lint (/srv/robots.txt:1): first finding [2027-01-15 08:00:00]\n",
		"  warn  robots.txt lint (/srv/robots.txt:1): second finding [2 times, ",
		`  error robots.txt is larger than 500 KiB (RFC 9309's limit): the rules after the cut are not enforced; move them up or shorten the file (http://127.0.0.1:3000/robots.txt): file is larger than 512000 bytes: the last 20459525 bytes are ignored, with 734677 rules: the groups for "*" are lost`,
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, text.String())
		}
	}
}

// TestReadThenIgnoredAgrees: the log-built page and the text report mark
// "read robots.txt, then ignored it" as the live page does
// (review.Event.ReadThenIgnored) and say when robots.txt was read, in the
// same row: speedybot never asked for robots.txt itself, but its address
// did (under politebot) a minute before its violations, and the row says
// so instead of "never" beside the mark. A served feed is no violation;
// impostors claiming GPTBot are a row of their own; a class refusal names
// the rule the guard added and why.
func TestReadThenIgnoredAgrees(t *testing.T) {
	base := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	read := Time{base}
	entry := func(at time.Duration, ip, class, token, uri, action, reason string, mod func(*Entry)) Entry {
		e := Entry{TS: Time{base.Add(at)}, Level: "info", Logger: LoggerName, Msg: "m", ClientIP: ip, Class: class, Tokens: []string{token},
			URI: uri, Action: action, Reason: reason, Verification: "none"}
		if mod != nil {
			mod(&e)
		}
		return e
	}
	readIt := func(e *Entry) { e.ReadRobots, e.RobotsAt = true, &read }
	es := []Entry{
		entry(0, "192.0.2.10", "bot", "politebot", "/robots.txt", "allow", "robots_txt", nil),
		entry(time.Minute, "192.0.2.10", "bot", "speedybot", "/private/a", "deny", "disallowed", func(e *Entry) { readIt(e); e.Rule, e.RuleLine = "Disallow: /private/", 3 }),
		entry(time.Minute+time.Second, "192.0.2.10", "bot", "speedybot", "/private/b", "deny", "disallowed", func(e *Entry) { readIt(e); e.Rule, e.RuleLine = "Disallow: /private/", 3 }),
		entry(2*time.Minute, "192.0.2.20", "feed", "miniflux", "/private/feed.xml", "allow", "feed", readIt),
		entry(3*time.Minute, "192.0.2.30", "ai", "gptbot", "/", "deny", "blocked_class", func(e *Entry) { e.Rule = "Disallow: /" }),
		entry(3*time.Minute, "192.0.2.31", "ai", "gptbot", "/private/", "deny", "impostor", func(e *Entry) { e.Verification = "impostor" }),
	}
	name := filepath.Join(t.TempDir(), "robots_guard.log")
	if err := os.WriteFile(name, logLines(t, es...), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := View([]string{name}, &Filter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]review.BotView{}
	for _, b := range v.Zones[0].Bots {
		rows[b.Key] = b
	}
	sp := rows["speedybot"]
	if sp.ReadIgnored != 2 || sp.RobotsReads != 0 || sp.AddressRobotsAt == nil || !sp.AddressRobotsAt.Equal(base) {
		t.Errorf("speedybot row: %+v", sp)
	}
	if f := rows["miniflux"]; f.Violations != 0 || f.ReadIgnored != 0 {
		t.Errorf("a served feed counted as a violation: %+v", f)
	}
	if g := rows["gptbot"]; g.Refused != 1 || len(g.Rules) != 1 || g.Rules[0].Reason != "blocked_class" || g.Rules[0].Rule != "Disallow: /" || g.Rules[0].Line != 0 {
		t.Errorf("gptbot row: %+v", g)
	}
	if imp := rows["gptbot (impostor)"]; imp.Refused != 1 || !imp.Impostor {
		t.Errorf("impostor row: %+v", imp)
	}
	rep := New()
	lines, err := ReadFiles([]string{name}, nil, &Filter{}, rep.Add, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary(10, lines)
	if len(s.ReadIgnored) != 1 || s.ReadIgnored[0].Key != "192.0.2.10" || s.ReadIgnored[0].RobotsAt == nil || !s.ReadIgnored[0].RobotsAt.Equal(base) {
		t.Errorf("read and ignored: %+v", s.ReadIgnored)
	}
	bots := map[string]int{}
	for _, b := range s.TopBots {
		bots[b.Key] = b.Count
	}
	if bots["gptbot"] != 1 || bots["gptbot (impostor)"] != 1 {
		t.Errorf("top bots: %+v, want gptbot and its impostor apart", s.TopBots)
	}
	var text bytes.Buffer
	s.WriteText(&text)
	if want := "read robots.txt 2026-11-30 10:00:00, then broke a rule"; !strings.Contains(text.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, text.String())
	}
}

// TestViewBlocked: a report --html page lists the blocks the logged
// decisions show in force at the end of the logs, each with what made it
// (block_reason), the latest per client IP; a block that ended before
// the logs do is left out.
func TestViewBlocked(t *testing.T) {
	base := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	block := func(at, until time.Duration, ip, token, reason, why string) Entry {
		u := Time{base.Add(until)}
		return Entry{TS: Time{base.Add(at)}, Level: "info", Logger: LoggerName, Msg: "request refused", ClientIP: ip, Class: "bot", Tokens: []string{token},
			URI: "/x", Action: "deny", Reason: reason, BlockedUntil: &u, BlockReason: why}
	}
	es := []Entry{
		block(0, time.Minute, "192.0.2.1", "oldbot", "trap", "trap"), // over before the logs end
		block(0, time.Hour, "192.0.2.2", "", "trap", "trap"),
		block(time.Minute, time.Hour, "192.0.2.3", "speedybot", "disallowed", "disallowed"),
		block(2*time.Minute, time.Hour, "192.0.2.3", "speedybot", "blocked_client", "disallowed"),
		block(3*time.Minute, 2*time.Hour, "192.0.2.4", "gptbot", "blocked_class", ""), // a log written before block_reason
	}
	name := filepath.Join(t.TempDir(), "robots_guard.log")
	if err := os.WriteFile(name, logLines(t, es...), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := View([]string{name}, &Filter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range v.Zones[0].Blocked {
		got = append(got, fmt.Sprintf("%s %s %s %s", b.IP, b.Token, b.Reason, b.Until.Sub(base)))
	}
	if want := "[192.0.2.2  trap 1h0m0s 192.0.2.3 speedybot disallowed 1h0m0s 192.0.2.4 gptbot unknown 2h0m0s]"; fmt.Sprint(got) != want {
		t.Errorf("blocked:\n got %v\nwant %s", got, want)
	}
}
