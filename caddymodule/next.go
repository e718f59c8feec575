package caddymodule

import (
	"errors"
	"maps"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsguard/robotsguard/upstream"
)

// nextRobots answers the fetches of the site's own robots.txt (no robots
// option; source.NewOwn) with the handler after robots_guard in the
// site's chain, in process (upstream.Answer): a GET /robots.txt made as
// the first request that reached the guard was (its server, Host, scheme
// and the variables set before the guard, such as root). It implements
// http.RoundTripper.
type nextRobots struct {
	once  sync.Once
	at    atomic.Pointer[nextRoute]
	start func() // starts the fetches
}

// nextRoute is where the fetches go: the first request's route, and the
// variables set before the guard (not its client's).
type nextRoute struct {
	next  caddyhttp.Handler
	first *http.Request
	vars  map[string]any
}

// reached records the route of the first request, r, that reached the
// guard, and then calls n.start; requests that arrive meanwhile wait for
// it.
func (n *nextRobots) reached(next caddyhttp.Handler, r *http.Request) {
	n.once.Do(func() {
		vars, _ := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
		rt := &nextRoute{next: next, first: r, vars: maps.Clone(vars)}
		delete(rt.vars, caddyhttp.ClientIPVarKey)
		delete(rt.vars, caddyhttp.TrustedProxyVarKey)
		n.at.Store(rt)
		n.start()
	})
}

// RoundTrip asks the next handler for /robots.txt, with req's header
// fields (User-Agent, conditionals) and deadline; a handler error with a
// status (file_server's 404) is that status.
func (n *nextRobots) RoundTrip(req *http.Request) (*http.Response, error) {
	rt := n.at.Load()
	server, _ := rt.first.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if server == nil {
		return nil, errors.New("the request that reached the guard came through no Caddy server")
	}
	r := (&http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/robots.txt"}, RequestURI: "/robots.txt", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: req.Header.Clone(), Host: rt.first.Host, RemoteAddr: "127.0.0.1:0", TLS: rt.first.TLS}).WithContext(req.Context()) // TLS: the site's scheme
	return upstream.Answer(req, func(w http.ResponseWriter) error {
		r := caddyhttp.PrepareRequest(r, caddy.NewReplacer(), w, server)
		maps.Copy(r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any), rt.vars)
		return rt.next.ServeHTTP(w, r)
	}, func(err error) (int, bool) {
		var he caddyhttp.HandlerError
		ok := errors.As(err, &he)
		return he.StatusCode, ok && he.StatusCode != 0
	})
}
