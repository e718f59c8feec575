package redisstore

import (
	"context"
	"encoding/json"
	"net/netip"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// event is a message on the events channel: a record that got a block
// (with the record, for the other instances' caches), or an unblock.
type event struct {
	Op     string   `json:"op"`   // "block" or "unblock"
	From   uint64   `json:"from"` // the instance that sent it
	Zone   string   `json:"zone"`
	ID     string   `json:"id,omitempty"`     // the record (block)
	Rec    *record  `json:"rec,omitempty"`    // its states (block)
	Prefix string   `json:"prefix,omitempty"` // what was unblocked (unblock)
	IDs    []string `json:"ids,omitempty"`    // the verified identities' records it lifted too (unblock)
}

// recount counts the zone's blocks in force again, at most once a second,
// while the store drops new blocks: blocks end, and operators unblock.
func (s *Store) recount(t int64) {
	last := s.counted.Load()
	if t-last < int64(time.Second) || !s.counted.CompareAndSwap(last, t) {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	s.trips.Add(1)
	var card *redis.IntCmd
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, s.index, "-inf", "("+strconv.FormatInt(t/1e6, 10))
		card = p.ZCard(ctx, s.index)
		return nil
	})
	if err == nil {
		s.full.Store(card.Val() >= s.maxBlocks)
	}
}

// listen keeps the cache in step with the other instances: it adds the
// blocks they publish and drops what they unblock. Whenever the
// subscription is (re)established the cache is cleared, as messages may
// have been missed.
func (s *Store) listen() {
	defer s.wg.Done()
	ps := s.client.Subscribe(s.ctx, s.channel)
	// A blocked Receive does not watch its context: closing the
	// subscription ends it.
	stop := context.AfterFunc(s.ctx, func() { ps.Close() })
	defer stop()
	wait := s.retry
	for {
		msg, err := ps.Receive(s.ctx)
		if s.ctx.Err() != nil {
			return
		}
		if err != nil {
			// The cache is cleared when the subscription is back (below),
			// not now: through an outage the known blocks hold.
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, 2*time.Second)
			continue
		}
		wait = s.retry
		switch m := msg.(type) {
		case *redis.Subscription:
			// Messages may have been missed: the cache asks Redis again,
			// and keeps what it holds of the fleet's blocks.
			s.cache.stale()
		case *redis.Message:
			s.handle(m.Payload)
		}
	}
}

// handle applies one message to the cache.
func (s *Store) handle(payload string) {
	var ev event
	// An instance's own messages are old news: its cache took the record
	// from the reply, and may have newer ones since.
	if json.Unmarshal([]byte(payload), &ev) != nil || ev.Zone != s.zone || ev.From == s.id {
		return
	}
	switch ev.Op {
	case "block":
		r, ok := parseRef(ev.ID)
		if !ok || r.Old || ev.Rec == nil || len(ev.Rec.Tokens) > 4 || r.crawler() && len(ev.Rec.Tokens) > 0 {
			return
		}
		s.cache.update(refCacheKey(r), ev.ID, ev.Rec, ev.Rec.Version, s.now().UnixNano())
	case "unblock":
		if p, err := netip.ParsePrefix(ev.Prefix); err == nil {
			s.cache.invalidate(p, ev.IDs)
		}
	}
}
