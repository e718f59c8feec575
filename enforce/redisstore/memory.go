package redisstore

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsguard/robotsguard/enforce"
)

// A fleet that never forgets (issue 38, part 2):
//
//   - What an instance decides while Redis cannot be reached (trap hits,
//     blocks, strikes) is queued, Options.Queue entries at most, blocks
//     kept before strikes, and written to Redis at the decisions' own times
//     when it answers again, before the instance uses it (replay), so that
//     the other instances refuse a client trapped meanwhile.
//   - The instance holds the fleet's blocks it has seen (its cache: replies
//     and the other instances' messages) and those it decided itself
//     without Redis (its in-process store). A marker key with an epoch
//     tells it when Redis has lost its state: the marker gone, or another
//     epoch (another instance found it gone first). It then writes back
//     every block it holds (merging: a block Redis still has is kept, the
//     later end wins) and reports how many (Hooks.Memory). A reply whose
//     record is older than a block the instance holds says the same of one
//     record (an eviction): the instance checks at once.
//   - Blocks stored under the IDs of another version or network length are
//     moved once, when an instance first reaches Redis (migrate).

//go:embed restore.lua
var restoreSource string

var restoreScript = redis.NewScript(restoreSource)

// Defaults of fleet memory.
const (
	// DefaultQueue bounds the decisions queued while Redis cannot be
	// reached.
	DefaultQueue = 10_000
	// DefaultWatch is how often the marker is checked.
	DefaultWatch = time.Second
	// markerTTL is the marker's TTL, renewed at every check: longer than
	// any record's, so that volatile-ttl evicts it last, and never a key
	// without a TTL.
	markerTTL = 7 * 24 * time.Hour
	// batch is how many scripts go in one pipeline.
	batch = 256
)

// queued is a decision made without Redis, to write to it when it
// answers again.
type queued struct {
	k  enforce.Key
	t  int64
	op enforce.Op
}

// memory is the store's fleet memory.
type memory struct {
	mu      sync.Mutex
	queue   []queued
	dropped int // decisions the queue had no room for, since the last replay
	max     int
	kick    chan struct{}
	epoch   string            // the (first) marker's value, as this instance last read it (under mu)
	epochs  map[string]string // every marker's (under mu)
	// slots and their markers, on a cluster (the watcher's): one marker
	// in each slot range, so that a primary that loses its data (a
	// failover to an empty replica) loses one.
	slotMarks []string
	slotsAt   time.Time
	// suspects are the records a reply showed older than a block held
	// (under mu; at most maxSuspects).
	suspects map[string]bool
	moved    bool // migrate has run (the watcher's)
}

// enqueue queues what a decision made without Redis changed: a block
// (a trap) or a strike as it was asked for; a rate Op only when it struck
// or blocked, as a strike (and a block of the client) at its time. Peeks
// and rate Ops that changed only a bucket are not queued: rates are
// fleeting.
func (s *Store) enqueue(k enforce.Key, t int64, op enforce.Op, out enforce.Outcome) {
	if op.Peek {
		return
	}
	q := queued{k: k, t: t, op: op}
	switch {
	case op.Block || op.Strike:
	case op.Interval > 0 && (out.Struck || out.NewlyBlocked):
		q.op.Interval, q.op.AddrInterval, q.op.CrawlerInterval = 0, 0, 0
		q.op.Strike, q.op.Block = out.Struck, out.NewlyBlocked
	default:
		return
	}
	m := &s.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queue) < m.max {
		m.queue = append(m.queue, q)
		return
	}
	m.dropped++
	if !q.op.Block {
		return
	}
	// Full: a block takes the place of the oldest strike.
	for i, e := range m.queue {
		if !e.op.Block {
			copy(m.queue[i:], m.queue[i+1:])
			m.queue[len(m.queue)-1] = q
			return
		}
	}
}

// replay writes the queued decisions to Redis, in order and at their own
// times, and announces the blocks they make. It returns how many it wrote
// and how many the queue had dropped; on an error the rest stays queued.
func (s *Store) replay() (n, dropped int, err error) {
	m := &s.mem
	for {
		m.mu.Lock()
		q := m.queue
		m.queue, dropped = nil, dropped+m.dropped
		m.dropped = 0
		m.mu.Unlock()
		if len(q) == 0 {
			return n, dropped, nil
		}
		ctx, cancel := context.WithTimeout(s.ctx, adminTimeout)
		err = s.replayBatch(ctx, q, &n)
		cancel()
		if err != nil {
			return n, dropped, err
		}
	}
}

