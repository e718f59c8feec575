package policy

import (
	"strings"
	"sync/atomic"
)

// wildSet matches every wildcard rule of a matcher in one scan of the
// target. It is compiled once per matcher, so once per Policy.
//
// A wildcard rule is its literal prefix (the trie node it hangs off), then
// literal pieces to be found in order, each after the one before: "/*a*b$"
// hangs off "/" and looks for "a", then "b" at the very end. Taking the
// leftmost occurrence of each piece is optimal (it leaves the most room for
// the rest), so whether a rule matches is decided piece by piece as the
// scan meets them.
//
// Rules of one node that start with the same pieces share the steps for
// them: the steps form a tree whose root is the node and where each edge
// is a piece. A step is reached when its parent is and its piece then
// occurs; a rule matches when the step of its last piece is reached (for a
// rule ending in '$', when that piece ends the target). Rules that share
// their first pieces are thus decided together, and a step is reached at
// most once per target.
//
// The target is run twice through one Aho-Corasick automaton over all the
// distinct pieces. The first run notes where each piece occurs last. The
// second reaches the steps: when a step is reached at position e, each of
// its children whose piece still occurs from e on is queued on its piece,
// with e, the position from which the piece may start (a child whose piece
// ends a '$' rule is decided there and then: the piece must end the
// target). A queue is in the order of those positions, so at each
// occurrence of its piece the waiting steps it satisfies are taken from its
// front. A step with many children goes through the pieces that occur
// rather than through its children, when they are fewer. A child that
// holds no rule better than the best match so far is never queued, and the
// second run stops when nothing waits.
//
// A match costs the walk down the trie, two runs over the target from the
// first node with wildcard rules, and constant work for each step reached
// and each child looked at: O(len(target) * k + r * min(c, p)), where k is
// the number of distinct pieces that can end at one position (pieces that
// are suffixes of each other, such as "b", "ab", "cab"; one or two in real
// files), r the steps reached (whose pieces do occur in order, so they
// belong to rules that match up to there), c their children and p the
// distinct pieces in the target. No rule is tried against the target on
// its own, and a rule whose pieces do not occur costs nothing, so the cost
// does not grow with the number of rules.
type wildSet struct {
	// states is the automaton over the pieces; delta its transitions as a
	// table (states by byte class), or nil when that would be too large
	// and the states' goto and fail links are followed instead.
	states []acState
	delta  []int32
	class  [256]uint16
	nclass int
	// pieces holds the distinct literal pieces; steps the step trees of
	// every node.
	pieces []string
	steps  []wstep
	// spare holds scratch space for scans, lock-free: a scan takes one
	// (or makes one when all are in use) and puts it back.
	spare [spareScratch]atomic.Pointer[wildScratch]
	// wide finds the child of a step with more than wideKids children by
	// its queue: wideKey(step, queue).
	wide map[uint64]int32
}

// wideKids is how many children a step has before the scan may find them
// through the pieces that occur in the target instead.
const wideKids = 8

func wideKey(step, queue int32) uint64 { return uint64(step)<<32 | uint64(uint32(queue)) }

// acState is one state of the automaton.
type acState struct {
	keys string  // bytes with a goto edge, parallel to kids
	kids []int32 // goto targets
	fail int32
	// emit is the first state on the fail chain from this one (itself
	// included) where a piece ends, or -1; out is that piece at emit, and
	// dict the next such state after emit.
	emit, out, dict int32
}

// wstep is one step: a parent reached and then piece found.
type wstep struct {
	queue int32 // 2*piece, +1 for a piece that must end the target; -1 for a root
	term  int32 // best rule whose pattern ends at this step, or -1
	best  int32 // best rule of the step and its descendants
	// last is the queue of the last piece of every rule of the step's
	// descendants, when they share it (-1 when not, or when a rule ends
	// here): a step is not worth reaching when that piece cannot occur.
	last int32
	kids []int32
}

// lastUnset is a step's last before any rule is compiled through it.
const lastUnset = -2

// maxDelta is the largest transition table (in entries, four bytes each)
// the automaton is given; larger automata follow goto and fail links.
const maxDelta = 1 << 20

