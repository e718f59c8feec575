package enforce

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"
	"unsafe"
)

// MemoryStore is the in-process [Store]. It keeps one record per address
// prefix (and mode): the address's own state and the states of up to
// maxTokens of its tokens, so that a request, whatever its Op, is one map
// lookup under one shard's lock; there is no global lock. A crawler's own
// state ([CrawlerKey]) is a record of its own: an Op with CheckCrawler is
// two lookups, under the two shards' locks, taken in shard order. The records sit
// in a sharded map with two LRU lists per shard, one for ordinary
// addresses and one for addresses with a block (or a remembered offence).
// Each list has its own bound, so a flood of new addresses evicts only
// ordinary ones and can never wash out the blocks: once the blocks are at
// their bound, a new block is dropped (reported in Outcome.BlockDropped;
// the request that earned it is refused all the same), unless one of the
// least recently touched blocked addresses is only remembered, its block
// over, and makes room. Idle addresses are forgotten after the TTL.
// Dry-run records never count as blocks here: they are evictable like any
// ordinary address.
type MemoryStore struct {
	salt      uint64
	shards    [storeShards]storeShard
	perShard  int
	perBlocks int
	ttl       int64
}

const (
	storeShards = 64
	// evictScan bounds how far from the LRU end of the blocks the store
	// looks for an address whose block has ended, to make room.
	evictScan = 8
	// maxTokens bounds the token states of one address; a new token
	// replaces the least recently seen one that is not an offender. A
	// client rotating more tokens than this loses nothing by it: its
	// strikes and rate also count on the address.
	maxTokens = 4
)

type storeShard struct {
	mu      sync.Mutex
	m       map[addrKey]*storeNode
	clients storeList // ordinary addresses and dry-run records
	blocks  storeList // addresses with a block or a remembered offence
	_       [32]byte  // keep shards apart in memory
}

// addrKey identifies a record: an address prefix in one mode (kind
// CrawlerNone; id is the verified identity whose address state it keeps
// apart, [Crawler.Scopes], else 0), or a crawler (its kind and ID, and for
// a networked one its network). It holds no pointer (a netip.Addr does),
// so that the map's keys are small and cheap to hash.
type addrKey struct {
	addr    [16]byte
	id      uint64
	bits    uint8
	kind    CrawlerKind
	v4, dry bool
	// zero fills the struct to 32 bytes: without padding, the map hashes
	// it as one block of memory. It is never set.
	zero [4]byte //lint:ignore U1000 it fills the struct (see above)
}

// makeAddrKey returns the key of the record of k's address.
func makeAddrKey(k *Key) addrKey {
	a := k.Prefix.Addr()
	ak := addrKey{addr: a.As16(), bits: uint8(k.Prefix.Bits()), v4: a.Is4(), dry: k.DryRun}
	if k.Crawler.Scopes() {
		ak.id = k.Crawler.ID
	}
	return ak
}

// makeCrawlerKey returns the key of the record of k's crawler.
func makeCrawlerKey(k *Key) addrKey {
	ck := addrKey{id: k.Crawler.ID, kind: k.Crawler.Kind, dry: k.DryRun, bits: 255}
	if k.Crawler.Networked() {
		a := k.Net.Addr()
		ck.addr, ck.bits, ck.v4 = a.As16(), uint8(k.Net.Bits()), a.Is4()
	}
	return ck
}

// prefix returns the address prefix of k (the zero Prefix for a client
// without an address).
func (k addrKey) prefix() netip.Prefix {
	if k.bits > 128 {
		return netip.Prefix{}
	}
	a := netip.AddrFrom16(k.addr)
	if k.v4 {
		a = a.Unmap()
	}
	return netip.PrefixFrom(a, int(k.bits))
}

// storeList is a doubly linked LRU list; head is the most recently used.
type storeList struct {
	head, tail *storeNode
	n          int
}

// tokenState is the state of one token of an address.
type tokenState struct {
	token string
	st    State
}

