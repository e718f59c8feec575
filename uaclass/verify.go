package uaclass

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
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
	// failure, or no IP ranges loaded for a bot verified by ranges).
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
	// MaxEntries bounds the verdict cache. Default: 100,000.
	MaxEntries int
	// MaxInflight bounds concurrent lookups; past it, new claims are
	// Unverified without a lookup. Default: 256.
	MaxInflight int
	// Ranges maps a bot token to the IP ranges its operator publishes (see
	// [LoadRanges]). A bot with ranges is checked against them, whatever
	// its database method.
	Ranges map[string][]netip.Prefix
	// Now returns the current time. Default: time.Now.
	Now func() time.Time
}

// Verifier checks claims to be a known bot, with forward-confirmed reverse
// DNS or published IP ranges. Verdicts are cached per IP and bot; lookups
// for the same IP and bot are coalesced. It is safe for concurrent use.
type Verifier struct {
	opts VerifierOptions

	mu       sync.Mutex
	cache    map[verifyKey]verdictEntry
	inflight map[verifyKey]*lookup
}

type verifyKey struct {
	ip    netip.Addr
	token string
}

type verdictEntry struct {
	v       Verdict
	expires time.Time
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
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Verifier{opts: opts, cache: map[verifyKey]verdictEntry{}, inflight: map[verifyKey]*lookup{}}
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
	if prefixes, ok := v.opts.Ranges[b.Token]; ok {
		for _, p := range prefixes {
			if p.Contains(ip) {
				return Verified
			}
		}
		return Impostor
	}
	switch b.Verify {
	case VerifyRanges:
		return Unverified // no ranges were loaded for this bot
	case VerifyDNS:
	default:
		return NotClaimed
	}
	key := verifyKey{ip, b.Token}
	now := v.opts.Now()
	v.mu.Lock()
	if e, ok := v.cache[key]; ok && now.Before(e.expires) {
		v.mu.Unlock()
		return e.v
	}
	l, ok := v.inflight[key]
	if !ok {
		if len(v.inflight) >= v.opts.MaxInflight {
			v.mu.Unlock()
			return Unverified
		}
		l = &lookup{done: make(chan struct{})}
		v.inflight[key] = l
		go v.run(key, l, b.Domains)
	}
	v.mu.Unlock()

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

// run performs one coalesced lookup and caches its verdict. It is not bound
// to the request that started it, so that a slow answer still serves the
// next request.
func (v *Verifier) run(key verifyKey, l *lookup, domains []string) {
	ctx, cancel := context.WithTimeout(context.Background(), v.opts.LookupTimeout)
	defer cancel()
	verdict := v.fcrdns(ctx, key.ip, domains)
	ttl := v.opts.TTL
	if verdict == Unverified {
		ttl = v.opts.ErrorTTL
	}
	v.mu.Lock()
	if len(v.cache) >= v.opts.MaxEntries {
		v.evict()
	}
	v.cache[key] = verdictEntry{verdict, v.opts.Now().Add(ttl)}
	delete(v.inflight, key)
	l.v = verdict
	v.mu.Unlock()
	close(l.done)
}

// evict drops expired entries, and if that is not enough, an arbitrary tenth
// of the cache. The caller holds v.mu.
func (v *Verifier) evict() {
	now := v.opts.Now()
	for k, e := range v.cache {
		if !now.Before(e.expires) {
			delete(v.cache, k)
		}
	}
	for k := range v.cache {
		if len(v.cache) < v.opts.MaxEntries*9/10 {
			break
		}
		delete(v.cache, k)
	}
}

// fcrdns performs forward-confirmed reverse DNS: a PTR name of ip must end
// in one of domains and resolve back to ip.
func (v *Verifier) fcrdns(ctx context.Context, ip netip.Addr, domains []string) Verdict {
	names, err := v.opts.Resolver.LookupAddr(ctx, ip.String())
	if err != nil {
		if isNotFound(err) {
			return Impostor
		}
		return Unverified
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
				return Verified
			}
		}
	}
	if failed {
		return Unverified
	}
	return Impostor
}

func underDomains(name string, domains []string) bool {
	for _, d := range domains {
		if name == d || strings.HasSuffix(name, "."+d) {
			return true
		}
	}
	return false
}

func isNotFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}