// newWildSet compiles the wildcard rules of m's nodes (each node's sorted
// best first) and records each node's root step.
func newWildSet(m *matcher) *wildSet {
	w := &wildSet{}
	pieceID := map[string]int32{}
	type edge struct {
		parent, queue int32
	}
	kid := map[edge]int32{}
	var chain []int32 // the steps of one rule
	for n := range m.nodes {
		nd := &m.nodes[n]
		if len(nd.wild) == 0 {
			continue
		}
		nd.root = w.newStep(-1, nd.wild[0])
		for _, r := range nd.wild {
			c := &m.rules[r]
			s := nd.root
			lastQ := int32(-1)
			chain = append(chain[:0], s)
			for j, seg := range c.segs {
				p, ok := pieceID[seg]
				if !ok {
					p = int32(len(w.pieces))
					pieceID[seg] = p
					w.pieces = append(w.pieces, seg)
				}
				q := 2 * p
				if c.anchored && j == len(c.segs)-1 {
					q++
				}
				if j == len(c.segs)-1 {
					lastQ = q
				}
				e := edge{s, q}
				next, ok := kid[e]
				if !ok {
					// Rules come best first: the first through a step
					// is the best of its subtree.
					next = w.newStep(q, r)
					kid[e] = next
					w.steps[s].kids = append(w.steps[s].kids, next)
				}
				s = next
				chain = append(chain, s)
			}
			if w.steps[s].term < 0 {
				w.steps[s].term = r
			}
			// The steps before the rule's end share its last piece
			// or not; the step where it ends shares nothing.
			for _, t := range chain {
				st := &w.steps[t]
				switch {
				case t == s:
					st.last = -1
				case st.last == lastUnset:
					st.last = lastQ
				case st.last != lastQ:
					st.last = -1
				}
			}
		}
	}
	w.wide = map[uint64]int32{}
	for s := range w.steps {
		if kids := w.steps[s].kids; len(kids) > wideKids {
			for _, k := range kids {
				w.wide[wideKey(int32(s), w.steps[k].queue)] = k
			}
		}
	}
	w.buildAutomaton()
	return w
}

func (w *wildSet) newStep(queue, best int32) int32 {
	w.steps = append(w.steps, wstep{queue: queue, term: -1, best: best, last: lastUnset})
	return int32(len(w.steps) - 1)
}

// buildAutomaton builds the Aho-Corasick automaton over the pieces.
func (w *wildSet) buildAutomaton() {
	w.states = []acState{{emit: -1, out: -1, dict: -1}}
	for p, piece := range w.pieces {
		s := int32(0)
		for i := 0; i < len(piece); i++ {
			st := &w.states[s]
			if k := strings.IndexByte(st.keys, piece[i]); k >= 0 {
				s = st.kids[k]
				continue
			}
			next := int32(len(w.states))
			st.keys += piece[i : i+1]
			st.kids = append(st.kids, next)
			w.states = append(w.states, acState{emit: -1, out: -1, dict: -1})
			s = next
		}
		w.states[s].out = int32(p)
	}
	// Fail links in breadth-first order, so that a state's fail target
	// (shallower) is done before it.
	order := []int32{0}
	for h := 0; h < len(order); h++ {
		u := order[h]
		for k, v := range w.states[u].kids {
			order = append(order, v)
			f := int32(0)
			if u != 0 {
				f = w.goTo(w.states[u].fail, w.states[u].keys[k])
			}
			w.states[v].fail = f
		}
	}
	for _, s := range order {
		st := &w.states[s]
		switch {
		case st.out >= 0:
			st.emit = s
		case s != 0:
			st.emit = w.states[st.fail].emit
		}
		if s != 0 && st.emit == s {
			st.dict = w.states[st.fail].emit
		}
	}
	// The outputs along the chain from emit: out and dict of emit state.
	for s := range w.states {
		st := &w.states[s]
		if st.emit >= 0 && st.emit != int32(s) {
			st.out, st.dict = w.states[st.emit].out, w.states[st.emit].dict
		}
	}
	// A table over byte classes: every byte that occurs in a piece is a
	// class of its own, all others are class 0.
	w.nclass = 1
	for _, st := range w.states {
		for i := 0; i < len(st.keys); i++ {
			if b := st.keys[i]; w.class[b] == 0 {
				w.class[b] = uint16(w.nclass)
				w.nclass++
			}
		}
	}
	if len(w.states)*w.nclass > maxDelta {
		return
	}
	w.delta = make([]int32, len(w.states)*w.nclass)
	for _, s := range order {
		st := &w.states[s]
		row := w.delta[int(s)*w.nclass : int(s+1)*w.nclass]
		if s != 0 {
			copy(row, w.delta[int(st.fail)*w.nclass:int(st.fail+1)*w.nclass])
		}
		for k, v := range st.kids {
			row[w.class[st.keys[k]]] = v
		}
	}
}