// replayBatch writes q, batch by batch, counting in n; what it could not
// write goes back to the front of the queue.
func (s *Store) replayBatch(ctx context.Context, q []queued, n *int) error {
	if err := applyScript.Load(ctx, s.client).Err(); err != nil {
		s.requeue(q)
		return err
	}
	for len(q) > 0 {
		part := q[:min(batch, len(q))]
		cmds := make([]*redis.Cmd, len(part))
		_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, e := range part {
				cmds[i] = applyScript.EvalSha(ctx, p, s.keys(e.k, e.op), s.args(e.k, e.t, e.op)...)
			}
			return nil
		})
		if err != nil && cmds[0].Err() != nil && !isScriptError(cmds[0].Err()) {
			s.requeue(q)
			return err
		}
		var news []announcement
		for i, e := range part {
			res, err := cmds[i].Slice()
			if err != nil {
				continue
			}
			out, rp, err := decodeReply(res)
			if err != nil {
				continue
			}
			*n++
			s.settle(e.k, e.op, e.t, out, rp, &news)
		}
		s.announce(news, s.now().UnixNano())
		q = q[len(part):]
	}
	return nil
}

// isScriptError reports an error of a script's run (not of the connection).
func isScriptError(err error) bool {
	return err != nil && strings.Contains(err.Error(), "script")
}

// requeue puts q back at the front of the queue, within its bound.
func (s *Store) requeue(q []queued) {
	m := &s.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	all := append(q, m.queue...)
	if len(all) > m.max {
		m.dropped += len(all) - m.max
		all = all[len(all)-m.max:]
	}
	m.queue = all
}

// Queued returns how many decisions wait to be written to Redis.
func (s *Store) Queued() int {
	s.mem.mu.Lock()
	defer s.mem.mu.Unlock()
	return len(s.mem.queue)
}

// maxSuspects bounds the records suspected between two checks.
const maxSuspects = 1024

// suspect asks the watcher to check the marker now: a reply showed the
// record id older than a block this instance holds.
func (s *Store) suspect(id string) {
	m := &s.mem
	m.mu.Lock()
	if m.suspects == nil {
		m.suspects = map[string]bool{}
	}
	if len(m.suspects) < maxSuspects {
		m.suspects[id] = true
	}
	m.mu.Unlock()
	s.kickWatch()
}

// kickWatch asks the watcher to check the marker now.
func (s *Store) kickWatch() {
	select {
	case s.mem.kick <- struct{}{}:
	default:
	}
}

// watch checks the marker every Options.Watch, and when suspect asks.
func (s *Store) watch(every time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s.check()
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		case <-s.mem.kick:
		}
	}
}

// check reads the marker (creating it with a new epoch when it is gone)
// and, when its epoch is not the one this instance last read, writes back
// every block the instance holds and reports it. A suspicion without a
// lost marker (an eviction) writes the blocks back too, without a report.
// The first check moves blocks stored under other IDs (migrate).
func (s *Store) check() {
	if s.down.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	markers, err := s.markers(ctx)
	if err != nil {
		cancel()
		return
	}
	epoch := strconv.FormatUint(rand.Uint64(), 36)
	gets := make([]*redis.StringCmd, len(markers))
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, key := range markers {
			p.SetNX(ctx, key, epoch, markerTTL)
			gets[i] = p.Get(ctx, key)
			p.PExpire(ctx, key, markerTTL)
		}
		return nil
	})
	cancel()
	if err != nil {
		return
	}
	m := &s.mem
	now := s.now()
	lost := false
	m.mu.Lock()
	if m.epochs == nil {
		m.epochs = map[string]string{}
	}
	for i, key := range markers {
		last := m.epochs[key]
		lost = lost || last != "" && gets[i].Val() != last
		m.epochs[key] = gets[i].Val()
	}
	m.epoch = gets[0].Val()
	suspects := m.suspects
	m.suspects = nil
	m.mu.Unlock()
	switch {
	case lost:
		held, written, err := s.writeBack(now)
		s.report(Report{Warn: true, Msg: "the Redis store lost its state (its marker key was gone: a restart without persistence, " +
			"a failover to an empty replica, a flush); wrote back the blocks this instance holds",
			Counts: []Count{{"blocks_held", held}, {"blocks_restored", written}}, Err: err})
	case len(suspects) > 0 && s.cache != nil:
		// The marker is there: records were lost one by one (evicted,
		// deleted by hand): those are written back.
		recs := map[string]record{}
		for id, r := range s.cache.held(now.UnixNano()) {
			if suspects[id] {
				recs[id] = r
			}
		}
		_, _ = s.restore(recs, now.UnixNano())
	}
	if !m.moved {
		if n, err := s.migrate(now); err == nil {
			m.moved = true
			if n > 0 {
				s.report(Report{Msg: "moved the Redis store's blocks to the keys of this version", Counts: []Count{{"records", n}}})
			}
		}
	}
}

