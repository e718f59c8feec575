package policy

// Departure names the way in which [Policy.MatchTarget] departs from the
// reference reading (RFC 9309, and Google's reference parser where the RFC
// is silent, as [Policy.Match] reads a target in normal form) when it
// refuses a target that the reference reading allows. The departures exist
// only to stop bypass spellings: an enforcer applies them to clients whose
// identity is a claim, never to a verified crawler, and a refusal that
// only a departure makes is no offence (a polite crawler that reads the
// file the standard way asks for such URLs in good faith).
type Departure uint8

// Departures.
const (
	// NoDeparture: the reference reading refuses the target too (or
	// MatchTarget allows it).
	NoDeparture Departure = iota
	// DepartureQuery: a rule without '?' refuses the path alone, where
	// the reference matches it against the path and query:
	// "Disallow: /*.php$" refuses "/page.php?id=1", which Google's parser
	// allows.
	DepartureQuery
	// DepartureSpelling: a rule refuses another spelling of the target
	// (one of [Target].Variants: the path as a file server cleans it, with
	// backslashes or ";params", the client's own spelling, the canonical
	// URL), not its normal form.
	DepartureSpelling
)

var departureNames = [...]string{NoDeparture: "", DepartureQuery: "query", DepartureSpelling: "spelling"}

// String returns "query", "spelling", or "" for NoDeparture.
func (d Departure) String() string {
	if int(d) < len(departureNames) {
		return departureNames[d]
	}
	return "departure"
}

// departure returns why s refuses t though the reference reading of s may
// not: NoDeparture when the rule that decides for the normal form as RFC
// 9309 reads it refuses; DepartureQuery when the path alone is refused;
// else DepartureSpelling (a variant is refused).
func (s *ruleSet) departure(t *Target) Departure {
	switch {
	case !allows(s.rfc(t.Normal)):
		return NoDeparture
	case !allows(s.decide(t.Normal)):
		return DepartureQuery
	}
	return DepartureSpelling
}
