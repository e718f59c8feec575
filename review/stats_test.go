package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func findBot(v ZoneView, key string) *BotView {
	for i := range v.Bots {
		if v.Bots[i].Key == key {
			return &v.Bots[i]
		}
	}
	return nil
}

// TestRecord: per bot, its class, verification, outcomes, violations after
// reading robots.txt, robots.txt reads, the rules it broke (with the
// version each was judged against) and its top paths; browsers are one row
// per class; the series counts by class and outcome per minute.
func TestRecord(t *testing.T) {
	s := New(Options{})
	v1 := []byte("User-agent: *\nDisallow: /private/\n")
	rule := policy.Rule{Pattern: "/private/", Line: 2}
	ev := func(at time.Duration, token string, class uaclass.Class, o Outcome, path string, mod func(*Event)) {
		e := Event{Time: t0.Add(at), Token: token, Class: class, Outcome: o, Path: path, Version: "aaaaaaaaaaaa", VersionText: v1}
		if token == "gptbot" {
			e.Name, e.Operator, e.Verdict = "GPTBot", "OpenAI", uaclass.Verified
		}
		if mod != nil {
			mod(&e)
		}
		s.Record(&e)
	}
	ev(0, "gptbot", uaclass.AI, Allowed, "/robots.txt", func(e *Event) { e.RobotsTxt = true })
	for i := range 3 {
		ev(time.Duration(i+1)*time.Second, "gptbot", uaclass.AI, Allowed, fmt.Sprintf("/page%d?x=1", i%2), nil)
	}
	ev(5*time.Second, "gptbot", uaclass.AI, Refused, "/private/a", func(e *Event) { e.Violation, e.ReadRobots, e.Rule = true, true, &rule })
	ev(61*time.Second, "gptbot", uaclass.AI, Throttled, "/page0", func(e *Event) { e.Violation = true })
	ev(62*time.Second, "curl", uaclass.Script, Blocked, "/private-archive/", func(e *Event) { e.Violation = true })
	ev(63*time.Second, "", uaclass.Browser, Allowed, "/", nil)
	ev(64*time.Second, "", uaclass.Browser, Blocked, "/private-archive/", func(e *Event) { e.Violation = true })

	v := s.View("default", t0.Add(2*time.Minute))
	g := findBot(v, "gptbot")
	if g == nil {
		t.Fatalf("no gptbot row: %+v", v.Bots)
	}
	if g.Class != "ai" || g.Operator != "OpenAI" || g.Verification != "verified" || g.Allowed != 4 || g.Refused != 1 || g.Throttled != 1 || g.Violations != 2 || g.ReadIgnored != 1 || g.RobotsReads != 1 || g.RobotsAt == nil || !g.RobotsAt.Equal(t0) {
		t.Errorf("gptbot row: %+v", g)
	}
	if len(g.Rules) != 1 || !reflect.DeepEqual(g.Rules[0], RuleCount{Version: "aaaaaaaaaaaa", Line: 2, Rule: "Disallow: /private/", Count: 1}) {
		t.Errorf("gptbot rules: %+v", g.Rules)
	}
	if len(g.Paths) != 3 || g.Paths[0] != (PathCount{Path: "/page0", Count: 3}) {
		t.Errorf("gptbot paths (query dropped, robots.txt not a path): %+v", g.Paths)
	}
	b := findBot(v, "(browser)")
	if b == nil || b.Allowed != 1 || b.Blocked != 1 || len(b.Paths) != 1 || b.Paths[0].Path != "/private-archive/" {
		t.Errorf("browser row (only refused paths kept): %+v", b)
	}
	if c := findBot(v, "curl"); c == nil || c.Blocked != 1 || c.ReadIgnored != 0 {
		t.Errorf("curl row: %+v", c)
	}
	if v.Totals["allowed"] != 5 || v.Totals["refused"] != 1 || v.Totals["throttled"] != 1 || v.Totals["blocked"] != 2 {
		t.Errorf("totals %v", v.Totals)
	}
	// Series: the last point is the minute of end; minute 0 and minute 1.
	ai := v.Series.Classes["ai"]
	n := v.Series.Points
	if n != 1440 || ai == nil || ai["allowed"][n-3] != 4 || ai["refused"][n-3] != 1 || ai["throttled"][n-2] != 1 || v.Series.Step != 60 {
		t.Errorf("ai series: points %d step %v, %v", n, v.Series.Step, summarize(ai))
	}
	if _, ok := v.Series.Classes["seo"]; ok {
		t.Error("a class without requests is in the series")
	}
	if len(v.Versions) != 1 || v.Versions[0].ID != "aaaaaaaaaaaa" || !v.Versions[0].HasText || v.Versions[0].Violations != 4 || v.Versions[0].RobotsReads != 1 {
		t.Errorf("versions: %+v", v.Versions)
	}
	if text, ok := s.VersionText("aaaaaaaaaaaa"); !ok || !bytes.Equal(text, v1) {
		t.Errorf("version text %q %v", text, ok)
	}
}

