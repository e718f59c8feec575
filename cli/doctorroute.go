package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// How a request goes through a server's routes, as Caddy runs them: the
// doctor sends its requests through the real routes and sees which ones
// robots_guard never saw; trace says why, from the config, so that the
// finding names the handler that answered instead and its line.

// traced is where a request went.
type traced struct {
	// reached: it reached the guard.
	reached bool
	// answer is the handler that answered it before the guard (nil: no
	// handler answered, and Caddy sent an empty 200), at answerAt (its
	// JSON path) in the route at routeAt, which matched by routeMatch
	// ("path /api/*"; "" for a route without matchers).
	answer             map[string]any
	answerAt, routeAt  string
	routeMatch         string
	answerBeforeGuard  bool // in the same route as the guard, before it
	missedAt, missedBy string
	// missedAt is the JSON path of a route around the guard whose
	// matchers the request did not pass, missedBy those matchers
	// ("path /blog/*"); missedDirect says that route holds only the guard
	// (robots_guard /blog/* {...}: a matcher on the directive).
	missedDirect bool
	// skipped: the route around the guard was skipped because an earlier
	// route of its group (another handle block) ran.
	skipped bool
	// unknown lists matchers the doctor cannot evaluate that it took as
	// not matching ("header {...}").
	unknown []string
}

// traceRequest follows a request for host and path through routes (at is
// their JSON path) to the guard whose JSON path is guardAt.
func traceRequest(routes []any, at, host, path, guardAt string) traced {
	var t traced
	t.walk(routes, at, host, path, guardAt, "")
	return t
}

// walk follows the request through routes; it reports whether the request
// was answered (or reached the guard) there. outer describes the matchers
// of the nearest route around them that has any but host matchers.
func (t *traced) walk(routes []any, at, host, path, guardAt, outer string) bool {
	done := map[string]bool{} // groups of which a route ran
	for i, r := range routes {
		route, _ := r.(map[string]any)
		if route == nil {
			continue
		}
		rat := fmt.Sprintf("%s[%d]", at, i)
		group, _ := route["group"].(string)
		if group != "" && done[group] {
			if strings.HasPrefix(guardAt, rat+".") {
				t.skipped = true
			}
			continue
		}
		ok, desc, unknown := matchRoute(route, host, path)
		if d := strings.TrimSpace(withoutHost(desc)); d != "" {
			outer = d
		}
		t.unknown = append(t.unknown, unknown...)
		if !ok {
			if strings.HasPrefix(guardAt, rat+".") && t.missedAt == "" {
				t.missedAt, t.missedBy = rat, desc
				hs := anyList(route["handle"])
				if len(hs) == 1 {
					h, _ := hs[0].(map[string]any)
					t.missedDirect = h["handler"] == "robots_guard"
				}
			}
			continue
		}
		if group != "" {
			done[group] = true
		}
		if t.run(route, rat, host, &path, guardAt, outer) {
			if group != "" && !t.reached {
				// Caddy runs one route of a group (one handle block): a
				// later one that holds the guard never runs.
				for k := i + 1; k < len(routes); k++ {
					later, _ := routes[k].(map[string]any)
					if g, _ := later["group"].(string); g == group && strings.HasPrefix(guardAt, fmt.Sprintf("%s[%d].", at, k)) {
						t.skipped = true
					}
				}
			}
			return true
		}
		if route["terminal"] == true {
			t.routeAt, t.routeMatch = rat, outer
			return true
		}
	}
	return false
}

// run runs a matched route's handlers; it reports whether the request was
// answered (or reached the guard) there.
func (t *traced) run(route map[string]any, rat, host string, path *string, guardAt, outer string) bool {
	for j, h := range anyList(route["handle"]) {
		hm, _ := h.(map[string]any)
		name, _ := hm["handler"].(string)
		hat := fmt.Sprintf("%s.handle[%d]", rat, j)
		switch {
		case hat == guardAt:
			t.reached = true
			return true
		case name == "subroute":
			if t.walk(anyList(hm["routes"]), hat+".routes", host, *path, guardAt, outer) {
				return true
			}
		case name == "rewrite":
			*path = rewritePath(hm, *path)
		case slices.Contains(terminalHandlers, name):
			t.answer, t.answerAt, t.routeAt, t.routeMatch = hm, hat, rat, outer
			t.answerBeforeGuard = strings.HasPrefix(guardAt, rat+".handle[")
			return true
		}
	}
	return false
}

