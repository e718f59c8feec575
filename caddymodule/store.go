package caddymodule

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/redis/go-redis/v9"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/enforce/redisstore"
	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/review"
)

func init() {
	caddy.RegisterModule(RedisStore{})
	redis.SetLogger(redisLog{})
}

// storesNamespace is the namespace of robots_guard's stores, the guest
// modules of the handler's "store" field.
const storesNamespace = "http.handlers.robots_guard.stores"

// RedisStore keeps the per-client state (rates, strikes, blocks,
// robots.txt-fetched marks) in Redis or Valkey, shared by every instance
// with the same URL, key prefix and zone: a fleet behind a load balancer
// enforces one Crawl-delay and one ladder per client. Each decision is one
// round trip (a server-side script); a blocked client's requests are
// answered from a local cache of blocks that the instances keep in step.
type RedisStore struct {
	// URL locates the server: redis://[user:password@]host:port[/db],
	// rediss:// (TLS), unix:///path/to/redis.sock,
	// redis+cluster://host:port?addr=host:port (a cluster, from its seed
	// nodes) or redis+sentinel://host:port?master_name=NAME (the primary
	// that Sentinel names); go-redis's options go in the query.
	// Placeholders such as {env.REDIS_URL} are replaced. Default: none, it
	// is required.
	URL string `json:"url,omitempty"`

	// KeyPrefix starts every key the store writes, and its events channel;
	// the zone's name follows it. Default: "robots_guard:".
	KeyPrefix string `json:"key_prefix,omitempty"`

	// Timeout bounds one round trip; a request whose round trip fails is
	// answered as OnError says, and so are the following ones until Redis
	// answers again. Default: 250ms.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// OnError says how requests are decided while Redis cannot be reached:
	// "local" decides them with the instance's own in-process state (each
	// instance on its own until Redis is back), "allow" as if no client had
	// any state (rules still refuse; nobody is throttled or blocked), "deny"
	// throttles every request that a rate binds (people pass). Each such
	// request is counted in caddy_robots_guard_store_fallbacks_total; the
	// outage and the return are logged once each, at WARN and INFO.
	// Default: "local".
	OnError string `json:"on_error,omitempty"`

	joined string // the key of the pooled store this module joined
}

// CaddyModule returns the Caddy module information.
func (RedisStore) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  storesNamespace + ".redis",
		New: func() caddy.Module { return new(RedisStore) },
	}
}

// storeJoiner is a store module: it gives a handler the store of its zone.
type storeJoiner interface {
	join(h *Handler) (*redisstore.Store, error)
}

// pooledStore is a zone's Redis store with its client, shared by the
// handlers of the zone that name the same server and settings, and kept
// across config reloads.
type pooledStore struct {
	zone   string
	store  *redisstore.Store
	client redis.UniversalClient
}

// Destruct implements caddy.Destructor.
func (p *pooledStore) Destruct() error {
	p.store.Close()
	return p.client.Close()
}

// fleetStores holds the Redis stores in use, by zone and settings.
var fleetStores = caddy.NewUsagePool()

// settings checks the module's values (redisstore.Config.Check) and
// returns them resolved. Its errors are *field.Error.
func (rs *RedisStore) settings() (redisstore.Settings, error) {
	url := caddy.NewReplacer().ReplaceAll(rs.URL, "")
	if url == "" {
		return redisstore.Settings{}, field.Errorf("store.url", "no Redis URL (e.g. store redis redis://127.0.0.1:6379)")
	}
	if rs.Timeout < 0 {
		return redisstore.Settings{}, field.Wrap("store.timeout", field.AboveZero(time.Duration(rs.Timeout)))
	}
	s, err := redisstore.Config{URL: url, KeyPrefix: rs.KeyPrefix, Timeout: time.Duration(rs.Timeout), OnError: rs.OnError}.Check()
	if fe := (*field.Error)(nil); errors.As(err, &fe) {
		return s, field.Wrap("store."+fe.Path, fe.Err)
	}
	return s, err
}

