package caddymodule

import (
	"context"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsguard/robotsguard/source"
)

// maxRangesFile bounds the size of a verify ranges file.
const maxRangesFile = 16 << 20

// carriedPool holds the carried robots.txt of each robots URL (by
// source.Key) across config reloads: Caddy provisions the new config before
// it cleans up the old one, so the count goes 1 -> 2 -> 1.
var carriedPool = caddy.NewUsagePool()

// carriedShare is a handler's share of one key's carried robots.txt; it
// implements source.Pool.
type carriedShare string

// Join returns the carried robots.txt of the key, made if none is.
func (k carriedShare) Join() *source.Carried {
	v, _, err := carriedPool.LoadOrNew(string(k), func() (caddy.Destructor, error) { return &source.Carried{}, nil })
	if err != nil { // LoadOrNew fails only when the constructor does
		return &source.Carried{}
	}
	return v.(*source.Carried)
}

// Leave gives back the share.
func (k carriedShare) Leave() { _, _ = carriedPool.Delete(string(k)) }

// sourceOptions returns what h's robots.txt source needs: the additions,
// the logger of reload problems, and the counters.
func (h *Handler) sourceOptions() source.Options {
	m := h.metrics
	return source.Options{Additions: h.additions, Logger: h.opsLogger, Counters: source.Counters{
		Reload: m.Reload, Fetch: m.Fetch, Missing: m.RobotsMissing, Unreachable: m.RobotsUnreachable,
	}}
}

// loadRobots reads the robots.txt h's robots option names, once, as the
// handler reads it (source.Read), for the commands that work without a
// running Caddy.
func loadRobots(ctx context.Context, h *Handler) (data []byte, from string, err error) {
	return source.Read(ctx, h.Robots, h.RobotsHost, h.RobotsHeaders)
}
