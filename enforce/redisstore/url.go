package redisstore

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Open returns a client for a Redis (or Valkey) URL:
//
//	redis://[user:password@]host:port[/db][?option=value...]    one server (rediss:// with TLS)
//	unix://[user:password@]/path/to/redis.sock[?db=N]           one server on a Unix socket
//	redis+cluster://host:port[?addr=host:port&...]              a cluster, from its seed nodes (rediss+cluster:// with TLS)
//	redis+sentinel://host:port[/db]?master_name=NAME[&addr=...] the primary that Sentinel names (rediss+sentinel://)
//
// The query options are go-redis's (dial_timeout, pool_size, ...); a
// timeout that the URL does not set is timeout, and failed commands are
// not retried, nor failed dials (the store falls back and reconnects
// in the background instead).
func Open(rawURL string, timeout time.Duration) (c redis.UniversalClient, err error) {
	// go-redis panics on some option values (a negative pool_size makes a
	// channel of negative size): a config value must never crash Caddy.
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("bad option: %v", r)
		}
	}()
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "parse "))
	}
	scheme, mode, _ := strings.Cut(u.Scheme, "+")
	if scheme != "redis" && scheme != "rediss" && (scheme != "unix" || mode != "") {
		return nil, fmt.Errorf("unknown scheme %q (want redis://, rediss://, unix://, redis+cluster:// or redis+sentinel://)", u.Scheme)
	}
	plain := *u
	plain.Scheme = scheme
	switch mode {
	case "":
		o, err := redis.ParseURL(plain.String())
		if err != nil {
			return nil, err
		}
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MaxRetries = timeouts(o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MaxRetries, timeout)
		o.DialerRetries = max(o.DialerRetries, 1)
		return redis.NewClient(o), nil
	case "cluster":
		o, err := redis.ParseClusterURL(plain.String())
		if err != nil {
			return nil, err
		}
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MaxRetries = timeouts(o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MaxRetries, timeout)
		o.MaxRedirects = max(o.MaxRedirects, 3)
		o.DialerRetries = max(o.DialerRetries, 1)
		return redis.NewClusterClient(o), nil
	case "sentinel":
		o, err := redis.ParseFailoverURL(plain.String())
		if err != nil {
			return nil, err
		}
		if o.MasterName == "" {
			return nil, fmt.Errorf("redis+sentinel:// needs ?master_name=NAME")
		}
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MaxRetries = timeouts(o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MaxRetries, timeout)
		o.DialerRetries = max(o.DialerRetries, 1)
		return redis.NewFailoverClient(o), nil
	}
	return nil, fmt.Errorf("unknown scheme %q (want redis://, rediss://, unix://, redis+cluster:// or redis+sentinel://)", u.Scheme)
}

// timeouts fills in the timeouts the URL did not set, and turns retries
// off unless the URL asks for them.
func timeouts(dial, read, write, pool time.Duration, retries int, d time.Duration) (time.Duration, time.Duration, time.Duration, time.Duration, int) {
	or := func(v time.Duration) time.Duration {
		if v == 0 {
			return d
		}
		return v
	}
	if retries == 0 {
		retries = -1
	}
	return or(dial), or(read), or(write), or(pool), retries
}
