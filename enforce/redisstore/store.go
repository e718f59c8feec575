// Package redisstore is an [enforce.Store] on Redis (or Valkey), so that a
// fleet of instances behind a load balancer enforces one set of rates,
// strikes and blocks: a bot that spreads its requests over N instances gets
// its Crawl-delay once, not N times, and a trap hit on one instance blocks
// the client on all of them.
//
// Each Op is one round trip: a server-side Lua script (apply.lua) applies
// it to the client's record, the address prefix's own state and the states
// of up to 4 of its tokens in one Redis hash, and with CheckCrawler to the
// crawler's record, a second hash with the same hash tag (the client's
// network, or a verified identity: ids.go), with the same semantics as
// [enforce.Apply] and [enforce.MemoryStore] (a differential test runs the
// same random Ops through both and compares every Outcome). Times are the
// caller's clock, carried by the Op.
//
// New blocks are published on a channel; every instance keeps a cache of
// the blocked clients it has seen or been told of, so a blocked client's
// flood costs no round trip, and an unblock clears the caches fleet-wide.
// When Redis cannot be reached the store answers as [Options].OnError says
// (by default from the in-process store) and reconnects in the background;
// what it decided meanwhile is written to Redis when it answers again, and
// when Redis has lost its state, the store writes back the blocks it holds
// (memory.go).
//
// The package does not import Caddy.
package redisstore

import (
	"context"
	_ "embed"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsguard/robotsguard/enforce"
)

//go:embed apply.lua
var applySource string

//go:embed unblock.lua
var unblockSource string

//go:embed admit.lua
var admitSource string

var (
	applyScript   = redis.NewScript(applySource)
	unblockScript = redis.NewScript(unblockSource)
	admitScript   = redis.NewScript(admitSource)
)

// OnError says how the store answers while Redis cannot be reached.
type OnError uint8

const (
	// Local answers from the in-process store ([Options].Local): every
	// instance enforces on its own until Redis is back.
	Local OnError = iota
	// Allow answers as if the client had no state: nobody is throttled or
	// blocked by state (robots.txt rules, blocked classes and traps still
	// refuse).
	Allow
	// Deny throttles every request that a rate binds (429, Retry-After 1
	// s) until Redis is back; people and peeks pass, and rules still
	// refuse.
	Deny
)

// ParseOnError reads "local", "allow" or "deny".
func ParseOnError(s string) (OnError, error) {
	switch s {
	case "local", "":
		return Local, nil
	case "allow":
		return Allow, nil
	case "deny":
		return Deny, nil
	}
	return 0, errors.New("want local, allow or deny, got " + strconv.Quote(s))
}

// String returns "local", "allow" or "deny".
func (o OnError) String() string {
	switch o {
	case Allow:
		return "allow"
	case Deny:
		return "deny"
	}
	return "local"
}

// Defaults.
const (
	// DefaultKeyPrefix starts every key and the events channel.
	DefaultKeyPrefix = "robots_guard:"
	// DefaultTimeout bounds one round trip.
	DefaultTimeout = 250 * time.Millisecond
	// revalidate is how long a cached block answers without a round trip
	// before the next request asks Redis again, so that a lost unblock
	// message holds at most this long.
	revalidate = 5 * time.Second
)

