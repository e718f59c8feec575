package policy

import (
	"slices"
	"strings"
	"time"
)

// Policy is a compiled robots.txt: it answers [Policy.Match] and
// [Policy.MatchTarget] queries. A Policy is immutable and safe for
// concurrent use; swap a new one in (for example through an atomic.Pointer)
// to change the rules.
type Policy struct {
	src     *Robots
	byToken map[string]*group
	global  *group
	canon   canon
	// hasUsage is set when any group states AI usage preferences.
	hasUsage bool
}

// group is the merged, compiled form of every group naming one token.
type group struct {
	agent      string
	crawlDelay time.Duration
	// query holds the group's QueryParam lines.
	query queryRules
	// split holds the rules as Scrapy's protego and temoto read the file's
	// groups (SplitReading); google holds them as Google's reference parser
	// does (GoogleReading), or is nil when both readings give this agent
	// the same rules.
	split  ruleSet
	google *ruleSet
	// prefs holds the group's AI usage preferences (Content-Usage and
	// Content-Signal lines) as the split reading and, when prefsDiffer, as
	// Google's reading gives them; nil when there are none.
	prefs       [2]*prefSet
	prefsDiffer bool
}

// ruleSet is one agent's compiled rules.
type ruleSet struct {
	rules []Rule
	// path holds the rules whose pattern has no '?', query those with one
	// (nil when there are none): only the former are matched against the
	// path alone, for the resource a target names.
	path  matcher
	query *matcher
	// prefixOnly is set when every path rule is a plain prefix (no '*', no
	// '$'): such a rule matches a target exactly when it matches the
	// target's path, so the path needs no second match.
	prefixOnly bool
}

// Reading says how a file's groups are read where mainstream parsers
// differ: at a line other than User-agent, Allow and Disallow (Crawl-delay,
// Sitemap, Host, any unknown line) that stands between User-agent lines.
type Reading uint8

// Readings.
const (
	// BothReadings refuses only what both readings below refuse; it is
	// how [Policy.MatchTarget] reads a file.
	BothReadings Reading = iota
	// GoogleReading: only an Allow or Disallow line ends a run of
	// User-agent lines, as in Google's reference parser and RFC 9309
	// section 2.2.4 ("other records MUST NOT interfere").
	GoogleReading
	// SplitReading: any other line ends it too, and the next User-agent
	// line starts a new group, as in Scrapy's protego and temoto/robotstxt.
	SplitReading
)

// String returns "both", "google" or "split".
func (r Reading) String() string {
	switch r {
	case GoogleReading:
		return "google"
	case SplitReading:
		return "split"
	}
	return "both"
}

// Compile returns the Policy for r. It works on a copy, so r may be edited
// afterwards without changing the Policy. Groups that name the same agent
// are merged; a group naming several agents applies to each of them. Where
// the two readings of the groups (see [Reading]) give an agent different
// rules, both are compiled. An agent's Crawl-delay is the first one of the
// groups that name it (in either reading, the agents right above it).
func Compile(r *Robots) *Policy {
	src := r.Clone()
	p := &Policy{src: src, byToken: map[string]*group{}, canon: compileCanon(src)}
	for _, tok := range src.Agents() {
		g := &group{agent: tok}
		delaySet := false
		var split, google []int // indexes of the groups whose rules apply
		for i, sg := range src.Groups {
			if !sg.names(tok) {
				continue
			}
			split = append(split, i)
			for j := i; ; j++ {
				if len(google) == 0 || google[len(google)-1] < j {
					google = append(google, j)
				}
				if !src.Groups[j].JoinNext || j+1 == len(src.Groups) {
					break
				}
			}
			_ = parseQueryParams(&g.query, sg.Values(KeyQueryParam)) // bad items are linted
			if d, ok := sg.CrawlDelay(); ok && !delaySet {
				g.crawlDelay, delaySet = d, true
			}
		}
		g.split = newRuleSet(src.groupRules(split))
		prefs := src.groupPrefs(split)
		g.prefs[0] = newPrefSet(prefs)
		if !slices.Equal(split, google) {
			if rules := src.groupRules(google); len(rules) != len(g.split.rules) {
				rs := newRuleSet(rules)
				g.google = &rs
			}
		}
		if gp := src.groupPrefs(src.joinedBefore(google)); !slices.Equal(gp, prefs) {
			g.prefs[1], g.prefsDiffer = newPrefSet(gp), true
		}
		p.hasUsage = p.hasUsage || g.prefs[0] != nil || g.prefs[1] != nil
		if tok == "*" {
			p.global = g
		} else {
			p.byToken[tok] = g
		}
	}
	p.canon.any = p.hasCanonical()
	return p
}