func summarize(m map[string][]uint32) map[string]map[int]uint32 {
	out := map[string]map[int]uint32{}
	for k, arr := range m {
		out[k] = map[int]uint32{}
		for i, x := range arr {
			if x != 0 {
				out[k][i] = x
			}
		}
	}
	return out
}

// TestVersionAttribution: a violation is attributed to the robots.txt in
// force when it was judged, not to the current one; the same rule broken
// under two versions (at another line after a reload) is one rule broken,
// counted once, linked to the latest version's line and naming the older
// version, not listed twice.
func TestVersionAttribution(t *testing.T) {
	s := New(Options{})
	old := policy.Rule{Pattern: "/a/", Line: 2}
	cur := policy.Rule{Pattern: "/a/", Line: 5}
	s.Record(&Event{Time: t0, Token: "x", Class: uaclass.OtherBot, Outcome: Refused, Violation: true, Rule: &old, Version: "111111111111", VersionText: []byte("v1")})
	s.Record(&Event{Time: t0.Add(time.Hour), Token: "x", Class: uaclass.OtherBot, Outcome: Refused, Violation: true, Rule: &cur, Version: "222222222222", VersionText: []byte("v2")})
	s.Record(&Event{Time: t0.Add(time.Hour), Token: "x", Class: uaclass.OtherBot, Outcome: Refused, Violation: true, Rule: &cur, Version: "222222222222", VersionText: []byte("v2")})
	v := s.View("z", t0.Add(time.Hour))
	rules := findBot(v, "x").Rules
	if len(rules) != 1 || !reflect.DeepEqual(rules[0], RuleCount{Version: "222222222222", Older: []string{"111111111111"}, Line: 5, Rule: "Disallow: /a/", Count: 3}) {
		t.Errorf("rules %+v", rules)
	}
	if len(v.Versions) != 2 || v.Versions[0].ID != "111111111111" || !v.Versions[0].Last.Equal(t0) || v.Versions[1].Violations != 2 {
		t.Errorf("versions %+v", v.Versions)
	}
}