// Options configure a [Store].
type Options struct {
	// Client is the Redis client (single, cluster or sentinel); see
	// [Open]. The store does not close it.
	Client redis.UniversalClient
	// KeyPrefix starts every key and the events channel. Default:
	// DefaultKeyPrefix.
	KeyPrefix string
	// Zone names the state within the prefix, as the Caddy module's zones
	// do. Default: "default".
	Zone string
	// TTL is how long an idle client is remembered (blocked ones and recent
	// offenders are kept longer), as [enforce.NewMemoryStore]'s ttl.
	// Default: enforce.DefaultTTL.
	TTL time.Duration
	// MaxBlocks bounds the zone's records with a block in force, fleet-wide,
	// as [enforce.NewMemoryStore]'s maxBlocks bounds one process's: once
	// they are at the bound, a new block of a record that has none is
	// dropped (the request that earned it is refused all the same;
	// Outcome.BlockDropped), so that a flood of new blocks never lifts the
	// blocks in force, nor makes Redis evict them. An instance learns that
	// the bound is reached when it lists a block (and checks again at most
	// once a second while it drops blocks), so a fleet of N instances may
	// list a few more than MaxBlocks at once. Default:
	// enforce.DefaultMaxClients.
	MaxBlocks int
	// Timeout bounds one round trip. Default: DefaultTimeout.
	Timeout time.Duration
	// OnError says how to answer while Redis cannot be reached. Default:
	// Local.
	OnError OnError
	// Local is the in-process store that answers for OnError Local.
	// Default: a new enforce.MemoryStore.
	Local enforce.Store
	// NoCache turns the cache of blocked clients off: every Op is a round
	// trip (for tests that compare the script alone).
	NoCache bool
	// Now is the clock for the cache's entries from other instances.
	// Default: time.Now.
	Now func() time.Time
	// Retry is the first wait before Redis is tried again after a failure;
	// it doubles up to 2 s. Default: 100ms.
	Retry time.Duration
	// Queue bounds the decisions (trap hits, blocks, strikes) queued while
	// Redis cannot be reached, to write to it when it answers again
	// (memory.go). Default: DefaultQueue.
	Queue int
	// Watch is how often the store checks that Redis still has its state
	// (a marker key), and writes back the blocks it holds when Redis lost
	// them. Default: DefaultWatch.
	Watch time.Duration
	// CrawlerIPv4Prefix and CrawlerIPv6Prefix are the engine's
	// (enforce.Config): the networks that name the records. Defaults: 24
	// and 48.
	CrawlerIPv4Prefix, CrawlerIPv6Prefix int
}

// Hooks report the store's dealings with Redis, for logs and metrics.
// Each may be nil.
type Hooks struct {
	// Fallback is called for each Op answered without Redis.
	Fallback func()
	// Down is called when Redis becomes unreachable, with the error.
	Down func(err error)
	// Up is called when Redis answers again.
	Up func()
	// Memory reports what the store's fleet memory did (memory.go): the
	// decisions made without Redis written to it when it answers again;
	// Redis found to have lost its state and the blocks written back (a
	// warning); blocks moved to this version's keys.
	Memory func(Report)
}

// Report is one report of the store's fleet memory, for its log.
type Report struct {
	// Warn marks a warning: Redis lost its state, or decisions were
	// dropped.
	Warn bool
	// Msg says what happened, for operators.
	Msg string
	// Counts are its figures, by name ("blocks_held", ...).
	Counts []Count
	// Err is the error of a write to Redis, if any.
	Err error
}

// Count is one figure of a Report.
type Count struct {
	Name string
	N    int
}

// Level returns r's level as zap numbers them: 1 (warn) or 0 (info).
func (r Report) Level() int8 {
	if r.Warn {
		return 1
	}
	return 0
}

// Fields returns r's counts as a logger's fields, made by field (zap.Int).
func Fields[F any](r Report, field func(string, int) F) []F {
	out := make([]F, 0, len(r.Counts)+2)
	for _, c := range r.Counts {
		out = append(out, field(c.Name, c.N))
	}
	return out
}

// report sends r to the Memory hook.
func (s *Store) report(r Report) {
	if h := s.hooks.Load(); h.Memory != nil {
		h.Memory(r)
	}
}

// Store is an [enforce.Store] on Redis. It is safe for concurrent use.
type Store struct {
	client  redis.UniversalClient
	base    string // key prefix + zone + ":"
	index   string // the zone's sorted set of blocked records
	channel string // the events channel, shared by the zones of a prefix
	zone    string
	id      uint64 // tells this store's messages from the others'
	ttl     int64
	// maxBlocks bounds the zone's blocks; full says that the index of blocks
	// held maxBlocks at counted (Unix ns), when it was last counted.
	maxBlocks int64
	full      atomic.Bool
	counted   atomic.Int64
	timeout   time.Duration
	retry     time.Duration
	onError   OnError
	local     enforce.Store
	cache     *cache
	now       func() time.Time
	hooks     atomic.Pointer[Hooks]
	down      atomic.Bool
	trips     atomic.Int64
	mem       memory
	marker    string // the key whose epoch says that Redis still has its state
	v4, v6    int    // the crawler networks' lengths
	ctx       context.Context
	cancel    func()
	wg        sync.WaitGroup
}

