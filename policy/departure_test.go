package policy

import "testing"

// TestMatchTargetDeparture: MatchTarget says when it refuses a target only
// by a departure (issue 27), so that an enforcer can serve it to a
// verified crawler and refuse it to others without a strike; a refusal
// the reference reading makes too has none.
func TestMatchTargetDeparture(t *testing.T) {
	p := Compile(Parse([]byte("User-agent: *\nDisallow: /*.php$\nDisallow: /messages$\nDisallow: /private/\nAllow: /*.css$\nDisallow: /admin\n" +
		// Groups the two readings split differently (see TestGroupReadings):
		// Google's gives a the rules of b, the split reading none.
		"\nUser-agent: a\ncrawl-delay: 1\nUser-agent: b\nDisallow: /x\nDisallow: /*.pdf$\n" +
		// Google's reading gives c "Disallow: /doc.pdf", the split reading
		// only "Disallow: /*.pdf$".
		"\nUser-agent: c\ncrawl-delay: 1\nUser-agent: d\nDisallow: /doc.pdf\n\nUser-agent: c\nDisallow: /*.pdf$\n")))
	for _, c := range []struct {
		agent, target string
		allowed       bool
		departure     Departure
	}{
		{"bot", "/page.php?id=1", false, DepartureQuery},
		{"bot", "/page.php?id=1&sort=asc", false, DepartureQuery},
		{"bot", "/messages?a=b", false, DepartureQuery},
		{"bot", "/admin.html?.css", false, DepartureQuery}, // the bypass the query departure stops: Google's parser lets "Allow: /*.css$" win
		{"bot", "/page.php", false, NoDeparture},
		{"bot", "/private/x", false, NoDeparture},
		{"bot", "/private%2Fx", false, DepartureSpelling},
		{"bot", "/a/..%2Fprivate/x", false, DepartureSpelling},
		{"bot", "/private;jsessionid=1/x", false, DepartureSpelling}, // a servlet container serves /private/x
		{"bot", "/admin", false, NoDeparture},
		{"bot", `/priv\..\private/x`, false, DepartureSpelling},
		{"bot", "/page.html?id=1", true, NoDeparture},
		// b refuses /doc.pdf?x by a departure; a (joined to b in Google's
		// reading only) is allowed, as the split reading allows it.
		{"b", "/doc.pdf?x", false, DepartureQuery},
		{"b", "/x", false, NoDeparture},
		{"a", "/x", true, NoDeparture},
		{"a", "/doc.pdf?x", true, NoDeparture},
		// Both readings refuse c "/doc.pdf?x", the split one only by the
		// query departure: the reference reading of both (refuse only
		// what each refuses) allows it, as Scrapy's protego does.
		{"c", "/doc.pdf?x", false, DepartureQuery},
		{"c", "/doc.pdf", false, NoDeparture},
	} {
		target, err := ParseTarget(c.target)
		if err != nil {
			t.Fatal(err)
		}
		res := p.MatchTarget([]string{c.agent}, &target)
		if res.Allowed != c.allowed || res.Departure != c.departure {
			t.Errorf("%s %q: MatchTarget allowed %v departure %q, want %v %q", c.agent, c.target, res.Allowed, res.Departure, c.allowed, c.departure)
		}
		// Departure means: the reference reading allows it (here both
		// readings of the groups agree where a rule refuses).
		if ref := p.Match([]string{c.agent}, target.Normal); !res.Allowed && ref.Allowed != (res.Departure != NoDeparture) && c.agent != "c" {
			t.Errorf("%s %q: Match allows %v, departure %q", c.agent, c.target, ref.Allowed, res.Departure)
		}
		if m := p.Match([]string{c.agent}, c.target); m.Departure != NoDeparture {
			t.Errorf("%s %q: Match sets a departure", c.agent, c.target)
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		target := Target{Normal: "/page.php?id=1"}
		_ = p.MatchTarget([]string{"bot"}, &target)
	}); n != 0 {
		t.Errorf("MatchTarget allocates %v times for a departure", n)
	}
}
