package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
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
	c.Flags().String("site", "", "with several robots_guard handlers in --config: a host, server name or listen address")
}

// siteOf returns the robots_guard settings of the site that the flags
// select, or the defaults without --config.
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
	return loadSite(env, file, body, adapter, site)
}

// siteEntry is one robots_guard handler found in a config.
type siteEntry struct {
	names []string // hosts of the enclosing routes, server name, listen addresses
	raw   json.RawMessage
}

// loadSite adapts a config and returns the robots_guard handler of the
// selected site.
func loadSite(env *Caddy, file string, body []byte, adapter, site string) (Site, error) {
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
		base := append([]string{name}, srv.Listen...)
		for _, r := range srv.Routes {
			found = collectGuards(r, base, found)
		}
	}
	var picked []siteEntry
	for _, e := range found {
		if site == "" || slices.Contains(e.names, site) {
			picked = append(picked, e)
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

// collectGuards finds the robots_guard handlers in a route tree, with the
// hosts of the routes around them.
func collectGuards(raw json.RawMessage, names []string, found []siteEntry) []siteEntry {
	var node any
	if json.Unmarshal(raw, &node) != nil {
		return found
	}
	var walk func(v any, names []string)
	walk = func(v any, names []string) {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				walk(x, names)
			}
		case map[string]any:
			if v["handler"] == "robots_guard" {
				// The handler's own fields, as Caddy decodes them: without
				// the module name.
				fields := maps.Clone(v)
				delete(fields, "handler")
				b, _ := json.Marshal(fields)
				found = append(found, siteEntry{names: names, raw: b})
				return
			}
			if ms, ok := v["match"].([]any); ok {
				names = slices.Clone(names)
				for _, m := range ms {
					if m, ok := m.(map[string]any); ok {
						if hosts, ok := m["host"].([]any); ok {
							for _, h := range hosts {
								if s, ok := h.(string); ok {
									names = append([]string{s}, names...)
								}
							}
						}
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
					walk(v[k], names)
				}
			}
		}
	}
	walk(node, names)
	return found
}

func siteNames(es []siteEntry) string {
	var out []string
	for _, e := range es {
		out = append(out, e.names[0])
	}
	return strings.Join(out, ", ")
}
