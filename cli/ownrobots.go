package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// ownRobots reads the robots.txt of a robots_guard handler without a
// robots option as the handler reads it: what the handler after
// robots_guard (file_server, reverse_proxy, an application) answers for
// GET /robots.txt, read as a robots URL is (a 2xx: the rules; a 4xx: none,
// no rules; a 5xx or no answer: an error). It runs the config in this
// process, as "caddy robots doctor" does (every server on a free loopback
// port, plain HTTP, no admin API, only the http app) with the guard's
// serve_robots off, so that GET /robots.txt passes through it to the
// handler after it, with host as the Host header. file, adapter and site
// are --config, --adapter and --site; from says where the rules came from.
func ownRobots(ctx context.Context, env *Caddy, file, adapter, site, host string) (data []byte, from string, err error) {
	body, err := os.ReadFile(file)
	if err != nil {
		return nil, "", err
	}
	adapted, err := adaptFile(env, file, body, adapter)
	if err != nil {
		return nil, "", err
	}
	run, err := decodeTree(adapted)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", file, err)
	}
	srvs := servers(run)
	picked := pickGuard(findGuards(srvs), site, host)
	if picked == nil {
		return nil, "", fmt.Errorf("%s: no robots_guard handler for %q", file, site)
	}
	if host == "" || len(picked.hosts) > 0 && !slices.ContainsFunc(picked.hosts, func(p string) bool { return hostMatches(p, host) }) {
		host = picked.host()
	}
	dir, err := os.MkdirTemp("", "robots-check")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	port, err := moveServers(srvs)
	if err != nil {
		return nil, "", err
	}
	picked.handler["serve_robots"] = false
	picked.handler["verify"] = map[string]any{"disabled": true}
	delete(picked.handler, "store")
	apps, _ := run["apps"].(map[string]any)
	run["apps"] = map[string]any{"http": apps["http"]}
	run["admin"] = map[string]any{"disabled": true, "config": map[string]any{"persist": false}}
	run["storage"] = map[string]any{"module": "file_system", "root": filepath.Join(dir, "storage")}
	run["logging"] = map[string]any{"logs": map[string]any{"default": map[string]any{
		"writer": map[string]any{"output": "discard"}, "level": "ERROR",
	}}}
	js, err := json.Marshal(run)
	if err != nil {
		return nil, "", err
	}
	if err := env.Load(js); err != nil {
		return nil, "", fmt.Errorf("%s: to read the site's own robots.txt (no robots line), check runs the config, which does not load: %v", file, err)
	}
	defer func() { _ = env.Stop() }()
	url := "http://127.0.0.1:" + strconv.Itoa(port[picked.server]) + "/robots.txt"
	raw, _ := json.Marshal(map[string]string{"robots": url, "robots_host": host})
	s, err := env.Site(raw)
	if err != nil {
		return nil, "", err
	}
	from = fmt.Sprintf("the site's own (no robots line): what the handler after robots_guard answers for GET http://%s/robots.txt, with the config run in this process", host)
	data, err = s.Robots(ctx)
	if err != nil {
		return nil, from, fmt.Errorf("the site's own robots.txt (no robots line) cannot be read as the handler reads it: %v; name the file with --robots FILE, or with a robots line in the config", err)
	}
	if data == nil {
		from += ": none (a 4xx), no rules"
	}
	return data, from, nil
}

// moveServers puts every server of the config on a free loopback port,
// plain HTTP without TLS connection policies or listener and packet conn
// wrappers, as the doctor runs a config, and points the loopback upstreams
// and URLs that led to a server at its new port. It returns the ports by
// server name.
func moveServers(srvs []*server) (map[string]int, error) {
	moved, ports := map[int]int{}, map[string]int{}
	for _, s := range srvs {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		for _, l := range s.listen {
			if p, ok := listenPort(l); ok {
				moved[p] = port
			}
		}
		ports[s.name] = port
		s.listen = []string{"127.0.0.1:" + strconv.Itoa(port)}
		s.raw["listen"] = []any{s.listen[0]}
		s.raw["automatic_https"] = map[string]any{"disable": true}
		delete(s.raw, "tls_connection_policies")
		delete(s.raw, "listener_wrappers")
		delete(s.raw, "packet_conn_wrappers")
	}
	for _, s := range srvs {
		for k, v := range s.raw {
			if k != "listen" {
				s.raw[k] = follow(v, moved)
			}
		}
	}
	if len(srvs) == 0 {
		return nil, errors.New("the config has no HTTP server")
	}
	return ports, nil
}
