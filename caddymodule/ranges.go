package caddymodule

import (
	"fmt"
	"maps"
	"slices"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsguard/robotsguard/source"
	"github.com/robotsguard/robotsguard/uaclass"
)

// rangeFeeds holds the feed of each ranges URL and refresh (package
// source), shared by the handlers that verify by it and kept across config
// reloads: the first handler starts it, the last one to go stops it.
var rangeFeeds = caddy.NewUsagePool()

// startRanges joins or starts the feed of each ranges URL, its last good
// copy in Caddy's storage, adds its list to the tokens it verifies, and
// waits for the new feeds' first fetches (source.WaitRanges).
func (h *Handler) startRanges(ctx caddy.Context, opts *uaclass.VerifierOptions, src source.RangeSources) {
	var started []*source.RangeFeed
	for _, url := range slices.Sorted(maps.Keys(src.URLs)) {
		key := fmt.Sprintf("%s %v", url, src.Refresh)
		v, loaded, err := rangeFeeds.LoadOrNew(key, func() (caddy.Destructor, error) {
			return source.NewRangeFeed(source.RangeFeedOptions{URL: url, Refresh: src.Refresh, Cache: ctx.Storage(), Logger: h.opsLogger, Fetched: h.metrics.RangesFetch})
		})
		if err != nil { // checked by RangeSettings: cannot happen
			continue
		}
		h.rangeKeys = append(h.rangeKeys, key)
		f := v.(*source.RangeFeed)
		if !loaded {
			f.Start()
			started = append(started, f)
		}
		for _, tok := range src.URLs[url] {
			opts.Lists[tok] = append(opts.Lists[tok], f.Ranges())
		}
	}
	source.WaitRanges(started)
}

// leaveRanges gives back the handler's share of its feeds.
func (h *Handler) leaveRanges() {
	for _, key := range h.rangeKeys {
		_, _ = rangeFeeds.Delete(key)
	}
	h.rangeKeys = nil
}