// matchRoute reports whether a request for host and path passes a route's
// matchers (any of its sets, all of a set's matchers), with the matchers
// described; matchers other than host and path are taken as not matching
// and listed in unknown.
func matchRoute(route map[string]any, host, path string) (ok bool, desc string, unknown []string) {
	sets := anyList(route["match"])
	if len(sets) == 0 {
		return true, "", nil
	}
	var descs []string
	for _, set := range sets {
		m, _ := set.(map[string]any)
		all := true
		var parts []string
		for _, key := range slices.Sorted(maps.Keys(m)) {
			switch key {
			case "host":
				parts = append(parts, "host "+strings.Join(strs(m[key]), " "))
				all = all && slices.ContainsFunc(strs(m[key]), func(h string) bool { return hostMatches(h, host) })
			case "path":
				parts = append(parts, "path "+strings.Join(strs(m[key]), " "))
				all = all && slices.ContainsFunc(strs(m[key]), func(p string) bool { return matchPath(p, path) })
			default:
				b, _ := json.Marshal(m[key])
				d := key + " " + string(b)
				parts = append(parts, d)
				unknown = append(unknown, d)
				all = false
			}
		}
		descs = append(descs, strings.Join(parts, " and "))
		if all {
			return true, strings.Join(parts, " and "), nil
		}
	}
	return false, strings.Join(descs, " or "), unknown
}

// withoutHost drops the host matchers of a route's description.
func withoutHost(desc string) string {
	var out []string
	for _, part := range strings.Split(desc, " and ") {
		if !strings.HasPrefix(part, "host ") {
			out = append(out, part)
		}
	}
	return strings.Join(out, " and ")
}

// rewritePath applies what the doctor can read of a rewrite handler:
// handle_path's strip_path_prefix, and a literal uri.
func rewritePath(h map[string]any, path string) string {
	if p, _ := h["strip_path_prefix"].(string); p != "" && strings.HasPrefix(strings.ToLower(path), strings.ToLower(p)) {
		path = path[len(p):]
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
	}
	if u, _ := h["uri"].(string); strings.HasPrefix(u, "/") && !strings.Contains(u, "{") {
		path, _, _ = strings.Cut(u, "?")
	}
	return path
}

// caddyfileNames are the Caddyfile directives that make a handler.
var caddyfileNames = map[string][]string{
	"file_server":     {"file_server"},
	"reverse_proxy":   {"reverse_proxy", "php_fastcgi"},
	"static_response": {"respond", "redir", "abort"},
	"error":           {"error"},
	"acme_server":     {"acme_server"},
}

// handlerName says what a handler is, as the Caddyfile writes it.
func handlerName(h map[string]any) string {
	name, _ := h["handler"].(string)
	if name == "static_response" {
		if s, ok := h["status_code"]; ok && strings.HasPrefix(fmt.Sprint(s), "3") {
			return "redir"
		}
		return "respond"
	}
	return name
}

// findHandlerLine returns the directive of site that made the handler h,
// in a route matched by match ("path /api/*"): the first directive of the
// handler's names whose line or a line around it names one of the
// matcher's paths, else the first of its names; nil when there is none.
func findHandlerLine(site *cfLine, h map[string]any, match string) *cfLine {
	name, _ := h["handler"].(string)
	names := caddyfileNames[name]
	if names == nil {
		names = []string{name}
	}
	var paths []string
	for _, part := range strings.Split(match, " and ") {
		if p, ok := strings.CutPrefix(part, "path "); ok {
			paths = append(paths, strings.Fields(p)...)
		}
	}
	var first, best *cfLine
	site.walk(func(x *cfLine) {
		if len(x.words) == 0 || !slices.Contains(names, x.words[0]) {
			return
		}
		if first == nil {
			first = x
		}
		for y := x; y != nil && best == nil; y = y.up {
			if slices.ContainsFunc(y.words[min(1, len(y.words)):], func(w string) bool { return slices.Contains(paths, w) }) {
				best = x
			}
		}
	})
	if best != nil {
		return best
	}
	return first
}

// guardLine returns the robots_guard directive of site that is the n-th
// guard of the site in the config's order, or nil.
func guardLine(site *cfLine, n int) *cfLine {
	gs := site.find("robots_guard")
	if n < 0 || n >= len(gs) {
		return nil
	}
	return gs[n]
}

// fix is a change to paste: lines a to b of the config replaced with text.
type fix struct {
	a, b int
	text []string
}

// describe writes the fix as the doctor prints it: "replace
// Caddyfile:5-11 with:" and the lines as they are to be pasted, each after
// four spaces more than the finding's indentation.
func (f fix) describe(cf *caddyfile) string {
	var b strings.Builder
	if len(f.text) == 0 {
		fmt.Fprintf(&b, "delete %s", cf.span(f.a, f.b))
		return b.String()
	}
	fmt.Fprintf(&b, "replace %s with:", cf.span(f.a, f.b))
	for _, l := range f.text {
		b.WriteString("\n    " + l)
	}
	return b.String()
}