// join implements storeJoiner: it joins the pooled store of the handler's
// zone and settings, creating it (without waiting for Redis) if need be,
// with the zone's in-process store as the local one.
func (rs *RedisStore) join(h *Handler) (*redisstore.Store, error) {
	set, err := rs.settings()
	if err != nil {
		return nil, fmt.Errorf("robots_guard: %w", err)
	}
	ttl := time.Duration(h.StateTTL)
	// The crawler networks name the records (redisstore ids.go).
	key := set.Key(h.Zone, ttl) + fmt.Sprintf("\x00%d/%d", h.CrawlerIPv4Prefix, h.CrawlerIPv6Prefix)
	v, _, err := fleetStores.LoadOrNew(key, func() (caddy.Destructor, error) {
		c, err := redisstore.Open(set.URL, set.Timeout)
		if err != nil {
			return nil, err
		}
		return &pooledStore{zone: h.Zone, client: c, store: redisstore.New(redisstore.Options{
			Client: c, KeyPrefix: set.KeyPrefix, Zone: h.Zone, TTL: ttl, MaxBlocks: cmp.Or(h.MaxBlocks, h.MaxClients), Timeout: set.Timeout,
			OnError: set.OnError, Local: h.shared.store, CrawlerIPv4Prefix: h.CrawlerIPv4Prefix, CrawlerIPv6Prefix: h.CrawlerIPv6Prefix,
		})}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("robots_guard: store: %v", err)
	}
	rs.joined = key
	s := v.(*pooledStore).store
	// The store outlives this config: its hooks are this config's logger
	// (the metrics are the process's).
	h.metrics.SetStoreUp(h.Zone, s.Up())
	s.SetHooks(report.StoreHooks(h.opsLogger, h.metrics, h.Zone, set.OnError.String()))
	return s, nil
}

// Cleanup implements caddy.CleanerUpper: it leaves the pooled store.
func (rs *RedisStore) Cleanup() error {
	if rs.joined == "" {
		return nil
	}
	_, err := fleetStores.Delete(rs.joined)
	rs.joined = ""
	return err
}

// openStore returns the store the handler's engine decides with: the
// zone's in-process store, or the one its store module gives.
func (h *Handler) openStore(ctx caddy.Context) (enforce.Store, error) {
	if len(h.StoreRaw) == 0 {
		return h.shared.store, nil
	}
	mod, err := ctx.LoadModule(h, "StoreRaw")
	if err != nil {
		return nil, fmt.Errorf("robots_guard: store: %v", err)
	}
	j, ok := mod.(storeJoiner)
	if !ok {
		return nil, fmt.Errorf("robots_guard: store: module %T is not a robots_guard store", mod)
	}
	if h.fleet, err = j.join(h); err != nil {
		return nil, err
	}
	return h.fleet, nil
}

// checkStore checks the store module's values, for checkConfig: a store
// from another plugin checks its own when it is loaded.
func checkStore(raw json.RawMessage) error {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] != '{' {
		return field.Errorf("store", `want an object such as {"module": "redis", "url": "redis://127.0.0.1:6379"}, got %s`, t)
	} else if len(raw) == 0 {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return field.Errorf("store", "%v", err)
	}
	var name string
	if err := json.Unmarshal(fields["module"], &name); err != nil || name == "" {
		return field.Errorf("store.module", "names no store module (want \"redis\")")
	}
	if name != "redis" {
		if _, err := caddy.GetModule(storesNamespace + "." + name); err != nil {
			return field.Errorf("store.module", "unknown store %q (want redis)", name)
		}
		return nil
	}
	delete(fields, "module")
	rest, _ := json.Marshal(fields)
	var rs RedisStore
	if err := caddy.StrictUnmarshalJSON(rest, &rs); err != nil {
		return field.Errorf("store", "%v", err)
	}
	_, err := rs.settings()
	return err
}

// readStore reads the Caddyfile's store option:
//
//	store memory
//	store redis <url>
//	store redis [<url>] {
//	    url        <url>
//	    key_prefix <prefix>
//	    timeout    <duration>
//	    on_error   local|allow|deny
//	}
func readStore(h *Handler, r *optionReader) error {
	d := r.d
	args := d.RemainingArgs()
	r.set("store")
	if len(args) == 0 || len(args) > 2 {
		return r.errf("want memory, redis <url> or a redis block, got %d arguments", len(args))
	}
	switch args[0] {
	case "memory":
		if len(args) > 1 || d.NextBlock(d.Nesting()) {
			return r.errf("memory takes no arguments")
		}
		h.StoreRaw = nil
		return nil
	case "redis":
	default:
		return r.errf("unknown store '%s' (want memory or redis)", args[0])
	}
	var rs RedisStore
	if len(args) == 2 {
		rs.URL = args[1]
		r.set("store.url")
	}
	outer := r.opt
	// The block's options: timeout, and the strings.
	strs := map[string]*string{"url": &rs.URL, "key_prefix": &rs.KeyPrefix, "on_error": &rs.OnError}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		name := d.Val()
		r.opt, r.tok = "store "+name, d.Token()
		to, ok := strs[name]
		var err error
		switch {
		case seen[name]:
			return r.errf("already specified")
		case name == "url" && rs.URL != "" && len(args) == 2:
			return r.errf("the url is already given after 'redis'")
		case name == "timeout":
			err = r.set("store.timeout").positiveDuration(&rs.Timeout)
		case ok:
			err = r.set("store." + name).one(to)
		default:
			return d.Errf("robots_guard: store: unrecognized option '%s' (want url, key_prefix, timeout or on_error)", name)
		}
		if err != nil {
			return err
		}
		seen[name] = true
	}
	r.opt = outer
	h.StoreRaw = caddyconfig.JSONModuleObject(rs, "module", "redis", nil)
	return nil
}

// fleetOf returns the Redis store of the zone in use, or nil.
func fleetOf(zone string) review.Fleet {
	var found review.Fleet
	fleetStores.Range(func(_, value any) bool {
		if p, ok := value.(*pooledStore); ok && p.zone == zone {
			found = p.store
			return false
		}
		return true
	})
	return found
}

// redisLog sends go-redis's own messages (failed dials while Redis is
// down) to Caddy's log at DEBUG: the store reports outages itself, once.
type redisLog struct{}

func (redisLog) Printf(_ context.Context, format string, v ...any) {
	caddy.Log().Named("robots_guard.redis").Debug(fmt.Sprintf(format, v...))
}

// Interface guards
var (
	_ caddy.CleanerUpper = (*RedisStore)(nil)
	_ storeJoiner        = (*RedisStore)(nil)
)