// New returns a store on o.Client and starts listening for other
// instances' blocks and unblocks. It does not wait for Redis: until Redis
// answers, Ops are answered as o.OnError says. Close stops it.
func New(o Options) *Store {
	if o.KeyPrefix == "" {
		o.KeyPrefix = DefaultKeyPrefix
	}
	if o.Zone == "" {
		o.Zone = "default"
	}
	if o.TTL <= 0 {
		o.TTL = enforce.DefaultTTL
	}
	if o.MaxBlocks <= 0 {
		o.MaxBlocks = enforce.DefaultMaxClients
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Local == nil {
		o.Local = enforce.NewMemoryStore(0, 0, o.TTL)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Retry <= 0 {
		o.Retry = 100 * time.Millisecond
	}
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Watch <= 0 {
		o.Watch = DefaultWatch
	}
	if o.CrawlerIPv4Prefix <= 0 {
		o.CrawlerIPv4Prefix = 24
	}
	if o.CrawlerIPv6Prefix <= 0 {
		o.CrawlerIPv6Prefix = 48
	}
	s := &Store{
		client:    o.Client,
		base:      o.KeyPrefix + o.Zone + ":",
		index:     o.KeyPrefix + o.Zone + ":blocks",
		marker:    o.KeyPrefix + o.Zone + ":marker",
		v4:        o.CrawlerIPv4Prefix,
		v6:        o.CrawlerIPv6Prefix,
		channel:   o.KeyPrefix + "events",
		zone:      o.Zone,
		id:        rand.Uint64(),
		ttl:       int64(o.TTL),
		maxBlocks: int64(o.MaxBlocks),
		timeout:   o.Timeout,
		retry:     o.Retry,
		onError:   o.OnError,
		local:     o.Local,
		now:       o.Now,
	}
	if !o.NoCache {
		s.cache = newCache()
	}
	s.mem.max, s.mem.kick = o.Queue, make(chan struct{}, 1)
	s.hooks.Store(&Hooks{})
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.cache != nil {
		s.wg.Add(1)
		go s.listen()
	}
	s.wg.Add(1)
	go s.watch(o.Watch)
	return s
}

// SetHooks sets the hooks; a store outlives a Caddy config, whose metrics
// and loggers are new on each load.
func (s *Store) SetHooks(h Hooks) { s.hooks.Store(&h) }

// Close stops listening and reconnecting. It does not close the client.
func (s *Store) Close() {
	s.cancel()
	s.wg.Wait()
}

// Up reports whether the store is answering from Redis (not OnError).
func (s *Store) Up() bool { return !s.down.Load() }

// RoundTrips returns the round trips to Redis so far that Apply made.
func (s *Store) RoundTrips() int64 { return s.trips.Load() }

// withCrawler reports whether op on k applies to k's crawler too.
func withCrawler(k enforce.Key, op enforce.Op) bool {
	return op.CheckCrawler && k.Crawler.Kind != enforce.CrawlerNone
}

// Apply implements [enforce.Store]: one round trip to Redis, none for a
// client the cache knows blocked.
func (s *Store) Apply(k enforce.Key, now time.Time, op enforce.Op) enforce.Outcome {
	t := now.UnixNano()
	if !k.Net.IsValid() {
		k.Net = enforce.Network(k.Prefix, s.v4, s.v6) // the engine sets it
	}
	if s.cache != nil {
		if out, ok := s.cache.lookup(k, t, op, s.ttl, s.down.Load()); ok {
			return out
		}
	}
	if s.down.Load() {
		return s.fallback(k, now, op)
	}
	out, rp, err := s.run(k, t, op)
	if err != nil {
		s.failed(err)
		return s.fallback(k, now, op)
	}
	s.settle(k, op, t, out, rp, nil)
	return out
}

// settle records what a reply says in the cache, and announces its new
// blocks, or adds them to news (to announce later, at once).
func (s *Store) settle(k enforce.Key, op enforce.Op, t int64, out enforce.Outcome, rp reply, news *[]announcement) {
	id := addrRef(k).String()
	if s.cache != nil {
		if s.cache.update(makeCacheKey(k), id, rp.rec, rp.version, t) {
			s.suspect(id)
		}
		if withCrawler(k, op) {
			if cid := crawlerRef(k).String(); s.cache.update(makeCrawlerCacheKey(k), cid, rp.crec, rp.crawlerVersion, t) {
				s.suspect(cid)
			}
		}
	}
	var an []announcement
	switch {
	case (out.NewlyBlocked || out.AddrNewlyBlocked) && rp.rec != nil:
		an = append(an, announcement{id, rp.rec})
	case out.BlockDropped:
		s.recount(t)
	}
	if out.CrawlerNewlyBlocked && rp.crec != nil {
		an = append(an, announcement{crawlerRef(k).String(), rp.crec})
	}
	if news != nil {
		*news = append(*news, an...)
	} else if len(an) > 0 {
		s.announce(an, t)
	}
}

// Op flags, as apply.lua reads them.
const (
	flagPeek = 1 << iota
	flagCheckAddr
	flagMarkRobots
	flagStrike
	flagBlock
	flagBlockable
	flagAddrKey
	flagCheckCrawler
)

// Outcome bits, as apply.lua writes them.
const (
	outFound = 1 << iota
	outBlocked
	outTook
	outSlip
	outThrottled
	outByAddr
	outNewlyBlocked
	outAddrBlocked
	outAddrNewlyBlocked
	outBlockDropped
	outCrawlerBlocked
	outCrawlerNewlyBlocked
	outByCrawler
	outStruck
	// addrStrikesShift: above the flags, the address's strike count when
	// the Op struck it (Outcome.AddrStrikes).
	addrStrikesShift = iota
)

// run applies op with the script, and returns the outcome and the reply's
// records (see reply).
func (s *Store) run(k enforce.Key, t int64, op enforce.Op) (enforce.Outcome, reply, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	s.trips.Add(1)
	res, err := applyScript.Run(ctx, s.client, s.keys(k, op), s.args(k, t, op)...).Slice()
	if err != nil {
		return enforce.Outcome{}, reply{}, err
	}
	return decodeReply(res)
}

// keys returns apply.lua's keys for op on k.
func (s *Store) keys(k enforce.Key, op enforce.Op) []string {
	keys := []string{s.base + addrRef(k).String()}
	if withCrawler(k, op) {
		keys = append(keys, s.base+crawlerRef(k).String())
	}
	return keys
}

// args returns apply.lua's arguments for op on k at t.
func (s *Store) args(k enforce.Key, t int64, op enforce.Op) []any {
	flags := 0
	for _, f := range [...]struct {
		on  bool
		bit int
	}{{op.Peek, flagPeek}, {op.CheckAddr, flagCheckAddr}, {op.MarkRobots, flagMarkRobots}, {op.Strike, flagStrike},
		{op.Block, flagBlock}, {op.Blockable, flagBlockable}, {k.IsAddr(), flagAddrKey}, {withCrawler(k, op), flagCheckCrawler}} {
		if f.on {
			flags |= f.bit
		}
	}
	snapshot, full := "0", "0"
	if s.cache != nil {
		snapshot = "1"
	}
	if s.full.Load() {
		full = "1"
	}
	return []any{strconv.FormatInt(t, 10), k.Token, flags,
		int64(op.Interval), op.Burst, int64(op.AddrInterval), op.AddrBurst,
		op.Grace, op.Strikes, op.AddrStrikes,
		int64(op.Window), int64(op.Cooldown), int64(op.MaxCooldown), s.ttl, snapshot, full, int(op.Why),
		int64(op.CrawlerInterval), op.CrawlerBurst, op.CrawlerStrikes, k.Crawler.Name}
}

// reply is what apply.lua answers besides the outcome: the records'
// versions, and the records when they hold a block.
type reply struct {
	version, crawlerVersion int64
	rec, crec               *record
}

// decodeReply reads apply.lua's reply: the outcome, the versions of the
// address's record and of the crawler's, then those records when it holds
// them.
func decodeReply(res []any) (enforce.Outcome, reply, error) {
	var out enforce.Outcome
	var rp reply
	if len(res) < 11 {
		return out, rp, errors.New("redisstore: short reply from the script")
	}
	bits, ok := res[0].(int64)
	n, ok2 := res[10].(int64)
	if !ok || !ok2 || n < 0 || 11+int(n) > len(res) || n%2 != 0 {
		return out, rp, errors.New("redisstore: bad reply from the script")
	}
	str := func(i int) string { s, _ := res[i].(string); return s }
	num := func(i int) int64 { n, _ := strconv.ParseInt(str(i), 10, 64); return n }
	out.Found = bits&outFound != 0
	out.Blocked = bits&outBlocked != 0
	out.Took = bits&outTook != 0
	out.Slip = bits&outSlip != 0
	out.Throttled = bits&outThrottled != 0
	out.ByAddr = bits&outByAddr != 0
	out.NewlyBlocked = bits&outNewlyBlocked != 0
	out.AddrBlocked = bits&outAddrBlocked != 0
	out.AddrNewlyBlocked = bits&outAddrNewlyBlocked != 0
	out.BlockDropped = bits&outBlockDropped != 0
	out.CrawlerBlocked = bits&outCrawlerBlocked != 0
	out.CrawlerNewlyBlocked = bits&outCrawlerNewlyBlocked != 0
	out.ByCrawler = bits&outByCrawler != 0
	out.Struck = bits&outStruck != 0
	out.AddrStrikes = int(bits >> addrStrikesShift)
	out.RetryAfter = time.Duration(num(1))
	out.AddrRobotsAt, out.AddrBlockedUntil = num(2), num(3)
	var err error
	if out.State, err = decodeState(str(4)); err != nil {
		return out, rp, err
	}
	out.AddrWhy = enforce.BlockReason(num(5))
	out.CrawlerBlockedUntil, out.CrawlerWhy = num(6), enforce.BlockReason(num(7))
	rp.version, rp.crawlerVersion = num(8), num(9)
	if n > 0 {
		rp.rec = &record{Version: num(11)}
		if rp.rec.Addr, err = decodeState(str(12)); err != nil {
			return out, rp, err
		}
		for i := 13; i+1 < 11+int(n); i += 2 {
			st, err := decodeState(str(i + 1))
			if err != nil {
				return out, rp, err
			}
			rp.rec.Tokens = append(rp.rec.Tokens, tokenState{Name: str(i), State: st})
		}
	}
	switch i := 11 + int(n); len(res) - i {
	case 0:
	case 3:
		rp.crec = &record{Version: num(i), Name: str(i + 2)}
		if rp.crec.Addr, err = decodeState(str(i + 1)); err != nil {
			return out, rp, err
		}
	default:
		return out, rp, errors.New("redisstore: bad crawler record in the script's reply")
	}
	return out, rp, nil
}

// fallback answers an Op without Redis, and queues what it changes for
// Redis (memory.go).
func (s *Store) fallback(k enforce.Key, now time.Time, op enforce.Op) enforce.Outcome {
	if h := s.hooks.Load(); h.Fallback != nil {
		h.Fallback()
	}
	var out enforce.Outcome
	switch s.onError {
	case Allow:
		out = enforce.Outcome{Took: op.Interval > 0 && !op.Peek}
	case Deny:
		if op.Interval > 0 && !op.Peek {
			out = enforce.Outcome{Throttled: true, RetryAfter: time.Second}
		}
	default:
		out = s.local.Apply(k, now, op)
	}
	s.enqueue(k, now.UnixNano(), op, out)
	return out
}

// failed marks Redis down and starts reconnecting, once.
func (s *Store) failed(err error) {
	if s.ctx.Err() != nil || !s.down.CompareAndSwap(false, true) {
		return
	}
	if h := s.hooks.Load(); h.Down != nil {
		h.Down(err)
	}
	s.wg.Add(1)
	go s.reconnect()
}

// reconnect pings Redis, with a backoff from s.retry to 2 s, until it
// answers; then the store uses Redis again. The cache is cleared first: it
// may have missed unblocks meanwhile.
func (s *Store) reconnect() {
	defer s.wg.Done()
	wait := s.retry
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(wait):
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
		err := s.client.Ping(ctx).Err()
		cancel()
		if err == nil {
			if s.cache != nil {
				s.cache.stale() // it may have missed unblocks meanwhile
			}
			// What was decided without Redis goes to it first, so that the
			// fleet knows it; then what was decided meanwhile.
			n, dropped, err := s.replay()
			if err != nil {
				wait = min(2*wait, 2*time.Second)
				continue
			}
			s.down.Store(false)
			m, d, _ := s.replay()
			if h := s.hooks.Load(); h.Up != nil {
				h.Up()
			}
			if n+m+dropped+d > 0 {
				s.report(Report{Warn: dropped+d > 0, Msg: "wrote to the Redis store what this instance decided without it (trap hits, blocks, strikes)",
					Counts: []Count{{"decisions", n + m}, {"dropped", dropped + d}}})
			}
			s.kickWatch() // has Redis kept its state?
			return
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// Len implements [enforce.Store]: the records of the zone in Redis (a SCAN
// of the keys; for metrics), or the local store's count while Redis cannot
// be reached.
func (s *Store) Len() int {
	n, err := s.count()
	if err != nil {
		return s.local.Len()
	}
	return n
}

// Interface guard
var _ enforce.Store = (*Store)(nil)
