package policy

import "testing"

// TestEmptyQuery (issue 39, point 10): a target with an empty query
// ("/gutscheine/suche?", as a real-world corpus asked it of spiegel.de's
// rules) is read as Google's parser reads it: the path and its "?", so
// "Disallow: /gutscheine/suche?" refuses it and "Disallow:
// /gutscheine/suche$" does not; under the latter, only an unverified
// client is refused, by the query departure (a query never turns a
// disallowed resource into an allowed one), never counted as a
// disagreement. The reference's answers are from its matching algorithm
// (longest match, '*' and '$'), on the path with its query.
func TestEmptyQuery(t *testing.T) {
	for _, c := range []struct {
		robots    string
		reference bool // Google's parser allows it
		departure Departure
	}{
		{"User-agent: *\nDisallow: *cr-dokumentation.pdf$\nDisallow: /gutscheine/suche?\nDisallow: /gutscheine/*?code=*\n", false, NoDeparture},
		{"User-agent: *\nDisallow: /gutscheine/suche$\n", true, DepartureQuery},
		{"User-agent: *\nDisallow: /gutscheine/suche?*\nAllow: /gutscheine/suche?$\n", true, NoDeparture},
		{"User-agent: *\nAllow: /gutscheine/suche?\nDisallow: /gutscheine/\n", true, NoDeparture},
	} {
		p := Compile(Parse([]byte(c.robots)))
		raw := TargetOf("https://www.spiegel.de/gutscheine/suche?")
		target, err := ParseTarget(raw)
		if err != nil || raw != "/gutscheine/suche?" || target.Normal != raw {
			t.Fatalf("target %q, normal %q: %v", raw, target.Normal, err)
		}
		for _, tokens := range [][]string{nil, {"mozilla"}} {
			if m := p.Match(tokens, raw); m.Allowed != c.reference {
				t.Errorf("%q %v: Match allows %v, the reference %v", c.robots, tokens, m.Allowed, c.reference)
			}
			mt := p.MatchTarget(tokens, &target)
			if c.reference && !mt.Allowed && mt.Departure != c.departure || !c.reference && mt.Allowed {
				t.Errorf("%q %v: MatchTarget allows %v (departure %q), the reference %v", c.robots, tokens, mt.Allowed, mt.Departure, c.reference)
			}
		}
	}
}
