package review

import (
	"testing"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// TestBrowserClaims (issue 25, "visible even when served"): a zone counts
// the requests claiming a browser for a disallowed path, served and
// refused, by class (a served poser of posers "log" as a poser), by
// evidence, with their top paths and rules; a browser's other requests and
// a bot's refusals are not counted; recording one allocates nothing once
// its path is listed.
func TestBrowserClaims(t *testing.T) {
	s := New(Options{})
	rule := policy.Rule{Pattern: "/private/", Line: 3}
	served := Event{Time: t0, Class: uaclass.Browser, Outcome: Allowed, Path: "/private/a?x=1", Rule: &rule, Version: "abc", BrowserDisallowed: true, Evidence: evidence.SecCHUA}
	poser := Event{Time: t0, Class: uaclass.Poser, Outcome: Refused, Violation: true, Path: "/private/b", Rule: &rule, Version: "abc", BrowserDisallowed: true, Evidence: evidence.TLSStack | evidence.SecFetch}
	logged := Event{Time: t0, Class: uaclass.Browser, Outcome: Allowed, Path: "/private/b", Rule: &rule, Version: "abc", BrowserDisallowed: true, Evidence: evidence.SecFetch}
	blocked := Event{Time: t0, Class: uaclass.Browser, Outcome: Blocked, Violation: true, Path: "/private/a", Rule: &rule, Version: "abc", BrowserDisallowed: true}
	for _, e := range []*Event{&served, &served, &served, &poser, &poser, &logged, &blocked} {
		s.Record(e)
	}
	s.Record(&Event{Time: t0, Class: uaclass.Browser, Outcome: Allowed, Path: "/index.html"})
	s.Record(&Event{Time: t0, Token: "roguebot", Class: uaclass.OtherBot, Outcome: Refused, Violation: true, Path: "/private/c", Rule: &rule, Version: "abc"})

	c := s.View("z", t0).BrowserDisallowed
	if c.Served != 4 || c.Refused != 3 || c.ByClass["browser"] != (ClaimCount{Served: 3, Refused: 1}) || c.ByClass["poser"] != (ClaimCount{Served: 1, Refused: 2}) {
		t.Errorf("served %d refused %d by class %v", c.Served, c.Refused, c.ByClass)
	}
	if len(c.Evidence) != 3 || c.Evidence["sec-fetch"] != 3 || c.Evidence["tls"] != 2 || c.Evidence["sec-ch-ua"] != 3 {
		t.Errorf("evidence %v", c.Evidence)
	}
	if len(c.Paths) != 2 || c.Paths[0] != (PathCount{Path: "/private/a", Count: 4}) || c.Paths[1] != (PathCount{Path: "/private/b", Count: 3}) {
		t.Errorf("paths %+v", c.Paths)
	}
	if len(c.Rules) != 1 || c.Rules[0].Rule != "Disallow: /private/" || c.Rules[0].Line != 3 || c.Rules[0].Count != 7 || c.Rules[0].Version != "abc" {
		t.Errorf("rules %+v", c.Rules)
	}
	if empty := New(Options{}).View("z", t0).BrowserDisallowed; empty.Served+empty.Refused != 0 || len(empty.ByClass) != 0 || len(empty.Paths) != 0 {
		t.Errorf("no requests: %+v", empty)
	}
	if n := testing.AllocsPerRun(1000, func() { s.Record(&served) }); n != 0 {
		t.Errorf("%v allocations per Record of a browser claim on a disallowed path", n)
	}
}
