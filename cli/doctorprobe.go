package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/uaclass"
)

// The doctor's requests: for each group of the robots.txt the guard
// serves, as a bot of the group, the paths the group disallows (its rules'
// paths and the home page's links it disallows) and a few it allows; they
// go through the site's real routes, so that any matcher, route order or
// handle block that leaves a disallowed path unguarded shows.

// doctorBotUA is the User-Agent of the doctor's bot of the "*" group: an
// undeclared robot with a name of its own that no file names.
const doctorBotUA = "Mozilla/5.0 (compatible; robotsguard-doctor/1.0; +https://github.com/robotsguard/robotsguard)"

// Bounds of the doctor's requests.
const (
	probeDisallowed = 6  // disallowed paths per group
	probeAllowed    = 2  // allowed paths per group
	probeGroups     = 12 // groups
	probeLinks      = 20 // links of the home page
)

// probe is one request of the doctor's, as a bot of one group.
type probe struct {
	agent   string // the group's agent as the file writes it ("GPTBot", "*")
	name    string // how the doctor names the bot ("GPTBot", "robotsguard-doctor")
	ua      string
	path    string
	allowed bool   // the served robots.txt allows it to the bot
	rule    string // the rule that decides ("line 16: Disallow: /private/")
	a       answer
}

// probes returns the doctor's requests for a site whose served robots.txt
// is r (compiled: p), with site's classifier; links are the home page's.
func probes(site Site, r *policy.Robots, p *policy.Policy, g *guardSite, links []string) []*probe {
	var out []*probe
	seen := map[string]bool{}
	groups := 0
	// A request for a trap would block the doctor's address.
	traps := policy.Compile(policy.Parse([]byte("User-agent: *\nDisallow: " + strings.Join(g.config.Traps, "\nDisallow: ") + "\n")))
	if len(g.config.Traps) == 0 {
		traps = policy.Compile(policy.Parse(nil))
	}
	// The "*" group first: every undeclared bot gets it.
	ordered := slices.Clone(r.Groups)
	slices.SortStableFunc(ordered, func(a, b *policy.Group) int {
		return cmpBool(namesToken("*")(b), namesToken("*")(a))
	})
	for _, grp := range ordered {
		if len(grp.Agents) == 0 || groups == probeGroups {
			continue
		}
		agent := grp.Agents[0]
		token := agent.Token()
		if seen[token] || token == "" || slices.Contains(g.config.AllowTokens, token) {
			continue
		}
		seen[token] = true
		name, ua := agent.Name, agent.Name+"/1.0"
		switch {
		case token == "*" && !slices.ContainsFunc(r.Groups, namesToken("gptbot")):
			// GPTBot, where the file gives it no group of its own: the
			// name an operator knows.
			name, ua = "GPTBot", gptbotUA
		case token == "*":
			name, ua = "robotsguard-doctor", doctorBotUA
		case token == "gptbot":
			ua = gptbotUA
		}
		c := site.Classify(ua)
		if token != "*" && !slices.Contains(c.Tokens, token) || c.Class == uaclass.Browser {
			continue // a name the classifier does not read as the group's token
		}
		groups++
		var paths []string
		for _, rule := range grp.Rules {
			paths = append(paths, concretePath(rule.Pattern))
		}
		paths = append(paths, links...)
		paths = append(paths, "/")
		disallowed, allowed := 0, 0
		done := map[string]bool{}
		for _, path := range paths {
			if !strings.HasPrefix(path, "/") || done[path] || policy.IsRobotsTxt(path) || !traps.Match(nil, path).Allowed {
				continue
			}
			done[path] = true
			res := p.Match(c.Tokens, path)
			if res.Allowed && allowed == probeAllowed || !res.Allowed && disallowed == probeDisallowed {
				continue
			}
			pr := &probe{agent: agent.Name, name: name, ua: ua, path: path, allowed: res.Allowed}
			if res.Rule != nil {
				pr.rule = fmt.Sprintf("line %d: %s", res.Rule.Line, res.Rule)
			}
			if res.Allowed {
				allowed++
			} else {
				disallowed++
			}
			out = append(out, pr)
		}
	}
	return out
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// namesToken returns whether a group names the token.
func namesToken(token string) func(*policy.Group) bool {
	return func(g *policy.Group) bool {
		return slices.ContainsFunc(g.Agents, func(a policy.Agent) bool { return a.Token() == token })
	}
}

var hrefRE = regexp.MustCompile(`(?i)\shref\s*=\s*["']([^"'#]*)`)

// pageLinks returns the paths of the site that an HTML page links to.
func pageLinks(host string, body []byte) []string {
	var out []string
	for _, m := range hrefRE.FindAllSubmatch(body, -1) {
		u, err := url.Parse(string(m[1]))
		if err != nil || u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" || u.Host != "" && !strings.EqualFold(u.Hostname(), hostOnly(host)) {
			continue
		}
		ref := (&url.URL{Scheme: "http", Host: host, Path: "/"}).ResolveReference(u)
		p := ref.EscapedPath()
		if ref.RawQuery != "" {
			p += "?" + ref.RawQuery
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
		if len(out) == probeLinks {
			break
		}
	}
	return out
}

func hostOnly(host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		return host[:i]
	}
	return host
}