// storeNode is the record of one address prefix, or of one crawler.
type storeNode struct {
	key addrKey
	// addr is the address's own state, or the crawler's.
	addr State
	// tok0 holds the first token inline (most addresses have one); more
	// holds the others. A crawler's record has no tokens: tok0.token holds
	// its name (Crawler.Name), for listings.
	tok0       tokenState
	more       []tokenState
	ntok       int8
	held       bool  // on the blocks list
	seen       int64 // the last Op that changed the record
	prev, next *storeNode
}

// DefaultMaxClients is the default bound of a MemoryStore's ordinary
// addresses, and of its blocked ones.
const DefaultMaxClients = 100_000

// DefaultTTL is how long an idle client is remembered by default.
const DefaultTTL = time.Hour

// NewMemoryStore returns a store that tracks at most maxClients ordinary
// addresses (DefaultMaxClients if not positive), each with up to 4 tokens,
// and apart from them at most maxBlocks addresses with a block or a
// remembered offence (maxClients if not positive), and that forgets
// addresses idle for ttl (DefaultTTL if not positive) unless they are
// blocked or recent offenders.
func NewMemoryStore(maxClients, maxBlocks int, ttl time.Duration) *MemoryStore {
	if maxClients <= 0 {
		maxClients = DefaultMaxClients
	}
	if maxBlocks <= 0 {
		maxBlocks = maxClients
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	s := &MemoryStore{
		salt:      rand.Uint64(),
		perShard:  max(1, maxClients/storeShards),
		perBlocks: max(1, maxBlocks/storeShards),
		ttl:       int64(ttl),
	}
	for i := range s.shards {
		s.shards[i].m = make(map[addrKey]*storeNode)
	}
	return s
}

// Bounds returns the most ordinary addresses and the most blocked ones the
// store keeps.
func (s *MemoryStore) Bounds() (clients, blocks int) {
	return s.perShard * storeShards, s.perBlocks * storeShards
}

// shard picks the shard of a record: a cheap multiplicative mix of the
// address, salted per store, instead of a second full hash of the key
// before the map's own.
func (s *MemoryStore) shard(k *addrKey) *storeShard {
	x := binary.LittleEndian.Uint64(k.addr[:8]) ^ binary.LittleEndian.Uint64(k.addr[8:]) ^ k.id ^ s.salt
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return &s.shards[x%storeShards]
}

// Apply implements [Store].
func (s *MemoryStore) Apply(k Key, now time.Time, op Op) Outcome {
	t := now.UnixNano()
	ak := makeAddrKey(&k)
	sh := s.shard(&ak)
	crawl := op.CheckCrawler && k.Crawler.Kind != CrawlerNone
	var ck addrKey
	var csh *storeShard
	var keep *storeNode // the crawler's record, which the address's must not evict
	sh.mu.Lock()
	if crawl {
		ck = makeCrawlerKey(&k)
		if csh = s.shard(&ck); csh == sh {
			keep = sh.m[ck]
		}
	}
	n := s.node(sh, ak, t, !op.Peek, keep)
	// The crawler's record is looked up only when the Op will consult it:
	// not when the address or the client is blocked, so that a blocked
	// client's flood costs one lookup (apply.lua does the same).
	if !crawl || s.blockedBefore(n, &k, t, &op) {
		defer sh.mu.Unlock()
		return s.apply(&k, n, sh, nil, nil, t, &op)
	}
	if csh != sh {
		// Two shards are locked in their order, so that two Ops never
		// wait for each other: when the crawler's comes first, the
		// address's is locked again after it, and its record looked up
		// again.
		switch {
		case uintptr(unsafe.Pointer(csh)) > uintptr(unsafe.Pointer(sh)):
			csh.mu.Lock()
		case csh.mu.TryLock():
		default:
			sh.mu.Unlock()
			csh.mu.Lock()
			sh.mu.Lock()
			n = s.node(sh, ak, t, !op.Peek, nil)
		}
		defer csh.mu.Unlock()
	}
	defer sh.mu.Unlock()
	c := s.node(csh, ck, t, !op.Peek, n)
	if c != nil && c.tok0.token == "" {
		c.tok0.token = k.Crawler.Name
	}
	return s.apply(&k, n, sh, c, csh, t, &op)
}

// blockedBefore reports whether [Apply] refuses op on k at t before it
// consults the crawler's state: the address (for an Op with CheckAddr, or
// on the address's key) or the client is blocked. It creates the client's
// token state as apply does. The caller holds the lock of n's shard.
func (s *MemoryStore) blockedBefore(n *storeNode, k *Key, t int64, op *Op) bool {
	switch {
	case n == nil:
		return false
	case k.IsAddr():
		return n.addr.Blocked(t)
	case op.CheckAddr && n.addr.Blocked(t):
		return true
	}
	ts := s.token(n, k.Token, t, !op.Peek)
	return ts != nil && ts.st.Blocked(t)
}

// apply applies op to n, the record of k's address (in shard sh; nil for a
// peek of an unknown one) and, when c is not nil, to the crawler's record
// c (in shard csh). The caller holds the shards' locks.
func (s *MemoryStore) apply(k *Key, n *storeNode, sh *storeShard, c *storeNode, csh *storeShard, t int64, op *Op) Outcome {
	var crawler *State
	var crawlerBefore State
	if c != nil {
		crawler, crawlerBefore = &c.addr, c.addr
		if !op.Peek {
			c.seen = t
		}
	}
	if n == nil {
		// A peek of an unknown address: only its crawler can be blocked.
		if crawler == nil {
			return Outcome{}
		}
		out := Apply(&State{}, nil, crawler, t, *op)
		out.State = State{}
		return out
	}
	var out Outcome
	if k.IsAddr() {
		if op.Peek {
			out = Apply(&n.addr, nil, crawler, t, *op)
			out.Found = true
			return out
		}
		n.seen = t
		before := n.addr
		out = Apply(&n.addr, nil, crawler, t, *op)
		out.Found = true
		if addrDropped, _ := s.settle(sh, n, t, &before, nil, nil); addrDropped {
			out.NewlyBlocked, out.BlockDropped, out.State = false, true, n.addr
		}
		s.settleCrawler(csh, c, t, &crawlerBefore, &out)
		return out
	}
	var addr *State
	if op.CheckAddr {
		addr = &n.addr
	}
	ts := s.token(n, k.Token, t, !op.Peek)
	if op.Peek {
		if ts == nil {
			// An unknown token: only its address or crawler can be
			// blocked.
			out = Apply(&State{}, addr, crawler, t, *op)
			out.State = State{}
			return out
		}
		out = Apply(&ts.st, addr, crawler, t, *op)
		out.Found = true
		return out
	}
	n.seen = t
	before, addrBefore := ts.st, n.addr
	out = Apply(&ts.st, addr, crawler, t, *op)
	out.Found = true
	addrDropped, tokDropped := s.settle(sh, n, t, &addrBefore, &ts.st, &before)
	if tokDropped {
		out.NewlyBlocked, out.BlockDropped, out.State = false, true, ts.st
	}
	if addrDropped {
		out.AddrBlocked, out.AddrNewlyBlocked, out.AddrBlockedUntil, out.AddrWhy, out.BlockDropped = false, false, n.addr.BlockedUntil, n.addr.Why, true
	}
	s.settleCrawler(csh, c, t, &crawlerBefore, &out)
	return out
}

// settleCrawler settles the crawler's record c after an Op (see settle),
// and reports in out a new block of it that the store had no room for.
func (s *MemoryStore) settleCrawler(csh *storeShard, c *storeNode, t int64, before *State, out *Outcome) {
	if c == nil {
		return
	}
	if dropped, _ := s.settle(csh, c, t, before, nil, nil); dropped {
		out.CrawlerBlocked, out.CrawlerNewlyBlocked, out.BlockDropped = false, false, true
		out.CrawlerBlockedUntil, out.CrawlerWhy = c.addr.BlockedUntil, c.addr.Why
	}
}

// node returns the live record of k in sh, creating it when create is set
// (nil otherwise if there is none), and marks it used. A new record evicts
// the least recently used ordinary one beyond the bound, but never keep
// (the other record of the same Op). The caller holds sh.mu.
func (s *MemoryStore) node(sh *storeShard, k addrKey, t int64, create bool, keep *storeNode) *storeNode {
	n, ok := sh.m[k]
	if ok && s.expired(n, t) && n != keep {
		sh.remove(n)
		ok = false
	}
	if ok {
		if create {
			sh.list(n).moveToFront(n)
		}
		return n
	}
	if !create {
		return nil
	}
	for sh.clients.n >= s.perShard && sh.clients.tail != nil && sh.clients.tail != keep {
		sh.remove(sh.clients.tail)
	}
	n = &storeNode{key: k}
	sh.m[k] = n
	sh.clients.pushFront(n)
	return n
}

// tok returns the i-th token state of n.
func (n *storeNode) tok(i int) *tokenState {
	if i == 0 {
		return &n.tok0
	}
	return &n.more[i-1]
}

// token returns the state of token in n, creating it when create is set
// (nil otherwise if there is none). A token state idle for the TTL starts
// afresh unless it is an offender. The caller holds the shard's lock.
func (s *MemoryStore) token(n *storeNode, token string, t int64, create bool) *tokenState {
	for i := 0; i < int(n.ntok); i++ {
		if ts := n.tok(i); ts.token == token {
			if create && s.stale(&ts.st, t) {
				ts.st = State{}
			}
			return ts
		}
	}
	if !create {
		return nil
	}
	var ts *tokenState
	switch {
	case n.ntok == 0:
		ts = &n.tok0
	case n.ntok < maxTokens:
		n.more = append(n.more, tokenState{})
		ts = &n.more[len(n.more)-1]
	default:
		// Replace the least recently seen token, sparing offenders.
		victim := 0
		for i := 1; i < int(n.ntok); i++ {
			c, v := n.tok(i), n.tok(victim)
			if cOff, vOff := c.st.Offender(t), v.st.Offender(t); vOff && !cOff || vOff == cOff && c.st.LastSeen < v.st.LastSeen {
				victim = i
			}
		}
		ts = n.tok(victim)
		*ts = tokenState{token: token}
		return ts
	}
	n.ntok++
	ts.token = token
	return ts
}

// settle moves n to the blocks list when an Op made one of its states (the
// address's, or the token state tok) an offender. When the blocks are full,
// an address whose block has ended goes back to the clients to make room;
// failing that, a block the Op set is dropped: the state's block fields
// are restored from before, and settle reports which were dropped. A
// remembered offender without a new block just stays with the clients, and
// dry-run records always do. The caller holds sh.mu.
func (s *MemoryStore) settle(sh *storeShard, n *storeNode, t int64, addrBefore, tok, tokBefore *State) (addrDropped, tokDropped bool) {
	if n.held || n.key.dry || !n.addr.Offender(t) && (tok == nil || !tok.Offender(t)) {
		return false, false
	}
	if sh.blocks.n >= s.perBlocks && !s.reclaim(sh, t) {
		if n.addr.BlockedUntil != addrBefore.BlockedUntil {
			n.addr.BlockedUntil, n.addr.Remember, n.addr.Offenses, n.addr.Why = addrBefore.BlockedUntil, addrBefore.Remember, addrBefore.Offenses, addrBefore.Why
			addrDropped = true
		}
		if tok != nil && tok.BlockedUntil != tokBefore.BlockedUntil {
			tok.BlockedUntil, tok.Remember, tok.Offenses, tok.Why = tokBefore.BlockedUntil, tokBefore.Remember, tokBefore.Offenses, tokBefore.Why
			tokDropped = true
		}
		return addrDropped, tokDropped
	}
	sh.clients.unlink(n)
	sh.blocks.pushFront(n)
	n.held = true
	return false, false
}

// reclaim moves one address whose blocks have all ended from the LRU end
// of the blocks back to the LRU end of the clients, and reports whether it
// found one. The clients may then exceed their bound by the records moved
// back until the next new address evicts. The caller holds sh.mu.
func (s *MemoryStore) reclaim(sh *storeShard, t int64) bool {
	for n, i := sh.blocks.tail, 0; n != nil && i < evictScan; n, i = n.prev, i+1 {
		if n.blocked(t) > 0 {
			continue
		}
		sh.blocks.unlink(n)
		n.held = false
		sh.clients.pushBack(n)
		return true
	}
	return false
}

// blocked counts the states of n blocked at t.
func (n *storeNode) blocked(t int64) int {
	c := 0
	if n.addr.Blocked(t) {
		c++
	}
	for i := 0; i < int(n.ntok); i++ {
		if n.tok(i).st.Blocked(t) {
			c++
		}
	}
	return c
}

// offender reports whether one of the states of n is an offender at t.
func (n *storeNode) offender(t int64) bool {
	if n.addr.Offender(t) {
		return true
	}
	for i := 0; i < int(n.ntok); i++ {
		if n.tok(i).st.Offender(t) {
			return true
		}
	}
	return false
}

// stale reports whether a state idle for the TTL may start afresh: it is
// not blocked and not a recent offender.
func (s *MemoryStore) stale(st *State, t int64) bool {
	return st.LastSeen+s.ttl < t && !st.Offender(t)
}

// expired reports whether an idle address may be forgotten.
func (s *MemoryStore) expired(n *storeNode, t int64) bool {
	return n.seen+s.ttl < t && !n.offender(t)
}

// Len implements [Store]: it counts the addresses tracked.
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

// Sweep forgets expired addresses, moves addresses whose offences are no
// longer remembered back to the clients, and counts the states blocked at
// now (enforced blocks of addresses and of tokens; dry-run ones are not
// counted). Call it periodically (the Caddy module does every minute);
// Apply also drops expired addresses it meets.
func (s *MemoryStore) Sweep(now time.Time) (removed, blocked int) {
	t := now.UnixNano()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for n := sh.blocks.tail; n != nil; {
			prev := n.prev
			if b := n.blocked(t); b > 0 {
				blocked += b
			} else if !n.offender(t) {
				sh.blocks.unlink(n)
				n.held = false
				sh.clients.pushBack(n)
			}
			n = prev
		}
		for n := sh.clients.tail; n != nil; {
			prev := n.prev
			if s.expired(n, t) {
				sh.remove(n)
				removed++
			}
			n = prev
		}
		sh.mu.Unlock()
	}
	return removed, blocked
}

// list returns the list n is on.
func (sh *storeShard) list(n *storeNode) *storeList {
	if n.held {
		return &sh.blocks
	}
	return &sh.clients
}

func (sh *storeShard) remove(n *storeNode) {
	sh.list(n).unlink(n)
	delete(sh.m, n.key)
}

func (l *storeList) pushFront(n *storeNode) {
	n.prev, n.next = nil, l.head
	if l.head != nil {
		l.head.prev = n
	}
	l.head = n
	if l.tail == nil {
		l.tail = n
	}
	l.n++
}

func (l *storeList) pushBack(n *storeNode) {
	n.prev, n.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = n
	}
	l.tail = n
	if l.head == nil {
		l.head = n
	}
	l.n++
}

func (l *storeList) unlink(n *storeNode) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		l.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		l.tail = n.prev
	}
	n.prev, n.next = nil, nil
	l.n--
}

func (l *storeList) moveToFront(n *storeNode) {
	if l.head == n {
		return
	}
	l.unlink(n)
	l.pushFront(n)
}
