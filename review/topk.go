package review

import (
	"strings"
	"sync"
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
	t.insert(key, k, own)
}

// insert counts one occurrence of key, which the list does not hold.
func (t *top[K]) insert(key K, k int, own func(K) K) {
	l := *t
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

// interned holds copies of the rule patterns the top lists keep, so that
// they do not hold on to the robots.txt files the patterns are pieces of,
// and a flood that cycles through a file's rules copies each once, not
// once per request. Bounded: when full it starts again.
type interned struct {
	mu sync.Mutex
	m  map[string]string
}

// maxInterned bounds the patterns interned.
const maxInterned = 4096

// own returns a copy of s that holds on to nothing else.
func (in *interned) own(s string) string {
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.m[s]; ok {
		return c
	}
	if in.m == nil || len(in.m) >= maxInterned {
		in.m = make(map[string]string, 64)
	}
	c := strings.Clone(s)
	in.m[c] = c
	return c
}
