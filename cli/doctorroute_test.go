package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

const routeCaddyfile = `{
	admin off
}
# a comment { with a brace
example.com:8443, www.example.com:8443 {
	handle /api/* {
		reverse_proxy 127.0.0.1:3000
	}
	handle {
		robots_guard {
			robots "/srv/www/robots.txt"
		}
		file_server
	}
}
:8080 {
	route {
		file_server
		robots_guard
	}
}
`

// TestParseCaddyfile: sites, directives, their lines and blocks, as
// Caddy's parser reads them.
func TestParseCaddyfile(t *testing.T) {
	cf := parseCaddyfile("Caddyfile", routeCaddyfile)
	sites := cf.sites()
	if len(sites) != 2 || sites[0].line != 5 || sites[0].end != 15 || sites[1].line != 16 || sites[1].end != 21 {
		t.Fatalf("sites: %+v", sites)
	}
	hosts, ports := sites[0].addresses()
	if strings.Join(hosts, " ") != "example.com www.example.com" || strings.Join(ports, " ") != "8443 8443" {
		t.Errorf("addresses: %q %q", hosts, ports)
	}
	if s := cf.siteFor([]string{"www.example.com"}, []string{":8443"}); s != sites[0] {
		t.Errorf("siteFor www.example.com: %+v", s)
	}
	if s := cf.siteFor(nil, []string{":8080"}); s != sites[1] {
		t.Errorf("siteFor :8080: %+v", s)
	}
	g := guardLine(sites[0], 0)
	if g == nil || g.line != 10 || g.end != 12 || g.up.words[0] != "handle" || g.body[0].words[1] != "/srv/www/robots.txt" {
		t.Fatalf("guard: %+v", g)
	}
	f, ok := guardToSiteFix(cf, sites[0], g)
	want := "replace Caddyfile:6-14 with:\n    \trobots_guard {\n    \t\trobots \"/srv/www/robots.txt\"\n    \t}\n    \thandle /api/* {"
	if got := f.describe(cf); !ok || !strings.HasPrefix(got, want) || strings.Count(got, "robots_guard") != 1 {
		t.Errorf("guardToSiteFix:\n%s", got)
	}
	g2 := guardLine(sites[1], 0)
	f, ok = guardFirstFix(cf, g2)
	if got := f.describe(cf); !ok || got != "replace Caddyfile:17-20 with:\n    \troute {\n    \t\trobots_guard\n    \t\tfile_server\n    \t}" {
		t.Errorf("guardFirstFix:\n%s", got)
	}
}

// TestTraceRequest: a request goes through the routes as Caddy runs them;
// the trace names the handler that answered before the guard and why the
// guard was not reached.
func TestTraceRequest(t *testing.T) {
	handle := mustTree(t, `{"apps":{"http":{"servers":{"srv0":{"listen":[":8443"],"routes":[{"match":[{"host":["example.com"]}],"handle":[{"handler":"subroute","routes":[
		{"group":"g","match":[{"path":["/api/*"]}],"handle":[{"handler":"subroute","routes":[{"handle":[{"handler":"reverse_proxy"}]}]}]},
		{"group":"g","handle":[{"handler":"subroute","routes":[{"handle":[{"handler":"robots_guard"},{"handler":"file_server"}]}]}]}]}],"terminal":true}]}}}}}`)
	srv := servers(handle)[0]
	g := findGuards([]*server{srv})[0]
	at := "apps.http.servers.srv0.routes"
	if tr := traceRequest(srv.routes, at, "example.com", "/x", g.at); !tr.reached {
		t.Errorf("/x: %+v", tr)
	}
	tr := traceRequest(srv.routes, at, "example.com", "/api/v1", g.at)
	if tr.reached || handlerName(tr.answer) != "reverse_proxy" || !tr.skipped || tr.routeMatch != "path /api/*" || tr.answerBeforeGuard {
		t.Errorf("/api/v1: %+v", tr)
	}
	srv = servers(mustTree(t, routeConfig))[0]
	g = findGuards([]*server{srv})[0]
	if tr := traceRequest(srv.routes, at, "localhost", "/private/", g.at); tr.reached || !tr.answerBeforeGuard || handlerName(tr.answer) != "file_server" {
		t.Errorf("route { file_server; robots_guard }: %+v", tr)
	}
	srv = servers(mustTree(t, matcherConfig))[0]
	g = findGuards([]*server{srv})[0]
	if tr := traceRequest(srv.routes, at, "localhost", "/private/", g.at); tr.reached || !tr.missedDirect || tr.missedBy != "path /blog/*" {
		t.Errorf("robots_guard /blog/*: %+v", tr)
	}
	if tr := traceRequest(srv.routes, at, "localhost", "/blog/x", g.at); !tr.reached {
		t.Errorf("robots_guard /blog/* for /blog/x: %+v", tr)
	}
}

// TestEditDistance and nearestPath's choice of a file one typo away.
func TestNearestPath(t *testing.T) {
	if editDistance("wwww", "www") != 1 || editDistance("robot.txt", "robots.txt") != 1 || editDistance("abc", "xyz") != 3 {
		t.Error("editDistance")
	}
	dir := t.TempDir()
	if err := writeFile(dir+"/www/robots.txt", "User-agent: *\n"); err != nil {
		t.Fatal(err)
	}
	if p, ok := nearestPath(dir + "/wwww/robots.txt"); !ok || p != dir+"/www/robots.txt" {
		t.Errorf("nearestPath: %q %v", p, ok)
	}
	if _, ok := nearestPath(dir + "/elsewhere/robots.txt"); ok {
		t.Error("nearestPath found a file far away")
	}
}

func writeFile(name, content string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, []byte(content), 0o644)
}

// classifySite is a Site that classifies with the default database.
type classifySite struct{ rawSite }

func (classifySite) Classify(ua string) uaclass.Result { return uaclass.Classify(ua) }

// TestProbes: per group, a bot of the group (GPTBot for "*" where it has
// no group of its own) asks for the paths the group disallows (its rules'
// and the home page's links) and a few it allows; never a trap.
func TestProbes(t *testing.T) {
	body := "User-agent: *\nDisallow: /private/\nDisallow: /*.pdf$\nAllow: /private/press/\n\n" +
		"User-agent: Google-Extended\nDisallow: /\n\nUser-agent: roguebot\nDisallow: /\n\nUser-agent: *\nDisallow: /private-archive/\n"
	r := policy.Parse([]byte(body))
	g := &guardSite{config: guardConfig{Traps: []string{"/private-archive/"}}}
	ps := probes(classifySite{}, r, policy.Compile(r), g, []string{"/about.html", "/private/report.html", "/private-archive/x"})
	var got []string
	for _, pr := range ps {
		got = append(got, fmt.Sprintf("%s %s %v", pr.name, pr.path, pr.allowed))
		if strings.HasPrefix(pr.path, "/private-archive/") {
			t.Errorf("a trap is asked for: %+v", pr)
		}
	}
	want := "GPTBot /private/ false, GPTBot /x.pdf false, GPTBot /private/press/ true, GPTBot /about.html true, GPTBot /private/report.html false, " +
		"Google-Extended / false, Google-Extended /about.html false, Google-Extended /private/report.html false, " +
		"roguebot / false, roguebot /about.html false, roguebot /private/report.html false"
	if strings.Join(got, ", ") != want {
		t.Errorf("probes:\n%s\nwant\n%s", strings.Join(got, ", "), want)
	}
}