// TestRulesAcrossVersions: a rule broken under versions 1, 2, then 1
// again is one item naming version 1 (the latest) and 2 before it; a rule
// the guard added (line 0) is apart from the file's rule of the same
// text, and names the reason it was added for (block_class, trap).
func TestRulesAcrossVersions(t *testing.T) {
	s := New(Options{})
	r := func(line int) *policy.Rule { return &policy.Rule{Pattern: "/", Line: line} }
	for i, c := range []struct {
		version string
		line    int
		reason  enforce.Reason
	}{{"v1", 3, enforce.ReasonDisallowed}, {"v2", 7, enforce.ReasonDisallowed}, {"v1", 3, enforce.ReasonDisallowed}, {"v2", 0, enforce.ReasonBlockedClass}, {"v2", 0, enforce.ReasonBlockedClass}} {
		s.Record(&Event{Time: t0.Add(time.Duration(i) * time.Second), Token: "x", Class: uaclass.AI, Outcome: Refused, Violation: true, Rule: r(c.line), Reason: c.reason, Version: c.version})
	}
	got := findBot(s.View("z", t0), "x").Rules
	want := []RuleCount{
		{Version: "v1", Older: []string{"v2"}, Line: 3, Rule: "Disallow: /", Count: 3},
		{Version: "v2", Line: 0, Rule: "Disallow: /", Reason: "blocked_class", Count: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rules\n got %+v\nwant %+v", got, want)
	}
}

// TestImpostorRow: requests that claim GPTBot and fail its verification
// are a row of their own ("gptbot (impostor)"), not counted in GPTBot's:
// an attacker cannot make the real crawler look like it breaks the rules.
func TestImpostorRow(t *testing.T) {
	s := New(Options{})
	for i := range 12 {
		e := Event{Time: t0, Token: "gptbot", Name: "GPTBot", Operator: "OpenAI", Class: uaclass.AI, Verdict: uaclass.Verified, Outcome: Allowed, Path: "/"}
		if i < 8 {
			e.Verdict, e.Outcome, e.Violation, e.Path = uaclass.Impostor, Refused, true, "/private/"
		}
		s.Record(&e)
	}
	v := s.View("z", t0)
	g, imp := findBot(v, "gptbot"), findBot(v, "gptbot (impostor)")
	if g == nil || g.Allowed != 4 || g.Refused != 0 || g.Violations != 0 || !reflect.DeepEqual(g.Verifications, map[string]uint64{"verified": 4}) || g.Impostor {
		t.Errorf("gptbot row: %+v", g)
	}
	if imp == nil || imp.Token != "gptbot" || imp.Name != "GPTBot" || imp.Operator != "" || imp.Refused != 8 || imp.Violations != 8 || imp.Verification != "impostor" || !imp.Impostor ||
		!reflect.DeepEqual(imp.Verifications, map[string]uint64{"impostor": 8}) {
		t.Errorf("impostor row: %+v", imp)
	}
}

// TestReadThenIgnored: the one definition of "read robots.txt, then
// ignored it" (a violation after the address fetched robots.txt), with the
// time of that fetch in the row, also for a bot that never asked for
// robots.txt itself (its address did, under another token), and for
// browsers; a violation before any fetch, or an allowed request after
// one, is not.
func TestReadThenIgnored(t *testing.T) {
	read := t0.Add(-time.Minute)
	for _, c := range []struct {
		e    Event
		want bool
	}{
		{Event{Violation: true, ReadRobots: true, RobotsAt: read}, true},
		{Event{Violation: true, ReadRobots: true}, true}, // an older log: no time
		{Event{Violation: true}, false},
		{Event{ReadRobots: true, RobotsAt: read}, false},
	} {
		if got := c.e.ReadThenIgnored(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.e, got, c.want)
		}
	}
	s := New(Options{})
	s.Record(&Event{Time: t0, Token: "politebot", Class: uaclass.OtherBot, Outcome: Allowed, RobotsTxt: true, Path: "/robots.txt"})
	for _, tok := range []string{"speedybot", ""} {
		class := uaclass.OtherBot
		if tok == "" {
			class = uaclass.Browser
		}
		s.Record(&Event{Time: t0, Token: tok, Class: class, Outcome: Refused, Violation: true, Path: "/a"})
		s.Record(&Event{Time: t0.Add(time.Second), Token: tok, Class: class, Outcome: Refused, Violation: true, ReadRobots: true, RobotsAt: read, Path: "/b"})
		s.Record(&Event{Time: t0.Add(2 * time.Second), Token: tok, Class: class, Outcome: Allowed, ReadRobots: true, RobotsAt: t0, Path: "/c"})
	}
	v := s.View("z", t0)
	for _, key := range []string{"speedybot", "(browser)"} {
		b := findBot(v, key)
		if b == nil || b.Violations != 2 || b.ReadIgnored != 1 || b.AddressRobotsAt == nil || !b.AddressRobotsAt.Equal(read) || b.RobotsReads != 0 {
			t.Errorf("%s row: %+v", key, b)
		}
	}
}

