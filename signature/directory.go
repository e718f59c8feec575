package signature

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// WellKnownPath is where an agent publishes its keys.
const WellKnownPath = "/.well-known/http-message-signatures-directory"

// directoryMediaType is the media type of a key directory.
const directoryMediaType = "application/http-message-signatures-directory+json"

// DirectoryOptions configure [Directories]. Zero values mean the defaults.
type DirectoryOptions struct {
	// Timeout bounds one fetch, from dial to the last byte. Default: 5s.
	Timeout time.Duration
	// MaxBytes caps a directory's size after content decoding. Default:
	// 1 MiB.
	MaxBytes int64
	// Wait is the longest a request waits for the first fetch of a
	// directory; the fetch goes on and serves later requests. Default:
	// 500ms.
	Wait time.Duration
	// FailureTTL is how long a failed fetch is remembered before the next
	// try; a Retry-After is honoured up to 5 minutes, never longer.
	// Default: 1m.
	FailureTTL time.Duration
	// MinTTL and MaxTTL bound a directory's freshness lifetime from its
	// HTTP caching headers; DefaultTTL applies when it sends none.
	// Defaults: 1m, 24h, 1h.
	MinTTL, MaxTTL, DefaultTTL time.Duration
	// MaxDirectories bounds the directories held. Default: 1,000.
	MaxDirectories int
	// MaxInflight bounds concurrent fetches. Default: 8.
	MaxInflight int
	// NewPerMinute bounds how many directories never seen before are
	// fetched per minute (a burst of as many, then that rate), so that
	// requests naming ever new agents cannot turn the verifier into a
	// stream of outbound fetches. Default: 60.
	NewPerMinute int
	// Now returns the current time. Default: time.Now.
	Now func() time.Time

	// allowAddr, in tests only, admits addresses that are refused
	// otherwise (the test servers listen on loopback).
	allowAddr func(netip.Addr) bool
	// rootCAs, in tests only, replaces the system roots.
	rootCAs *x509.CertPool
}

// maxFailureTTL is the longest a failed fetch is remembered.
const maxFailureTTL = 5 * time.Minute

// Directories fetches and caches agents' key directories
// (<agent>/.well-known/http-message-signatures-directory): https only, no
// redirects, a timeout and a size cap, no private, loopback or link-local
// address (checked on the address dialled, not only the name), HTTP cache
// semantics with conditional revalidation, failures remembered for a short
// time, a failed fetch never evicting the keys held, one fetch in flight
// per directory, a bounded rate of directories never seen before. It is
// safe for concurrent use.
type Directories struct {
	opts   DirectoryOptions
	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	entries   map[string]*directory // by agent origin
	inflight  int
	newTokens float64   // fetches of new directories allowed now
	newAt     time.Time // when newTokens was last refilled
}

// directory is one agent's cached key set and fetch state.
type directory struct {
	keys          map[string]*Key // nil until a fetch succeeded
	fresh         time.Time       // keys are fresh until then
	etag, lastMod string
	retry         time.Time     // no fetch before then after a failure
	err           error         // the last failure
	fetching      chan struct{} // closed when the fetch in flight ends
	used          time.Time
}

