package uaclass

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Verdict is the outcome of checking whether a client that claims to be a
// known bot really is it.
type Verdict uint8

// Verdicts.
const (
	// NotClaimed: the client claims no bot that can be verified (a browser,
	// an unknown bot, or a bot whose operator publishes no method).
	NotClaimed Verdict = iota
	// Verified: the client IP belongs to the bot's operator.
	Verified
	// Impostor: the client claims a verifiable bot, and the check failed:
	// the IP is outside the published ranges, has no PTR name under the
	// operator's domains, or its PTR name does not resolve back to it.
	Impostor
	// Unverified: the check could not be completed in time (DNS timeout or
	// failure, no lookup slot free for the client's prefix, or no IP ranges
	// loaded for a bot verified by ranges).
	Unverified
)

var verdictNames = [...]string{NotClaimed: "none", Verified: "verified", Impostor: "impostor", Unverified: "unverified"}

// String returns "none", "verified", "impostor" or "unverified".
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

// Resolver is the part of [net.Resolver] the verifier uses; tests and
// operators may supply their own.
type Resolver interface {
	LookupAddr(ctx context.Context, addr string) ([]string, error)
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// VerifierOptions configure a [Verifier]. Zero values mean the defaults.
type VerifierOptions struct {
	// Resolver answers the DNS lookups. Default: net.DefaultResolver.
	Resolver Resolver
	// Wait is the longest a request waits for a verdict. When it passes the
	// request gets Unverified and the lookup goes on, so that the next
	// request from the same IP finds the answer cached. Default: 500ms.
	Wait time.Duration
	// LookupTimeout bounds one verification's DNS lookups. Default: 5s.
	LookupTimeout time.Duration
	// TTL is how long a Verified or Impostor verdict is cached. Default: 1h.
	TTL time.Duration
	// ErrorTTL is how long an Unverified verdict after a DNS failure is
	// cached. Default: 1m.
	ErrorTTL time.Duration
	// MaxEntries bounds the verdict cache, and apart from it the cache of
	// verified addresses. Default: 100,000 each.
	MaxEntries int
	// MaxInflight bounds concurrent lookups; past it, new claims are
	// Unverified without a lookup. Default: 256.
	MaxInflight int
	// PrefixInflight bounds concurrent lookups for the clients of one
	// prefix (a /24 for IPv4, a /64 for IPv6), so that slow answers from
	// one network's reverse zone cannot take the slots that other clients'
	// lookups need. Default: 4.
	PrefixInflight int
	// Ranges maps a bot token to the IP ranges its operator publishes (see
	// [LoadRanges]), fixed for the verifier's life.
	Ranges map[string][]netip.Prefix
	// Lists maps a bot token to the lists of its ranges in force, which a
	// refresh may replace (see [Ranges]); with Ranges, they are the bot's
	// lists. A client in one of a bot's lists is verified. Outside them, a
	// bot of database method "dns" is checked by reverse DNS (the lists
	// only spare it the lookups), any other is an impostor, or unverified
	// while none of its lists is loaded.
	Lists map[string][]*Ranges
	// Now returns the current time. Default: time.Now.
	Now func() time.Time
}

// Verifier checks claims to be a known bot, with forward-confirmed reverse
// DNS or published IP ranges. It is safe for concurrent use.
//
// An address that passed forward-confirmed reverse DNS is remembered with
// its confirmed host name, apart from every other verdict, so that a flood
// of impostor verdicts cannot push a real crawler out, and its later claims
// to any bot of the same operator need no lookup. When that entry expires,
// the crawler stays verified while it is checked again (for at most one
// more TTL, and a failed lookup does not end it; an impostor verdict does).
// Other verdicts are cached per address and bot. Lookups for the same
// address and bot are coalesced, and bounded in total and per prefix.
// Cached reads take no lock.
type Verifier struct {
	opts  VerifierOptions
	lists map[string][]*Ranges // Ranges and Lists by token

	byAddr   *verdictCache[netip.Addr] // verified addresses -> confirmed PTR name
	verdicts *verdictCache[verifyKey]  // (address, token) -> verdict

	mu       sync.Mutex
	inflight map[verifyKey]*lookup
	prefixes map[netip.Prefix]int // lookups in flight per client prefix
}

type verifyKey struct {
	ip    netip.Addr
	token string
}

type lookup struct {
	done chan struct{}
	v    Verdict
}

// NewVerifier returns a Verifier with the given options.
func NewVerifier(opts VerifierOptions) *Verifier {
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	if opts.Wait <= 0 {
		opts.Wait = 500 * time.Millisecond
	}
	if opts.LookupTimeout <= 0 {
		opts.LookupTimeout = 5 * time.Second
	}
	if opts.TTL <= 0 {
		opts.TTL = time.Hour
	}
	if opts.ErrorTTL <= 0 {
		opts.ErrorTTL = time.Minute
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 100_000
	}
	if opts.MaxInflight <= 0 {
		opts.MaxInflight = 256
	}
	if opts.PrefixInflight <= 0 {
		opts.PrefixInflight = 4
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	lists := map[string][]*Ranges{}
	for tok, prefixes := range opts.Ranges {
		lists[tok] = append(lists[tok], NewRanges(&RangeList{Prefixes: prefixes}))
	}
	for tok, rs := range opts.Lists {
		lists[tok] = append(lists[tok], rs...)
	}
	return &Verifier{
		opts:     opts,
		lists:    lists,
		byAddr:   newVerdictCache(opts.MaxEntries, func(ip netip.Addr) netip.Addr { return ip }),
		verdicts: newVerdictCache(opts.MaxEntries, func(k verifyKey) netip.Addr { return k.ip }),
		inflight: map[verifyKey]*lookup{},
		prefixes: map[netip.Prefix]int{},
	}
}

// Verify checks whether ip belongs to the bot that r names. It returns
// NotClaimed when r names no bot with a verification method, and waits at
// most the configured Wait (or until ctx is done) for a DNS answer.
func (v *Verifier) Verify(ctx context.Context, ip netip.Addr, r Result) Verdict {
	b := r.Bot
	if b == nil {
		return NotClaimed
	}
	ip = ip.Unmap()
	if lists, ok := v.lists[b.Token]; ok {
		loaded := false
		for _, r := range lists {
			if l := r.Load(); l != nil {
				if l.Contains(ip) {
					return Verified
				}
				loaded = true
			}
		}
		if b.Verify != VerifyDNS {
			if !loaded {
				return Unverified // none of its lists is loaded yet
			}
			return Impostor
		}
	}
	switch b.Verify {
	case VerifyRanges:
		return Unverified // no ranges were loaded for this bot
	case VerifyDNS:
	default:
		return NotClaimed
	}
	now := v.opts.Now().UnixNano()
	// An address verified before answers every claim its host name covers.
	stale := false
	if e, ok := v.byAddr.get(ip, now); ok && underDomains(e.name, b.Domains) {
		if now < e.expires {
			return Verified
		}
		stale = now < e.expires+int64(v.opts.TTL)
	}
	key := verifyKey{ip, b.Token}
	if e, ok := v.verdicts.get(key, now); ok && now < e.expires {
		if stale && e.v == Unverified {
			return Verified // the last check failed: the address keeps its verdict
		}
		return e.v
	}
	l := v.start(key, b.Domains)
	if stale {
		return Verified // while it is checked again
	}
	if l == nil {
		return Unverified // no lookup slot free
	}
	t := time.NewTimer(v.opts.Wait)
	defer t.Stop()
	select {
	case <-l.done:
		return l.v
	case <-t.C:
	case <-ctx.Done():
	}
	return Unverified
}

// Lists returns the lists of token's ranges in force, nil for those not
// loaded.
func (v *Verifier) Lists(token string) []*RangeList {
	var out []*RangeList
	for _, r := range v.lists[token] {
		out = append(out, r.Load())
	}
	return out
}

// start joins the lookup for key, or starts one if a slot is free in total
// and for the client's prefix; it returns nil when none is.
func (v *Verifier) start(key verifyKey, domains []string) *lookup {
	pfx := clientPrefix(key.ip)
	v.mu.Lock()
	defer v.mu.Unlock()
	if l, ok := v.inflight[key]; ok {
		return l
	}
	if len(v.inflight) >= v.opts.MaxInflight || v.prefixes[pfx] >= v.opts.PrefixInflight {
		return nil
	}
	l := &lookup{done: make(chan struct{})}
	v.inflight[key] = l
	v.prefixes[pfx]++
	go v.run(key, pfx, l, domains)
	return l
}

// clientPrefix is the prefix whose lookups share a bound: /24 or /64.
func clientPrefix(ip netip.Addr) netip.Prefix {
	bits := 64
	if ip.Is4() {
		bits = 24
	}
	p, _ := ip.Prefix(bits)
	return p
}

// run performs one coalesced lookup and caches its verdict. It is not bound
// to the request that started it, so that a slow answer still serves the
// next request.
func (v *Verifier) run(key verifyKey, pfx netip.Prefix, l *lookup, domains []string) {
	ctx, cancel := context.WithTimeout(context.Background(), v.opts.LookupTimeout)
	defer cancel()
	verdict, name := v.fcrdns(ctx, key.ip, domains)
	now := v.opts.Now().UnixNano()
	switch verdict {
	case Verified:
		v.byAddr.put(key.ip, verdictEntry{v: Verified, name: name, expires: now + int64(v.opts.TTL)})
		v.verdicts.put(key, verdictEntry{v: Verified, expires: now + int64(v.opts.TTL)})
	case Impostor:
		if e, ok := v.byAddr.get(key.ip, now); ok && underDomains(e.name, domains) {
			// The address no longer confirms the name it had.
			v.byAddr.put(key.ip, verdictEntry{})
		}
		v.verdicts.put(key, verdictEntry{v: Impostor, expires: now + int64(v.opts.TTL)})
	default:
		// A failed lookup keeps what the address had.
		v.verdicts.put(key, verdictEntry{v: Unverified, expires: now + int64(v.opts.ErrorTTL)})
	}
	v.mu.Lock()
	delete(v.inflight, key)
	if v.prefixes[pfx]--; v.prefixes[pfx] <= 0 {
		delete(v.prefixes, pfx)
	}
	l.v = verdict
	v.mu.Unlock()
	close(l.done)
}

// fcrdns performs forward-confirmed reverse DNS: a PTR name of ip must end
// in one of domains and resolve back to ip. It returns the confirmed name.
func (v *Verifier) fcrdns(ctx context.Context, ip netip.Addr, domains []string) (Verdict, string) {
	names, err := v.opts.Resolver.LookupAddr(ctx, ip.String())
	if err != nil {
		if isNotFound(err) {
			return Impostor, ""
		}
		return Unverified, ""
	}
	failed := false
	for _, name := range names {
		name = strings.ToLower(strings.TrimSuffix(name, "."))
		if !underDomains(name, domains) {
			continue
		}
		addrs, err := v.opts.Resolver.LookupNetIP(ctx, "ip", name)
		if err != nil {
			if !isNotFound(err) {
				failed = true
			}
			continue
		}
		for _, a := range addrs {
			if a.Unmap() == ip {
				return Verified, name
			}
		}
	}
	if failed {
		return Unverified, ""
	}
	return Impostor, ""
}

func underDomains(name string, domains []string) bool {
	if name == "" {
		return false
	}
	for _, d := range domains {
		if name == d || len(name) > len(d) && name[len(name)-len(d)-1] == '.' && name[len(name)-len(d):] == d {
			return true
		}
	}
	return false
}

func isNotFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

// verdictEntry is a cached verdict: for the cache of verified addresses, the
// host name that forward-confirmed the address.
type verdictEntry struct {
	v       Verdict
	name    string
	expires int64 // Unix nanoseconds
}

// verdictCache is a bounded map of verdicts with lock-free reads of the
// common case, in the scheme of the classification cache (cache.go): per
// shard two generations of immutable maps behind atomic pointers, and new
// entries in a small locked map until enough of them, or enough lookups of
// them, pay for a new copy. A read of a fresh entry from the current
// generation takes no lock; an entry replaced before it expires can be read
// until then, which is why verdicts are replaced only when they are due.
type verdictCache[K comparable] struct {
	shards [verdictShards]verdictShard[K]
	budget int                // entries per generation per shard
	addr   func(K) netip.Addr // the address a key shards by
}

const verdictShards = 16

type verdictShard[K comparable] struct {
	cur, prev atomic.Pointer[map[K]verdictEntry] // immutable once published
	mu        sync.Mutex                         // guards what follows and publishing
	pending   map[K]verdictEntry                 // entries not yet in cur
	hits      int                                // lookups answered from pending since the last publish
	n         int                                // entries in cur and pending
	_         [40]byte                           // keep shards on separate cache lines
}

func newVerdictCache[K comparable](entries int, addr func(K) netip.Addr) *verdictCache[K] {
	c := &verdictCache[K]{budget: max(entries/(2*verdictShards), 1), addr: addr}
	for i := range c.shards {
		s := &c.shards[i]
		s.cur.Store(&map[K]verdictEntry{})
		s.pending = map[K]verdictEntry{}
	}
	return c
}

func (c *verdictCache[K]) shard(k K) *verdictShard[K] {
	a := c.addr(k).As16()
	h := (binary.LittleEndian.Uint64(a[:8]) ^ binary.LittleEndian.Uint64(a[8:])) * 0x9e3779b97f4a7c15
	return &c.shards[h>>60]
}

// get returns the newest entry for k, fresh or not. A fresh entry of the
// current generation is read without a lock.
func (c *verdictCache[K]) get(k K, now int64) (verdictEntry, bool) {
	s := c.shard(k)
	if e, ok := (*s.cur.Load())[k]; ok && now < e.expires {
		return e, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.pending[k]; ok {
		if s.hits++; s.hits > len(*s.cur.Load())/16 {
			s.publish()
		}
		return e, true
	}
	if e, ok := (*s.cur.Load())[k]; ok {
		return e, true
	}
	if prev := s.prev.Load(); prev != nil {
		if e, ok := (*prev)[k]; ok {
			s.insert(k, e, c.budget)
			return e, true
		}
	}
	return verdictEntry{}, false
}

func (c *verdictCache[K]) put(k K, e verdictEntry) {
	s := c.shard(k)
	s.mu.Lock()
	s.insert(k, e, c.budget)
	s.mu.Unlock()
}

// insert adds or replaces an entry; the caller holds s.mu.
func (s *verdictShard[K]) insert(k K, e verdictEntry, budget int) {
	if _, ok := s.pending[k]; !ok {
		if s.n >= budget {
			// The current generation becomes the previous one.
			s.publish()
			s.prev.Store(s.cur.Load())
			s.cur.Store(&map[K]verdictEntry{})
			s.n = 0
		}
		s.n++
	}
	s.pending[k] = e
	if len(s.pending) > len(*s.cur.Load())/4 {
		s.publish()
	}
}

// publish makes the pending entries visible to lock-free reads in a new
// copy of the current map; the caller holds s.mu.
func (s *verdictShard[K]) publish() {
	if len(s.pending) == 0 {
		return
	}
	old := *s.cur.Load()
	m := make(map[K]verdictEntry, len(old)+len(s.pending))
	for k, e := range old {
		m[k] = e
	}
	for k, e := range s.pending {
		if _, ok := old[k]; ok {
			s.n-- // a replaced entry was counted twice
		}
		m[k] = e
	}
	s.cur.Store(&m)
	clear(s.pending)
	s.hits = 0
}

// len returns the number of cached entries, for tests.
func (c *verdictCache[K]) len() int {
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

// signedAgents maps the origins that agents known to sign their requests
// (Web Bot Auth) name in Signature-Agent to their bot database tokens.
var signedAgents = map[string]string{
	"https://chatgpt.com":    "chatgpt",      // ChatGPT agent
	"https://agent.bot.goog": "google-agent", // Google-Agent
}

// SignedAgent returns the classification of an agent whose Web Bot Auth
// signature verified, by the origin it signs for: the bot database entry
// of a known signing agent (a User-Agent of the same operator keeps its
// own, more specific entry), else class AI without product tokens, so that
// only the robots.txt "*" group applies to it.
func (c *Classifier) SignedAgent(origin string, ua Result) Result {
	if token, ok := signedAgents[origin]; ok {
		for i := range c.results {
			if r := c.results[i]; r.Bot.Token == token {
				if ua.Bot != nil && ua.Bot.Operator != "" && ua.Bot.Operator == r.Bot.Operator {
					return ua
				}
				return r
			}
		}
	}
	return Result{Class: AI}
}
