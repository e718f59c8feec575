package policy

import (
	"sort"
	"strings"
)

// matcher finds the deciding rule of one merged group for a normalised
// target. Literal parts of patterns live in a radix trie, so one walk down
// the target finds every literal rule that matches, in time proportional to
// the length of the target whatever the number of rules. A rule with '*'
// hangs off the trie node of its literal prefix. When the matcher has few
// wildcard rules and the target is short, they are tried in turn as the
// walk passes their nodes; otherwise one scan of the target by the
// matcher's wildSet (an automaton compiled once over the literal pieces of
// every wildcard rule) finds the ones that match, at a cost linear in the
// target and independent of the number of rules (see wildset.go).
type matcher struct {
	nodes []node
	rules []crule
	// nwild counts the wildcard rules; wild is their automaton, nil when
	// there are none.
	nwild int
	wild  *wildSet
	// direct is the largest cost, nwild times the target's length (plus
	// directRuleCost per rule), at which the wildcard rules are tried in
	// turn rather than by the automaton.
	direct int
}

type node struct {
	label string  // edge label from the parent
	keys  string  // first byte of each child's label, parallel to kids
	kids  []int32 // child node indexes
	// prefix and exact are the winning rules whose whole pattern is the
	// literal path to this node, without and with a '$' anchor; -1 if none.
	prefix, exact int32
	// wild lists the wildcard rules whose literal prefix ends here, best
	// first; root is their step in the wildSet, -1 if none.
	wild []int32
	root int32
}

// crule is a compiled rule.
type crule struct {
	rule     *Rule
	prio     int32 // length of the normalised pattern: longer wins
	allow    bool
	anchored bool     // wildcard rule ending in '$'
	segs     []string // literal pieces between the wildcards
	order    int32    // index of the rule in its rule set, for ties
}

// beats reports whether a wins over b: a longer pattern wins, and Allow wins
// a tie (RFC 9309 section 2.2.2). Between rules equal in both, the earlier
// in the file wins, so the rule a decision names does not depend on the order
// in which the matcher meets them.
func (m *matcher) beats(a, b int32) bool {
	if b < 0 {
		return true
	}
	ra, rb := &m.rules[a], &m.rules[b]
	if ra.prio != rb.prio {
		return ra.prio > rb.prio
	}
	if ra.allow != rb.allow {
		return ra.allow
	}
	return a < b
}

// Trying the wildcard rules in turn costs each rule a fixed overhead plus
// about the target's length (each piece is looked for with strings.Index);
// the automaton costs a fixed set-up (scratch space, two scans) plus a few
// nanoseconds per byte. directBudget is the product of rules and bytes
// (each rule counted directRuleCost bytes longer) up to which the former is
// cheaper, measured by BenchmarkWildChoice and BenchmarkMatchWildcards;
// above it the automaton bounds the cost.
const (
	directBudget   = 4096
	directRuleCost = 64
)

// buildMatcher compiles the rules for which include (nil: all) is true.
func buildMatcher(rules []Rule, include func(i int) bool) matcher {
	m := matcher{nodes: []node{{prefix: -1, exact: -1, root: -1}}, direct: directBudget}
	seen := map[string]bool{} // wildcard patterns compiled so far
	for i := range rules {
		if include != nil && !include(i) {
			continue
		}
		r := &rules[i]
		np := normalizePattern(r.Pattern)
		if np == "" {
			// An empty pattern matches everything with no weight: it
			// never decides (RFC 9309 section 2.2.2, "Disallow:" allows all).
			continue
		}
		m.add(r, int32(i), np, seen)
		if r.Allow && anchorsIndexPage(r.Pattern) {
			// As the reference parser does, "Allow: /dir/index.htm[l]" also
			// allows "/dir/" itself.
			s := strings.LastIndexByte(np, '/')
			m.add(r, int32(i), np[:s+1]+"$", seen)
		}
	}
	for i := range m.nodes {
		w := m.nodes[i].wild
		sort.SliceStable(w, func(a, b int) bool { return m.beats(w[a], w[b]) })
		m.nwild += len(w)
	}
	if m.nwild > 0 {
		m.wild = newWildSet(&m)
	}
	return m
}

