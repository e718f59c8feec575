package enforce

import (
	"net/netip"
	"time"
)

// HeldRecord is a record of a [MemoryStore] that holds a block in force,
// whole: what a fleet store writes back when its own store has lost its
// state (a Redis restarted without persistence, a failover, a flush), and
// what it moves.
type HeldRecord struct {
	// Key names the record: the [AddrKey] of an address's record (Net is
	// not kept: the fleet store knows its networks), or the [CrawlerKey]
	// of a crawler's.
	Key Key
	// State is the address's own state, or the crawler's.
	State State
	// Tokens are the token states of an address's record.
	Tokens []HeldToken
}

// HeldToken is one token state of a [HeldRecord].
type HeldToken struct {
	Token string
	State State
}

// Held returns the records that hold a block in force at now (dry-run
// ones too).
func (s *MemoryStore) Held(now time.Time) []HeldRecord {
	t := now.UnixNano()
	var out []HeldRecord
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for _, l := range [...]*storeList{&sh.blocks, &sh.clients} {
			for n := l.head; n != nil; n = n.next {
				if n.blocked(t) == 0 {
					continue
				}
				out = append(out, n.record())
			}
		}
		sh.mu.Unlock()
	}
	return out
}

// record returns n as a HeldRecord. The caller holds its shard's lock.
func (n *storeNode) record() HeldRecord {
	k := &n.key
	h := HeldRecord{State: n.addr}
	if k.kind != CrawlerNone {
		c := Crawler{Kind: k.kind, ID: k.id, Name: n.tok0.token}
		var net netip.Prefix
		if c.Networked() {
			net = k.prefix()
		}
		h.Key = CrawlerKey(Key{Net: net, Crawler: c, DryRun: k.dry})
		return h
	}
	key := Key{Prefix: k.prefix(), DryRun: k.dry}
	if k.id != 0 {
		key.Crawler = Crawler{Kind: CrawlerVerified, ID: k.id, Name: n.tok0.token}
	}
	h.Key = AddrKey(key)
	for i := 0; i < int(n.ntok); i++ {
		ts := n.tok(i)
		h.Tokens = append(h.Tokens, HeldToken{Token: ts.token, State: ts.st})
	}
	return h
}
