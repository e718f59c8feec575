package caddymodule

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/record"
	"github.com/robotsguard/robotsguard/report"
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

// jsonLogger returns a decision logger that writes JSON lines as Caddy's
// json log encoder does (ts in Unix seconds, the logger's name), at level.
func jsonLogger(w zapcore.WriteSyncer, level zapcore.Level) *zap.Logger {
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{
		TimeKey: "ts", LevelKey: "level", NameKey: "logger", MessageKey: "msg",
		EncodeTime: zapcore.EpochTimeEncoder, EncodeLevel: zapcore.LowercaseLevelEncoder,
		EncodeDuration: zapcore.SecondsDurationEncoder,
	})
	return zap.New(zapcore.NewCore(enc, w, level)).Named(report.LoggerName)
}

// loggedHandler provisions h with its decision log going to the returned
// buffer at level, and returns a function that reads the decisions counted
// since h was provisioned (the counters are process-wide: they survive
// reloads, so earlier tests' counts are there too). The handler is cleaned
// up at the end of the test unless the test did.
func loggedHandler(t testing.TB, h *Handler, level zapcore.Level) (*syncBuffer, func() map[string]int) {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(func() {
		_ = h.Cleanup()
		cancel()
	})
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	buf := &syncBuffer{}
	h.decisions.SetLogger(jsonLogger(buf, level))
	before := decisionMetrics(t, ctx)
	return buf, func() map[string]int {
		out := map[string]int{}
		for k, n := range decisionMetrics(t, ctx) {
			if n -= before[k]; n > 0 {
				out[k] = n
			}
		}
		return out
	}
}

// decisionMetrics returns caddy_robots_guard_decisions_total by
// "action reason class".
func decisionMetrics(t testing.TB, ctx caddy.Context) map[string]int {
	t.Helper()
	families, err := ctx.GetMetricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, f := range families {
		if f.GetName() != "caddy_robots_guard_decisions_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if n := int(m.GetCounter().GetValue()); n > 0 {
				out[labels["action"]+" "+labels["reason"]+" "+labels["class"]] += n
			}
		}
	}
	return out
}

// refusedMetrics keeps the decisions that are logged (not "allow none").
func refusedMetrics(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range m {
		if !strings.HasPrefix(k, "allow none ") && !strings.HasPrefix(k, "allow robots_txt ") {
			out[k] = n
		}
	}
	return out
}

// reportOf reads a decision log as "caddy robots report" does, and returns
// its summary and its decisions by "action reason class".
func reportOf(t testing.TB, log string) (report.Summary, map[string]int, []report.Entry) {
	t.Helper()
	rep := report.New()
	by := map[string]int{}
	var entries []report.Entry
	lines, err := report.Read(strings.NewReader(log), &report.Filter{}, func(e *report.Entry) {
		rep.Add(e)
		by[e.Action+" "+e.Reason+" "+e.Class] += e.Weight()
		entries = append(entries, *e)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lines.Other > 0 {
		t.Errorf("%d lines the report does not read:\n%s", lines.Other, log)
	}
	return rep.Summary(1000, lines), by, entries
}

// request runs one request through the handler, as Caddy's server would
// (a replacer, the client_ip variable, and a server without handle_errors
// routes), and returns the status and the X-Robots-Guard header.
func request(h *Handler, ip, ua, target string) (int, string) {
	r := httptest.NewRequest("GET", target, nil)
	r.Header.Set("User-Agent", ua)
	ctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer())
	ctx = context.WithValue(ctx, caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: ip})
	ctx = context.WithValue(ctx, caddyhttp.ServerCtxKey, &caddyhttp.Server{})
	w := httptest.NewRecorder()
	err := h.ServeHTTP(w, r.WithContext(ctx), caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(200)
		return nil
	}))
	if err != nil {
		return -1, err.Error()
	}
	return w.Code, w.Header().Get("X-Robots-Guard")
}

