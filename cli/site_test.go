package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// rawSite is a Site that only remembers the JSON it was made from.
type rawSite struct{ raw string }

func (s rawSite) Robots(context.Context) ([]byte, error) { return nil, nil }
func (s rawSite) Bots() []uaclass.Bot                    { return nil }
func (s rawSite) OwnRobots() bool                        { return false }
func (s rawSite) Ranges(context.Context) (map[string][]*uaclass.RangeList, []string, error) {
	return nil, nil, nil
}
func (s rawSite) BlockClasses() []string                { return nil }
func (s rawSite) Prepare(func() time.Time) error        { return nil }
func (s rawSite) Classify(string) uaclass.Result        { return uaclass.Result{} }
func (s rawSite) Additions(*policy.Robots) policy.Added { return policy.Added{} }
func (s rawSite) Reader() *enforce.Reader               { return nil }

// testCaddy knows no config adapter and makes rawSites.
var testCaddy = &Caddy{
	Adapt: func(string, string, []byte) ([]byte, []string, error) { return nil, nil, ErrUnknownAdapter },
	Site:  func(raw json.RawMessage) (Site, error) { return rawSite{string(raw)}, nil },
}

// TestLoadSite: --site picks a robots_guard handler of a JSON config by
// host, server name or listen address; none or several is an error that
// names the sites.
func TestLoadSite(t *testing.T) {
	const cfg = `{"apps": {"http": {"servers": {
		"srv0": {"listen": [":443"], "routes": [
			{"match": [{"host": ["shop.example.com"]}], "handle": [{"handler": "subroute", "routes": [{"handle": [{"handler": "robots_guard", "zone": "shop"}]}]}]},
			{"match": [{"host": ["blog.example.com"]}], "handle": [{"handler": "robots_guard", "zone": "blog"}]}
		]},
		"admin": {"listen": [":8080"], "routes": [{"handle": [{"handler": "static_response"}]}]}
	}}}}`
	file := filepath.Join(t.TempDir(), "caddy.json")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ site, zone, err string }{
		{"shop.example.com", "shop", ""},
		{"blog.example.com", "blog", ""},
		{"srv0", "", "has 2 robots_guard handlers; choose one with --site (sites: shop.example.com, blog.example.com)"},
		{":443", "", "has 2 robots_guard handlers"},
		{"", "", "has 2 robots_guard handlers"},
		{"admin", "", `--site: no robots_guard handler for "admin" in ` + file + " (sites: shop.example.com, blog.example.com)"},
	} {
		s, err := loadSite(testCaddy, file, []byte(cfg), "", c.site, "")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("--site %q: error %v, want %q", c.site, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("--site %q: %v", c.site, err)
			continue
		}
		if raw := s.(rawSite).raw; !strings.Contains(raw, `"zone":"`+c.zone+`"`) {
			t.Errorf("--site %q: got %s", c.site, raw)
		}
	}
	if _, err := loadSite(testCaddy, file, []byte(cfg), "nope", "", ""); err == nil || err.Error() != `--adapter: unknown config adapter "nope"` {
		t.Errorf("unknown adapter: %v", err)
	}
	if _, err := loadSite(testCaddy, file, []byte(`{"apps": {}}`), "", "", ""); err == nil || err.Error() != file+": no robots_guard handler" {
		t.Errorf("no handler: %v", err)
	}
	broken := &Caddy{Site: func(json.RawMessage) (Site, error) { return nil, errors.New("robots_guard: bad field") }}
	if _, err := loadSite(broken, file, []byte(cfg), "", "blog.example.com", ""); err == nil || err.Error() != file+": robots_guard: bad field" {
		t.Errorf("bad handler JSON: %v", err)
	}
}

// TestLoadSiteByURL (issue 39, point 7): without --site, the URL's host
// picks the site among several (a wildcard host too; a site of any host
// by the URL's port); sites of any host are named by their port, not
// their server; --site takes those names.
func TestLoadSiteByURL(t *testing.T) {
	const cfg = `{"apps": {"http": {"servers": {
		"srv0": {"listen": [":443"], "routes": [
			{"match": [{"host": ["shop.example.com"]}], "handle": [{"handler": "subroute", "routes": [{"handle": [{"handler": "robots_guard", "zone": "shop"}]}]}]},
			{"match": [{"host": ["*.blog.example.com"]}], "handle": [{"handler": "robots_guard", "zone": "blog"}]}
		]},
		"srv1": {"listen": ["127.0.0.1:8080"], "routes": [{"handle": [{"handler": "robots_guard", "zone": "any8080"}]}]},
		"srv2": {"listen": [":8081"], "routes": [{"handle": [{"handler": "robots_guard", "zone": "any8081"}]}]}
	}}}}`
	file := filepath.Join(t.TempDir(), "caddy.json")
	for _, c := range []struct{ site, url, zone, err string }{
		{"", "https://shop.example.com/private/", "shop", ""},
		{"", "https://news.blog.example.com/x", "blog", ""},
		{"", "http://localhost:8080/private/", "any8080", ""},
		{"", "http://127.0.0.1:8081/", "any8081", ""},
		{":8081", "https://shop.example.com/", "any8081", ""},
		{"", "https://elsewhere.example/", "", "has 4 robots_guard handlers; choose one with --site (sites: shop.example.com, *.blog.example.com, :8080, :8081)"},
	} {
		s, err := loadSite(testCaddy, file, []byte(cfg), "", c.site, c.url)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q %q: error %v, want %q", c.site, c.url, err, c.err)
			}
			continue
		}
		if err != nil || !strings.Contains(s.(rawSite).raw, `"zone":"`+c.zone+`"`) {
			t.Errorf("%q %q: %v %v, want zone %s", c.site, c.url, s, err, c.zone)
		}
	}
}