// TestPreferenceLineKept: a refusal by an AI usage preference (reason
// content_usage) names its Content-Usage line, and the bot's rules show it
// as that line, apart from a Disallow rule with the same line number.
func TestPreferenceLineKept(t *testing.T) {
	s := New(Options{})
	pref := policy.Rule{Key: policy.KeyContentUsage, Pattern: "train-ai=n", Line: 4}
	dis := policy.Rule{Pattern: "train-ai=n", Line: 4}
	for range 2 {
		s.Record(&Event{Time: t0, Token: "gptbot", Class: uaclass.AI, Outcome: OutcomeOf(enforce.Deny, enforce.ReasonContentUsage), Violation: true, Rule: &pref, Version: "111111111111"})
	}
	s.Record(&Event{Time: t0, Token: "gptbot", Class: uaclass.AI, Outcome: Refused, Violation: true, Rule: &dis, Version: "111111111111"})
	b := findBot(s.View("z", t0), "gptbot")
	if b.Refused != 3 || len(b.Rules) != 2 || !reflect.DeepEqual(b.Rules[0], RuleCount{Version: "111111111111", Line: 4, Rule: "Content-Usage: train-ai=n", Count: 2}) {
		t.Errorf("bot %+v, rules %+v", b, b.Rules)
	}
}

// TestTopK: space-saving keeps every key more frequent than 1/k of the
// stream, however long the tail, with its count overstated at most by the
// error it reports.
func TestTopK(t *testing.T) {
	var tk top[string]
	truth := map[string]uint64{}
	for i := range 20000 {
		var key string
		switch {
		case i%4 == 0:
			key = "/hot"
		case i%6 == 1:
			key = "/warm"
		default:
			key = fmt.Sprintf("/tail/%d", i)
		}
		truth[key]++
		tk.add(key, TopPaths, nil)
	}
	got := pathCounts(tk)
	if len(got) != TopPaths || got[0].Path != "/hot" || got[1].Path != "/warm" {
		t.Fatalf("top paths %+v", got)
	}
	for _, p := range got {
		if p.Count < truth[p.Path] || p.Count-p.Error > truth[p.Path] {
			t.Errorf("%s: count %d error %d, true %d", p.Path, p.Count, p.Error, truth[p.Path])
		}
	}
}