func writeRobots(t testing.TB, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// decisionLines returns the log's decision lines split into full lines
// and summary lines.
func decisionLines(entries []report.Entry) (full, summaries []report.Entry) {
	for _, e := range entries {
		if e.Repeats > 0 {
			summaries = append(summaries, e)
		} else {
			full = append(full, e)
		}
	}
	return full, summaries
}

const uaRogue = "Mozilla/5.0 (compatible; RogueBot/2.0; +http://rogue.example/bot)"

// TestLogRepeats: a flood from a few clients over two rules writes one
// line per (client, reason, rule) and, after the interval, one summary
// line each; the report's totals, by action, reason and class, equal the
// metrics'; clients are told apart by address prefix, so addresses of one
// IPv6 /64 are one client.
func TestLogRepeats(t *testing.T) {
	robots := writeRobots(t, "User-agent: *\nDisallow: /a/\nDisallow: /b/\nDisallow: /c/\n")
	h := &Handler{Robots: robots, Zone: "log-repeats", Verify: &VerifyConfig{Disabled: true}, Strikes: 1 << 30, Rates: map[string]caddy.Duration{"bot": 0}}
	buf, metrics := loggedHandler(t, h, zap.InfoLevel)
	requests := 0
	for i := range 600 {
		ip := fmt.Sprintf("192.0.2.%d", i%3+1)
		path := []string{"/a/", "/b/"}[i/3%2] + fmt.Sprint(i)
		if code, guard := request(h, ip, uaRogue, path); code != 403 || guard != "disallowed" {
			t.Fatalf("%s %s: %d %q", ip, path, code, guard)
		}
		requests++
	}
	for i := range 50 {
		ip := netip.MustParseAddr("2001:db8:1::1").As16()
		ip[15] = byte(i + 1)
		if code, _ := request(h, netip.AddrFrom16(ip).String(), uaRogue, "/a/v6"); code != 403 {
			t.Fatalf("IPv6 client: %d", code)
		}
		requests++
	}
	// Browsers are allowed, and not logged where robots may go (where
	// they may not, they are: TestIntegrationBrowserClaims).
	request(h, "192.0.2.99", uaFirefox, "/d/")

	_, _, entries := reportOf(t, buf.String())
	full, summaries := decisionLines(entries)
	if len(full) != 7 || len(summaries) != 0 {
		t.Fatalf("before the interval: %d full lines, %d summaries, want 7 (3 clients x 2 rules + the /64) and 0:\n%s", len(full), len(summaries), buf.String())
	}
	// A new rule is logged at once.
	request(h, "192.0.2.1", uaRogue, "/c/new")
	requests++
	_, _, entries = reportOf(t, buf.String())
	if full, _ = decisionLines(entries); len(full) != 8 || full[7].Rule != "Disallow: /c/" || full[7].URI != "/c/new" {
		t.Fatalf("a new rule was not logged at once: %d lines, last %+v", len(full), full[len(full)-1])
	}

	h.decisions.Flush(time.Now())
	sum, byKey, entries := reportOf(t, buf.String())
	full, summaries = decisionLines(entries)
	if len(full) != 8 || len(summaries) != 7 {
		t.Fatalf("%d full and %d summary lines after the interval, want 8 and 7 (the new rule had no repeat):\n%s", len(full), len(summaries), buf.String())
	}
	for _, s := range summaries {
		want := fmt.Sprintf("%d more like this in ", s.Repeats)
		if !strings.HasPrefix(s.Msg, want) || s.Action != "deny" || s.Reason != "disallowed" || s.Class != "bot" || s.Token() != "roguebot" || s.Rule == "" {
			t.Errorf("summary line %+v", s)
		}
	}
	if sum.Decisions != requests {
		t.Errorf("the report counts %d decisions, the handler decided %d", sum.Decisions, requests)
	}
	if m := refusedMetrics(metrics()); fmt.Sprint(m) != fmt.Sprint(byKey) {
		t.Errorf("report by action, reason and class %v; metrics %v", byKey, m)
	}
	ips := map[string]int{}
	for _, e := range sum.TopIPs {
		ips[e.Key] = e.Count
	}
	if ips["192.0.2.1"] != 201 || ips["192.0.2.2"] != 200 || ips["2001:db8:1::1"] != 50 || len(ips) != 4 {
		t.Errorf("report by IP: %v", ips)
	}
	// Nothing more to write: the next flush writes nothing, and a flush a
	// whole interval later closes the idle groups, so that the next
	// refusal is logged in full again.
	before := buf.String()
	h.decisions.Flush(time.Now())
	if buf.String() != before {
		t.Errorf("a flush without repeats wrote:\n%s", strings.TrimPrefix(buf.String(), before))
	}
	h.decisions.Flush(time.Now().Add(h.decisions.Interval()))
	if n := h.decisions.Groups(); n != 0 {
		t.Fatalf("%d groups still held after an idle interval", n)
	}
	request(h, "192.0.2.1", uaRogue, "/a/again")
	_, _, entries = reportOf(t, buf.String())
	if full, _ = decisionLines(entries); full[len(full)-1].URI != "/a/again" {
		t.Errorf("after an idle interval, the refusal was not logged in full")
	}
}

// TestLogRepeatsLadder: a rogue client climbs the ladder (disallowed, then
// blocked): each new reason is logged at once, the block's repeats are
// folded whatever the paths' rules, and on Cleanup every count is written.
func TestLogRepeatsLadder(t *testing.T) {
	robots := writeRobots(t, "User-agent: *\nDisallow: /a/\nDisallow: /b/\nDisallow: /c/\n")
	h := &Handler{Robots: robots, Zone: "log-repeats-ladder", Verify: &VerifyConfig{Disabled: true}, Traps: []string{"/trap/"}}
	buf, metrics := loggedHandler(t, h, zap.InfoLevel)
	reasons := map[string]int{}
	for i := range 300 {
		_, guard := request(h, "198.51.100.7", uaRogue, []string{"/a/", "/b/", "/c/"}[i%3]+fmt.Sprint(i))
		reasons[guard]++
	}
	if reasons["disallowed"] == 0 || reasons["blocked_client"] < 250 {
		t.Fatalf("reasons %v", reasons)
	}
	_, _, entries := reportOf(t, buf.String())
	full, _ := decisionLines(entries)
	var got []string
	for _, e := range full {
		got = append(got, e.Reason+" "+e.Rule)
	}
	// The strikes on each rule, each logged at once, then the block,
	// whatever rule each path matched.
	want := "[disallowed Disallow: /a/ disallowed Disallow: /b/ disallowed Disallow: /c/ blocked_client Disallow: /c/]"
	if fmt.Sprint(got) != want {
		t.Errorf("full lines %v, want %v", got, want)
	}
	if err := h.Cleanup(); err != nil {
		t.Fatal(err)
	}
	sum, byKey, _ := reportOf(t, buf.String())
	if sum.Decisions != 300 || fmt.Sprint(refusedMetrics(metrics())) != fmt.Sprint(byKey) {
		t.Errorf("after Cleanup: report %d decisions %v, metrics %v", sum.Decisions, byKey, metrics())
	}
	// After Cleanup (a request still in flight), decisions are logged in
	// full.
	request(h, "198.51.100.7", uaRogue, "/late")
	if _, _, entries = reportOf(t, buf.String()); entries[len(entries)-1].URI != "/late" || entries[len(entries)-1].Repeats != 0 {
		t.Errorf("a decision after Cleanup was not logged in full: %+v", entries[len(entries)-1])
	}
}

// TestLogRepeatsOff: log_repeats 0 logs every refusal, as before.
func TestLogRepeatsOff(t *testing.T) {
	robots := writeRobots(t, "User-agent: *\nDisallow: /a/\n")
	off := caddy.Duration(0)
	h := &Handler{Robots: robots, Zone: "log-repeats-off", Verify: &VerifyConfig{Disabled: true}, Strikes: 1 << 30, Rates: map[string]caddy.Duration{"bot": 0}, LogRepeats: &off}
	buf, _ := loggedHandler(t, h, zap.InfoLevel)
	if h.decisions.Interval() != 0 {
		t.Fatal("log_repeats 0 made a repeat table")
	}
	for i := range 20 {
		request(h, "192.0.2.1", uaRogue, fmt.Sprintf("/a/%d", i))
	}
	if _, _, entries := reportOf(t, buf.String()); len(entries) != 20 {
		t.Errorf("%d lines for 20 refusals", len(entries))
	}
}

// TestLogRepeatsFiltered: with the decision log filtered out, nothing is
// built or counted.
func TestLogRepeatsFiltered(t *testing.T) {
	robots := writeRobots(t, "User-agent: *\nDisallow: /a/\n")
	h := &Handler{Robots: robots, Zone: "log-repeats-filtered", Verify: &VerifyConfig{Disabled: true}}
	buf, metrics := loggedHandler(t, h, zap.ErrorLevel)
	for i := range 20 {
		// One network each: in one, the crawler would be blocked by the
		// tenth strike (issue 38).
		request(h, fmt.Sprintf("192.0.%d.1", i), uaRogue, "/a/")
	}
	h.decisions.Close()
	if buf.String() != "" {
		t.Errorf("a filtered logger wrote:\n%s", buf.String())
	}
	if m := metrics(); m["deny disallowed bot"] != 20 {
		t.Errorf("metrics %v", m)
	}
}

// TestLogRepeatsBounded: eight clients flood while a stream of one-off
// clients (one request each, several times the table's slots) churns
// through, from concurrent goroutines with flushes between: the table stays
// within its slots, the flooding clients keep their groups (a few lines
// each, not one per request), and the report counts every decision
// exactly.
func TestLogRepeatsBounded(t *testing.T) {
	n := 200_000
	if raceEnabled || testing.Short() {
		n = 40_000
	}
	robots := writeRobots(t, "User-agent: *\nDisallow: /\n")
	h := &Handler{Robots: robots, Zone: "log-repeats-bounded", Verify: &VerifyConfig{Disabled: true}, Strikes: 1 << 30, Rates: map[string]caddy.Duration{"bot": 0}}
	buf, metrics := loggedHandler(t, h, zap.InfoLevel)
	var wg sync.WaitGroup
	const workers = 4
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				ip := netip.AddrFrom4([4]byte{10, 255, 0, byte(i / 2 % 8)}) // a flooding client
				if i%2 == 1 {
					ip = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) // a one-off
				}
				request(h, ip.String(), uaRogue, "/x")
				if i%10_000 == 0 {
					h.decisions.Flush(time.Now())
				}
			}
		})
	}
	wg.Wait()
	groups := h.decisions.Groups()
	h.decisions.Close()
	sum, byKey, entries := reportOf(t, buf.String())
	if sum.Decisions != n || byKey["deny disallowed bot"] != metrics()["deny disallowed bot"] {
		t.Errorf("report %d decisions (%v), metrics %v, want %d", sum.Decisions, byKey, metrics(), n)
	}
	flooders := 0
	for _, e := range entries {
		if strings.HasPrefix(e.ClientIP, "10.255.0.") {
			flooders++
		}
	}
	if flooders > n/200 {
		t.Errorf("the flooding clients' %d requests wrote %d lines", n/2, flooders)
	}
	t.Logf("%d refusals (%d from 8 flooding clients, %d one-offs): %d lines (%d of them for the flooding clients), %d bytes; %d groups held",
		n, n/2, n/2, len(entries), flooders, len(buf.String()), groups)
}