// prepareSite returns the guard's settings as a Site, prepared, to
// classify the doctor's User-Agents as the guard does.
func (d *doctor) prepareSite(g *guardSite) (Site, error) {
	raw := maps.Clone(g.handler)
	delete(raw, "handler")
	b, _ := json.Marshal(raw)
	site, err := d.env.Site(b)
	if err != nil {
		return nil, err
	}
	if err := site.Prepare(time.Now); err != nil {
		return nil, err
	}
	return site, nil
}

// runProbes sends the probes.
func (d *doctor) runProbes(ctx context.Context, g *guardSite, ps []*probe) {
	for _, pr := range ps {
		pr.a = d.get(ctx, g, pr.path, pr.ua)
		d.reportMessages(pr.a.messages)
	}
}

// checkProbes reports what the probes show: per group, that its bot is
// refused what robots.txt disallows it; the requests that no guard saw,
// by cause, with the lines and the fix; the ones a guard let through; and
// any refusal of what the served robots.txt allows.
func (d *doctor) checkProbes(g *guardSite, ps []*probe) {
	type refused struct {
		first *probe
		more  []string
	}
	byAgent := map[string]*refused{}
	var order []string
	unreached := map[string][]*probe{}
	var causes []string
	traces := map[string]traced{}
	var letThrough, wrongly []*probe
	for _, pr := range ps {
		e := pr.a.entry
		switch {
		case pr.a.err != nil:
			d.problem("GET %s as %s failed: %v", pr.path, pr.name, pr.a.err)
		case pr.allowed:
			if e != nil && e.Action != "allow" && !e.DryRun && (e.Reason == "disallowed") {
				wrongly = append(wrongly, pr)
			}
		case e == nil:
			t := traceRequest(d.routesOf(g), "apps.http.servers."+g.server+".routes", g.host(), pr.path, g.at)
			key := t.answerAt + "|" + t.missedAt + "|" + t.routeAt
			if _, ok := unreached[key]; !ok {
				causes = append(causes, key)
				traces[key] = t
			}
			unreached[key] = append(unreached[key], pr)
		case e.DryRun:
			d.ok("%s would be refused %s (%s), but mode is dry_run: nothing is refused until mode enforce", pr.name, pr.path, e.Reason)
		case e.Action == "allow":
			letThrough = append(letThrough, pr)
		default:
			r := byAgent[pr.agent]
			if r == nil {
				r = &refused{first: pr}
				byAgent[pr.agent] = r
				order = append(order, pr.agent)
			} else {
				r.more = append(r.more, pr.path)
			}
		}
	}
	for _, agent := range order {
		r := byAgent[agent]
		e := r.first.a.entry
		rule := ""
		if e.Rule != "" {
			rule = fmt.Sprintf("; robots.txt line %d: %s", e.RuleLine, e.Rule)
		}
		more := ""
		if len(r.more) > 0 {
			more = fmt.Sprintf(", and %s: %s", report.Plural(len(r.more), "more disallowed path"), strings.Join(r.more, ", "))
		}
		d.ok("%s is refused %s (%s, %s%s)%s", r.first.name, r.first.path, status(r.first.a), e.Reason, rule, more)
	}
	for _, key := range causes {
		d.unreached(g, traces[key], unreached[key])
	}
	if len(letThrough) > 0 {
		pr := letThrough[0]
		d.problem("%s was let through GET %s, which robots.txt disallows for it (%s): robots_guard decided %s.%s%s",
			pr.name, pr.path, pr.rule, orNone(pr.a.entry.Reason), allowCause(g, pr.a.entry), moreRequests(letThrough[1:]))
	}
	if len(wrongly) > 0 {
		pr := wrongly[0]
		d.problem("%s was refused GET %s (%s), which the robots.txt robots_guard serves allows it (%s): robots_guard must never refuse what it serves as allowed.%s",
			pr.name, pr.path, status(pr.a), orNone(pr.rule), moreRequests(wrongly[1:]))
	}
}

