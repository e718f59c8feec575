package uaclass

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// cache is a bounded map from User-Agent to Result. It is split into shards,
// each with two generations: lookups try the current generation, then the
// previous one (promoting a hit); when the current generation exceeds its
// byte budget it becomes the previous one and the oldest is dropped. That
// keeps recently used entries, like an LRU, at the cost of one map swap
// instead of a list per entry, and bounds memory to twice the budget.
//
// Reads of the common case take no lock: each generation is an immutable
// map behind an atomic pointer. New entries wait in a small pending map,
// under the shard's mutex, and are published in a new copy of the current
// map once there are enough of them (one for every 4 published entries) or
// enough lookups have needed them (one for every 16), so that each copy is
// paid for by the inserts or lookups since the last one.
type cache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
	budget int // bytes per generation per shard
}

const (
	cacheShards = 16
	// entryOverhead approximates the bytes a cached entry costs beside its
	// key: the map slot, the string header and the Result (its Claim
	// included).
	entryOverhead = 160
	// maxCachedUA keeps hostile, huge User-Agents out of the cache.
	maxCachedUA = 1024
)

type cacheShard struct {
	cur, prev atomic.Pointer[map[string]Result] // immutable once published
	mu        sync.Mutex                        // guards what follows and publishing
	pending   map[string]Result                 // entries not yet in cur
	hits      int                               // lookups answered from pending since the last publish
	curBytes  int                               // cost of cur and pending
	_         [32]byte                          // keep shards on separate cache lines
}

func newCache(bytes int) *cache {
	c := &cache{seed: maphash.MakeSeed(), budget: max(bytes/(2*cacheShards), entryOverhead+maxCachedUA)}
	for i := range c.shards {
		s := &c.shards[i]
		s.cur.Store(&map[string]Result{})
		s.pending = map[string]Result{}
	}
	return c
}

func (c *cache) shard(ua string) *cacheShard {
	return &c.shards[maphash.String(c.seed, ua)%cacheShards]
}

func (c *cache) get(ua string) (Result, bool) {
	s := c.shard(ua)
	if r, ok := (*s.cur.Load())[ua]; ok {
		return r, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.pending[ua]; ok {
		// A pending entry in use is published soon, so that its next
		// lookups take no lock; the copy is paid for by the lookups.
		if s.hits++; s.hits > len(*s.cur.Load())/16 {
			s.publish()
		}
		return r, true
	}
	if prev := s.prev.Load(); prev != nil {
		if r, ok := (*prev)[ua]; ok {
			s.insert(ua, r, c.budget)
			return r, true
		}
	}
	return Result{}, false
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
	cur := s.cur.Load()
	if _, ok := (*cur)[ua]; ok {
		return
	}
	if _, ok := s.pending[ua]; ok {
		return
	}
	cost := len(ua) + entryOverhead
	if s.curBytes+cost > budget {
		// The current generation, pending entries included, becomes the
		// previous one.
		s.publish()
		s.prev.Store(s.cur.Load())
		cur = &map[string]Result{}
		s.cur.Store(cur)
		s.curBytes = 0
	}
	s.pending[ua] = r
	s.curBytes += cost
	if len(s.pending) > len(*cur)/4 {
		s.publish()
	}
}

// publish makes the pending entries visible to lock-free reads in a new
// copy of the current map; the caller holds s.mu.
func (s *cacheShard) publish() {
	if len(s.pending) == 0 {
		return
	}
	old := *s.cur.Load()
	m := make(map[string]Result, len(old)+len(s.pending))
	for k, v := range old {
		m[k] = v
	}
	for k, v := range s.pending {
		m[k] = v
	}
	s.cur.Store(&m)
	clear(s.pending)
	s.hits = 0
}

// len returns the number of cached entries, for tests.
func (c *cache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += len(*s.cur.Load()) + len(s.pending)
		if prev := s.prev.Load(); prev != nil {
			n += len(*prev)
		}
		s.mu.Unlock()
	}
	return n
}