// joinedBefore adds to idx (indexes of groups in Google's reading) the
// groups before them that join them: in Google's reading their lines
// other than rules (a Content-Usage or Content-Signal line) belong to the
// same group. Their own rules are none: a group with rules joins nothing.
func (r *Robots) joinedBefore(idx []int) []int {
	var out []int
	for _, i := range idx {
		start := i
		for start > 0 && r.Groups[start-1].JoinNext {
			start--
		}
		for j := start; j <= i; j++ {
			if len(out) == 0 || out[len(out)-1] < j {
				out = append(out, j)
			}
		}
	}
	return out
}

// names reports whether the group names the product token tok.
func (g *Group) names(tok string) bool {
	for _, a := range g.Agents {
		if a.Token() == tok {
			return true
		}
	}
	return false
}

// groupRules returns the rules of the groups with the given indexes, in
// order.
func (r *Robots) groupRules(idx []int) []Rule {
	var rules []Rule
	for _, i := range idx {
		rules = append(rules, r.Groups[i].Rules...)
	}
	return rules
}

// newRuleSet compiles rules.
func newRuleSet(rules []Rule) ruleSet {
	s := ruleSet{rules: rules, prefixOnly: true}
	hasQuery := make([]bool, len(rules))
	anyQuery := false
	for i, r := range rules {
		np := normalizePattern(r.Pattern)
		hasQuery[i] = strings.IndexByte(np, '?') >= 0
		anyQuery = anyQuery || hasQuery[i]
		if !hasQuery[i] && (strings.ContainsAny(np, "*$") || r.Allow && anchorsIndexPage(r.Pattern)) {
			s.prefixOnly = false
		}
	}
	s.path = buildMatcher(rules, func(i int) bool { return !hasQuery[i] })
	if anyQuery {
		m := buildMatcher(rules, func(i int) bool { return hasQuery[i] })
		s.query = &m
	}
	return s
}

// Robots returns a copy of the model the Policy was compiled from.
func (p *Policy) Robots() *Robots {
	return p.src.Clone()
}

// Result is the answer to a [Policy.Match] or [Policy.MatchTarget] query.
type Result struct {
	// Allowed reports whether the agent may fetch the target.
	Allowed bool
	// Agent is the product token whose group applied, "*" for the global
	// group, or "" when no group applies (everything is allowed).
	Agent string
	// Rule is the deciding rule, or nil when no rule matched (the target is
	// allowed) or the target is /robots.txt. It points into the Policy and
	// must not be modified.
	Rule *Rule
	// CrawlDelay is the agent's Crawl-delay, 0 if none.
	CrawlDelay time.Duration
	// Ambiguous is set when the two readings of the file's groups (see
	// [Reading]) answer differently for the target; the answer is then the
	// allowing one.
	Ambiguous bool
	// Departure is set by [Policy.MatchTarget] when it refuses the target
	// only by a departure from the reference reading: RFC 9309's reading
	// of the target's normal form, as [Policy.Match] gives it, allows it
	// (where the two readings of the groups differ, either one allows it
	// without a departure). An enforcer serves such a target to a
	// verified crawler and refuses it to others without a strike. It is
	// NoDeparture for an allowed target and for [Policy.Match].
	Departure Departure
}

// maxStackTarget is the size of the buffer Match normalises a target into
// without allocating; longer targets that need normalising allocate.
const maxStackTarget = 1024

