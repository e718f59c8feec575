package enforce

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"
)

// MemoryStore is the in-process [Store]: a sharded map with one LRU list per
// shard. Its size is bounded by MaxClients; idle clients are dropped after
// TTL. Under pressure it evicts the least recently used client that is not
// blocked, so that a flood of new addresses cannot wash out the blocks.
// A request touches one shard's lock only; there is no global lock.
type MemoryStore struct {
	salt     uint64
	shards   [storeShards]storeShard
	perShard int
	ttl      int64
}

const (
	storeShards = 64
	// evictScan bounds how far from the LRU end eviction looks for a client
	// that is not blocked.
	evictScan = 8
)

type storeShard struct {
	mu         sync.Mutex
	m          map[Key]*storeNode
	head, tail *storeNode // head: most recently used
	_          [32]byte   // keep shards apart in memory
}

type storeNode struct {
	key        Key
	st         State
	prev, next *storeNode
}

// DefaultMaxClients is the default bound of a MemoryStore.
const DefaultMaxClients = 100_000

// DefaultTTL is how long an idle client is remembered by default.
const DefaultTTL = time.Hour

// NewMemoryStore returns a store that tracks at most maxClients clients
// (DefaultMaxClients if not positive) and forgets clients idle for ttl
// (DefaultTTL if not positive), unless they are blocked or recent offenders.
func NewMemoryStore(maxClients int, ttl time.Duration) *MemoryStore {
	if maxClients <= 0 {
		maxClients = DefaultMaxClients
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	s := &MemoryStore{salt: rand.Uint64(), perShard: max(1, maxClients/storeShards), ttl: int64(ttl)}
	for i := range s.shards {
		s.shards[i].m = make(map[Key]*storeNode)
	}
	return s
}

// shard picks the shard of k from its IP alone: a cheap multiplicative mix
// of the address, salted per store, instead of a second full hash of the key
// before the map's own. All the state of one IP lives in one shard.
func (s *MemoryStore) shard(k Key) *storeShard {
	b := k.IP.As16()
	x := binary.LittleEndian.Uint64(b[:8]) ^ binary.LittleEndian.Uint64(b[8:]) ^ s.salt
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return &s.shards[x%storeShards]
}

// Apply implements [Store].
func (s *MemoryStore) Apply(k Key, now time.Time, op Op) Outcome {
	t := now.UnixNano()
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var robotsAt, blockedUntil int64
	if op.CheckIP {
		// The IP's state is in the same shard: shards are chosen by IP.
		if n, ok := sh.m[IPKey(k.IP)]; ok && !s.expired(&n.st, t) {
			robotsAt, blockedUntil = n.st.RobotsAt, n.st.BlockedUntil
			if blockedUntil > t {
				return Outcome{IPRobotsAt: robotsAt, IPBlockedUntil: blockedUntil, IPBlocked: true, Blocked: true}
			}
		}
	}
	out := s.apply(sh, k, t, op)
	out.IPRobotsAt, out.IPBlockedUntil = robotsAt, blockedUntil
	return out
}

// apply applies op to k's state in sh; the caller holds sh.mu.
func (s *MemoryStore) apply(sh *storeShard, k Key, t int64, op Op) Outcome {
	n, ok := sh.m[k]
	if ok && s.expired(&n.st, t) {
		sh.remove(n)
		ok = false
	}
	if !ok {
		if op.Peek {
			return Outcome{}
		}
		if len(sh.m) >= s.perShard {
			s.evict(sh, t)
		}
		n = &storeNode{key: k}
		sh.m[k] = n
		sh.pushFront(n)
	} else if !op.Peek {
		sh.moveToFront(n)
	}
	return n.st.Apply(t, op)
}

// expired reports whether an idle client may be forgotten: not blocked, and
// not a recent offender.
func (s *MemoryStore) expired(st *State, now int64) bool {
	return st.LastSeen+s.ttl < now && st.BlockedUntil < now && st.Remember < now
}

// evict makes room in sh: it drops the least recently used client that is
// expired or not blocked, looking at most evictScan clients from the end,
// and otherwise the least recently used one. The caller holds sh.mu.
func (s *MemoryStore) evict(sh *storeShard, now int64) {
	victim := sh.tail
	for n, i := sh.tail, 0; n != nil && i < evictScan; n, i = n.prev, i+1 {
		if n.st.BlockedUntil < now {
			victim = n
			break
		}
	}
	if victim != nil {
		sh.remove(victim)
	}
}

// Len implements [Store].
func (s *MemoryStore) Len() int {
	total := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		total += len(sh.m)
		sh.mu.Unlock()
	}
	return total
}

// Sweep forgets expired clients and counts the clients blocked at now. Call
// it periodically (the Caddy module does every minute); Apply also drops
// expired clients it meets.
func (s *MemoryStore) Sweep(now time.Time) (removed, blocked int) {
	t := now.UnixNano()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for n := sh.tail; n != nil; {
			prev := n.prev
			switch {
			case s.expired(&n.st, t):
				sh.remove(n)
				removed++
			case n.st.BlockedUntil > t:
				blocked++
			}
			n = prev
		}
		sh.mu.Unlock()
	}
	return removed, blocked
}

func (sh *storeShard) pushFront(n *storeNode) {
	n.prev, n.next = nil, sh.head
	if sh.head != nil {
		sh.head.prev = n
	}
	sh.head = n
	if sh.tail == nil {
		sh.tail = n
	}
}

func (sh *storeShard) unlink(n *storeNode) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		sh.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		sh.tail = n.prev
	}
	n.prev, n.next = nil, nil
}

func (sh *storeShard) moveToFront(n *storeNode) {
	if sh.head == n {
		return
	}
	sh.unlink(n)
	sh.pushFront(n)
}

func (sh *storeShard) remove(n *storeNode) {
	sh.unlink(n)
	delete(sh.m, n.key)
}
