package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSitesApart (issue 39, point 1): decisions of two sites, each with
// its robots.txt, in one log: every row of the report names its site, one
// bot's row per site, and a rule's row counts the lines of one site's file
// only (line 7 of A's robots.txt is not line 7 of B's); the text names the
// sites in its header and on each row; a log of one site names it once.
func TestSitesApart(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	deny := func(site, ip, uri, rule string, line int) Entry {
		return Entry{TS: Time{at}, Level: "info", Logger: LoggerName, Msg: "request refused", ClientIP: ip, UserAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
			Class: "browser", Verification: "not_claimed", Method: "GET", Host: site, URI: uri, Action: "allow", Group: "*", Site: site, Zone: site,
			RuleLine: line, Rule: rule, BrowserDisallowed: true}
	}
	bot := func(site, uri string) Entry {
		return Entry{TS: Time{at}, Level: "info", Logger: LoggerName, Msg: "request refused", ClientIP: "192.0.2.9", UserAgent: "Scrapy/2.11",
			Class: "script", Tokens: []string{"scrapy"}, Verification: "none", Method: "GET", Host: site, URI: uri, Action: "deny", Reason: "disallowed",
			Group: "*", Site: site, Zone: "shared"}
	}
	log := logLines(t,
		bot("a.example", "/private/"), bot("a.example", "/private/"), bot("b.example:8443", "/admin/"),
		deny("a.example", "192.0.2.1", "/private/x", "Disallow: /private/", 7), deny("b.example:8443", "192.0.2.2", "/admin/x", "Disallow: /admin/", 7))
	name := filepath.Join(t.TempDir(), "robots_guard.log")
	if err := os.WriteFile(name, log, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := New()
	lines, err := ReadFiles([]string{name}, nil, &Filter{}, rep.Add, rep.AddMessage)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary(10, lines)
	if s.BySite["a.example"] != 3 || s.BySite["b.example:8443"] != 2 {
		t.Errorf("by site: %v", s.BySite)
	}
	rows := append(append(append(append([]TopEntry{}, s.TopBots...), s.TopIPs...), s.TopPaths...), s.BrowserDisallowed.TopRules...)
	for _, r := range rows {
		if r.Site != "a.example" && r.Site != "b.example:8443" {
			t.Errorf("a row names no site: %+v", r)
		}
	}
	if len(s.BrowserDisallowed.TopRules) != 2 || s.BrowserDisallowed.TopRules[0].Count != 1 {
		t.Errorf("line 7 of two files counted as one rule: %+v", s.BrowserDisallowed.TopRules)
	}
	if len(s.TopBots) != 4 || s.TopBots[0].Key != "scrapy" || s.TopBots[0].Site != "a.example" || s.TopBots[0].Count != 2 {
		t.Errorf("top bots: %+v", s.TopBots)
	}
	var text bytes.Buffer
	s.WriteText(&text)
	for _, want := range []string{
		"robots_guard report: 5 decisions on 2 sites (a.example 3, b.example:8443 2) from ",
		fmt.Sprintf("  %-40s %6d  deny 2\n", "scrapy @ a.example", 2),
		fmt.Sprintf("  %-40s %6d  deny 1\n", "scrapy @ b.example:8443", 1),
		fmt.Sprintf("    %-38s %6d\n", "line 7: Disallow: /private/ @ a.example", 1),
		fmt.Sprintf("    %-38s %6d\n", "line 7: Disallow: /admin/ @ b.example:8443", 1),
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text does not say %q:\n%s", want, text.String())
		}
	}
	js, _ := json.Marshal(s)
	if !strings.Contains(string(js), `"by_site":{"a.example":3,"b.example:8443":2}`) || !strings.Contains(string(js), `"key":"scrapy","site":"a.example"`) {
		t.Errorf("JSON: %s", js)
	}
	// One site: named once, in the header.
	one := New()
	one.Add(&Entry{TS: Time{at}, Logger: LoggerName, ClientIP: "192.0.2.9", Tokens: []string{"scrapy"}, URI: "/x", Action: "deny", Reason: "disallowed", Site: ":8080"})
	var t1 bytes.Buffer
	s1 := one.Summary(10, Lines{})
	s1.WriteText(&t1)
	if !strings.HasPrefix(t1.String(), "robots_guard report: 1 decision on :8080 from ") || strings.Contains(t1.String(), "@ :8080") {
		t.Errorf("one site:\n%s", t1.String())
	}
}

// TestViewSitesAndUnblock (issue 39, points 1 and 9): report --html's view
// has one part per site of a zone, each with its own rows and blocks; a
// block that caddy robots unblock lifted later (its line in the log) is
// listed no more, and one earned after the unblock is.
func TestViewSitesAndUnblock(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	until := Time{at.Add(time.Hour)}
	trap := func(site, ip string, ts time.Time) Entry {
		return Entry{TS: Time{ts}, Level: "info", Logger: LoggerName, Msg: "request refused", ClientIP: ip, UserAgent: "curl/8.5.0", Class: "script",
			Tokens: []string{"curl"}, Verification: "none", Method: "GET", Host: site, URI: "/trap/", Action: "deny", Reason: "trap", Site: site, Zone: "shared",
			BlockedUntil: &until, BlockReason: "trap"}
	}
	log := logLines(t, trap("a.example", "192.0.2.1", at), trap("b.example", "192.0.2.2", at),
		Entry{TS: Time{at.Add(time.Minute)}, Level: "info", Logger: LoggerName, Msg: UnblockedMsg, ClientIP: "192.0.2.1/32"},
		trap("b.example", "192.0.2.3", at.Add(2*time.Minute)))
	name := filepath.Join(t.TempDir(), "robots_guard.log")
	if err := os.WriteFile(name, log, 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := View([]string{name}, &Filter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Zones) != 2 || v.Zones[0].Site != "a.example" || v.Zones[1].Site != "b.example" || v.Zones[0].Zone != "shared" {
		t.Fatalf("views: %+v", v.Zones)
	}
	if n := len(v.Zones[0].Blocked); n != 0 {
		t.Errorf("a.example lists %d blocks after caddy robots unblock 192.0.2.1: %+v", n, v.Zones[0].Blocked)
	}
	if b := v.Zones[1].Blocked; len(b) != 2 || b[0].IP != "192.0.2.2" || b[0].Site != "b.example" || b[1].IP != "192.0.2.3" {
		t.Errorf("b.example's blocks: %+v", b)
	}
}
