package review

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
)

// Zone is one zone of robots_guard's per-client state, as the admin
// endpoints see it: its name, its sites' live statistics (each apart) and
// its blocks.
type Zone struct {
	Name  string
	Sites *Sites
	// Blocked lists the blocks in force: fleet-wide for a zone on Redis.
	// Local lists the in-process store's, which the review page shows
	// where Blocked fails.
	Blocked func(now time.Time) ([]enforce.BlockedClient, error)
	Local   func(now time.Time) []enforce.BlockedClient
	// Unblock lifts the blocks of the tracked prefixes that overlap p, in
	// the in-process store and, with fleet, for a zone on Redis
	// fleet-wide; it returns how many it lifted, and why the fleet's
	// could not be.
	Unblock func(p netip.Prefix, now time.Time, fleet bool) (int, error)
}

// Fleet is a zone's shared store (enforce/redisstore.Store): whether it
// answers, the blocks in force fleet-wide, and lifting them.
type Fleet interface {
	Up() bool
	Blocked(now time.Time) ([]enforce.BlockedClient, error)
	Unblock(p netip.Prefix, now time.Time) (int, error)
}

// StoreZone returns the Zone of the stores of a zone: local, its
// in-process store, and fleet, its shared store or nil. Blocked lists the
// fleet's blocks while it answers, else the local store's (which decides
// while the fleet cannot be reached); Unblock lifts the local store's
// blocks and, when asked, the fleet's, and then calls lifted with how many
// it lifted (the caller's line in the decision log).
func StoreZone(name string, sites *Sites, local *enforce.MemoryStore, fleet Fleet, lifted func(p netip.Prefix, n int)) Zone {
	return Zone{Name: name, Sites: sites, Local: local.Blocked,
		Blocked: func(now time.Time) ([]enforce.BlockedClient, error) {
			if fleet != nil && fleet.Up() {
				return fleet.Blocked(now)
			}
			return local.Blocked(now), nil
		},
		Unblock: func(p netip.Prefix, now time.Time, inFleet bool) (n int, err error) {
			n = local.Unblock(p, now)
			if fleet != nil && inFleet {
				m, ferr := fleet.Unblock(p, now)
				n, err = n+m, ferr
			}
			lifted(p, n)
			return n, err
		}}
}

// Admin serves robots_guard's endpoints of the admin API, for operators
// reviewing bots and lifting blocks:
//
//	GET  /robots_guard/                             the review page (HTML)
//	GET  /robots_guard/stats[?zone=NAME]            the statistics (JSON, View)
//	GET  /robots_guard/robots?zone=NAME&site=S&version=ID  a robots.txt version (text)
//	GET  /robots_guard/blocked[?zone=NAME]          the blocks in force, by zone
//	POST /robots_guard/unblock                      {"ip": "IP or CIDR", "zone": "..."}
//
// It holds no state: Zones gives it the zones' (the Caddy module keeps
// them in a pool its handlers share).
type Admin struct {
	// Zones returns the zones in use, in name order, or only the named
	// one.
	Zones func(only string) []Zone
}

// AdminError is an endpoint's failure and the status it answers with.
type AdminError struct {
	Status int
	Err    error
}

func (e *AdminError) Error() string { return e.Err.Error() }

// Unwrap returns the failure.
func (e *AdminError) Unwrap() error { return e.Err }

func adminErrorf(status int, format string, args ...any) error {
	return &AdminError{Status: status, Err: fmt.Errorf(format, args...)}
}

// unblockRequest is the body of POST /robots_guard/unblock. An empty zone
// means every zone.
type unblockRequest struct {
	IP   string `json:"ip"`
	Zone string `json:"zone,omitempty"`
}

