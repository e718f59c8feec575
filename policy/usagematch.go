package policy

import "strings"

// prefSet is one agent's preference lines in one reading of the file's
// groups, compiled: Content-Usage and Content-Signal apart, since they are
// two methods of stating preferences whose answers combine.
type prefSet struct {
	usage, signal *usageSet
}

// usageSet is the compiled lines of one form.
type usageSet struct {
	// rules are the lines in file order, as the Rule a decision names:
	// Key is the line's key, Pattern its whole value.
	rules []Rule
	// prefs holds what each line states, parallel to rules.
	prefs []Prefs
	// whole combines the lines without a path, which apply to every path
	// that no line with a path matches; wholeLines are their indexes.
	whole      Prefs
	wholeLines []int32
	hasWhole   bool
	// entries holds one entry per distinct normalised path; path and
	// query match the entries without and with '?' (a matcher rule's
	// order is its entry's index).
	entries     []usageEntry
	path, query matcher
	hasQuery    bool
	// prefixOnly is set when every path is a plain prefix (no '*', '$'
	// or '?'): such a path matches a target exactly when it matches the
	// target's path, so a query needs no second evaluation.
	prefixOnly bool
}

// usageEntry is the lines of one normalised path.
type usageEntry struct {
	np    string
	prio  int32
	query bool
	c     crule // the compiled pattern, for matching this entry alone
	prefs Prefs // the lines' statements combined
	lines []int32
	// ties are the other entries of the same length that could match the
	// same target (where either has '*' or '$'): equal paths combine.
	ties []int32
}

// newPrefSet compiles the preference fields of a group (in file order);
// nil when there are none.
func newPrefSet(fields []Field) *prefSet {
	var usage, signal []Field
	for _, f := range fields {
		switch f.Key {
		case KeyContentUsage:
			usage = append(usage, f)
		case KeyContentSignal:
			signal = append(signal, f)
		}
	}
	if len(usage) == 0 && len(signal) == 0 {
		return nil
	}
	return &prefSet{usage: newUsageSet(usage), signal: newUsageSet(signal)}
}

// newUsageSet compiles the lines of one form; nil when there are none.
func newUsageSet(fields []Field) *usageSet {
	if len(fields) == 0 {
		return nil
	}
	s := &usageSet{}
	byPath := map[string]int32{}
	var pats []Rule
	for i, f := range fields {
		st := ParseStatement(f.Key, f.Value)
		s.rules = append(s.rules, Rule{Key: f.Key, Pattern: trimSpace(f.Value), Line: f.Line})
		s.prefs = append(s.prefs, st.Prefs)
		if st.Path == "" {
			s.whole, s.hasWhole = s.whole.Combine(st.Prefs), true
			s.wholeLines = append(s.wholeLines, int32(i))
			continue
		}
		np := normalizePattern(st.Path)
		k, ok := byPath[np]
		if !ok {
			k = int32(len(s.entries))
			byPath[np] = k
			s.entries = append(s.entries, usageEntry{np: np, prio: int32(len(np)), query: strings.IndexByte(np, '?') >= 0})
			pats = append(pats, Rule{Pattern: st.Path, Line: f.Line})
		}
		e := &s.entries[k]
		e.prefs = e.prefs.Combine(st.Prefs)
		e.lines = append(e.lines, int32(i))
	}
	s.prefixOnly = true
	for _, e := range s.entries {
		s.hasQuery = s.hasQuery || e.query
		s.prefixOnly = s.prefixOnly && !strings.ContainsAny(e.np, "*$?")
	}
	s.path = buildMatcher(pats, func(i int) bool { return !s.entries[i].query })
	if s.hasQuery {
		s.query = buildMatcher(pats, func(i int) bool { return s.entries[i].query })
	}
	for _, m := range []*matcher{&s.path, &s.query} {
		for _, c := range m.rules {
			s.entries[c.order].c = c
		}
	}
	for i := range s.entries {
		a := &s.entries[i]
		for j := range s.entries {
			if b := &s.entries[j]; i != j && a.prio == b.prio && (isWild(a.np) || isWild(b.np)) {
				a.ties = append(a.ties, int32(j))
			}
		}
	}
	return s
}

func isWild(np string) bool { return strings.ContainsAny(np, "*$") }

