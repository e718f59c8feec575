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
//
// It is also what the instance holds of the fleet's blocks (crawlers'
// blocks too, which answer nothing here): when Redis comes back, or its
// subscription does, its entries are only marked stale (stale), not
// dropped, and when the store finds that Redis lost its state it writes
// them back (memory.go).
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
// keys do: an address prefix (kind CrawlerNone; id the verified identity
// that scopes it, or 0), or a crawler (its kind, its ID, and its network
// for a networked one).
type cacheKey struct {
	addr    [16]byte
	id      uint64
	bits    uint8
	kind    enforce.CrawlerKind
	v4, dry bool
}

// makeCacheKey returns the key of the record of k's address.
func makeCacheKey(k enforce.Key) cacheKey {
	return refCacheKey(addrRef(k))
}

// makeCrawlerCacheKey returns the key of the record of k's crawler.
func makeCrawlerCacheKey(k enforce.Key) cacheKey {
	return refCacheKey(crawlerRef(k))
}

// refCacheKey returns the cache key of the record r names.
func refCacheKey(r ref) cacheKey {
	if r.crawler() {
		a := r.Net.Addr()
		return cacheKey{addr: a.As16(), bits: uint8(r.Net.Bits()), v4: a.Is4(), id: r.ID, kind: r.Kind, dry: r.Dry}
	}
	a := r.Prefix.Addr()
	return cacheKey{addr: a.As16(), bits: uint8(r.Prefix.Bits()), v4: a.Is4(), id: r.Ident, dry: r.Dry}
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
	id      string // the record's ID
	fetched int64  // when the record was read, by the caller's clock; 0: stale
}

func newCache() *cache {
	c := &cache{}
	for i := range c.shards {
		c.shards[i].m = map[cacheKey]*cacheEntry{}
	}
	return c
}

func (c *cache) shard(k *cacheKey) *cacheShard {
	x := binary.LittleEndian.Uint64(k.addr[:8]) ^ binary.LittleEndian.Uint64(k.addr[8:]) ^ uint64(k.bits) ^ k.id
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
	if !op.Peek && st.LastSeen+ttl < t && !st.Offender(t) && st != (enforce.State{}) {
		// A stale token state starts afresh: Redis must record it, or a
		// later peek would read the stale one.
		return enforce.Outcome{}, false
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

// update records what a reply or a message says of the record id (key ck)
// at t: rec holds a block in force, or (nil) it holds none; version is the
// record's version in Redis (rec's, when rec is not nil). An older version
// never replaces a newer one. When the cache holds a block in force with a
// newer version than Redis's, Redis has lost it (a restart without
// persistence, a failover, a flush, an eviction): the entry is kept, so
// that the store can write it back, and update reports lost.
func (c *cache) update(ck cacheKey, id string, rec *record, version, t int64) (lost bool) {
	sh := c.shard(&ck)
	if rec == nil {
		// Most replies are of clients without a block: no write lock for
		// them.
		sh.mu.RLock()
		_, cached := sh.m[ck]
		sh.mu.RUnlock()
		if !cached {
			return false
		}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[ck]
	if e != nil && e.rec.Version > version {
		if e.rec.blocked(t) {
			return true
		}
		if rec != nil && e.fetched != 0 {
			return false
		}
	}
	if rec == nil {
		delete(sh.m, ck)
		return false
	}
	if e == nil && len(sh.m) >= maxCachedPerShard {
		for k, old := range sh.m {
			if !old.rec.blocked(t) {
				delete(sh.m, k)
			}
		}
		if len(sh.m) >= maxCachedPerShard {
			return false // full of blocks in force: the client costs a round trip
		}
	}
	sh.m[ck] = &cacheEntry{rec: *rec, id: id, fetched: t}
	return false
}

// invalidate drops the records that an unblock of p lifts (see
// Store.Unblock): the address records whose prefix overlaps p, the
// networked crawlers' whose network does, and the verified identities'
// that one of those address records is kept apart for; and the records
// ids names.
func (c *cache) invalidate(p netip.Prefix, ids []string) {
	idents := map[uint64]bool{}
	named := map[string]bool{}
	for _, id := range ids {
		named[id] = true
	}
	for pass := range 2 {
		for i := range c.shards {
			sh := &c.shards[i]
			sh.mu.Lock()
			for k, e := range sh.m {
				verified := k.kind == enforce.CrawlerVerified
				switch {
				case named[e.id]:
				case pass == 0 && !verified && k.prefix().Overlaps(p):
					if k.kind == enforce.CrawlerNone && k.id != 0 {
						idents[k.id] = true
					}
				case pass == 1 && verified && idents[k.id]:
				default:
					continue
				}
				delete(sh.m, k)
			}
			sh.mu.Unlock()
		}
		if len(idents) == 0 {
			break
		}
	}
}

// stale marks every record stale: it answers no request until Redis has
// been asked again (while Redis is up), but it stays what the instance
// holds of the fleet's blocks.
func (c *cache) stale() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		for k, e := range sh.m {
			// A new entry: readers use entries outside the lock.
			sh.m[k] = &cacheEntry{rec: e.rec, id: e.id}
		}
		sh.mu.Unlock()
	}
}

// held returns a copy of the records that hold a block in force at t,
// with their IDs.
func (c *cache) held(t int64) map[string]record {
	out := map[string]record{}
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.RLock()
		for _, e := range sh.m {
			if e.rec.blocked(t) {
				out[e.id] = e.rec
			}
		}
		sh.mu.RUnlock()
	}
	return out
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