// TestBounded: a flood of invented User-Agents (each its own product
// token) keeps the table within MaxBots rows, the totals exact, and the
// memory bounded; the statistics' heap is logged. 1,000,000 User-Agents
// (100,000 under -short or the race detector).
func TestBounded(t *testing.T) {
	n := 1_000_000
	if testing.Short() || raceEnabled {
		n = 100_000
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := New(Options{})
	rule := policy.Rule{Pattern: "/private/", Line: 2}
	text := bytes.Repeat([]byte("Disallow: /x\n"), 100)
	start := time.Now()
	for i := range n {
		e := Event{Time: t0.Add(time.Duration(i) * time.Millisecond), Token: fmt.Sprintf("flood%07dbot", i), Class: uaclass.OtherBot,
			Outcome: Outcome(i % 4), Path: fmt.Sprintf("/p/%d/%s", i, strings.Repeat("x", i%600)), Violation: i%3 == 0, Rule: &rule,
			Version: fmt.Sprintf("%012d", i%40), VersionText: text}
		s.Record(&e)
	}
	elapsed := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	v := s.View("flood", t0.Add(time.Duration(n)*time.Millisecond))
	tracked, total := 0, uint64(0)
	for _, b := range v.Bots {
		if strings.HasPrefix(b.Key, "flood") {
			tracked++
		}
		total += b.Allowed + b.Refused + b.Throttled + b.Blocked
	}
	other := findBot(v, "(other bots)")
	if tracked > MaxBots || other == nil || other.Bots != uint64(n-tracked) || total != uint64(n) {
		t.Errorf("%d bots tracked (max %d), other %+v, total %d of %d", tracked, MaxBots, other, total, n)
	}
	if len(v.Versions) > MaxVersions {
		t.Errorf("%d versions kept", len(v.Versions))
	}
	heap := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("%d invented User-Agents: %d bots tracked, heap in use +%.1f MiB (%.0f ns per record incl. building the event)", n, tracked, float64(heap)/(1<<20), float64(elapsed.Nanoseconds())/float64(n))
	if heap > 32<<20 {
		t.Errorf("statistics take %d MiB after the flood, want under 32", heap>>20)
	}
}

// TestRecordAllocs: recording a decision of a bot already tracked, or of a
// browser, does not allocate.
func TestRecordAllocs(t *testing.T) {
	s := New(Options{})
	rule := policy.Rule{Pattern: "/private/", Line: 2}
	bot := Event{Time: t0, Token: "gptbot", Class: uaclass.AI, Outcome: Refused, Path: "/private/x?y=1", Violation: true, Rule: &rule, Version: "abc"}
	browser := Event{Time: t0, Class: uaclass.Browser, Outcome: Allowed, Path: "/index.html"}
	s.Record(&bot)
	for name, e := range map[string]*Event{"bot": &bot, "browser": &browser} {
		if n := testing.AllocsPerRun(1000, func() { s.Record(e) }); n != 0 {
			t.Errorf("%s: %v allocations per Record", name, n)
		}
	}
}

func BenchmarkRecord(b *testing.B) {
	s := New(Options{})
	rule := policy.Rule{Pattern: "/private/", Line: 2}
	for _, tc := range []struct {
		name string
		e    Event
	}{
		{"bot", Event{Token: "gptbot", Class: uaclass.AI, Outcome: Allowed, Path: "/articles/42?page=2"}},
		{"bot violation", Event{Token: "gptbot", Class: uaclass.AI, Outcome: Refused, Path: "/private/x", Violation: true, Rule: &rule, Version: "abc"}},
		{"browser", Event{Class: uaclass.Browser, Outcome: Allowed, Path: "/"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := tc.e
			b.ReportAllocs()
			for b.Loop() {
				e.Time = time.Now()
				s.Record(&e)
			}
		})
	}
	// A flood that cycles through more disallowed paths, each under a
	// rule of its own, than the top lists hold: every request misses
	// every item of the bot's lists and replaces one.
	b.Run("bot violation flood", func(b *testing.B) {
		var rules []policy.Rule
		var paths []string
		for i := range 200 {
			rules = append(rules, policy.Rule{Pattern: fmt.Sprintf("/wiki/Special:Page%d/", i), Line: i + 2})
			paths = append(paths, fmt.Sprintf("/wiki/Special:Page%d/x", i))
		}
		e := Event{Token: "roguebot", Class: uaclass.OtherBot, Outcome: Refused, Violation: true, Version: "abc"}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			e.Time = time.Now()
			e.Path, e.Rule = paths[i%len(paths)], &rules[i%len(rules)]
			s.Record(&e)
			i++
		}
	})
}

// TestStaticPage: the page is one self-contained file: no URL to another
// host, the inline style and script match the CSP hashes, and view data
// cannot close its script element.
func TestStaticPage(t *testing.T) {
	v := &View{Source: "logs", Zones: []ZoneView{{Zone: "z", Bots: []BotView{{Key: "</script><script>alert(1)</script>"}}}}}
	page, err := StaticPage(v)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if strings.Count(html, "</script>") != 2 {
		t.Errorf("the data closed its script element:\n%s", html[strings.Index(html, `id="data"`)-20:][:300])
	}
	for _, s := range []string{"http://", "https://", "//cdn"} {
		if i := strings.Index(html, s); i >= 0 && !strings.Contains(html[max(0, i-40):i], "createElementNS") {
			t.Errorf("page refers to %q: %s", s, html[max(0, i-60):min(len(html), i+60)])
		}
	}
	if !strings.Contains(CSP, hash(pageJS)) || !strings.Contains(html, "<script>"+pageJS+"</script>") || !strings.Contains(html, "<style>"+pageCSS+"</style>") {
		t.Error("inline script or style does not match the CSP hashes")
	}
	start := strings.Index(html, `<script id="data" type="application/json">`) + len(`<script id="data" type="application/json">`)
	var back View
	if err := json.Unmarshal([]byte(html[start:start+strings.Index(html[start:], "</script>")]), &back); err != nil || back.Zones[0].Bots[0].Key != v.Zones[0].Bots[0].Key {
		t.Errorf("embedded data does not read back: %v", err)
	}
	t.Logf("page weight: live page %d bytes (script %d, style %d)", len(LivePage()), len(pageJS), len(pageCSS))
}

