package review

import (
	"strings"
)

// top is a space-saving top-k list (Metwally et al.): a key not in a full
// list replaces the one with the smallest count and inherits that count as
// its possible overestimate. Lists are short, so a linear scan is the
// fastest search.
type top[K comparable] []topItem[K]

type topItem[K comparable] struct {
	key   K
	count uint64
	err   uint64 // the count inherited on insertion: the most it overstates
}

// add counts one occurrence of key in a list of at most k items; own, if
// set, copies what a new key must not hold on to.
func (t *top[K]) add(key K, k int, own func(K) K) {
	l := *t
	for i := range l {
		if l[i].key == key {
			l[i].count++
			return
		}
	}
	if own != nil {
		key = own(key)
	}
	if len(l) < k {
		if l == nil {
			l = make(top[K], 0, k)
		}
		*t = append(l, topItem[K]{key: key, count: 1})
		return
	}
	m := 0
	for i := range l {
		if l[i].count < l[m].count {
			m = i
		}
	}
	l[m] = topItem[K]{key: key, count: l[m].count + 1, err: l[m].count}
}

// ownRule copies a rule key's pattern, a piece of the robots.txt file
// that the top list must not hold on to.
func ownRule(r ruleKey) ruleKey {
	r.rule.Pattern = strings.Clone(r.rule.Pattern)
	return r
}