// moreRequests lists more requests of a finding.
func moreRequests(ps []*probe) string {
	if len(ps) == 0 {
		return ""
	}
	var s []string
	for _, pr := range ps {
		s = append(s, "GET "+pr.path+" as "+pr.name)
	}
	return "\nThe same for " + joinSome(s, 4) + "."
}

// joinSome joins up to n items, and says how many more there are.
func joinSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// routesOf returns the routes of the guard's server, as configured.
func (d *doctor) routesOf(g *guardSite) []any {
	if s := d.origServer(g.server); s != nil {
		return s.routes
	}
	return nil
}

// unreached reports requests that robots.txt disallows and that no guard
// saw, for one cause: which handler answered them, where, and the fix.
func (d *doctor) unreached(g *guardSite, t traced, ps []*probe) {
	first := ps[0]
	by := ""
	if t.answer != nil {
		by = " from " + handlerName(t.answer)
	}
	msg := fmt.Sprintf("robots_guard is never reached: %s got GET %s, which robots.txt disallows for it, with %s%s,\nand no robots_guard saw the request",
		first.name, first.path, status(first.a), by)
	if len(ps) > 1 {
		// The others, by bot.
		var names []string
		paths := map[string][]string{}
		for _, pr := range ps[1:] {
			if paths[pr.name] == nil {
				names = append(names, pr.name)
			}
			paths[pr.name] = append(paths[pr.name], pr.path)
		}
		var parts []string
		for _, n := range names {
			parts = append(parts, joinSome(paths[n], 3)+" as "+n)
		}
		msg += fmt.Sprintf(", nor %s that robots.txt disallows (%s)", report.Plural(len(ps)-1, "more request"), strings.Join(parts, "; "))
	}
	msg += "."
	cause, fixText := d.unreachedCause(g, t, first.path)
	d.problem("%s%s%s", msg, cause, fixText)
}

// unreachedCause explains, from the trace of a request that no guard saw,
// why, naming the config's lines, and returns the fix.
func (d *doctor) unreachedCause(g *guardSite, t traced, path string) (cause, fixText string) {
	site, guard := d.caddyfileSite(g)
	line := func(x *cfLine) string {
		if x == nil || d.cf == nil {
			return ""
		}
		return " (" + d.cf.at(x.line) + ")"
	}
	var answerLine *cfLine
	if site != nil && t.answer != nil {
		answerLine = findHandlerLine(site, t.answer, t.routeMatch)
	}
	answer := "another handler"
	if t.answer != nil {
		answer = handlerName(t.answer)
	}
	switch {
	case t.missedDirect:
		cause = fmt.Sprintf("\nIt runs only for requests that match %s%s, and GET %s does not: every path outside it is unguarded.", t.missedBy, line(guard), path)
		if guard != nil {
			fixText = "\nFix: drop the matcher, so that the guard sees the whole site: " + dropMatcherFix(d.cf, guard).describe(d.cf)
		} else {
			fixText = fmt.Sprintf("\nFix: drop the matcher of the route that holds robots_guard (%s), or widen it.", t.missedAt)
		}
	case t.answerBeforeGuard:
		cause = fmt.Sprintf("\nIt comes after %s%s in the same route: %s answers every request, and the handlers after it never run.", answer, line(answerLine), answer)
		if f, ok := guardFirstFixFor(d.cf, guard); ok {
			fixText = "\nFix: put robots_guard first in the route: " + f.describe(d.cf)
		} else {
			fixText = fmt.Sprintf("\nFix: put robots_guard first in the route, before %s; outside a route block, Caddy orders robots_guard before %s by itself.", answer, answer)
		}
	default:
		where := "another route of the site"
		switch {
		case answerLine != nil && answerLine.up != nil && answerLine.up != site && len(answerLine.up.words) > 0:
			where = strings.Join(answerLine.up.words, " ") + line(answerLine.up)
		case t.routeMatch != "":
			where = "the route for " + t.routeMatch
		}
		if t.answer == nil {
			cause = fmt.Sprintf("\n%s answers it with nothing (an empty 200)", where)
		} else {
			cause = fmt.Sprintf("\n%s%s answers it, in %s", answer, line(answerLine), where)
		}
		switch {
		case t.skipped:
			cause += fmt.Sprintf("; robots_guard%s is in another handle block, and Caddy runs only the first handle block that matches.", line(guard))
		case t.missedAt != "":
			cause += fmt.Sprintf("; robots_guard%s is in a block for %s, which the request never enters.", line(guard), withoutHost(t.missedBy))
		default:
			cause += fmt.Sprintf(", which runs before robots_guard%s.", line(guard))
		}
		if f, ok := guardToSiteFixFor(d.cf, site, guard); ok {
			fixText = "\nFix: put robots_guard in the site block, where Caddy runs it before every handle and route block: " + f.describe(d.cf)
		} else {
			fixText = "\nFix: put robots_guard in the site block (outside handle and route blocks), where Caddy runs it before them."
		}
	}
	if len(t.unknown) > 0 {
		cause += "\n(The doctor took these matchers as not matching: " + strings.Join(t.unknown, "; ") + ".)"
	}
	return cause, fixText
}

