package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/uaclass"
	"github.com/robotsguard/robotsguard/upstream"
)

// A crawler's published IP ranges read from a URL (verify ranges <token>
// <url>): a [RangeFeed] fetches the list with package upstream's bounded
// fetch, refreshes it, and keeps the last good list in force whatever a
// fetch brings: an error status, a timeout, an empty, oversized or
// unparsable body. Unlike a robots.txt, whose 4xx means "no rules", no
// answer takes a list away: a crawler's addresses do not vanish because
// its operator's web server misbehaves.

// DefaultRangesRefresh is how often a ranges URL is fetched again: Bing
// asks for a daily refresh, and the lists change by a few prefixes a week.
const DefaultRangesRefresh = 24 * time.Hour

// DefaultMaxRanges bounds a fetched ranges list: Google's largest list is
// about 40 KB, and a list of every /24 of a cloud provider far less than
// this.
const DefaultMaxRanges = 4 << 20

// maxFreshness bounds how long a Cache-Control max-age delays a refresh.
const maxFreshness = 7 * 24 * time.Hour

// rangesUserAgent is the User-Agent of the fetches.
const rangesUserAgent = "robotsguard (crawler IP ranges refresh; +https://github.com/robotsguard/robotsguard)"

// RangeCache is where a feed keeps its last good copy, to start from when
// the URL is down at the next start: Caddy's storage (a certmagic.Storage
// satisfies it), which a fleet may share.
type RangeCache interface {
	Load(ctx context.Context, key string) ([]byte, error)
	Store(ctx context.Context, key string, value []byte) error
}

// RangeFeedOptions configure a [RangeFeed].
type RangeFeedOptions struct {
	// URL is the list's absolute http(s) URL. Required.
	URL string
	// Refresh is how often the list is fetched again. Default:
	// DefaultRangesRefresh.
	Refresh time.Duration
	// MaxSize bounds a list's size in bytes. Default: DefaultMaxRanges.
	MaxSize int64
	// Timeout bounds one fetch. Default: upstream.DefaultTimeout.
	Timeout time.Duration
	// Cache keeps the last good copy across restarts. Default: none.
	Cache RangeCache
	// Logger logs what the feed does. Default: none.
	Logger *zap.Logger
	// Fetched counts a fetch by URL and outcome: ok, not_modified,
	// unreachable, unavailable (a 4xx), refused (empty, oversized,
	// unparsable). Default: none.
	Fetched func(url, outcome string)
	// Transport carries the requests (tests). Default: upstream's.
	Transport http.RoundTripper
}

// RangeFeed is one ranges URL, fetched and refreshed, its list in force in
// Ranges. Its methods are safe for concurrent use.
type RangeFeed struct {
	o       RangeFeedOptions
	fetcher *upstream.Fetcher
	ranges  *uaclass.Ranges
	key     string // the cache key

	mu         sync.Mutex
	validators upstream.Validators
	failures   int       // failed fetches in a row
	cause      string    // the last failure's
	logged     time.Time // when a failure was last logged
	cancel     context.CancelFunc
	done       chan struct{} // closed when the loop ends
	ready      chan struct{} // see Ready
}

// NewRangeFeed returns the feed of o.URL; it fails on a URL upstream
// refuses. Nothing is fetched until Start.
func NewRangeFeed(o RangeFeedOptions) (*RangeFeed, error) {
	if o.Refresh <= 0 {
		o.Refresh = DefaultRangesRefresh
	}
	if o.MaxSize <= 0 {
		o.MaxSize = DefaultMaxRanges
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	f, err := upstream.New(upstream.Options{URL: o.URL, Timeout: o.Timeout, UserAgent: rangesUserAgent, Transport: o.Transport,
		MaxBody: o.MaxSize + 1, Accept: "application/json, text/plain;q=0.9, */*;q=0.5"})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(o.URL))
	return &RangeFeed{o: o, fetcher: f, ranges: &uaclass.Ranges{}, key: "robots_guard/ranges/" + hex.EncodeToString(sum[:12]) + ".json"}, nil
}

// Ranges returns the list in force (none until a fetch or the cache
// brings one).
func (f *RangeFeed) Ranges() *uaclass.Ranges { return f.ranges }

// CacheKey is the storage key of the feed's last good copy.
func (f *RangeFeed) CacheKey() string { return f.key }

// Start installs the last good copy from the cache, if any, and starts the
// refreshes, the first one now; it does not wait for it (see
// [WaitRanges]). A second Start does nothing.
func (f *RangeFeed) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	f.mu.Lock()
	if f.cancel != nil {
		f.mu.Unlock()
		cancel()
		return
	}
	f.cancel, f.done, f.ready = cancel, make(chan struct{}), make(chan struct{})
	f.mu.Unlock()
	if f.loadCache(ctx) {
		close(f.ready)
		go f.loop(ctx, nil)
		return
	}
	go f.loop(ctx, f.ready)
}