// NewDirectories returns a directory fetcher. Close ends its fetches.
func NewDirectories(opts DirectoryOptions) *Directories {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 1 << 20
	}
	if opts.Wait <= 0 {
		opts.Wait = 500 * time.Millisecond
	}
	if opts.FailureTTL <= 0 {
		opts.FailureTTL = time.Minute
	}
	opts.FailureTTL = min(opts.FailureTTL, maxFailureTTL)
	if opts.MinTTL <= 0 {
		opts.MinTTL = time.Minute
	}
	if opts.MaxTTL <= 0 {
		opts.MaxTTL = 24 * time.Hour
	}
	if opts.DefaultTTL <= 0 {
		opts.DefaultTTL = time.Hour
	}
	if opts.MaxDirectories <= 0 {
		opts.MaxDirectories = 1000
	}
	if opts.MaxInflight <= 0 {
		opts.MaxInflight = 8
	}
	if opts.NewPerMinute <= 0 {
		opts.NewPerMinute = 60
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	d := &Directories{opts: opts, entries: map[string]*directory{}, newTokens: float64(opts.NewPerMinute), newAt: opts.Now()}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	dialer := &net.Dialer{Timeout: opts.Timeout, Control: d.checkAddr}
	d.client = &http.Client{
		Timeout: opts.Timeout,
		Transport: &http.Transport{
			Proxy:                  nil, // the address checked is the address dialled
			DialContext:            dialer.DialContext,
			TLSClientConfig:        &tls.Config{RootCAs: opts.rootCAs, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    opts.Timeout,
			ResponseHeaderTimeout:  opts.Timeout,
			MaxResponseHeaderBytes: 64 << 10,
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           16,
			IdleConnTimeout:        30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return d
}

// Close ends the fetches in flight and releases idle connections.
func (d *Directories) Close() {
	d.cancel()
	d.client.CloseIdleConnections()
}

// checkAddr refuses to connect to an address that is not public: private,
// loopback, link-local, multicast, unspecified or otherwise special. It
// runs on the address about to be dialled, after name resolution, so a
// name that resolves to such an address is refused too.
func (d *Directories) checkAddr(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return err
	}
	ip = ip.Unmap()
	if d.opts.allowAddr != nil && d.opts.allowAddr(ip) {
		return nil
	}
	if !PublicAddr(ip) {
		return fmt.Errorf("refusing to fetch a key directory from %s: not a public address", ip)
	}
	return nil
}

// specialRanges are address ranges that are neither private nor loopback
// nor link-local by netip's tests, and still not public.
var specialRanges = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64 (may embed a private IPv4)
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("100::/64"),       // discard
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("2002::/16"),      // 6to4 (may embed a private IPv4)
	netip.MustParsePrefix("fec0::/10"),      // site-local
}

// PublicAddr reports whether ip is a public unicast address, one a key
// directory may be fetched from.
func PublicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
		return false
	}
	for _, p := range specialRanges {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// Keys returns the key set of agent (an origin, as [AgentOrigin] returns
// it). Fresh keys are returned at once; stale keys too, while a refresh
// runs in the background. Without keys, it starts a fetch (unless one
// failed a short while ago) and waits for it at most Wait, or until ctx is
// done.
func (d *Directories) Keys(ctx context.Context, agent string) (map[string]*Key, error) {
	now := d.opts.Now()
	d.mu.Lock()
	e, ok := d.entries[agent]
	if !ok {
		if !d.admitNew(now) {
			d.mu.Unlock()
			return nil, fmt.Errorf("%w: %s: more than %d new key directories a minute", ErrUnavailable, agent, d.opts.NewPerMinute)
		}
		if len(d.entries) >= d.opts.MaxDirectories {
			d.evict()
		}
		e = &directory{}
		d.entries[agent] = e
	}
	e.used = now
	if e.keys != nil && now.Before(e.fresh) {
		keys := e.keys
		d.mu.Unlock()
		return keys, nil
	}
	done := e.fetching
	if done == nil && !now.Before(e.retry) && d.inflight < d.opts.MaxInflight {
		done = make(chan struct{})
		e.fetching = done
		d.inflight++
		go d.fetch(agent, e, done)
	}
	if e.keys != nil {
		keys := e.keys // stale while it is fetched again
		d.mu.Unlock()
		return keys, nil
	}
	err := e.err
	d.mu.Unlock()
	if done == nil {
		if err == nil {
			err = errors.New("too many fetches in flight")
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, agent, err)
	}
	t := time.NewTimer(d.opts.Wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		return nil, fmt.Errorf("%w: %s: still fetching", ErrUnavailable, agent)
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, agent, ctx.Err())
	}
	d.mu.Lock()
	keys, err := e.keys, e.err
	d.mu.Unlock()
	if keys == nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, agent, err)
	}
	return keys, nil
}

// admitNew takes a token for fetching a directory never seen before; the
// caller holds d.mu.
func (d *Directories) admitNew(now time.Time) bool {
	rate := float64(d.opts.NewPerMinute)
	d.newTokens = min(rate, d.newTokens+now.Sub(d.newAt).Minutes()*rate)
	d.newAt = now
	if d.newTokens < 1 {
		return false
	}
	d.newTokens--
	return true
}

// evict makes room for one directory: a failed one if any, else the least
// recently used one that is not being fetched. The caller holds d.mu.
func (d *Directories) evict() {
	var victim string
	var oldest time.Time
	for agent, e := range d.entries {
		if e.fetching != nil {
			continue
		}
		if e.keys == nil {
			victim = agent
			break
		}
		if victim == "" || e.used.Before(oldest) {
			victim, oldest = agent, e.used
		}
	}
	if victim != "" {
		delete(d.entries, victim)
	}
}