// matches reports whether the entry's pattern matches x, a normal target.
func (e *usageEntry) matches(x string) bool {
	star := strings.IndexByte(e.np, '*')
	if star < 0 {
		if strings.HasSuffix(e.np, "$") {
			return x == e.np[:len(e.np)-1]
		}
		return strings.HasPrefix(x, e.np)
	}
	return strings.HasPrefix(x, e.np[:star]) && e.c.matchRest(x[star:])
}

// noEntry and wholeEntry are eval's answers when no line decides and when
// the lines without a path do.
const (
	noEntry    = -2
	wholeEntry = -1
)

// eval returns the preference for t, a normal target, and the entry that
// decides (or noEntry, wholeEntry): the lines with the longest matching
// path, combined with the lines whose paths tie with them; the lines
// without a path when no path matches. With pathAlone, t has a query and
// the paths without '?' are matched against its path alone, as
// [Policy.MatchTarget] matches Allow and Disallow.
func (s *usageSet) eval(t string, pathAlone bool) (Prefs, int32) {
	tp := t
	if pathAlone {
		tp = t[:strings.IndexByte(t, '?')]
	}
	best := s.entryOf(&s.path, s.path.match(tp))
	if s.hasQuery {
		if q := s.entryOf(&s.query, s.query.match(t)); q >= 0 && (best < 0 || s.entries[q].prio > s.entries[best].prio) {
			best = q
		}
	}
	if best < 0 {
		if s.hasWhole {
			return s.whole, wholeEntry
		}
		return Prefs{}, noEntry
	}
	e := &s.entries[best]
	prefs := e.prefs
	for _, k := range e.ties {
		o := &s.entries[k]
		x := tp
		if o.query {
			x = t
		}
		if o.matches(x) {
			prefs = prefs.Combine(o.prefs)
		}
	}
	return prefs, best
}

func (s *usageSet) entryOf(m *matcher, i int32) int32 {
	if i < 0 {
		return -1
	}
	return m.rules[i].order
}

// line returns the first line (in file order) of the deciding entry k
// (and of its ties that match t) that disallows one of the categories u,
// else the entry's first line; nil for noEntry.
func (s *usageSet) line(k int32, u Usage, t string, pathAlone bool) *Rule {
	var lines []int32
	switch {
	case k == noEntry:
		return nil
	case k == wholeEntry:
		lines = s.wholeLines
	default:
		lines = s.entries[k].lines
	}
	first := lines[0]
	for _, i := range lines {
		if s.prefs[i].Disallowed&u != 0 {
			return &s.rules[i]
		}
	}
	if k >= 0 && u != 0 {
		tp := t
		if pathAlone {
			tp = t[:strings.IndexByte(t, '?')]
		}
		for _, o := range s.entries[k].ties {
			e := &s.entries[o]
			x := tp
			if e.query {
				x = t
			}
			if !e.matches(x) {
				continue
			}
			for _, i := range e.lines {
				if s.prefs[i].Disallowed&u != 0 {
					return &s.rules[i]
				}
			}
		}
	}
	return &s.rules[first]
}

// usageAnswer is one reading's answer for one form or both.
type usageAnswer struct {
	refused Usage
	rule    *Rule    // the first line that refuses
	prefs   Prefs    // for the normal target, as the drafts read it
	lines   [2]*Rule // the lines that decide prefs, per form
}

// refused returns the categories of u that the set disallows for some
// spelling of t (for a target with a query, also with its paths matched
// against the path alone), the first line that disallows them, and the
// preference for the normal target with the line that decides it.
func (s *usageSet) refused(t *Target, u Usage) (a usageAnswer) {
	for i := 0; i < t.spellings(); i++ {
		x := t.spelling(i)
		if isRobotsTxt(x) {
			continue
		}
		for _, pathAlone := range [2]bool{false, true} {
			if pathAlone && (s.prefixOnly || strings.IndexByte(x, '?') < 0) {
				break
			}
			prefs, k := s.eval(x, pathAlone)
			if i == 0 && !pathAlone {
				a.prefs, a.lines[0] = prefs, s.line(k, prefs.Disallowed, x, false)
			}
			if r := prefs.Disallowed & u; r != 0 {
				if a.rule == nil {
					a.rule = s.line(k, r, x, pathAlone)
				}
				a.refused |= r
			}
		}
	}
	return a
}