// markers returns the marker keys to check: one, or on a cluster one in
// each slot range (read again every minute), whose hash tag puts it there.
func (s *Store) markers(ctx context.Context) ([]string, error) {
	cc, ok := s.client.(*redis.ClusterClient)
	if !ok {
		return []string{s.marker}, nil
	}
	m := &s.mem
	if m.slotMarks != nil && time.Since(m.slotsAt) < time.Minute {
		return m.slotMarks, nil
	}
	var ranges [][2]int
	if shards, err := cc.ClusterShards(ctx).Result(); err == nil {
		for _, sh := range shards {
			for _, r := range sh.Slots {
				ranges = append(ranges, [2]int{int(r.Start), int(r.End)})
			}
		}
	} else {
		//lint:ignore SA1019 CLUSTER SHARDS is Redis 7's: before it, CLUSTER SLOTS
		slots, err := cc.ClusterSlots(ctx).Result()
		if err != nil {
			return nil, fmt.Errorf("cluster slots: %v", err)
		}
		for _, r := range slots {
			ranges = append(ranges, [2]int{r.Start, r.End})
		}
	}
	if len(ranges) == 0 {
		return nil, fmt.Errorf("the cluster has no slots")
	}
	var keys []string
	for _, r := range ranges {
		for i := 0; i < 1<<20; i++ {
			tag := "m" + strconv.Itoa(i)
			if slot := int(crc16(tag) % 16384); slot >= r[0] && slot <= r[1] {
				keys = append(keys, s.marker+"{"+tag+"}")
				break
			}
		}
	}
	m.slotMarks, m.slotsAt = keys, time.Now()
	return keys, nil
}

// crc16 is Redis Cluster's key hash (CRC-16/XMODEM).
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// heldRecords returns the records with a block in force at t that the
// instance holds: from its cache, and from its in-process store (what it
// decided without Redis), by record ID.
func (s *Store) heldRecords(t int64) map[string]record {
	recs := map[string]record{}
	if s.cache != nil {
		recs = s.cache.held(t)
	}
	if ms, ok := s.local.(*enforce.MemoryStore); ok && s.onError == Local {
		for _, h := range ms.Held(time.Unix(0, t)) {
			k := h.Key
			rec := record{Addr: h.State}
			var id string
			if k.IsCrawler() {
				id, rec.Name = crawlerRef(k).String(), k.Crawler.Name
			} else {
				if !k.Crawler.Scopes() {
					k.Net = enforce.Network(k.Prefix, s.v4, s.v6)
				}
				id = addrRef(k).String()
				for _, tok := range h.Tokens {
					rec.Tokens = append(rec.Tokens, tokenState{Name: tok.Token, State: tok.State})
				}
			}
			if _, ok := recs[id]; !ok {
				recs[id] = rec
			}
		}
	}
	return recs
}

// writeBack writes back every block the instance holds (heldRecords),
// merging with what Redis has, lists them in the zone's index of blocks,
// and returns how many blocks it held and how many Redis lacked.
func (s *Store) writeBack(now time.Time) (held, written int, err error) {
	t := now.UnixNano()
	recs := s.heldRecords(t)
	for _, r := range recs {
		if r.Addr.Blocked(t) {
			held++
		}
		for _, tok := range r.Tokens {
			if tok.State.Blocked(t) {
				held++
			}
		}
	}
	written, err = s.restore(recs, t)
	return held, written, err
}

