package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/internal/site"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
	"github.com/robotsguard/robotsguard/upstream"
)

// Site is one robots_guard handler, with its settings from a config, as
// the check, classify and audit commands use it: its reading of
// robots.txt and its own decision. Package caddymodule implements it
// with the handler itself.
type Site interface {
	// Robots reads the site's robots.txt once, as the handler reads it: a
	// file, or the application's URL fetched once. It returns nil and no
	// error when the site has no rules.
	Robots(ctx context.Context) ([]byte, error)
	// OwnRobots reports that the site has no robots option: the handler
	// enforces the site's own robots.txt, what the handler after it
	// answers for GET /robots.txt, and Robots returns nil for it.
	OwnRobots() bool
	// Bots returns the site's bot entries.
	Bots() []uaclass.Bot
	// Ranges reads the lists of IP ranges the site verifies crawlers by,
	// by token, once: its files, and its URLs fetched now (the copy in
	// Caddy's storage when a fetch fails; nil when there is none either).
	// It returns why each URL that failed failed.
	Ranges(ctx context.Context) (lists map[string][]*uaclass.RangeList, failed []string, err error)
	// BlockClasses returns the names of the classes the site's
	// block_class shuts out, as configured.
	BlockClasses() []string
	// Prepare checks the settings and builds the handler's classifier,
	// engine and reader, with now as the engine's clock. Classify,
	// Additions and Reader may be called only after Prepare succeeded.
	Prepare(now func() time.Time) error
	// Classify classifies a User-Agent with the site's bot entries.
	Classify(ua string) uaclass.Result
	// Additions returns what the handler appends to the site's robots.txt
	// owner in the file it serves (blocked classes, traps, sitemaps; see
	// policy.Serve).
	Additions(owner *policy.Robots) policy.Added
	// Reader returns the handler's reading of a request, with its
	// classifier, its engine (Reader().Engine decides) and its
	// canonical setting; without Web Bot Auth agents and without a
	// verifier, which need the network.
	Reader() *enforce.Reader
}

// siteFlags adds the flags that select a site's robots_guard settings.
func siteFlags(c *cobra.Command) {
	c.Flags().StringP("config", "c", "", "Caddyfile or JSON config whose robots_guard settings to use")
	c.Flags().String("adapter", "", "config adapter (default: caddyfile for a Caddyfile, none for .json)")
	c.Flags().String("site", "", "with several robots_guard handlers in --config: a site (as blocked and the logs name it: shop.example.com, :8080), host, server name or listen address (default: the site of the first URL's host)")
}

// siteOf returns the robots_guard settings of the site that the flags
// select, or the defaults without --config. Without --site, the site of
// the first URL argument's host is chosen among several.
func siteOf(env *Caddy, cmd *cobra.Command) (Site, error) {
	file, _ := cmd.Flags().GetString("config")
	if file == "" {
		return env.Site(nil)
	}
	adapter, _ := cmd.Flags().GetString("adapter")
	site, _ := cmd.Flags().GetString("site")
	body, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	first := ""
	if args := cmd.Flags().Args(); len(args) > 0 {
		first = args[0]
	}
	return loadSite(env, file, body, adapter, site, first)
}

// fetchRobots reads the rules of a check with neither --config nor
// --robots: a check against nothing would say "allowed" of every URL, so
// they are the robots.txt of the URLs' site, fetched now as a crawler
// reads it (RFC 9309: as the site serves it, a guard's additions
// included; a 4xx is no rules). URLs of several sites, or a path without
// its site, are an error.
func fetchRobots(ctx context.Context, args []string) (data []byte, from string, err error) {
	origin := ""
	for _, a := range args {
		u, err := url.Parse(a)
		if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
			return nil, "", fmt.Errorf("%s: with neither --config nor --robots, give URLs with their site (https://example.com/private/), whose robots.txt check then fetches, or name the rules: --config FILE (the site's guard), --robots FILE", a)
		}
		o := u.Scheme + "://" + u.Host
		if origin != "" && o != origin {
			return nil, "", fmt.Errorf("URLs of %s and %s: with neither --config nor --robots, check fetches one site's robots.txt; check each site on its own, or name the rules with --config or --robots", origin, o)
		}
		origin = o
	}
	if origin == "" {
		return nil, "none (no --robots, no --config, no URL): no rules", nil
	}
	f, err := upstream.New(upstream.Options{URL: origin + "/robots.txt"})
	if err != nil {
		return nil, "", err
	}
	res := f.Fetch(ctx, upstream.Validators{})
	from = fmt.Sprintf("%s/robots.txt, fetched now (%s), as the site serves it (no --robots, no --config: robots_guard's defaults; --config FILE checks the site as its guard does)", origin, res.Cause())
	switch res.Outcome {
	case upstream.Fetched:
		return res.Body, from, nil
	case upstream.Unavailable:
		return nil, from + ": no rules", nil
	}
	return nil, "", fmt.Errorf("%s/robots.txt could not be fetched: %s; name the rules with --config or --robots", origin, res.Cause())
}

