package caddymodule

import (
	"cmp"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsguard/robotsguard/enforce"
	sitename "github.com/robotsguard/robotsguard/internal/site"
	"github.com/robotsguard/robotsguard/review"
)

// states holds the per-client state of each zone. A config reload
// provisions the new handlers before it cleans up the old ones, so the
// reference count goes 1 -> 2 -> 1 and strikes and blocks carry over.
var states = caddy.NewUsagePool()

type sharedState struct {
	store *enforce.MemoryStore
	sites *review.Sites // live statistics for the review page, by site; the sites of the blocks
}

// Destruct implements caddy.Destructor: it stops the statistics' clocks;
// the store holds no resources.
func (s *sharedState) Destruct() error {
	s.sites.Close()
	return nil
}

func stateKey(zone string) string { return "robots_guard/" + zone }

// joinState returns the zone's state, creating it with the given bounds.
// The bounds of an existing zone are kept: a reload cannot shrink a store
// that is in use.
func joinState(zone string, maxClients, maxBlocks int, ttl time.Duration) (*sharedState, error) {
	v, _, err := states.LoadOrNew(stateKey(zone), func() (caddy.Destructor, error) {
		return &sharedState{store: enforce.NewMemoryStore(maxClients, maxBlocks, ttl), sites: review.NewSites()}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("zone %q: %v", zone, err)
	}
	return v.(*sharedState), nil
}

func leaveState(zone string) error {
	_, err := states.Delete(stateKey(zone))
	return err
}

// nameSite names the site whose handler ctx provisions (package site):
// its default zone, so that strikes, blocks and trap hits earned on one
// site apply there only, unless the operator shares a zone; outside an
// HTTP server (caddy robots check, unit tests) the zone names it. Caddy
// provisions a server's top-level routes in order, after decoding their
// matchers: the one being provisioned is the first whose handlers are not
// loaded yet.
func (h *Handler) nameSite(ctx caddy.Context) {
	if srv, _ := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); srv != nil {
		var matchers []any
		for _, r := range srv.Routes {
			if len(r.Handlers) == 0 && len(r.HandlersRaw) > 0 {
				for _, set := range r.MatcherSets {
					matchers = append(matchers, set...)
				}
				break
			}
		}
		h.site = sitename.Name(sitename.Hosts(matchers), srv.Listen)
	}
	h.Zone = cmp.Or(h.Zone, h.site, "default")
	h.site = cmp.Or(h.site, h.Zone)
}

// zoneLeft drops the series of h's zone when no handler uses it any more
// (a reload removed it).
func (h *Handler) zoneLeft() {
	if _, used := states.References(stateKey(h.Zone)); !used {
		h.metrics.DropZone(h.Zone)
	}
}