func guardFirstFixFor(cf *caddyfile, guard *cfLine) (fix, bool) {
	if cf == nil || guard == nil {
		return fix{}, false
	}
	return guardFirstFix(cf, guard)
}

func guardToSiteFixFor(cf *caddyfile, site, guard *cfLine) (fix, bool) {
	if cf == nil || site == nil || guard == nil {
		return fix{}, false
	}
	return guardToSiteFix(cf, site, guard)
}

// caddyfileSite returns the guard's site block and directive in the
// Caddyfile, or nils (a JSON config, or a guard from a snippet).
func (d *doctor) caddyfileSite(g *guardSite) (site, guard *cfLine) {
	if d.cf == nil {
		return nil, nil
	}
	site = d.cf.siteFor(g.hosts, g.listen)
	if site == nil {
		return nil, nil
	}
	return site, guardLine(site, g.nth)
}

// sourceProblems reports the warnings and errors of the config's start
// about the guard's robots URL: that it cannot be fetched, or has no
// robots.txt, with its line and a fix (the application the site proxies
// to, where it serves a robots.txt, else the site's own robots.txt). It
// reports whether there were any: the rules are not what the config
// means, and nothing more can be checked of them.
func (d *doctor) sourceProblems(ctx context.Context, g *guardSite) bool {
	u, _ := g.handler["robots"].(string)
	var msgs []*logLine
	for _, e := range d.start {
		if u != "" && e.URL == u {
			msgs = append(msgs, e)
		}
	}
	if len(msgs) == 0 {
		return false
	}
	_, guard := d.caddyfileSite(g)
	var line *cfLine
	if guard != nil {
		for _, x := range guard.body {
			if len(x.words) > 1 && x.words[0] == "robots" {
				line = x
			}
		}
	}
	where := ""
	if line != nil {
		where = " (" + d.cf.at(line.line) + ")"
	}
	e := msgs[0]
	what := e.Msg
	if e.Error != "" {
		what += " (" + e.Error + ")"
	}
	fixText := "\nFix: correct the URL to where the application serves its robots.txt (curl -si URL shows what it answers)."
	if line != nil {
		fixText += "\nOr drop the robots line, and robots_guard reads the robots.txt the site itself serves: " + fix{a: line.line, b: line.line}.describe(d.cf)
	}
	if up, ok := d.robotsUpstream(ctx, g); ok {
		fixText = fmt.Sprintf("\nFix: the site's reverse_proxy upstream %s serves a robots.txt: read it from there", up)
		if line != nil {
			fixText += ": " + replaceLineFix(d.cf, line.line, "robots http://"+up+"/robots.txt").describe(d.cf)
		} else {
			fixText += ": robots http://" + up + "/robots.txt"
		}
	}
	d.problem("the robots URL %s%s was set, but robots_guard cannot read it: %s.\nUntil it can, robots_guard enforces no rules of the site's.%s", g.config.Robots, where, what, fixText)
	return true
}

// robotsUpstream returns a loopback upstream of the guard's server, as
// configured, that serves a robots.txt with rules (to the doctor's copy
// of it), if any.
func (d *doctor) robotsUpstream(ctx context.Context, g *guardSite) (string, bool) {
	run, orig := d.server(g.server), d.origServer(g.server)
	if run == nil || orig == nil {
		return "", false
	}
	moved, dials := upstreams(run.routes), upstreams(orig.routes)
	for i, up := range moved {
		if i >= len(dials) {
			break
		}
		if _, ok := loopbackPort(up.dial); !ok {
			continue
		}
		host := g.config.RobotsHost
		if host == "" {
			host = g.host()
		}
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+up.dial+"/robots.txt", nil)
		if err != nil {
			cancel()
			continue
		}
		req.Host = host
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			r := policy.Parse(body)
			if resp.StatusCode == http.StatusOK && slices.ContainsFunc(r.Groups, func(grp *policy.Group) bool { return len(grp.Rules) > 0 }) {
				cancel()
				return dials[i].dial, true
			}
		}
		cancel()
	}
	return "", false
}