// goTo is the automaton's transition from s on b by goto and fail links.
func (w *wildSet) goTo(s int32, b byte) int32 {
	for {
		st := &w.states[s]
		if k := strings.IndexByte(st.keys, b); k >= 0 {
			return st.kids[k]
		}
		if s == 0 {
			return 0
		}
		s = st.fail
	}
}

// wildRoot is a node with wildcard rules on the target's path: its root
// step and the length of its literal prefix.
type wildRoot struct {
	depth int
	step  int32
}

// wildScratch is the state of one scan. The queues are singly linked
// through next; a queue whose gen is not the scan's is empty, so nothing
// is cleared between scans.
type wildScratch struct {
	gen          uint32
	pgen         []uint32 // per piece: gen once it occurs
	last         []int32  // per piece: where it starts last
	qhead, qtail []int32  // per piece
	next, since  []int32  // per step: the next in its queue, where its piece may start
	roots        []wildRoot
	seen         []int32 // the pieces that occur
	pending      int     // steps queued
	best         int32
	end          int // the target's length
}

// spareScratch is how many scratch spaces a wildSet keeps: as many scans
// at once allocate nothing (a sync.Pool would drop them at each garbage
// collection, and the next scans would allocate them again).
const spareScratch = 16

// getScratch returns scratch space for a scan of w.
func (w *wildSet) getScratch() *wildScratch {
	for i := range w.spare {
		if sc := w.spare[i].Swap(nil); sc != nil {
			return sc
		}
	}
	return new(wildScratch)
}

// putScratch gives sc back to w, or drops it when w keeps enough.
func (w *wildSet) putScratch(sc *wildScratch) {
	for i := range w.spare {
		if w.spare[i].CompareAndSwap(nil, sc) {
			return
		}
	}
}

// reset readies sc for a scan of w.
func (sc *wildScratch) reset(w *wildSet) {
	if np := len(w.pieces); len(sc.pgen) < np {
		sc.pgen = make([]uint32, np)
		sc.last = make([]int32, np)
		sc.qhead = make([]int32, np)
		sc.qtail = make([]int32, np)
	}
	if len(sc.next) < len(w.steps) {
		sc.next = make([]int32, len(w.steps))
		sc.since = make([]int32, len(w.steps))
	}
	sc.gen++
	if sc.gen == 0 {
		clear(sc.pgen)
		sc.gen = 1
	}
	sc.roots, sc.seen = sc.roots[:0], sc.seen[:0]
	sc.pending, sc.best = 0, -1
}

// match returns the index of the deciding rule of m for the normalised
// target t, or -1: what trying every rule would return.
func (w *wildSet) match(m *matcher, t string) int32 {
	sc := w.getScratch()
	sc.reset(w)
	best := sc.scan(w, m, t)
	w.putScratch(sc)
	return best
}