// add compiles one normalised pattern of rule r. A wildcard pattern that
// seen holds with the same verb is dropped: the earlier rule wins every tie.
func (m *matcher) add(r *Rule, order int32, np string, seen map[string]bool) {
	c := crule{rule: r, prio: int32(len(np)), allow: r.Allow, order: order}
	idx := int32(len(m.rules))
	star := strings.IndexByte(np, '*')
	if star < 0 {
		m.rules = append(m.rules, c)
		if strings.HasSuffix(np, "$") {
			n := m.insert(np[:len(np)-1])
			if m.nodes[n].exact < 0 || m.beats(idx, m.nodes[n].exact) {
				m.nodes[n].exact = idx
			}
		} else {
			n := m.insert(np)
			if m.nodes[n].prefix < 0 || m.beats(idx, m.nodes[n].prefix) {
				m.nodes[n].prefix = idx
			}
		}
		return
	}
	key := "D" + np
	if r.Allow {
		key = "A" + np
	}
	if seen[key] {
		return
	}
	seen[key] = true
	rest := np[star:]
	if strings.HasSuffix(rest, "$") {
		rest = rest[:len(rest)-1]
		// "*$" at the end matches anything to the end: no anchor needed.
		c.anchored = !strings.HasSuffix(rest, "*")
	}
	for _, s := range strings.Split(rest, "*") {
		if s != "" {
			c.segs = append(c.segs, s)
		}
	}
	if c.anchored && len(c.segs) == 0 {
		c.anchored = false
	}
	m.rules = append(m.rules, c)
	n := m.insert(np[:star])
	m.nodes[n].wild = append(m.nodes[n].wild, idx)
}

// insert returns the node for the literal s, creating and splitting nodes as
// needed.
func (m *matcher) insert(s string) int32 {
	n := int32(0)
	for s != "" {
		k := strings.IndexByte(m.nodes[n].keys, s[0])
		if k < 0 {
			c := m.newNode(s)
			m.nodes[n].keys += s[:1]
			m.nodes[n].kids = append(m.nodes[n].kids, c)
			return c
		}
		c := m.nodes[n].kids[k]
		label := m.nodes[c].label
		cp := commonPrefix(label, s)
		if cp < len(label) {
			mid := m.newNode(label[:cp])
			m.nodes[c].label = label[cp:]
			m.nodes[mid].keys = label[cp : cp+1]
			m.nodes[mid].kids = []int32{c}
			m.nodes[n].kids[k] = mid
			c = mid
		}
		n, s = c, s[cp:]
	}
	return n
}

func (m *matcher) newNode(label string) int32 {
	m.nodes = append(m.nodes, node{label: label, prefix: -1, exact: -1, root: -1})
	return int32(len(m.nodes) - 1)
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// best returns the deciding rule for the normalised target t, or nil when
// no rule matches.
func (m *matcher) best(t string) *crule {
	if i := m.match(t); i >= 0 {
		return &m.rules[i]
	}
	return nil
}

// match returns the index of the deciding rule for the normalised target t,
// or -1 when no rule matches.
func (m *matcher) match(t string) int32 {
	if m.nwild > 0 && m.nwild*(len(t)+directRuleCost) > m.direct {
		return m.wild.match(m, t)
	}
	best := int32(-1)
	n, d := int32(0), 0
	for {
		nd := &m.nodes[n]
		if nd.prefix >= 0 && m.beats(nd.prefix, best) {
			best = nd.prefix
		}
		if d == len(t) && nd.exact >= 0 && m.beats(nd.exact, best) {
			best = nd.exact
		}
		best = m.firstMatch(nd.wild, t[d:], best)
		if d == len(t) {
			return best
		}
		// m.child, by hand: the compiler does not inline it.
		k := strings.IndexByte(nd.keys, t[d])
		if k < 0 {
			return best
		}
		c := nd.kids[k]
		label := m.nodes[c].label
		if len(t)-d < len(label) || t[d:d+len(label)] != label {
			return best
		}
		n, d = c, d+len(label)
	}
}

// child returns the child of node n whose label rest starts with, or -1.
func (m *matcher) child(n int32, rest string) int32 {
	nd := &m.nodes[n]
	k := strings.IndexByte(nd.keys, rest[0])
	if k < 0 {
		return -1
	}
	c := nd.kids[k]
	if label := m.nodes[c].label; len(rest) < len(label) || rest[:len(label)] != label {
		return -1
	}
	return c
}

// firstMatch returns the first rule of list (best first) that matches rest
// and beats best, or best.
func (m *matcher) firstMatch(list []int32, rest string, best int32) int32 {
	for _, w := range list {
		if !m.beats(w, best) {
			break // the rest are no better
		}
		if m.rules[w].matchRest(rest) {
			return w
		}
	}
	return best
}

// matchRest reports whether the wildcard part of the rule matches rest, the
// target after the rule's literal prefix. Taking the leftmost occurrence of
// each piece is optimal: it leaves the most room for the pieces after it.
func (c *crule) matchRest(rest string) bool {
	pos := 0
	for i, s := range c.segs {
		if c.anchored && i == len(c.segs)-1 {
			return len(rest)-pos >= len(s) && rest[len(rest)-len(s):] == s
		}
		j := strings.Index(rest[pos:], s)
		if j < 0 {
			return false
		}
		pos += j + len(s)
	}
	return true
}
