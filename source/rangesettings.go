package source

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
	"github.com/robotsguard/robotsguard/upstream"
)

// RangeSettings are the verify block's ranges as a configuration writes
// them.
type RangeSettings struct {
	// Ranges maps a product token to a file or an http(s) URL.
	Ranges map[string]string
	// Published adds, for every token Ranges does not name, the URLs
	// where the bot's operator publishes its ranges (uaclass.Bot.Ranges).
	Published bool
	// Bots is the bot database the published URLs come from.
	Bots []uaclass.Bot
	// Refresh is how often a URL is fetched; 0: DefaultRangesRefresh.
	Refresh time.Duration
	// MaxFile bounds a file's size.
	MaxFile int64
}

// RangeSources are the checked ranges: the files, read, and the URLs to
// fetch.
type RangeSources struct {
	// Files are the lists read from files, by normalised token.
	Files map[string]*uaclass.RangeList
	// URLs maps a URL to the tokens its list verifies.
	URLs map[string][]string
	// Refresh is the refresh interval, with its default.
	Refresh time.Duration
}

// Check checks s, reads the files and returns where each token's ranges
// come from. Its errors are *field.Error with the paths
// verify.ranges.<token> and verify.ranges_refresh.
func (s RangeSettings) Check() (RangeSources, error) {
	src := RangeSources{Files: map[string]*uaclass.RangeList{}, URLs: map[string][]string{}, Refresh: s.Refresh}
	switch {
	case src.Refresh == 0:
		src.Refresh = DefaultRangesRefresh
	case src.Refresh < time.Second:
		return src, field.Wrap("verify.ranges_refresh", fmt.Errorf("must be at least 1s, got %v", s.Refresh))
	}
	named := map[string]bool{}
	for _, tok := range slices.Sorted(maps.Keys(s.Ranges)) {
		t, where := policy.ProductToken(tok), s.Ranges[tok]
		if t == "" {
			return src, field.Errorf("verify.ranges."+tok, "%q is not a product token", tok)
		}
		named[t] = true
		if scheme, _, ok := strings.Cut(where, "://"); ok && !upstream.IsURL(where) && !strings.ContainsAny(scheme, "/.") {
			return src, field.Errorf("verify.ranges."+tok, "%q: only http and https URLs can be fetched", where)
		}
		if !upstream.IsURL(where) {
			l, err := uaclass.LoadRangeList(where, s.MaxFile)
			if err != nil {
				return src, field.Wrap("verify.ranges."+tok, err)
			}
			src.Files[t] = l
			continue
		}
		if _, err := upstream.ParseURL(where); err != nil {
			return src, field.Wrap("verify.ranges."+tok, err)
		}
		src.URLs[where] = append(src.URLs[where], t)
	}
	if s.Published {
		published := uaclass.PublishedRanges(s.Bots)
		for _, tok := range slices.Sorted(maps.Keys(published)) {
			if named[tok] {
				continue
			}
			for _, u := range published[tok] {
				src.URLs[u] = append(src.URLs[u], tok)
			}
		}
	}
	return src, nil
}

// VerifySettings are the verify block as a configuration writes it: the
// verifier's waits, and the ranges (RangeSettings).
type VerifySettings struct {
	// Wait, LookupTimeout and TTL are the verifier's
	// (uaclass.VerifierOptions); 0: its defaults.
	Wait, LookupTimeout, TTL time.Duration
	RangeSettings
}

// Check checks s and reads the range files: the verifier's options, with
// the files' lists, and where the ranges come from (RangeSettings.Check),
// whose URLs the caller fetches. Its errors are *field.Error with the
// paths verify.wait, verify.lookup_timeout, verify.ttl and
// RangeSettings'.
func (s VerifySettings) Check() (*uaclass.VerifierOptions, RangeSources, error) {
	opts := &uaclass.VerifierOptions{Lists: map[string][]*uaclass.Ranges{}, Wait: s.Wait, LookupTimeout: s.LookupTimeout, TTL: s.TTL}
	for _, d := range []struct {
		path string
		v    time.Duration
	}{{"verify.wait", s.Wait}, {"verify.lookup_timeout", s.LookupTimeout}, {"verify.ttl", s.TTL}} {
		if d.v < 0 {
			return nil, RangeSources{}, field.Wrap(d.path, field.AboveZero(d.v))
		}
	}
	ranges, err := s.RangeSettings.Check()
	if err != nil {
		return nil, ranges, err
	}
	for tok, l := range ranges.Files {
		opts.Lists[tok] = []*uaclass.Ranges{uaclass.NewRanges(l)}
	}
	return opts, ranges, nil
}

// ReadRangeLists reads the lists of src once, as a command that runs
// without Caddy needs them: the files as read, each URL fetched now,
// conditionally on its last good copy in cache, which stands in when the
// fetch fails (cache is only read). It returns the lists by token and,
// for each URL that could not be fetched, why.
func ReadRangeLists(ctx context.Context, src RangeSources, cache RangeCache) (map[string][]*uaclass.RangeList, []string) {
	lists := map[string][]*uaclass.RangeList{}
	for tok, l := range src.Files {
		lists[tok] = append(lists[tok], l)
	}
	var failed []string
	for _, url := range slices.Sorted(maps.Keys(src.URLs)) {
		f, err := NewRangeFeed(RangeFeedOptions{URL: url, Cache: readOnly{cache}})
		if err != nil {
			failed = append(failed, url+": "+err.Error())
			continue
		}
		f.loadCache(ctx)
		f.Refresh(ctx)
		if f.failures > 0 {
			failed = append(failed, url+": "+f.cause)
		}
		for _, tok := range src.URLs[url] {
			lists[tok] = append(lists[tok], f.ranges.Load())
		}
	}
	return lists, failed
}

// readOnly is a cache that is read and never written.
type readOnly struct{ RangeCache }

func (c readOnly) Load(ctx context.Context, key string) ([]byte, error) {
	if c.RangeCache == nil {
		return nil, fs.ErrNotExist
	}
	return c.RangeCache.Load(ctx, key)
}

func (readOnly) Store(context.Context, string, []byte) error { return nil }
