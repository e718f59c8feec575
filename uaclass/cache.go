package uaclass

import (
	"hash/maphash"
	"sync"
)

// cache is a bounded map from User-Agent to Result. It is split into shards,
// each with two generations: lookups try the current generation, then the
// previous one (promoting a hit); when the current generation exceeds its
// byte budget it becomes the previous one and the oldest is dropped. That
// keeps recently used entries, like an LRU, at the cost of one map swap
// instead of a list per entry, and bounds memory to twice the budget.
type cache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
	budget int // bytes per generation per shard
}

const (
	cacheShards = 16
	// entryOverhead approximates the bytes a cached entry costs beside its
	// key: the map slot, the string header and the Result.
	entryOverhead = 96
	// maxCachedUA keeps hostile, huge User-Agents out of the cache.
	maxCachedUA = 1024
)

type cacheShard struct {
	mu        sync.RWMutex
	cur, prev map[string]Result
	curBytes  int
	_         [40]byte // keep shards on separate cache lines
}

func newCache(bytes int) *cache {
	c := &cache{seed: maphash.MakeSeed(), budget: max(bytes/(2*cacheShards), entryOverhead+maxCachedUA)}
	for i := range c.shards {
		c.shards[i].cur = map[string]Result{}
	}
	return c
}

func (c *cache) shard(ua string) *cacheShard {
	return &c.shards[maphash.String(c.seed, ua)%cacheShards]
}

func (c *cache) get(ua string) (Result, bool) {
	s := c.shard(ua)
	s.mu.RLock()
	r, ok := s.cur[ua]
	if !ok && s.prev != nil {
		r, ok = s.prev[ua]
		s.mu.RUnlock()
		if ok {
			s.mu.Lock()
			s.insert(ua, r, c.budget)
			s.mu.Unlock()
		}
		return r, ok
	}
	s.mu.RUnlock()
	return r, ok
}

func (c *cache) put(ua string, r Result) {
	if len(ua) > maxCachedUA {
		return
	}
	s := c.shard(ua)
	s.mu.Lock()
	s.insert(ua, r, c.budget)
	s.mu.Unlock()
}

// insert adds an entry; the caller holds s.mu.
func (s *cacheShard) insert(ua string, r Result, budget int) {
	if _, ok := s.cur[ua]; ok {
		return
	}
	cost := len(ua) + entryOverhead
	if s.curBytes+cost > budget {
		s.prev, s.cur, s.curBytes = s.cur, make(map[string]Result, len(s.cur)), 0
	}
	s.cur[ua] = r
	s.curBytes += cost
}

// len returns the number of cached entries, for tests.
func (c *cache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.cur) + len(s.prev)
		s.mu.RUnlock()
	}
	return n
}