// siteEntry is one robots_guard handler found in a config.
type siteEntry struct {
	// names are the site's name (package site), the hosts of the
	// enclosing routes, the server's name and its listen addresses.
	names         []string
	hosts, listen []string
	raw           json.RawMessage
}

// loadSite adapts a config and returns the robots_guard handler of the
// selected site: the one site names (its name, a host, its server's name
// or a listen address), else the only one, else the one whose hosts (or,
// for a site of any host, whose port) the URL u names.
func loadSite(env *Caddy, file string, body []byte, adapter, site, u string) (Site, error) {
	body, err := adaptFile(env, file, body, adapter)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Listen []string          `json:"listen"`
					Routes []json.RawMessage `json:"routes"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(body, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	var found []siteEntry
	names := make([]string, 0, len(cfg.Apps.HTTP.Servers))
	for name := range cfg.Apps.HTTP.Servers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		srv := cfg.Apps.HTTP.Servers[name]
		for _, r := range srv.Routes {
			found = collectGuards(r, name, srv.Listen, found)
		}
	}
	var picked []siteEntry
	for _, e := range found {
		if site == "" || slices.Contains(e.names, site) {
			picked = append(picked, e)
		}
	}
	if site == "" && len(picked) > 1 && u != "" {
		// The site of the URL's host.
		if byURL := sitesOfURL(picked, u); len(byURL) > 0 {
			picked = byURL
		}
	}
	switch {
	case len(found) == 0:
		return nil, fmt.Errorf("%s: no robots_guard handler", file)
	case len(picked) == 0:
		return nil, fmt.Errorf("--site: no robots_guard handler for %q in %s (sites: %s)", site, file, siteNames(found))
	case len(picked) > 1:
		return nil, fmt.Errorf("%s has %d robots_guard handlers; choose one with --site (sites: %s)", file, len(picked), siteNames(picked))
	}
	s, err := env.Site(picked[0].raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return s, nil
}

// sitesOfURL returns the entries whose hosts match the URL's host, else,
// for sites of any host, whose port is the URL's.
func sitesOfURL(es []siteEntry, raw string) []siteEntry {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	ported := func(e siteEntry) bool {
		return slices.ContainsFunc(e.listen, func(l string) bool { p, ok := site.Port(l); return ok && strconv.Itoa(p) == port })
	}
	var byHost, byPort []siteEntry
	for _, e := range es {
		switch {
		case slices.ContainsFunc(e.hosts, func(h string) bool { return hostMatches(h, u.Hostname()) }) && ported(e):
			byHost = append(byHost, e)
		case len(e.hosts) == 0 && ported(e):
			byPort = append(byPort, e)
		}
	}
	if len(byHost) > 0 {
		return byHost // a host's own site before a site of any host
	}
	return byPort
}

// pickGuard returns the guard that loadSite picks of the same config: the
// one named site (its site's name, a host, its server, a listen address),
// else the first of the site of host (a URL's host, with its port if
// any), else the first; nil when site names none.
func pickGuard(gs []*guardSite, site, host string) *guardSite {
	var es []siteEntry
	var picked []*guardSite
	for _, g := range gs {
		names := append(append([]string{g.name()}, g.hosts...), g.server)
		if site == "" || slices.Contains(append(names, g.listen...), site) {
			picked = append(picked, g)
			es = append(es, siteEntry{names: names, hosts: g.hosts, listen: g.listen})
		}
	}
	if len(picked) > 1 && site == "" && host != "" {
		for _, scheme := range []string{"https://", "http://"} {
			if byURL := sitesOfURL(es, scheme+host); len(byURL) > 0 {
				return picked[slices.IndexFunc(es, func(e siteEntry) bool { return slices.Equal(e.names, byURL[0].names) })]
			}
		}
	}
	if len(picked) == 0 {
		return nil
	}
	return picked[0]
}

// collectGuards finds the robots_guard handlers in a route tree of the
// server named server, with the hosts of the routes around them.
func collectGuards(raw json.RawMessage, server string, listen []string, found []siteEntry) []siteEntry {
	var node any
	if json.Unmarshal(raw, &node) != nil {
		return found
	}
	var walk func(v any, hosts []string)
	walk = func(v any, hosts []string) {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				walk(x, hosts)
			}
		case map[string]any:
			if v["handler"] == "robots_guard" {
				// The handler's own fields, as Caddy decodes them: without
				// the module name.
				fields := maps.Clone(v)
				delete(fields, "handler")
				b, _ := json.Marshal(fields)
				names := append([]string{site.Name(hosts, listen)}, hosts...)
				names = append(append(names, server), listen...)
				found = append(found, siteEntry{names: names, hosts: hosts, listen: listen, raw: b})
				return
			}
			if ms, ok := v["match"].([]any); ok {
				hosts = slices.Clone(hosts)
				for _, m := range ms {
					if m, ok := m.(map[string]any); ok {
						hosts = append(hosts, strs(m["host"])...)
					}
				}
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if k != "match" {
					walk(v[k], hosts)
				}
			}
		}
	}
	walk(node, nil)
	return found
}

func siteNames(es []siteEntry) string {
	var out []string
	for _, e := range es {
		out = append(out, e.names[0])
	}
	return strings.Join(out, ", ")
}