// TestLogRepeatsNoAlloc: a repeat costs no allocation in the decision log.
func TestLogRepeatsNoAlloc(t *testing.T) {
	robots := writeRobots(t, "User-agent: *\nDisallow: /a/\n")
	h := &Handler{Robots: robots, Zone: "log-repeats-alloc", Verify: &VerifyConfig{Disabled: true}, Strikes: 1 << 30, Rates: map[string]caddy.Duration{"bot": 0}}
	loggedHandler(t, h, zap.InfoLevel)
	r := httptest.NewRequest("GET", "/a/x", nil)
	r.Header.Set("User-Agent", uaRogue)
	ctx := context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: "192.0.2.1"})
	r = r.WithContext(ctx)
	snap := h.source.Snapshot()
	f := h.facts(nil, r, varsOf(r))
	var rd enforce.Reading
	err := h.reader.Read(r, &f, snap.Policy, &rd)
	d := h.engine.Decide(&rd.Request, snap.Policy)
	if err != nil || d.Action != enforce.Deny {
		t.Fatalf("%+v %v", d, err)
	}
	rec := record.New(&rd, &d, h.Zone, snap.Version, snap.Body)
	h.decisions.Write(&rec) // the first, logged in full
	if allocs := testing.AllocsPerRun(1000, func() { h.decisions.Write(&rec) }); allocs != 0 {
		t.Errorf("a repeat allocates %v times", allocs)
	}
}