// refused is usageSet.refused for both forms: a refusal of either
// stands, and their preferences combine.
func (p *prefSet) refused(t *Target, u Usage) (a usageAnswer) {
	if p == nil {
		return a
	}
	for i, s := range [2]*usageSet{p.usage, p.signal} {
		if s == nil {
			continue
		}
		f := s.refused(t, u)
		if f.refused != 0 && a.rule == nil {
			a.rule = f.rule
		}
		a.refused |= f.refused
		a.prefs = a.prefs.Combine(f.prefs)
		a.lines[i] = f.lines[0]
	}
	return a
}

// UsageResult is the answer to [Policy.MatchUsage].
type UsageResult struct {
	// Agent is the product token whose group applied, "*" for the global
	// group, or "" when no group applies (no preference is stated).
	Agent string
	// Prefs is the preference the group states for the target's normal
	// form, both forms combined, as a crawler that follows the drafts
	// reads it. Where the two readings of the file's groups differ (see
	// [Reading]), a category is disallowed only when both disallow it,
	// and allowed when either allows it.
	Prefs Prefs
	// Refused holds the categories asked about that the preferences
	// disallow: for some spelling of the target (see [Policy.MatchTarget]),
	// and in both readings of the file's groups.
	Refused Usage
	// Rule is the line that disallows a refused category, or nil. It
	// points into the Policy and must not be modified. Its Key is
	// "Content-Usage" or "Content-Signal", its Pattern the line's value.
	Rule *Rule
	// Lines are the lines that decide Prefs: the Content-Usage line and
	// the Content-Signal line (nil where the form states nothing for the
	// target), for tools that show why.
	Lines [2]*Rule
	// Ambiguous is set when the two readings of the file's groups answer
	// differently for the categories asked about.
	Ambiguous bool
}

// HasUsage reports whether the file states AI usage preferences
// (Content-Usage or Content-Signal lines) in any group.
func (p *Policy) HasUsage() bool { return p != nil && p.hasUsage }

// MatchUsage answers which AI usage preferences apply to a request, and
// whether they disallow any of the categories u (the purposes of the
// crawler asking). The crawler's group is selected as [Policy.Match]
// selects it. Preferences apply only to what the crawler may fetch:
// callers check [Policy.MatchTarget] first.
//
// A category is refused when the preferences disallow it for some spelling
// of t, as [Policy.MatchTarget] reads spellings and queries, and, where the
// two readings of the file's groups differ, in both readings: an enforcer
// refuses only what the file clearly says.
//
// MatchUsage does not allocate.
func (p *Policy) MatchUsage(tokens []string, t *Target, u Usage) UsageResult {
	return p.MatchUsageReading(tokens, t, u, BothReadings)
}

// MatchUsageReading is [Policy.MatchUsage] with the file's groups read as
// r says.
func (p *Policy) MatchUsageReading(tokens []string, t *Target, u Usage, r Reading) UsageResult {
	g := p.lookup(tokens)
	if g == nil {
		return UsageResult{}
	}
	res := UsageResult{Agent: g.agent}
	split, google := g.prefs[0], g.prefs[0]
	if g.prefsDiffer {
		google = g.prefs[1]
	}
	var a usageAnswer
	switch {
	case !g.prefsDiffer || r == SplitReading:
		a = split.refused(t, u)
	case r == GoogleReading:
		a = google.refused(t, u)
	default:
		a = split.refused(t, u)
		ag := google.refused(t, u)
		res.Ambiguous = a.refused != ag.refused
		if both := a.refused & ag.refused; both != a.refused && both != 0 {
			// Name a line that refuses what both readings refuse.
			a.rule = split.refused(t, both).rule
		}
		a.refused &= ag.refused
		d := a.prefs.Disallowed & ag.prefs.Disallowed
		a.prefs = Prefs{Allowed: (a.prefs.Allowed | ag.prefs.Allowed) &^ d, Disallowed: d}
		if a.lines == [2]*Rule{} {
			a.lines = ag.lines
		}
	}
	res.Refused, res.Prefs, res.Lines = a.refused, a.prefs, a.lines
	if a.refused != 0 {
		res.Rule = a.rule
	}
	return res
}

// groupPrefs returns the preference fields of the groups with the given
// indexes, in order.
func (r *Robots) groupPrefs(idx []int) []Field {
	var out []Field
	for _, i := range idx {
		for _, f := range r.Groups[i].Fields {
			if isUsageKey(f.Key) {
				out = append(out, f)
			}
		}
	}
	return out
}