// fetch fetches one directory and updates its entry: new keys on 200,
// fresh again on 304, and on a failure only the time of the next try.
func (d *Directories) fetch(agent string, e *directory, done chan struct{}) {
	d.mu.Lock()
	etag, lastMod := e.etag, e.lastMod
	if e.keys == nil {
		etag, lastMod = "", ""
	}
	d.mu.Unlock()
	keys, resp, err := d.get(agent, etag, lastMod)
	now := d.opts.Now()
	d.mu.Lock()
	defer func() {
		e.fetching = nil
		d.inflight--
		d.mu.Unlock()
		close(done)
	}()
	if err != nil {
		e.err = err
		wait := d.opts.FailureTTL
		if resp != nil {
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
				wait = min(time.Duration(s)*time.Second, maxFailureTTL)
			}
		}
		e.retry = now.Add(wait)
		return // the keys held, if any, stay
	}
	e.err = nil
	e.fresh = now.Add(d.freshness(resp.Header, now))
	if resp.StatusCode == http.StatusNotModified {
		return
	}
	e.keys, e.etag, e.lastMod = keys, resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
}

// get performs the request. It returns the response (its body closed) for
// its headers, and an error for anything but a usable 200 or, with a
// validator, a 304.
func (d *Directories) get(agent, etag, lastMod string) (map[string]*Key, *http.Response, error) {
	ctx, cancel := context.WithTimeout(d.ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, agent+WellKnownPath, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", directoryMediaType)
	req.Header.Set("User-Agent", "robotsguard (web bot auth verifier)")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if lastMod != "" {
		req.Header.Set("If-Modified-Since", lastMod)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && (etag != "" || lastMod != ""):
		return nil, resp, nil
	case resp.StatusCode != http.StatusOK:
		return nil, resp, fmt.Errorf("%s: status %d", req.URL, resp.StatusCode)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != directoryMediaType && mt != "application/jwk-set+json" && mt != "application/json" {
		return nil, resp, fmt.Errorf("%s: content type %q is not a key directory", req.URL, resp.Header.Get("Content-Type"))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, d.opts.MaxBytes+1))
	if err != nil {
		return nil, resp, fmt.Errorf("%s: %v", req.URL, err)
	}
	if int64(len(body)) > d.opts.MaxBytes {
		return nil, resp, fmt.Errorf("%s: larger than %d bytes", req.URL, d.opts.MaxBytes)
	}
	keys, err := parseJWKS(body, false)
	if err != nil {
		return nil, resp, fmt.Errorf("%s: %v", req.URL, err)
	}
	return keys, resp, nil
}

// freshness is a response's freshness lifetime by HTTP caching (RFC 9111
// section 4.2): max-age, else Expires minus Date, else a tenth of the time
// since Last-Modified, else DefaultTTL; minus Age; within MinTTL and
// MaxTTL. no-store and no-cache mean MinTTL: a directory is never fetched
// more than once per MinTTL.
func (d *Directories) freshness(h http.Header, now time.Time) time.Duration {
	ttl, known := time.Duration(0), false
	for _, directive := range strings.Split(h.Get("Cache-Control"), ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(directive), "=")
		switch strings.ToLower(name) {
		case "no-store", "no-cache":
			return d.opts.MinTTL
		case "max-age":
			if s, err := strconv.ParseInt(strings.Trim(value, `"`), 10, 64); err == nil && s >= 0 {
				ttl, known = time.Duration(min(s, int64(d.opts.MaxTTL/time.Second)))*time.Second, true
			}
		}
	}
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		date = now
	}
	if !known {
		if exp := h.Get("Expires"); exp != "" {
			t, err := http.ParseTime(exp)
			if err != nil {
				return d.opts.MinTTL // an invalid Expires means already expired
			}
			ttl, known = t.Sub(date), true
		} else if lm, err := http.ParseTime(h.Get("Last-Modified")); err == nil && date.After(lm) {
			ttl, known = date.Sub(lm)/10, true
		}
	}
	if !known {
		ttl = d.opts.DefaultTTL
	}
	if age, err := strconv.ParseInt(h.Get("Age"), 10, 64); err == nil && age > 0 {
		ttl -= time.Duration(min(age, int64(d.opts.MaxTTL/time.Second))) * time.Second
	}
	return min(max(ttl, d.opts.MinTTL), d.opts.MaxTTL)
}
