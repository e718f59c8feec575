package policy

import (
	"strings"
	"time"
)

// Policy is a compiled robots.txt: it answers [Policy.Match] queries. A
// Policy is immutable and safe for concurrent use; swap a new one in (for
// example through an atomic.Pointer) to change the rules.
type Policy struct {
	src     *Robots
	byToken map[string]*group
	global  *group
	canon   canon
}

// group is the merged, compiled form of every group naming one token.
type group struct {
	agent      string
	rules      []Rule
	m          matcher
	crawlDelay time.Duration
	// query holds the group's QueryParam lines.
	query queryRules
	// anchors holds only the rules that end in '$', or is nil when there
	// are none: only such a rule can match a path and not the same path with
	// a query, so MatchResource's second match walks this small trie.
	anchors *matcher
}

// Compile returns the Policy for r. It works on a copy, so r may be edited
// afterwards without changing the Policy. Groups that name the same agent
// are merged; a group naming several agents applies to each of them.
func Compile(r *Robots) *Policy {
	src := r.Clone()
	p := &Policy{src: src, byToken: map[string]*group{}, canon: compileCanon(src)}
	for _, tok := range src.Agents() {
		g := &group{agent: tok}
		delaySet := false
		for _, sg := range src.Groups {
			for _, a := range sg.Agents {
				if a.Token() != tok {
					continue
				}
				g.rules = append(g.rules, sg.Rules...)
				_ = parseQueryParams(&g.query, sg.Values(KeyQueryParam)) // bad items are linted
				if d, ok := sg.CrawlDelay(); ok && !delaySet {
					g.crawlDelay, delaySet = d, true
				}
				break
			}
		}
		g.m = newMatcher(g.rules)
		g.anchors = anchorMatcher(g.rules)
		if tok == "*" {
			p.global = g
		} else {
			p.byToken[tok] = g
		}
	}
	return p
}

// Robots returns a copy of the model the Policy was compiled from.
func (p *Policy) Robots() *Robots {
	return p.src.Clone()
}

// Result is the answer to a [Policy.Match] query.
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
	// CrawlDelay is the Crawl-delay of the group that applied, 0 if none.
	CrawlDelay time.Duration
}

// maxStackTarget is the size of the buffer Match normalises a target into
// without allocating; longer targets that need normalising allocate.
const maxStackTarget = 1024

// Match reports whether a crawler may fetch target, a request target such
// as "/path?query" (see [TargetOf] for URLs), and which rule decided.
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
// of [NormalizeTarget].
//
// Match does not allocate unless the target needs normalising and is longer
// than 1 KiB.
func (p *Policy) Match(tokens []string, target string) Result {
	g, res := p.start(tokens)
	switch {
	case g == nil:
	case !isCanonicalTarget(target):
		// Kept out of line: the buffer would otherwise be zeroed on every
		// call, which costs more than the match itself.
		g.matchNormalized(&res, target)
	default:
		g.matchCanonical(&res, target)
	}
	return res
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

// MatchNormal is [Policy.Match] for a target already in the normal form of
// [NormalizeTarget], for callers that match one target against several
// policies and normalise it once. The result is undefined for other targets.
func (p *Policy) MatchNormal(tokens []string, target string) Result {
	g, res := p.start(tokens)
	if g != nil {
		g.matchCanonical(&res, target)
	}
	return res
}

// MatchResource is [Policy.MatchNormal] for enforcement: it answers for the
// resource rather than the exact URL. When no rule matches a target that has
// a query, the path alone is matched too, because a backend serves the same
// resource for "/report.html?x=1" as for "/report.html": as RFC 9309 reads
// it, "Disallow: /report.html$" does not match the former. A rule that
// matches the whole target, such as "Allow: /search?q=", still decides. Only
// groups with '$' rules need the second match, since any other pattern that
// matches a path also matches it with a query.
func (p *Policy) MatchResource(tokens []string, target string) Result {
	g, res := p.start(tokens)
	if g == nil {
		return res
	}
	if c := resourceRule(&g.m, g.anchors, target); c != nil {
		res.Allowed, res.Rule = c.allow, c.rule
	}
	return res
}

// anchorMatcher compiles the rules that end in '$' (or anchor an index
// page), or returns nil when there are none: only such a rule can match a
// path and not the same path with a query.
func anchorMatcher(rules []Rule) *matcher {
	var anchored []Rule
	for _, r := range rules {
		if strings.HasSuffix(normalizePattern(r.Pattern), "$") || r.Allow && anchorsIndexPage(r.Pattern) {
			anchored = append(anchored, r)
		}
	}
	if len(anchored) == 0 {
		return nil
	}
	m := newMatcher(anchored)
	return &m
}

// resourceRule returns the rule that decides for the resource a target in
// normal form names, as [Policy.MatchResource] reads it, or nil: the rules
// of m against the whole target, then, when none matches and the target has
// a query, the anchored rules against its path.
func resourceRule(m, anchors *matcher, t string) *crule {
	if isRobotsTxt(t) {
		return nil
	}
	if i := m.match(t); i >= 0 {
		return &m.rules[i]
	}
	if anchors != nil {
		if q := strings.IndexByte(t, '?'); q >= 0 {
			if i := anchors.match(t[:q]); i >= 0 {
				return &anchors.rules[i]
			}
		}
	}
	return nil
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
	g.matchCanonical(res, normalizeTargetInto(buf[:], target))
}

// matchCanonical matches a target that is already in normal form.
func (g *group) matchCanonical(res *Result, t string) {
	if isRobotsTxt(t) {
		return
	}
	if i := g.m.match(t); i >= 0 {
		c := &g.m.rules[i]
		res.Allowed = c.allow
		res.Rule = c.rule
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
		if isCanonicalToken(t) {
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
