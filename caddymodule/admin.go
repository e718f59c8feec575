package caddymodule

import (
	"errors"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/review"
)

func init() {
	caddy.RegisterModule(adminAPI{})
}

// adminAPI serves robots_guard's endpoints on Caddy's admin API
// (review.Admin: the review page and its statistics, the blocks in force,
// unblock). Like Caddy's own admin modules it holds no state: it reads the
// zones' state from the package-level pool the handlers share.
type adminAPI struct{}

// CaddyModule returns the Caddy module information.
func (adminAPI) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.robots_guard",
		New: func() caddy.Module { return new(adminAPI) },
	}
}

// Routes returns the admin routes.
func (a adminAPI) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{{Pattern: "/robots_guard/", Handler: caddy.AdminHandlerFunc(a.serve)}}
}

// admin is the endpoints' view of the zones in use.
var admin = review.Admin{Zones: zones}

func (adminAPI) serve(w http.ResponseWriter, r *http.Request) error {
	err := admin.Serve(w, r)
	if ae := (*review.AdminError)(nil); errors.As(err, &ae) {
		return caddy.APIError{HTTPStatus: ae.Status, Err: ae.Err}
	}
	return err
}

// zones returns every zone in use, or only the named one, in name order:
// its statistics, and its blocks from its in-process store and, for a
// zone on Redis, fleet-wide (store.go). The zones are collected first, so
// that nothing runs under the pool's lock.
func zones(only string) []review.Zone {
	found := map[string]*sharedState{}
	states.Range(func(key, value any) bool {
		zone := strings.TrimPrefix(key.(string), stateKey(""))
		if s, ok := value.(*sharedState); ok && (only == "" || zone == only) {
			found[zone] = s
		}
		return true
	})
	var out []review.Zone
	for _, name := range slices.Sorted(maps.Keys(found)) {
		out = append(out, review.StoreZone(name, found[name].sites, found[name].store, fleetOf(name), func(p netip.Prefix, n int) {
			caddy.Log().Named(report.LoggerName).Info(report.UnblockedMsg, zap.String("client_ip", p.String()), zap.String("zone", name), zap.Int("lifted", n))
		}))
	}
	return out
}

// Interface guards
var _ caddy.AdminRouter = adminAPI{}