// dropMatcherFix drops the matcher of a robots_guard directive line.
func dropMatcherFix(cf *caddyfile, g *cfLine) fix {
	line := cf.indent(g.line) + "robots_guard"
	if g.block {
		line += " {"
	}
	return fix{a: g.line, b: g.line, text: []string{line}}
}

// guardFirstFix moves the guard's block to the top of the block that holds
// it (a route), before the handler that answers first.
func guardFirstFix(cf *caddyfile, g *cfLine) (fix, bool) {
	up := g.up
	if up == nil || !up.block || up.end <= up.line {
		return fix{}, false
	}
	gl := cf.text(g.line, g.end)
	out := []string{cf.lines[up.line-1]}
	out = append(out, reindent(gl, cf.indent(g.line), cf.indent(up.body[0].line))...)
	for n := up.line + 1; n < up.end; n++ {
		if n < g.line || n > g.end {
			out = append(out, cf.lines[n-1])
		}
	}
	out = append(out, cf.lines[up.end-1])
	return fix{a: up.line, b: up.end, text: out}, true
}

// guardToSiteFix moves the guard's block out of the block that holds it (a
// handle block) to the top of the site, where Caddy runs it before every
// handle and route.
func guardToSiteFix(cf *caddyfile, site, g *cfLine) (fix, bool) {
	if len(site.body) == 0 || g.up == nil || g.up == site {
		return fix{}, false
	}
	first := site.body[0].line
	gl := reindent(cf.text(g.line, g.end), cf.indent(g.line), cf.indent(first))
	out := append([]string(nil), gl...)
	last := site.end - 1
	if !site.block {
		last = len(cf.lines)
	}
	for n := first; n <= last && n <= len(cf.lines); n++ {
		if n < g.line || n > g.end {
			out = append(out, cf.lines[n-1])
		}
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	return fix{a: first, b: last, text: out}, true
}

// replaceLineFix replaces one line, keeping its indentation.
func replaceLineFix(cf *caddyfile, n int, text string) fix {
	return fix{a: n, b: n, text: []string{cf.indent(n) + text}}
}

// missingRobotsRE reads the config error of a robots file that does not
// exist, with its line.
var missingRobotsRE = regexp.MustCompile(`robots: (\S+) does not exist \(a typo in the path\?\).*?, at (\S+):(\d+)`)

// missingRobotsFix returns the fix of a config that does not load because
// its robots file does not exist, where a file of nearly the same path
// does: that path, in place of the line.
func missingRobotsFix(file string, body []byte, adapter string, err error) (string, bool) {
	m := missingRobotsRE.FindStringSubmatch(err.Error())
	if m == nil || !isCaddyfile(file, adapter) {
		return "", false
	}
	near, ok := nearestPath(m[1])
	n, _ := strconv.Atoi(m[3])
	if !ok {
		return "", false
	}
	cf := parseCaddyfile(file, string(body))
	if n < 1 || n > len(cf.lines) || !strings.Contains(cf.lines[n-1], m[1]) {
		return "", false
	}
	f := fix{a: n, b: n, text: []string{strings.Replace(cf.lines[n-1], m[1], near, 1)}}
	return "Fix: " + near + " exists: " + f.describe(cf), true
}

// nearestPath returns the existing file whose path is nearest p: each
// missing part of p replaced by the one entry of its folder within two
// edits of it.
func nearestPath(p string) (string, bool) {
	clean := filepath.Clean(p)
	parts := strings.Split(clean, string(filepath.Separator))
	cur := ""
	if filepath.IsAbs(clean) {
		cur = string(filepath.Separator)
		parts = parts[1:]
	}
	changed := false
	for _, part := range parts {
		next := filepath.Join(cur, part)
		if cur == "" {
			next = part
		}
		if _, err := os.Stat(next); err == nil {
			cur = next
			continue
		}
		dir := cur
		if dir == "" {
			dir = "."
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", false
		}
		best, bestD, ties := "", 3, 0
		for _, e := range entries {
			switch d := editDistance(part, e.Name()); {
			case d < bestD:
				best, bestD, ties = e.Name(), d, 1
			case d == bestD:
				ties++
			}
		}
		if best == "" || ties > 1 {
			return "", false
		}
		cur, changed = filepath.Join(cur, best), true
	}
	if st, err := os.Stat(cur); err != nil || st.IsDir() || !changed {
		return "", false
	}
	return cur, true
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
