package policy

// This file keeps the wildcard matcher that policy used before the wildSet
// automaton (issue 29, item 8): a radix trie of literal prefixes whose
// wildcard rules are tried in turn, or through a bigram index where many
// hang off one trie node. It is the reference the new matcher is proven
// against (TestWildSetMatchesOld, FuzzWildSet) and the "before" of the
// benchmarks. It is a verbatim copy with its names prefixed by "old".

import (
	"sort"
	"strings"
)

// oldMatcher finds the deciding rule of one merged group for a normalised
// target. Literal parts of patterns live in a radix trie, so one walk down
// the target finds every literal rule that matches, in time proportional to
// the length of the target whatever the number of rules. A rule with '*'
// hangs off the trie node of its literal prefix and is only tried when the
// walk passes that node and the rule could still beat the best match so far;
// where many hang off one node, a bigram index (see oldWildIndex) picks the few
// whose literal pieces can occur in the target.
type oldMatcher struct {
	nodes []oldNode
	rules []crule
}

type oldNode struct {
	label string  // edge label from the parent
	keys  string  // first byte of each child's label, parallel to kids
	kids  []int32 // child node indexes
	// prefix and exact are the winning rules whose whole pattern is the
	// literal path to this node, without and with a '$' anchor; -1 if none.
	prefix, exact int32
	// wild lists the wildcard rules whose literal prefix ends here, best
	// first.
	wild []int32
	// index replaces the scan of wild when it is long; nil otherwise.
	index *oldWildIndex
}

// beats reports whether a wins over b: a longer pattern wins, and Allow wins
// a tie (RFC 9309 section 2.2.2). Between rules equal in both, the earlier
// in the file wins, so the rule a decision names does not depend on the order
// in which the matcher meets them.
func (m *oldMatcher) beats(a, b int32) bool {
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

// oldWildIndexMin is how many wildcard rules one trie node must hold before
// they are indexed by bigram: below it, trying them in turn is cheaper.
const oldWildIndexMin = 16

// buildOldMatcher compiles the rules for which include (nil: all) is true,
// indexing the wildcard rules of nodes that hold at least indexMin of them.
func buildOldMatcher(rules []Rule, include func(i int) bool, indexMin int) oldMatcher {
	m := oldMatcher{nodes: []oldNode{{prefix: -1, exact: -1}}}
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
		if len(w) >= indexMin {
			m.nodes[i].index = m.newOldWildIndex(w)
		}
	}
	return m
}

// add compiles one normalised pattern of rule r. A wildcard pattern that
// seen holds with the same verb is dropped: the earlier rule wins every tie.
func (m *oldMatcher) add(r *Rule, order int32, np string, seen map[string]bool) {
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
func (m *oldMatcher) insert(s string) int32 {
	n := int32(0)
	for s != "" {
		k := strings.IndexByte(m.nodes[n].keys, s[0])
		if k < 0 {
			c := m.newOldNode(s)
			m.nodes[n].keys += s[:1]
			m.nodes[n].kids = append(m.nodes[n].kids, c)
			return c
		}
		c := m.nodes[n].kids[k]
		label := m.nodes[c].label
		cp := commonPrefix(label, s)
		if cp < len(label) {
			mid := m.newOldNode(label[:cp])
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

func (m *oldMatcher) newOldNode(label string) int32 {
	m.nodes = append(m.nodes, oldNode{label: label, prefix: -1, exact: -1})
	return int32(len(m.nodes) - 1)
}

// match returns the index of the deciding rule for the normalised target t,
// or -1 when no rule matches.
func (m *oldMatcher) match(t string) int32 {
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
		if nd.index != nil {
			best = m.matchIndexed(nd.index, t[d:], best)
		} else {
			best = m.firstMatch(nd.wild, t[d:], best)
		}
		if d == len(t) {
			return best
		}
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

// firstMatch returns the first rule of list (best first) that matches rest
// and beats best, or best.
func (m *oldMatcher) firstMatch(list []int32, rest string, best int32) int32 {
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

// oldWildIndex finds, among the many wildcard rules that hang off one trie
// node, the few that can match a target. Each rule is filed under one bigram
// (two consecutive bytes) of its literal pieces, the one fewest of the
// node's rules contain: a rule that matches finds its pieces, and so that
// bigram, in the target. Matching looks up every bigram of the target; a
// bitset answers for the usual case of a bigram no rule is filed under, a
// map for the others. A rule whose pieces are single bytes is filed under
// one of them, and only a rule with no literal piece is always tried.
type oldWildIndex struct {
	present [1 << 16 / 64]uint64 // the bigrams some rule is filed under
	by      map[uint16][]int32   // bigram to rules, best first
	byByte  [256][]int32         // byte to rules without a bigram, best first
	always  []int32              // rules without a piece, best first
}

// bigram packs two bytes into an index key.
func oldBigram(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

// newOldWildIndex files the rules of wild, which is sorted best first.
func (m *oldMatcher) newOldWildIndex(wild []int32) *oldWildIndex {
	// How many rules contain each bigram and each byte.
	freq := map[uint16]int{}
	var byteFreq [256]int
	seen := map[uint16]int32{}
	var seenByte [256]int32
	for _, w := range wild {
		oldEachBigram(&m.rules[w], func(k uint16) {
			if r, ok := seen[k]; !ok || r != w {
				seen[k] = w
				freq[k]++
			}
		})
		oldEachByte(&m.rules[w], func(b byte) {
			if seenByte[b] != w+1 {
				seenByte[b] = w + 1
				byteFreq[b]++
			}
		})
	}
	x := &oldWildIndex{by: map[uint16][]int32{}}
	for _, w := range wild { // best first, so every list is too
		key, n := uint16(0), -1
		oldEachBigram(&m.rules[w], func(k uint16) {
			if n < 0 || freq[k] < n {
				key, n = k, freq[k]
			}
		})
		if n >= 0 {
			x.by[key] = append(x.by[key], w)
			x.present[key/64] |= 1 << (key % 64)
			continue
		}
		b, n := byte(0), -1
		oldEachByte(&m.rules[w], func(c byte) {
			if n < 0 || byteFreq[c] < n {
				b, n = c, byteFreq[c]
			}
		})
		if n >= 0 {
			x.byByte[b] = append(x.byByte[b], w)
		} else {
			x.always = append(x.always, w)
		}
	}
	return x
}

// matchIndexed returns the best rule of x that matches rest and beats best,
// or best: what trying every rule in turn would return.
func (m *oldMatcher) matchIndexed(x *oldWildIndex, rest string, best int32) int32 {
	best = m.firstMatch(x.always, rest, best)
	for i := 0; i < len(rest); i++ {
		if l := x.byByte[rest[i]]; l != nil {
			best = m.firstMatch(l, rest, best)
		}
		if i+1 < len(rest) {
			if k := oldBigram(rest[i], rest[i+1]); x.present[k/64]&(1<<(k%64)) != 0 {
				best = m.firstMatch(x.by[k], rest, best)
			}
		}
	}
	return best
}

// oldEachBigram calls f with every bigram of the rule's literal pieces.
func oldEachBigram(c *crule, f func(uint16)) {
	for _, s := range c.segs {
		for i := 0; i+1 < len(s); i++ {
			f(oldBigram(s[i], s[i+1]))
		}
	}
}

// oldEachByte calls f with every byte of the rule's literal pieces.
func oldEachByte(c *crule, f func(byte)) {
	for _, s := range c.segs {
		for i := 0; i < len(s); i++ {
			f(s[i])
		}
	}
}
