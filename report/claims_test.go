package report

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// TestBrowserClaimsReported (issue 25, "visible even when served"): the
// decisions marked BrowserDisallowed are logged with browser_disallowed,
// their repeats fold through log_repeats, and the report counts them,
// summary lines included: served and refused, by class and evidence, with
// the top paths and rules; an --action filter keeps its own share; a
// bot's refusal and a browser's allowed path are not counted.
func TestBrowserClaimsReported(t *testing.T) {
	l, buf := testLog(t, zap.InfoLevel, time.Minute)
	rule := &policy.Rule{Pattern: "/private/", Line: 3}
	browser := func(ip string) *enforce.Request {
		return &enforce.Request{IP: netip.MustParseAddr(ip), UA: uaclass.Result{Class: uaclass.Browser}, Method: "GET", Host: "example.com", JA4: "t13d1516h2_8daaf6152771_02713d6af862"}
	}
	served := enforce.Decision{Rule: rule, Group: "*", BrowserDisallowed: true}
	for range 6 {
		write(l, browser("192.0.2.50"), &served, "Mozilla/5.0 Chrome/156", "/private/a?x=1", "0123456789ab", nil)
	}
	write(l, browser("198.51.100.7"), &served, "Mozilla/5.0 Chrome/156", "/private/b", "0123456789ab", nil)
	poser := &enforce.Request{IP: netip.MustParseAddr("203.0.113.9"), UA: uaclass.Result{Class: uaclass.Poser}, Method: "GET", Host: "example.com",
		Evidence: evidence.Verdict{Evidence: evidence.TLSStack | evidence.SecFetch}, JA4: "t13d1715h2_5b57614c22b0_3d5424432f57"}
	refused := enforce.Decision{Action: enforce.Deny, Reason: enforce.ReasonDisallowed, Rule: rule, Group: "*", Violation: true, BrowserDisallowed: true, Evidence: evidence.TLSStack | evidence.SecFetch}
	for range 3 {
		write(l, poser, &refused, "Mozilla/5.0 Chrome/156", "/private/c", "0123456789ab", nil)
	}
	bot := disallowA
	write(l, request("192.0.2.60"), &bot, "RogueBot/2.0", "/a/1", "0123456789ab", nil)
	l.Flush(time.Now())

	full, summaries := entriesOf(t, buf.String())
	if len(full) != 4 || len(summaries) != 2 {
		t.Fatalf("%d full lines, %d summary lines, want 4 and 2 (the repeats folded):\n%s", len(full), len(summaries), buf.String())
	}
	if e := full[0]; !e.BrowserDisallowed || e.Action != "allow" || e.Rule != "Disallow: /private/" || e.Msg != "request allowed" || e.JA4 == "" {
		t.Errorf("a browser served on a disallowed path logged as %+v", e)
	}
	if e := full[2]; !e.BrowserDisallowed || e.Class != "poser" || e.Evidence != "tls,sec-fetch" {
		t.Errorf("a poser refused logged as %+v", e)
	}
	if full[3].BrowserDisallowed {
		t.Error("a bot's refusal marked browser_disallowed")
	}

	report := func(f *Filter) (Summary, string) {
		rep := New()
		lines, err := Read(strings.NewReader(buf.String()), f, rep.Add, rep.AddMessage)
		if err != nil {
			t.Fatal(err)
		}
		s := rep.Summary(10, lines)
		var text bytes.Buffer
		s.WriteText(&text)
		return s, text.String()
	}
	s, text := report(&Filter{})
	c := s.BrowserDisallowed
	if c.Count != 10 || c.Served != 7 || c.Refused != 3 || c.ByClass["browser"] != 7 || c.ByClass["poser"] != 3 || c.Evidence["tls"] != 3 || c.Evidence["sec-fetch"] != 3 ||
		len(c.TopPaths) != 3 || c.TopPaths[0].Key != "/private/a" || c.TopPaths[0].Count != 6 || len(c.TopRules) != 1 || c.TopRules[0].Key != "line 3: Disallow: /private/" || c.TopRules[0].Count != 10 {
		t.Errorf("summary %+v", c)
	}
	for _, want := range []string{
		"\nbrowser claims on disallowed paths: 10 (served 7, refused 3)\n",
		"\n  by class:  browser 7, poser 3\n",
		"\n  evidence:  sec-fetch 3, tls 3\n",
		"\n    /private/a                                  6\n",
		"\n    line 3: Disallow: /private/                10\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	if s, text := report(&Filter{Actions: []string{"deny"}}); s.BrowserDisallowed.Count != 3 || !strings.Contains(text, "browser claims on disallowed paths: 3 (served 0, refused 3)") {
		t.Errorf("--action deny: %+v\n%s", s.BrowserDisallowed, text)
	}
	if s, text := report(&Filter{Actions: []string{"throttle"}}); s.BrowserDisallowed.Count != 0 || strings.Contains(text, "browser claims") {
		t.Errorf("--action throttle: %+v\n%s", s.BrowserDisallowed, text)
	}
}