// scan walks the trie for the literal rules and the roots on t's path, then
// runs t through the automaton.
func (sc *wildScratch) scan(w *wildSet, m *matcher, t string) int32 {
	n, d := int32(0), 0
	for {
		nd := &m.nodes[n]
		if nd.prefix >= 0 && m.beats(nd.prefix, sc.best) {
			sc.best = nd.prefix
		}
		if d == len(t) && nd.exact >= 0 && m.beats(nd.exact, sc.best) {
			sc.best = nd.exact
		}
		if nd.root >= 0 {
			sc.roots = append(sc.roots, wildRoot{d, nd.root})
		}
		if d == len(t) {
			break
		}
		c := m.child(n, t[d:])
		if c < 0 {
			break
		}
		n, d = c, d+len(m.nodes[c].label)
	}
	if len(sc.roots) == 0 {
		return sc.best
	}
	// First run: where each piece occurs last.
	sc.end = len(t)
	state := int32(0)
	for i := sc.roots[0].depth; i < len(t); {
		state = w.step(state, t[i])
		i++
		st := &w.states[state]
		if st.emit < 0 {
			continue
		}
		for p, e := st.out, st.dict; ; {
			if sc.pgen[p] != sc.gen {
				sc.pgen[p] = sc.gen
				sc.qhead[p] = -1
				sc.seen = append(sc.seen, p)
			}
			sc.last[p] = int32(i - len(w.pieces[p]))
			if e < 0 {
				break
			}
			p, e = w.states[e].out, w.states[e].dict
		}
	}
	// Second run: reach the steps.
	i, r := sc.roots[0].depth, 0
	state = 0
	for {
		for ; r < len(sc.roots) && sc.roots[r].depth == i; r++ {
			if root := sc.roots[r].step; m.beats(w.steps[root].best, sc.best) {
				sc.reach(w, m, root, i)
			}
		}
		if sc.pending == 0 {
			if r == len(sc.roots) {
				break
			}
			// Nothing waits: go on from the next root.
			i, state = sc.roots[r].depth, 0
			continue
		}
		if i == len(t) {
			break // not reached: a queued step's piece occurs after it
		}
		state = w.step(state, t[i])
		i++
		st := &w.states[state]
		if st.emit < 0 {
			continue
		}
		for p, e := st.out, st.dict; ; {
			sc.found(w, m, p, i-len(w.pieces[p]), i)
			if e < 0 {
				break
			}
			p, e = w.states[e].out, w.states[e].dict
		}
	}
	return sc.best
}

// step is the automaton's transition from s on b.
func (w *wildSet) step(s int32, b byte) int32 {
	if w.delta != nil {
		return w.delta[int(s)*w.nclass+int(w.class[b])]
	}
	return w.goTo(s, b)
}

// found takes from the queue of piece q the steps that an occurrence of it
// from start to end satisfies, and reaches them at end.
func (sc *wildScratch) found(w *wildSet, m *matcher, q int32, start, end int) {
	for h := sc.qhead[q]; h >= 0 && sc.since[h] <= int32(start); h = sc.qhead[q] {
		sc.qhead[q] = sc.next[h]
		sc.pending--
		if m.beats(w.steps[h].best, sc.best) {
			sc.reach(w, m, h, end)
		}
	}
}

// reach records that step s is reached at position pos: its rule matches,
// and its children wait for their pieces from pos on.
func (sc *wildScratch) reach(w *wildSet, m *matcher, s int32, pos int) {
	st := &w.steps[s]
	if st.term >= 0 && m.beats(st.term, sc.best) {
		sc.best = st.term
	}
	if len(st.kids) > wideKids && 2*len(sc.seen) < len(st.kids) {
		for _, p := range sc.seen {
			for q := 2 * p; q <= 2*p+1; q++ {
				if k, ok := w.wide[wideKey(s, q)]; ok {
					sc.wait(w, m, k, pos)
				}
			}
		}
		return
	}
	for _, k := range st.kids {
		sc.wait(w, m, k, pos)
	}
}

// canOccur reports whether the piece of queue q (-1: none, true) can
// occur from pos on: a piece that must end the target must end it.
func (sc *wildScratch) canOccur(w *wildSet, q int32, pos int) bool {
	if q < 0 {
		return true
	}
	p := q / 2
	if sc.pgen[p] != sc.gen || sc.last[p] < int32(pos) {
		return false
	}
	return q%2 == 0 || int(sc.last[p])+len(w.pieces[p]) == sc.end
}

// wait queues step k, whose parent is reached at pos, when its piece occurs
// from pos on and it could beat the best match so far; a step whose piece
// must end the target is decided at once.
func (sc *wildScratch) wait(w *wildSet, m *matcher, k int32, pos int) {
	ks := &w.steps[k]
	p := ks.queue / 2
	if sc.pgen[p] != sc.gen || sc.last[p] < int32(pos) || !m.beats(ks.best, sc.best) || !sc.canOccur(w, ks.last, pos) {
		return
	}
	if ks.queue%2 == 1 {
		// The last occurrence of a piece that ends the target is there.
		if int(sc.last[p])+len(w.pieces[p]) == sc.end {
			sc.best = ks.best // a leaf: its rule is its best
		}
		return
	}
	sc.since[k], sc.next[k] = int32(pos), -1
	if sc.qhead[p] < 0 {
		sc.qhead[p] = k
	} else {
		sc.next[sc.qtail[p]] = k
	}
	sc.qtail[p] = k
	sc.pending++
}