// TestViewer: the viewer passes the page's requests to the admin API,
// refuses other hosts (DNS rebinding) and cross-origin POSTs.
func TestViewer(t *testing.T) {
	var calls []string
	v := &Viewer{Admin: func(method, uri string, body io.Reader) (*http.Response, error) {
		b := ""
		if body != nil {
			data, _ := io.ReadAll(body)
			b = " " + string(data)
		}
		calls = append(calls, method+" "+uri+b)
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(`{"ok":true}`))}, nil
	}}
	srv := httptest.NewServer(v)
	defer srv.Close()
	do := func(method, path, body string, headers ...string) int {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		for i := 0; i+1 < len(headers); i += 2 {
			if headers[i] == "Host" {
				req.Host = headers[i+1]
			} else {
				req.Header.Set(headers[i], headers[i+1])
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		method, path, body string
		headers            []string
		want               int
	}{
		{"GET", "/", "", nil, 200},
		{"GET", "/stats?zone=a", "", nil, 200},
		{"GET", "/robots?zone=a&version=b", "", nil, 200},
		{"POST", "/unblock", `{"ip":"192.0.2.1"}`, []string{"Origin", "http://" + host, "Sec-Fetch-Site", "same-origin"}, 200},
		{"POST", "/unblock", `{"ip":"192.0.2.2"}`, []string{"Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"}, 403},
		{"POST", "/unblock", `{"ip":"192.0.2.3"}`, []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"GET", "/stats", "", []string{"Host", "evil.example:80"}, 403},
		{"GET", "/unblock", "", nil, 405},
		{"GET", "/config/", "", nil, 404},
	} {
		if got := do(tc.method, tc.path, tc.body, tc.headers...); got != tc.want {
			t.Errorf("%s %s %v: %d, want %d", tc.method, tc.path, tc.headers, got, tc.want)
		}
	}
	want := []string{"GET /robots_guard/", "GET /robots_guard/stats?zone=a", "GET /robots_guard/robots?zone=a&version=b", `POST /robots_guard/unblock {"ip":"192.0.2.1"}`}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("admin calls %q, want %q", calls, want)
	}
}

// TestRecordConcurrent: goroutines recording at once lose no count (the
// race detector checks the rest).
func TestRecordConcurrent(t *testing.T) {
	s := New(Options{})
	const workers, each = 8, 2000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				e := Event{Time: t0, Token: fmt.Sprintf("bot%d", i%50), Class: uaclass.OtherBot, Outcome: Outcome(w % 4), Path: "/x"}
				if i%3 == 0 {
					e = Event{Time: t0, Class: uaclass.Browser, Outcome: Allowed, Path: "/"}
				}
				s.Record(&e)
			}
		}()
	}
	wg.Wait()
	v := s.View("z", t0)
	var total uint64
	for _, b := range v.Bots {
		total += b.Allowed + b.Refused + b.Throttled + b.Blocked
	}
	if total != workers*each {
		t.Errorf("counted %d of %d", total, workers*each)
	}
	var series uint64
	for _, byOutcome := range v.Series.Classes {
		for _, arr := range byOutcome {
			for _, x := range arr {
				series += uint64(x)
			}
		}
	}
	if series != workers*each {
		t.Errorf("series counted %d of %d", series, workers*each)
	}
}
