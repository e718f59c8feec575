package policy

// PathSet is a compiled list of robots.txt path patterns ("/private/",
// "/*.bak$"), for features that ask whether a request falls under any of
// them: trap paths, header rules. It matches as [Policy.MatchTarget] matches
// Disallow rules: targets are in the normal form of [NormalizeTarget], a
// pattern without '?' also matches the path of a target with a query (where
// a final '$' anchors the end of the path), and /robots.txt is in no set. A
// PathSet is immutable and safe for concurrent use.
type PathSet struct {
	s ruleSet
}

// NewPathSet compiles patterns. An empty pattern matches nothing, as an
// empty Disallow does.
func NewPathSet(patterns ...string) *PathSet {
	rules := make([]Rule, len(patterns))
	for i, p := range patterns {
		rules[i] = Rule{Pattern: p, Line: i + 1}
	}
	return &PathSet{s: newRuleSet(rules)}
}

// Contains reports whether target, in normal form, falls under one of the
// patterns. It does not allocate.
func (s *PathSet) Contains(target string) bool {
	return s.s.decide(target) != nil
}

// ContainsTarget reports whether any spelling of t falls under one of the
// patterns. It does not allocate.
func (s *PathSet) ContainsTarget(t *Target) bool {
	c, _ := s.s.decideTarget(t)
	return c != nil
}
