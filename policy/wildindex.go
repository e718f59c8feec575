package policy

// wildIndex finds, among the many wildcard rules that hang off one trie
// node, the few that can match a target. Each rule is filed under one bigram
// (two consecutive bytes) of its literal pieces, the one fewest of the
// node's rules contain: a rule that matches finds its pieces, and so that
// bigram, in the target. Matching looks up every bigram of the target; a
// bitset answers for the usual case of a bigram no rule is filed under, a
// map for the others. A rule whose pieces are single bytes is filed under
// one of them, and only a rule with no literal piece is always tried.
type wildIndex struct {
	present [1 << 16 / 64]uint64 // the bigrams some rule is filed under
	by      map[uint16][]int32   // bigram to rules, best first
	byByte  [256][]int32         // byte to rules without a bigram, best first
	always  []int32              // rules without a piece, best first
}

// bigram packs two bytes into an index key.
func bigram(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

// newWildIndex files the rules of wild, which is sorted best first.
func (m *matcher) newWildIndex(wild []int32) *wildIndex {
	// How many rules contain each bigram and each byte.
	freq := map[uint16]int{}
	var byteFreq [256]int
	seen := map[uint16]int32{}
	var seenByte [256]int32
	for _, w := range wild {
		m.rules[w].eachBigram(func(k uint16) {
			if r, ok := seen[k]; !ok || r != w {
				seen[k] = w
				freq[k]++
			}
		})
		m.rules[w].eachByte(func(b byte) {
			if seenByte[b] != w+1 {
				seenByte[b] = w + 1
				byteFreq[b]++
			}
		})
	}
	x := &wildIndex{by: map[uint16][]int32{}}
	for _, w := range wild { // best first, so every list is too
		key, n := uint16(0), -1
		m.rules[w].eachBigram(func(k uint16) {
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
		m.rules[w].eachByte(func(c byte) {
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

// eachBigram calls f with every bigram of the rule's literal pieces.
func (c *crule) eachBigram(f func(uint16)) {
	for _, s := range c.segs {
		for i := 0; i+1 < len(s); i++ {
			f(bigram(s[i], s[i+1]))
		}
	}
}

// eachByte calls f with every byte of the rule's literal pieces.
func (c *crule) eachByte(f func(byte)) {
	for _, s := range c.segs {
		for i := 0; i < len(s); i++ {
			f(s[i])
		}
	}
}

// matchIndexed returns the best rule of x that matches rest and beats best,
// or best: what trying every rule in turn would return.
func (m *matcher) matchIndexed(x *wildIndex, rest string, best int32) int32 {
	best = m.firstMatch(x.always, rest, best)
	for i := 0; i < len(rest); i++ {
		if l := x.byByte[rest[i]]; l != nil {
			best = m.firstMatch(l, rest, best)
		}
		if i+1 < len(rest) {
			if k := bigram(rest[i], rest[i+1]); x.present[k/64]&(1<<(k%64)) != 0 {
				best = m.firstMatch(x.by[k], rest, best)
			}
		}
	}
	return best
}