// Match answers as RFC 9309 and Google's reference parser read the file:
// whether a crawler may fetch target, a request target such as
// "/path?query" (see [TargetOf] for URLs), and which rule decided. It is
// the answer a polite crawler computes; enforcement uses
// [Policy.MatchTarget], which also reads the target as a backend does.
//
// tokens are the crawler's product tokens, most specific first, e.g.
// {"googlebot-image", "googlebot"}: the first token that a group names
// selects the group, and the "*" group applies only when none does. Tokens
// are read with [ProductToken], so "Googlebot/2.1" works too; passing
// lower-case tokens avoids the conversion.
//
// The longest matching pattern decides and Allow wins a tie; with no
// matching rule the target is allowed. /robots.txt is always allowed (RFC
// 9309 section 2.2.2). Target and patterns are compared in the normal form
// of [NormalizeTarget]. Groups are read as [GoogleReading] says.
//
// Match does not allocate unless the target needs normalising and is longer
// than 1 KiB.
func (p *Policy) Match(tokens []string, target string) Result {
	g, res := p.start(tokens)
	switch {
	case g == nil:
	case !isNormalTarget(target):
		// Kept out of line: the buffer would otherwise be zeroed on every
		// call, which costs more than the match itself.
		g.matchNormalized(&res, target)
	default:
		g.matchNormal(&res, target)
	}
	return res
}

// MatchTarget is the match for enforcement: whether the crawler may fetch
// the resource the request names, from a [ParseTarget] result. It departs
// from [Policy.Match] in three ways, each so that a rogue crawler cannot
// reach what robots.txt disallows by how it spells the request, while a
// crawler that follows RFC 9309 is refused only in the second case:
//
//   - Every spelling of t counts: a rule that refuses one of its variants
//     refuses the request.
//   - A query never turns a disallowed resource into an allowed one: the
//     rules without '?' are also matched against the path alone, where a
//     final '$' anchors the end of the path. "Disallow: /*.pdf$" refuses
//     "/report.pdf?x=1", and "Allow: /*.css$" does not allow
//     "/admin.html?.css" past "Disallow: /admin". A rule with '?', such as
//     "Allow: /search?q=", still decides for the targets it names.
//   - Where the two readings of the file's groups differ (see [Reading]),
//     the request is refused only when both refuse it.
//
// A refusal that only the first two make, where the reference reading of
// the normal form allows the target, has [Result].Departure set.
//
// MatchTarget does not allocate.
func (p *Policy) MatchTarget(tokens []string, t *Target) Result {
	return p.MatchReading(tokens, t, BothReadings)
}

// MatchReading is [Policy.MatchTarget] with the file's groups read as r
// says, for tools that show both readings.
func (p *Policy) MatchReading(tokens []string, t *Target, r Reading) Result {
	g, res := p.start(tokens)
	if g == nil {
		return res
	}
	// A refusal's departure: the departure by which the reading refuses
	// t, or none when the reference reading refuses t too (under both
	// readings, the reference refuses only what both refuse, as
	// MatchTarget does). None where the rule that refuses is the normal
	// form's, a target without a query: the reference reading decides it
	// alike (plain), and is not matched again.
	var c, o *crule
	var plain, oPlain bool
	switch {
	case g.google == nil || r == SplitReading:
		c, plain = g.split.decideTarget(t)
	case r == GoogleReading:
		c, plain = g.google.decideTarget(t)
	default:
		c, plain = g.split.decideTarget(t)
		o, oPlain = g.google.decideTarget(t)
		if allows(c) != allows(o) {
			res.Ambiguous = true
			if allows(o) {
				c = o
			}
		}
	}
	if c != nil {
		res.Allowed, res.Rule = c.allow, c.rule
	}
	if !res.Allowed {
		switch {
		case g.google == nil || r == SplitReading:
			if !plain {
				res.Departure = g.split.departure(t)
			}
		case r == GoogleReading:
			if !plain {
				res.Departure = g.google.departure(t)
			}
		default: // both refuse: the split reading's departure, else Google's
			if !plain {
				res.Departure = g.split.departure(t)
			}
			if res.Departure == NoDeparture && !oPlain {
				res.Departure = g.google.departure(t)
			}
		}
	}
	return res
}

func allows(c *crule) bool { return c == nil || c.allow }

