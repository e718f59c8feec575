package caddymodule

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsguard/robotsguard/enforce"
)

func init() {
	caddy.RegisterModule(adminAPI{})
}

// adminAPI serves robots_guard's endpoints on Caddy's admin API, for
// operators reviewing and lifting blocks:
//
//	GET  /robots_guard/blocked[?zone=NAME]  the blocks in force, by zone
//	POST /robots_guard/unblock              {"ip": "IP or CIDR", "zone": "..."}
//
// Like Caddy's own admin modules it holds no state: it reads the zones'
// per-client state from the package-level pool the handlers share.
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

// unblockRequest is the body of POST /robots_guard/unblock. An empty zone
// means every zone.
type unblockRequest struct {
	IP   string `json:"ip"`
	Zone string `json:"zone,omitempty"`
}

func (a adminAPI) serve(w http.ResponseWriter, r *http.Request) error {
	switch r.URL.Path {
	case "/robots_guard/blocked":
		if r.Method != http.MethodGet {
			return methodNotAllowed(r, http.MethodGet)
		}
		zones, err := blockedByZone(r.URL.Query().Get("zone"), time.Now())
		if err != nil {
			return caddy.APIError{HTTPStatus: http.StatusBadGateway, Err: err}
		}
		return writeJSON(w, map[string]any{"zones": zones})
	case "/robots_guard/unblock":
		if r.Method != http.MethodPost {
			return methodNotAllowed(r, http.MethodPost)
		}
		var req unblockRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
			return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("decoding request body: %v", err)}
		}
		p, err := enforce.ParseUnblock(req.IP)
		if err != nil {
			return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("ip: %v", err)}
		}
		lifted, zones, err := unblock(p, req.Zone, time.Now())
		if err != nil {
			return caddy.APIError{HTTPStatus: http.StatusBadGateway, Err: err}
		}
		if req.Zone != "" && zones == 0 {
			return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: fmt.Errorf("zone %q: no such zone", req.Zone)}
		}
		return writeJSON(w, map[string]any{"ip": enforce.PrefixString(p), "lifted": lifted})
	default:
		return a.serveReview(w, r) // admin_review.go
	}
}

// eachZone calls f for every zone in use, or only for the named one, in
// name order. The zones are collected first, so that f does not run under
// the pool's lock.
func eachZone(only string, f func(zone string, s *sharedState)) {
	zones := map[string]*sharedState{}
	states.Range(func(key, value any) bool {
		zone := strings.TrimPrefix(key.(string), stateKey(""))
		if s, ok := value.(*sharedState); ok && (only == "" || zone == only) {
			zones[zone] = s
		}
		return true
	})
	for _, z := range slices.Sorted(maps.Keys(zones)) {
		f(z, zones[z])
	}
}

// blockedByZone lists the blocks in force in every zone, or in one;
// fleet-wide for a zone on Redis (store.go).
func blockedByZone(only string, now time.Time) (map[string][]enforce.BlockedClient, error) {
	out := map[string][]enforce.BlockedClient{}
	var firstErr error
	eachZone(only, func(zone string, s *sharedState) {
		bs, err := zoneBlocked(zone, s, now)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("zone %q: listing the blocks in Redis: %v", zone, err)
		}
		out[zone] = bs
		if out[zone] == nil {
			out[zone] = []enforce.BlockedClient{}
		}
	})
	return out, firstErr
}

// unblock lifts the blocks of the tracked prefixes that overlap p in every
// zone, or in one, in the in-process store and, for a zone on Redis,
// fleet-wide; it returns how many blocks it lifted and in how many zones
// it looked.
func unblock(p netip.Prefix, only string, now time.Time) (lifted, zones int, err error) {
	eachZone(only, func(zone string, s *sharedState) {
		lifted += s.store.Unblock(p, now)
		zones++
		if f := fleetOf(zone); f != nil && err == nil {
			n, ferr := f.Unblock(p, now)
			if ferr != nil {
				err = fmt.Errorf("zone %q: lifting the blocks in Redis: %v", zone, ferr)
			}
			lifted += n
		}
	})
	return lifted, zones, err
}

func methodNotAllowed(r *http.Request, want string) error {
	return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("method %s not allowed (want %s)", r.Method, want)}
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}

// Interface guards
var _ caddy.AdminRouter = adminAPI{}