// Serve answers one request for an endpoint; a failure is an
// *AdminError, which the caller answers.
func (a Admin) Serve(w http.ResponseWriter, r *http.Request) error {
	now := time.Now()
	switch r.URL.Path {
	case "/robots_guard/blocked":
		if r.Method != http.MethodGet {
			return methodNotAllowed(r, http.MethodGet)
		}
		zones, err := a.Blocked(r.URL.Query().Get("zone"), now)
		if err != nil {
			return &AdminError{Status: http.StatusBadGateway, Err: err}
		}
		return writeJSON(w, map[string]any{"zones": zones})
	case "/robots_guard/unblock":
		if r.Method != http.MethodPost {
			return methodNotAllowed(r, http.MethodPost)
		}
		var req unblockRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
			return adminErrorf(http.StatusBadRequest, "decoding request body: %v", err)
		}
		p, err := enforce.ParseUnblock(req.IP)
		if err != nil {
			return adminErrorf(http.StatusBadRequest, "ip: %v", err)
		}
		lifted, zones, err := a.Unblock(p, req.Zone, now)
		if err != nil {
			return &AdminError{Status: http.StatusBadGateway, Err: err}
		}
		if req.Zone != "" && zones == 0 {
			return adminErrorf(http.StatusNotFound, "zone %q: no such zone", req.Zone)
		}
		return writeJSON(w, map[string]any{"ip": enforce.PrefixString(p), "lifted": lifted})
	case "/robots_guard/", "/robots_guard/stats", "/robots_guard/robots":
	default:
		return adminErrorf(http.StatusNotFound, "unknown endpoint %s (want /robots_guard/, /robots_guard/stats, /robots_guard/robots, /robots_guard/blocked or /robots_guard/unblock)", r.URL.Path)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return methodNotAllowed(r, http.MethodGet)
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	switch r.URL.Path {
	case "/robots_guard/":
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", CSP)
		_, err := w.Write(LivePage())
		return err
	case "/robots_guard/stats":
		return writeJSON(w, a.Live(r.URL.Query().Get("zone"), now))
	}
	q := r.URL.Query()
	zone, site, id := q.Get("zone"), q.Get("site"), q.Get("version")
	var text []byte
	found := false
	for _, z := range a.Zones(zone) {
		for _, name := range z.Sites.Names() {
			if !found && (site == "" || site == name) {
				text, found = z.Sites.Of(name).VersionText(id)
			}
		}
	}
	if zone == "" || !found {
		return adminErrorf(http.StatusNotFound, "zone %q has no robots.txt version %q", zone, id)
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	_, err := w.Write(text)
	return err
}

// Live returns the statistics and blocks of every zone, or of one: the
// review page's view, one part per site of a zone, each with the blocks
// its decisions made (those of no known site with the zone's first).
func (a Admin) Live(only string, now time.Time) View {
	v := View{Generated: now.UTC(), Source: "live", Zones: []ZoneView{}}
	for _, z := range a.Zones(only) {
		blocked, _ := z.Blocked(now) // on an error, the in-process list
		if blocked == nil {
			blocked = z.Local(now)
		}
		sites := z.Sites.Names()
		for i, site := range sites {
			zv := z.Sites.Of(site).View(z.Name, now)
			zv.Site, zv.Blocked = site, []BlockedClient{}
			for _, b := range blocked {
				if b.Site = z.Sites.SiteOf(b.Prefix, b.Token, z.Name); b.Site == site || i == 0 && !slices.Contains(sites, b.Site) {
					zv.Blocked = append(zv.Blocked, BlockedClient{IP: b.IP, Token: b.Token, Until: b.Until.UTC(), Reason: b.Reason.String(),
						Offenses: b.Offenses, ReadRobots: b.ReadRobots, DryRun: b.DryRun, Site: b.Site})
				}
			}
			v.Zones = append(v.Zones, zv)
		}
	}
	return v
}

// Blocked lists the blocks in force in every zone, or in one; fleet-wide
// for a zone on Redis. The error is the first zone's that could not list
// them.
func (a Admin) Blocked(only string, now time.Time) (map[string][]enforce.BlockedClient, error) {
	out := map[string][]enforce.BlockedClient{}
	var firstErr error
	for _, z := range a.Zones(only) {
		bs, err := z.Blocked(now)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("zone %q: listing the blocks in Redis: %v", z.Name, err)
		}
		if bs == nil {
			bs = []enforce.BlockedClient{}
		}
		for i := range bs {
			bs[i].Site = z.Sites.SiteOf(bs[i].Prefix, bs[i].Token, z.Name) // the site whose decision made it
		}
		out[z.Name] = bs
	}
	return out, firstErr
}

// Unblock lifts the blocks of the tracked prefixes that overlap p in every
// zone, or in one; it returns how many blocks it lifted and in how many
// zones it looked. After a zone's fleet failed, the others' are left as
// they are (the in-process stores' blocks are lifted all the same).
func (a Admin) Unblock(p netip.Prefix, only string, now time.Time) (lifted, zones int, err error) {
	for _, z := range a.Zones(only) {
		n, zerr := z.Unblock(p, now, err == nil)
		lifted += n
		zones++
		if zerr != nil && err == nil {
			err = fmt.Errorf("zone %q: lifting the blocks in Redis: %v", z.Name, zerr)
		}
	}
	return lifted, zones, err
}

func methodNotAllowed(r *http.Request, want string) error {
	return adminErrorf(http.StatusMethodNotAllowed, "method %s not allowed (want %s)", r.Method, want)
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}