// restore writes recs (by record ID) with restore.lua and lists them in
// the index of blocks; it returns how many blocks Redis lacked.
func (s *Store) restore(recs map[string]record, t int64) (int, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, adminTimeout)
	defer cancel()
	if err := restoreScript.Load(ctx, s.client).Err(); err != nil {
		return 0, err
	}
	if err := admitScript.Load(ctx, s.client).Err(); err != nil {
		return 0, err
	}
	ids := make([]string, 0, len(recs))
	for id := range recs {
		ids = append(ids, id)
	}
	written := 0
	for len(ids) > 0 {
		part := ids[:min(batch, len(ids))]
		cmds := make([]*redis.Cmd, len(part))
		_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, id := range part {
				r := recs[id]
				args := []any{strconv.FormatInt(t, 10), s.ttl, r.Version, r.Name, encodeState(r.Addr)}
				for _, tok := range r.Tokens {
					args = append(args, tok.Name, encodeState(tok.State))
				}
				cmds[i] = restoreScript.EvalSha(ctx, p, []string{s.base + id}, args...)
				admitScript.EvalSha(ctx, p, []string{s.index}, t/1e6, id, r.until(t)/1e6, s.ttl/1e6)
			}
			return nil
		})
		if err != nil && cmds[0].Err() != nil && !isScriptError(cmds[0].Err()) {
			return written, err
		}
		for _, c := range cmds {
			n, _ := c.Int()
			written += n
		}
		ids = ids[len(part):]
	}
	return written, nil
}

// migrate moves the blocks listed in the zone's index under IDs this
// store does not write (an address's record of before issue 38,
// "{203.0.113.7/32}", or of another crawler network length) to the IDs it
// writes, merging with what is there. A crawler's record stays: a network
// of another length is another crawler. It returns how many records it
// moved.
func (s *Store) migrate(now time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(s.ctx, adminTimeout)
	defer cancel()
	ids, err := s.client.ZRange(ctx, s.index, 0, -1).Result()
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, id := range ids {
		r, ok := parseRef(id)
		if !ok || r.crawler() || r.Ident != 0 {
			continue
		}
		want := r
		want.Old, want.Net = false, enforce.Network(r.Prefix, s.v4, s.v6)
		if want.String() == id {
			continue
		}
		h, err := s.client.HGetAll(ctx, s.base+id).Result()
		if err != nil {
			return moved, err
		}
		if len(h) > 0 {
			rec, err := decodeRecord(h)
			if err != nil {
				continue
			}
			if _, err := s.restore(map[string]record{want.String(): rec}, now.UnixNano()); err != nil {
				return moved, err
			}
			moved++
		}
		if err := s.client.Del(ctx, s.base+id).Err(); err != nil {
			return moved, err
		}
		if err := s.client.ZRem(ctx, s.index, id).Err(); err != nil {
			return moved, err
		}
	}
	return moved, nil
}

// encodeState writes a state as the scripts do.
func encodeState(st enforce.State) string {
	return fmt.Sprintf("%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d", st.TAT, st.ThrottleUntil, st.StrikeFrom, st.WindowStart,
		st.BlockedUntil, st.Remember, st.RobotsAt, st.LastSeen, st.Strikes, st.Slips, st.Offenses, st.Why)
}

// announcement is a record with a new block, to list in the index of
// blocks and to publish.
type announcement struct {
	id  string
	rec *record
}

// announce lists newly blocked records in the zone's index of blocks,
// learning whether the zone's blocks are at their bound, and publishes
// them, in one pipeline. These are round trips only for the requests that
// caused a block; a failure leaves the block in force (the other instances
// find it at their next round trip) and unlisted until the client's next
// block.
func (s *Store) announce(an []announcement, t int64) {
	if len(an) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	s.trips.Add(2)
	for len(an) > 0 {
		part := an[:min(batch, len(an))]
		admits := make([]*redis.Cmd, len(part))
		_, _ = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, a := range part {
				msg, err := json.Marshal(event{Op: "block", From: s.id, Zone: s.zone, ID: a.id, Rec: a.rec})
				if err != nil {
					continue
				}
				// EVAL, not EVALSHA: a pipeline does not fall back when the
				// script is not loaded (a Redis that just started).
				admits[i] = admitScript.Eval(ctx, p, []string{s.index}, t/1e6, a.id, a.rec.until(t)/1e6, s.ttl/1e6)
				p.Publish(ctx, s.channel, msg)
			}
			return nil
		})
		for _, c := range admits {
			if c == nil {
				continue
			}
			if n, err := c.Int64(); err == nil {
				s.full.Store(n >= s.maxBlocks)
				s.counted.Store(t)
			}
		}
		an = an[len(part):]
	}
}
