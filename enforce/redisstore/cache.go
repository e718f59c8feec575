package redisstore

import (
	"encoding/binary"
	"net/netip"
	"sync"

	"github.com/robotsguard/robotsguard/enforce"
)

// cache holds the records of blocked clients that this instance has seen
// in a reply or been told of by another instance, so that a blocked
// client's further requests are answered without a round trip. An entry
// answers only while one of its blocks is in force, and for at most
// revalidate after it was fetched; then the next request asks Redis again.
// It is sharded, and reads take a shard's read lock only.
type cache struct {
	shards [cacheShards]cacheShard
}

const (
	cacheShards = 32
	// maxCachedPerShard bounds the cache: 128 Ki blocked clients.
	maxCachedPerShard = 4096
)

type cacheShard struct {
	mu sync.RWMutex
	m  map[cacheKey]*cacheEntry
	_  [40]byte // keep shards apart in memory
}

// cacheKey identifies a record without a pointer, as enforce.MemoryStore's
// keys do.
type cacheKey struct {
	addr    [16]byte
	bits    uint8
	v4, dry bool
}

func makeCacheKey(k enforce.Key) cacheKey {
	a := k.Prefix.Addr()
	return cacheKey{addr: a.As16(), bits: uint8(k.Prefix.Bits()), v4: a.Is4(), dry: k.DryRun}
}

// prefix returns the address prefix of k (the zero Prefix for a client
// without an address).
func (k cacheKey) prefix() netip.Prefix {
	if k.bits > 128 {
		return netip.Prefix{}
	}
	a := netip.AddrFrom16(k.addr)
	if k.v4 {
		a = a.Unmap()
	}
	return netip.PrefixFrom(a, int(k.bits))
}

type cacheEntry struct {
	rec     record
	fetched int64 // when the record was read, by the caller's clock
}

func newCache() *cache {
	c := &cache{}
	for i := range c.shards {
		c.shards[i].m = map[cacheKey]*cacheEntry{}
	}
	return c
}

func (c *cache) shard(k *cacheKey) *cacheShard {
	x := binary.LittleEndian.Uint64(k.addr[:8]) ^ binary.LittleEndian.Uint64(k.addr[8:]) ^ uint64(k.bits)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return &c.shards[x%cacheShards]
}

// lookup answers op on k at t from the cache, as apply.lua would, when the
// cache knows the client or its address blocked. It never answers an Op
// that would change more than the state's LastSeen (a robots.txt fetch), or
// one on a token the record does not hold (Redis would create it).
//
// While Redis cannot be reached (down), entries answer until their blocks
// end, however old: the fleet's blocks stay enforced through an outage.
func (c *cache) lookup(k enforce.Key, t int64, op enforce.Op, ttl int64, down bool) (enforce.Outcome, bool) {
	if op.MarkRobots {
		return enforce.Outcome{}, false
	}
	ck := makeCacheKey(k)
	sh := c.shard(&ck)
	sh.mu.RLock()
	e := sh.m[ck]
	sh.mu.RUnlock()
	if e == nil || !down && (t-e.fetched > int64(revalidate) || e.fetched-t > int64(revalidate)) {
		return enforce.Outcome{}, false
	}
	r := &e.rec
	if k.IsAddr() {
		st := r.Addr
		if !st.Blocked(t) {
			return enforce.Outcome{}, false
		}
		if !op.Peek {
			st.LastSeen = t
		}
		return enforce.Outcome{State: st, Blocked: true, Found: true}, true
	}
	addrBlocked := op.CheckAddr && r.Addr.Blocked(t)
	tok := r.token(k.Token)
	if tok == nil {
		if !op.Peek || !addrBlocked {
			return enforce.Outcome{}, false
		}
		return enforce.Outcome{AddrRobotsAt: r.Addr.RobotsAt, AddrBlockedUntil: r.Addr.BlockedUntil, AddrWhy: r.Addr.Why, AddrBlocked: true, Blocked: true}, true
	}
	st := *tok
	if !op.Peek && st.LastSeen+ttl < t && !st.Offender(t) {
		st = enforce.State{} // a stale token state starts afresh
	}
	if addrBlocked {
		return enforce.Outcome{State: st, AddrRobotsAt: r.Addr.RobotsAt, AddrBlockedUntil: r.Addr.BlockedUntil, AddrWhy: r.Addr.Why,
			AddrBlocked: true, Blocked: true, Found: true}, true
	}
	if !st.Blocked(t) {
		return enforce.Outcome{}, false
	}
	if !op.Peek {
		st.LastSeen = t
	}
	out := enforce.Outcome{State: st, Blocked: true, Found: true}
	if op.CheckAddr {
		out.AddrRobotsAt, out.AddrBlockedUntil, out.AddrWhy = r.Addr.RobotsAt, r.Addr.BlockedUntil, r.Addr.Why
	}
	return out, true
}

// update records what a reply or a message says of a record at t: rec
// holds a block in force, or (nil) it holds none. An older version never
// replaces a newer one.
func (c *cache) update(ck cacheKey, rec *record, t int64) {
	sh := c.shard(&ck)
	if rec == nil {
		// Most replies are of clients without a block: no write lock for
		// them.
		sh.mu.RLock()
		_, cached := sh.m[ck]
		sh.mu.RUnlock()
		if !cached {
			return
		}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[ck]
	if rec == nil {
		delete(sh.m, ck)
		return
	}
	if e != nil && e.rec.Version > rec.Version {
		return
	}
	if e == nil && len(sh.m) >= maxCachedPerShard {
		for k, old := range sh.m {
			if !old.rec.blocked(t) {
				delete(sh.m, k)
			}
		}
		if len(sh.m) >= maxCachedPerShard {
			return // full of blocks in force: the client costs a round trip
		}
	}
	sh.m[ck] = &cacheEntry{rec: *rec, fetched: t}
}

// invalidate drops the records whose prefix overlaps p.
func (c *cache) invalidate(p netip.Prefix) {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		for k := range sh.m {
			if k.prefix().Overlaps(p) {
				delete(sh.m, k)
			}
		}
		sh.mu.Unlock()
	}
}

// clear drops every record.
func (c *cache) clear() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		clear(sh.m)
		sh.mu.Unlock()
	}
}

// len returns the records cached.
func (c *cache) len() int {
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.RLock()
		n += len(sh.m)
		sh.mu.RUnlock()
	}
	return n
}