// Ready is closed once the feed has a list to go by or tried for one: the
// last good copy was read from the cache, or the first fetch answered.
func (f *RangeFeed) Ready() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ready
}

// WaitRanges waits for started feeds to be ready, FirstFetchWait at most
// in all: long enough for a list that answers, short enough that one that
// hangs does not hold up Caddy's start. It warns for those still waiting:
// their crawlers are unverified until the fetch answers.
func WaitRanges(feeds []*RangeFeed) {
	t := time.NewTimer(FirstFetchWait)
	defer t.Stop()
	for _, f := range feeds {
		select {
		case <-f.Ready():
		case <-t.C:
			for _, f := range feeds {
				select {
				case <-f.Ready():
				default:
					f.o.Logger.Warn("ranges: the first fetch is taking long; starting without this list, its crawlers are unverified until it answers",
						zap.String("url", f.fetcher.URL()), zap.Duration("waited", FirstFetchWait))
				}
			}
			return
		}
	}
}

// Stop ends the refreshes and waits for a fetch under way to end.
func (f *RangeFeed) Stop() {
	f.mu.Lock()
	cancel, done := f.cancel, f.done
	f.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// Destruct stops the feed (caddy.Destructor).
func (f *RangeFeed) Destruct() error {
	f.Stop()
	return nil
}

// loop refreshes the list until ctx ends (refresh.go), then marks the
// feed done.
func (f *RangeFeed) loop(ctx context.Context, first chan struct{}) {
	defer close(f.done)
	refreshEvery(ctx, first, f.Refresh)
}

// Refresh fetches the list once, conditionally on the one in force, and
// applies the answer; it returns how long to wait before the next fetch.
func (f *RangeFeed) Refresh(ctx context.Context) time.Duration {
	f.mu.Lock()
	v := f.validators
	f.mu.Unlock()
	res := f.fetcher.Fetch(ctx, v)
	if ctx.Err() != nil {
		return f.o.Refresh
	}
	return f.apply(ctx, res, time.Now())
}

// apply installs or keeps the list after a fetch, logs and counts it.
func (f *RangeFeed) apply(ctx context.Context, res upstream.Result, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	outcome, cause := res.Outcome.String(), ""
	var list *uaclass.RangeList
	switch res.Outcome {
	case upstream.Fetched:
		l, err := uaclass.ParseRangeList(res.Body)
		switch {
		case res.Truncated:
			outcome, cause = "refused", fmt.Sprintf("the list is larger than %d bytes (%d)", f.o.MaxSize, res.Size)
		case len(res.Body) == 0:
			outcome, cause = "refused", "the answer is empty"
		case err != nil:
			outcome, cause = "refused", "the answer is no list of IP ranges: "+err.Error()
		default:
			l.Source, l.Read, l.Checked = f.fetcher.URL(), now, now
			list = l
		}
	case upstream.NotModified:
		if cur := f.ranges.Load(); cur != nil {
			c := *cur
			c.Checked, c.Cached = now, false // a copy from storage is confirmed current
			f.ranges.Store(&c)
		}
	case upstream.Unavailable:
		cause = res.Cause()
	default:
		cause = res.Cause()
	}
	if f.o.Fetched != nil {
		f.o.Fetched(f.o.URL, outcome)
	}
	if cause != "" {
		f.failures++
		wait := upstream.Retry(f.failures, f.o.Refresh, res.RetryAfter)
		f.logFailure(cause, now, wait)
		return wait
	}
	if f.failures > 0 {
		f.o.Logger.Info("ranges: the list can be fetched again", zap.String("url", f.fetcher.URL()), zap.Int("failed_fetches", f.failures))
		f.failures, f.cause = 0, ""
	}
	if list != nil {
		prev := f.ranges.Load()
		f.ranges.Store(list)
		f.validators = res.Validators
		f.storeCache(ctx, res, now)
		if prev == nil || prev.Cached || !slices.Equal(prev.Prefixes, list.Prefixes) {
			f.o.Logger.Info("ranges: list fetched", zap.String("url", f.fetcher.URL()), zap.Int("prefixes", len(list.Prefixes)),
				zap.Int("bytes", list.Size), zap.String("format", list.Format), zap.Time("created", list.Created))
		}
	}
	return max(f.o.Refresh, freshness(res.Header, now))
}

// logFailure logs a failed fetch at warn: the first of a spell, a new
// cause, and every unreachableRelog. The caller holds f.mu.
func (f *RangeFeed) logFailure(cause string, now time.Time, wait time.Duration) {
	if f.failures > 1 && cause == f.cause && now.Sub(f.logged) < unreachableRelog {
		return
	}
	f.cause, f.logged = cause, now
	fields := []zap.Field{zap.String("url", f.fetcher.URL()), zap.String("reason", cause), zap.Int("failed_fetches", f.failures), zap.Duration("retry_in", wait)}
	if cur := f.ranges.Load(); cur != nil {
		fields = append(fields, zap.Int("prefixes", len(cur.Prefixes)), zap.Time("list_fetched", cur.Read))
		f.o.Logger.Warn("ranges: fetch failed; keeping the last good list", fields...)
		return
	}
	f.o.Logger.Warn("ranges: fetch failed and no list is known; its crawlers are unverified until one is fetched", fields...)
}

// freshness is how long a response stays fresh by its Cache-Control
// max-age (s-maxage for a shared cache is not ours), less its Age, at most
// maxFreshness; zero when it says nothing, or no-cache.
func freshness(h http.Header, now time.Time) time.Duration {
	cc := strings.ToLower(h.Get("Cache-Control"))
	var maxAge time.Duration
	for d := range strings.SplitSeq(cc, ",") {
		d = strings.TrimSpace(d)
		if d == "no-cache" || d == "no-store" {
			return 0
		}
		if v, ok := strings.CutPrefix(d, "max-age="); ok {
			n, err := strconv.ParseInt(strings.Trim(v, `"`), 10, 64)
			if err != nil || n < 0 {
				return 0
			}
			maxAge = time.Duration(min(n, int64(maxFreshness/time.Second))) * time.Second
		}
	}
	if age, err := strconv.ParseInt(h.Get("Age"), 10, 64); err == nil && age > 0 {
		maxAge -= time.Duration(min(age, int64(maxFreshness/time.Second))) * time.Second
	}
	return max(maxAge, 0)
}

// cachedCopy is the last good copy in the cache.
type cachedCopy struct {
	URL          string    `json:"url"`
	Fetched      time.Time `json:"fetched"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	Body         string    `json:"body"`
}

// storeCache writes the fetched list to the cache. The caller holds f.mu.
func (f *RangeFeed) storeCache(ctx context.Context, res upstream.Result, now time.Time) {
	if f.o.Cache == nil {
		return
	}
	data, _ := json.Marshal(cachedCopy{URL: f.o.URL, Fetched: now, ETag: res.Validators.ETag, LastModified: res.Validators.LastModified, Body: string(res.Body)})
	if err := f.o.Cache.Store(ctx, f.key, data); err != nil {
		f.o.Logger.Warn("ranges: the last good copy could not be stored", zap.String("url", f.fetcher.URL()), zap.String("key", f.key), zap.Error(err))
	}
}

// loadCache installs the last good copy from the cache; it reports whether
// there was one.
func (f *RangeFeed) loadCache(ctx context.Context) bool {
	l, v, err := LoadCachedRanges(ctx, f.o.Cache, f.key, f.o.URL)
	if err != nil {
		f.o.Logger.Warn("ranges: the last good copy in storage is unusable", zap.String("url", f.fetcher.URL()), zap.String("key", f.key), zap.Error(err))
	}
	if l == nil {
		return false
	}
	l.Source = f.fetcher.URL()
	f.mu.Lock()
	f.ranges.Store(l)
	f.validators = v
	f.mu.Unlock()
	f.o.Logger.Info("ranges: starting from the last good copy in storage until the list is fetched", zap.String("url", f.fetcher.URL()),
		zap.Time("fetched", l.Read), zap.Int("prefixes", len(l.Prefixes)))
	return true
}

// LoadCachedRanges reads the last good copy of url's list under key;
// it returns nil and no error when there is none.
func LoadCachedRanges(ctx context.Context, cache RangeCache, key, url string) (*uaclass.RangeList, upstream.Validators, error) {
	if cache == nil {
		return nil, upstream.Validators{}, nil
	}
	data, err := cache.Load(ctx, key)
	if err != nil {
		return nil, upstream.Validators{}, nil // none, or none readable: the same for a start
	}
	var c cachedCopy
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, upstream.Validators{}, err
	}
	if c.URL != url {
		return nil, upstream.Validators{}, fmt.Errorf("the copy is of %s", c.URL)
	}
	l, err := uaclass.ParseRangeList([]byte(c.Body))
	if err != nil {
		return nil, upstream.Validators{}, err
	}
	l.Source, l.Read, l.Checked, l.Cached = url, c.Fetched, c.Fetched, true
	return l, upstream.Validators{ETag: c.ETag, LastModified: c.LastModified}, nil
}