// decideTarget returns the rule that decides for t: the first rule that
// refuses one of its spellings, else the rule that decides for its normal
// form, or nil. plain reports a refusal of the normal form itself, a
// target without a query, which RFC 9309's reading (rfc) refuses alike.
func (s *ruleSet) decideTarget(t *Target) (_ *crule, plain bool) {
	first := s.decide(t.Normal)
	if !allows(first) {
		return first, strings.IndexByte(t.Normal, '?') < 0
	}
	for i := 1; i < t.spellings(); i++ {
		if c := s.decide(t.spelling(i)); !allows(c) {
			return c, false
		}
	}
	return first, false
}

// decide returns the rule that decides for the resource the normal target t
// names, or nil: the rule that decides for t as RFC 9309 reads it when it
// refuses; else, for a target with a query, the rule that decides when the
// rules without '?' are matched against the path alone, when it refuses;
// else the former.
func (s *ruleSet) decide(t string) *crule {
	if isRobotsTxt(t) {
		return nil
	}
	q := strings.IndexByte(t, '?')
	if q < 0 {
		return s.path.best(t) // a rule with '?' cannot match
	}
	var qr *crule
	if s.query != nil {
		qr = s.query.best(t)
	}
	whole := better(s.path.best(t), qr)
	if !allows(whole) || s.prefixOnly {
		return whole
	}
	if res := better(s.path.best(t[:q]), qr); !allows(res) {
		return res
	}
	return whole
}

// rfc returns the rule that decides for the normal target t as RFC 9309
// reads it, or nil.
func (s *ruleSet) rfc(t string) *crule {
	c := s.path.best(t)
	if s.query != nil && strings.IndexByte(t, '?') >= 0 {
		c = better(c, s.query.best(t))
	}
	return c
}

// better returns the rule that wins between a and b (either may be nil):
// the longer pattern, then Allow, then the earlier rule.
func better(a, b *crule) *crule {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.prio != b.prio:
		if a.prio > b.prio {
			return a
		}
		return b
	case a.allow != b.allow:
		if a.allow {
			return a
		}
		return b
	case b.order < a.order:
		return b
	}
	return a
}

// start selects the group for tokens and the result before any rule: the
// target is allowed, under the group's agent and crawl-delay. The group is
// nil when no group applies.
func (p *Policy) start(tokens []string) (*group, Result) {
	g := p.lookup(tokens)
	if g == nil {
		return nil, Result{Allowed: true}
	}
	return g, Result{Allowed: true, Agent: g.agent, CrawlDelay: g.crawlDelay}
}

// anchorsIndexPage reports whether an Allow pattern also allows its
// directory with a '$' anchor ("/dir/index.html" allows "/dir/$").
func anchorsIndexPage(pattern string) bool {
	np := normalizePattern(pattern)
	s := strings.LastIndexByte(np, '/')
	return s >= 0 && strings.HasPrefix(np[s:], "/index.htm")
}

// IsRobotsTxt reports whether a target in normal form is /robots.txt, with
// or without a query.
func IsRobotsTxt(target string) bool {
	return isRobotsTxt(target)
}

// matchNormalized normalises target into a stack buffer and matches it.
//
//go:noinline
func (g *group) matchNormalized(res *Result, target string) {
	var buf [maxStackTarget]byte
	g.matchNormal(res, normalizeTargetInto(buf[:], target))
}

// matchNormal matches a target in normal form as [Policy.Match] does.
func (g *group) matchNormal(res *Result, t string) {
	if isRobotsTxt(t) {
		return
	}
	s := &g.split
	if g.google != nil {
		s = g.google
	}
	if c := s.rfc(t); c != nil {
		res.Allowed, res.Rule = c.allow, c.rule
	}
}

func isRobotsTxt(t string) bool {
	const p = "/robots.txt"
	return strings.HasPrefix(t, p) && (len(t) == len(p) || t[len(p)] == '?')
}

// lookup returns the group for the first token that names one, else the
// global group, else nil.
func (p *Policy) lookup(tokens []string) *group {
	for _, t := range tokens {
		if isNormalToken(t) {
			if g := p.byToken[t]; g != nil {
				return g
			}
			continue
		}
		var buf [64]byte
		if tokenLen(t) > len(buf) {
			if g := p.byToken[ProductToken(t)]; g != nil {
				return g
			}
			continue
		}
		b := appendToken(buf[:0], t)
		if len(b) == 0 {
			continue
		}
		if g := p.byToken[string(b)]; g != nil {
			return g
		}
	}
	return p.global
}
