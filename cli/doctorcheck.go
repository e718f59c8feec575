package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/report"
)

// answer is one response the doctor got.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
	// entry is the robots_guard decision logged for the request, nil when
	// the request never reached a robots_guard.
	entry *logLine
	// messages are the module's other log messages since the last request.
	messages []*logLine
}

// get sends GET path with ua to the site, as its Host, and returns the
// answer with the decision logged for it.
func (d *doctor) get(ctx context.Context, g *guardSite, path, ua string) answer {
	addr := d.server(g.server).listen[0]
	client := &http.Client{
		Timeout: 20 * time.Second,
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	var a answer
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+g.host()+path, nil)
	if err != nil {
		a.err = err
		return a
	}
	req.Header.Set("User-Agent", ua)
	resp, err := client.Do(req)
	if err != nil {
		a.err = err
	} else {
		a.status, a.header = resp.StatusCode, resp.Header
		a.body, a.err = io.ReadAll(io.LimitReader(resp.Body, 8<<20))
		resp.Body.Close()
	}
	for _, e := range d.readLog() {
		switch {
		case e.IsDecision() && e.UserAgent == ua && e.URI == req.URL.RequestURI() && a.entry == nil:
			a.entry = e
		case e.IsModuleMessage():
			a.messages = append(a.messages, e)
		}
	}
	return a
}

// readLog returns the log entries written since it was last called.
func (d *doctor) readLog() []*logLine {
	f, err := os.Open(d.logFile)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(d.logAt, io.SeekStart); err != nil {
		return nil
	}
	var out []*logLine
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // a line not yet ended is read next time
		}
		d.logAt += int64(len(line))
		var e logLine
		if json.Unmarshal(line, &e) == nil {
			out = append(out, &e)
		}
	}
	return out
}

func (d *doctor) server(name string) *server {
	for _, s := range d.srvs {
		if s.name == name {
			return s
		}
	}
	return nil
}

// problem reports a problem: what is wrong, why, and the fix.
func (d *doctor) problem(format string, args ...any) {
	d.problems++
	fmt.Fprintf(d.out, "  PROBLEM: %s\n", indent(fmt.Sprintf(format, args...)))
}

func (d *doctor) ok(format string, args ...any) {
	fmt.Fprintf(d.out, "  ok: %s\n", fmt.Sprintf(format, args...))
}

func (d *doctor) note(format string, args ...any) {
	fmt.Fprintf(d.out, "  note: %s\n", indent(fmt.Sprintf(format, args...)))
}

// indent indents the lines after the first of a finding.
func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }

// checkSite sends the site its requests and reports what they show.
func (d *doctor) checkSite(ctx context.Context, g *guardSite) {
	fmt.Fprintf(d.out, "site %s (server %s, listening on %s)\n", g.name(), g.server, strings.Join(g.listen, ", "))
	served := d.get(ctx, g, "/robots.txt", doctorUA)
	d.reportMessages(served.messages)
	robots, p := d.robots(ctx, g, served)
	unread := d.sourceProblems(ctx, g)
	// A browser first: the bot's refusal must not be what a browser sees.
	home := d.get(ctx, g, "/", firefoxUA)
	d.checkBrowser(g, home)
	if p == nil {
		return
	}
	if g.store {
		d.note("the doctor decides with in-process state: the store (Redis) is not checked")
	}
	site, err := d.prepareSite(g)
	if err != nil {
		d.problem("robots_guard's settings cannot be read: %v", err)
		return
	}
	var links []string
	if ct := home.header.Get("Content-Type"); home.err == nil && (ct == "" || strings.Contains(ct, "html")) {
		links = pageLinks(g.host(), home.body)
	}
	ps := probes(site, robots, p, g, links)
	if !slices.ContainsFunc(ps, func(pr *probe) bool { return !pr.allowed }) {
		switch {
		case unread:
			// Said above: the robots.txt cannot be read.
		case g.config.Robots != "":
			d.problem("the robots.txt robots_guard enforces disallows nothing for any crawler (traps aside): there is nothing to refuse.\n"+
				"Its robots option names %s: add Disallow rules there, or add block_class ai to shut AI crawlers out.", g.config.Robots)
		default:
			d.problem("the robots.txt robots_guard enforces disallows nothing for any crawler (traps aside): there is nothing to refuse.\n" +
				"Name the site's robots.txt with the robots option (robots /srv/www/robots.txt, or robots http://127.0.0.1:3000/robots.txt\n" +
				"for an application), or add block_class ai to shut AI crawlers out.")
		}
		return
	}
	d.runProbes(ctx, g, ps)
	d.checkProbes(g, ps)
}

// startMessages returns the module's warnings and errors of the config's
// start that still hold: one that a later message about the same file or
// URL at info level made good (the first fetch of a robots URL that failed
// because its application, a server of this config, was not listening
// yet, and succeeded a second later) is left out. It waits, up to 5
// seconds, for each robots URL's fetch to succeed.
func (d *doctor) startMessages(ctx context.Context, guards []*guardSite) []*logLine {
	var urls []string
	for _, g := range guards {
		if r, _ := g.handler["robots"].(string); strings.HasPrefix(r, "http://") || strings.HasPrefix(r, "https://") {
			urls = append(urls, r)
		}
	}
	var msgs []*logLine
	good := func(i int) bool { // a later info message about the same source
		return slices.ContainsFunc(msgs[i+1:], func(e *logLine) bool { return e.Level == "info" && e.source() == msgs[i].source() })
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		for _, e := range d.readLog() {
			if e.IsModuleMessage() {
				msgs = append(msgs, e)
			}
		}
		fetched := 0
		for _, u := range urls {
			if slices.ContainsFunc(msgs, func(e *logLine) bool { return e.URL == u && e.Level == "info" }) {
				fetched++
			}
		}
		if fetched == len(urls) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
	}
	var out []*logLine
	for i, e := range msgs {
		if (e.Level == "warn" || e.Level == "error") && !good(i) && e.Msg != FramingOff && e.Msg != QUICOff { // checkWrappers says them
			out = append(out, e)
		}
	}
	return out
}

// logLine is one line of the copy's log: a decision, or a message of the
// module with the file or URL it is about.
type logLine struct{ report.Entry }

// source is the robots.txt file or URL a message is about.
func (e *logLine) source() string { return e.File + e.URL }

// reportMessages reports the module's warnings and errors as problems.
func (d *doctor) reportMessages(msgs []*logLine) {
	for _, e := range msgs {
		if e.Level != "warn" && e.Level != "error" {
			continue
		}
		detail := ""
		for _, f := range [][2]string{{"file", e.File}, {"url", e.URL}, {"error", e.Error}, {"message", e.Detail}} {
			if f[1] != "" {
				detail += fmt.Sprintf(" (%s: %s)", f[0], f[1])
			}
		}
		d.problem("robots_guard logs at %s: %s%s", e.Level, e.Msg, detail)
	}
}

// robots reports which robots.txt the guard enforces and returns it with
// its policy (nil when it cannot be read).
func (d *doctor) robots(ctx context.Context, g *guardSite, served answer) (*policy.Robots, *policy.Policy) {
	source := "robots.txt: "
	switch r := g.config.Robots; {
	case r == "":
		source += "no robots line: robots_guard serves its own robots.txt (with the site's, where it reads it)"
	case strings.HasPrefix(r, "http://") || strings.HasPrefix(r, "https://"):
		source += "fetched from " + r
	default:
		source += "the file " + r
	}
	var body []byte
	switch {
	case served.err == nil && served.header.Get("X-Robots-Guard-Served") != "":
		body = served.body
		source += ", served by robots_guard"
	default:
		// Not served by the guard: read as the handler reads it.
		raw := maps.Clone(g.handler)
		delete(raw, "handler")
		b, _ := json.Marshal(raw)
		site, err := d.env.Site(b)
		if err != nil {
			d.problem("robots_guard's settings cannot be read: %v", err)
			return nil, nil
		}
		ck, err := NewChecker(site, netip.MustParseAddr("127.0.0.1"))
		if err != nil {
			d.problem("robots_guard's settings cannot be read: %v", err)
			return nil, nil
		}
		data, err := site.Robots(ctx)
		if err != nil {
			d.problem("robots.txt cannot be read: %v", err)
			return nil, nil
		}
		p := ck.Policy(data)
		why := "serve_robots is off"
		if g.config.ServeRobots == nil || *g.config.ServeRobots {
			why = fmt.Sprintf("GET /robots.txt was answered by another handler (%s)", status(served))
		}
		fmt.Fprintf(d.out, "  %s; not served by robots_guard: %s\n", source, why)
		return p.Robots(), p
	}
	r := policy.Parse(body)
	rules := 0
	for _, grp := range r.Groups {
		rules += len(grp.Rules)
	}
	fmt.Fprintf(d.out, "  %s: %s, %s\n", source, report.Plural(len(r.Groups), "group"), report.Plural(rules, "rule"))
	return r, policy.Compile(r)
}

// status describes an answer's status.
func status(a answer) string {
	if a.err != nil {
		return a.err.Error()
	}
	return fmt.Sprintf("%d %s", a.status, http.StatusText(a.status))
}

// concretePath returns a path that a robots.txt pattern matches: its
// wildcards as "x", without the end anchor.
func concretePath(pattern string) string {
	return strings.ReplaceAll(strings.TrimSuffix(pattern, "$"), "*", "x")
}

// checkBrowser checks that a browser is served content.
func (d *doctor) checkBrowser(g *guardSite, a answer) {
	switch {
	case a.err != nil:
		d.problem("GET / with a browser's User-Agent failed: %v", a.err)
	case a.header.Get("X-Robots-Guard") != "":
		d.problem("a browser (Firefox) was refused GET /: %s, X-Robots-Guard: %s.\nrobots_guard never refuses browsers by robots.txt; see the reason above (an allow_ip, a block of the doctor's address?)", status(a), a.header.Get("X-Robots-Guard"))
	case a.status == http.StatusOK && len(a.body) == 0:
		d.problem("GET / came back 200 with an empty body: the backend answered nothing.%s", d.emptyCause(g))
	case a.status >= 300 && a.status < 400:
		d.ok("a browser (Firefox) is redirected from / to %s (%d)", a.header.Get("Location"), a.status)
	case a.status >= 400:
		d.problem("a browser (Firefox) got %s for GET /, from the site itself (not robots_guard): the doctor cannot check that people are served", status(a))
	default:
		d.ok("a browser (Firefox) is served / (%s, %s)", status(a), report.Plural(len(a.body), "byte"))
	}
}

// emptyCause explains an empty 200: a reverse_proxy to a site of this
// config that answers only other hosts.
func (d *doctor) emptyCause(g *guardSite) string {
	srv := d.origServer(g.server)
	if srv == nil {
		return ""
	}
	for _, up := range upstreams(srv.routes) {
		back := serverAt(d.orig, up.dial)
		if back == nil {
			continue
		}
		hosts, all := siteHosts(back)
		sent := up.host
		if sent == "" {
			sent = g.host() // reverse_proxy passes the request's Host on
		}
		if all && !slices.ContainsFunc(hosts, func(h string) bool { return hostMatches(h, sent) }) {
			port, _ := loopbackPort(up.dial)
			return fmt.Sprintf("\nreverse_proxy sends Host: %s to %s, and the site there (server %s) answers only host %s:\n"+
				"no route matches, and Caddy answers a request that no route handles with 200 and an empty body.\n"+
				"Fix: write the backend site by its port,\n    :%d {\n        bind 127.0.0.1\n        ...\n    }\n"+
				"not as http://%s:%d { ... } (or have the proxy send the backend's name: header_up Host {upstream_hostport}).",
				sent, up.dial, back.name, strings.Join(hosts, ", "), port, hosts[0], port)
		}
	}
	return "\nCheck that the backend serves GET / (an application that answers nothing, a route that handles nothing)."
}

func (d *doctor) origServer(name string) *server {
	for _, s := range d.orig {
		if s.name == name {
			return s
		}
	}
	return nil
}

func orNone(reason string) string {
	if reason == "" {
		return "an ordinary allow"
	}
	return reason
}

// allowCause explains why a reached guard allowed a disallowed path.
func allowCause(g *guardSite, e *logLine) string {
	if e.Reason == "allowlisted" {
		return "\nallow_ip covers 127.0.0.1, the doctor's address (allow_ips: " + strings.Join(g.config.AllowIPs, ", ") + "): the doctor cannot check refusals."
	}
	return ""
}

// checkProxies reports X-Forwarded-For that arrives, in the access logs,
// from peers that the servers of the guards do not trust; without such a
// log it notes the loopback-only servers that trust no proxy.
func (d *doctor) checkProxies(guards []*guardSite, logs []string) {
	type peer struct {
		srv  *server
		addr string
	}
	seen := map[peer]int{}
	var order []peer
	where := map[peer]string{}
	read := 0
	for _, name := range logs {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		access := false
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			var e struct {
				Logger  string `json:"logger"`
				Request struct {
					RemoteIP string              `json:"remote_ip"`
					Host     string              `json:"host"`
					Headers  map[string][]string `json:"headers"`
				} `json:"request"`
			}
			if json.Unmarshal(sc.Bytes(), &e) != nil || !strings.HasPrefix(e.Logger, "http.log.access") {
				continue
			}
			access = true
			xff := ""
			for k, v := range e.Request.Headers {
				if strings.EqualFold(k, "X-Forwarded-For") && len(v) > 0 {
					xff = v[0]
				}
			}
			addr, err := netip.ParseAddr(e.Request.RemoteIP)
			if xff == "" || err != nil {
				continue
			}
			for _, g := range guards {
				srv := d.origServer(g.server)
				if srv == nil || len(g.hosts) > 0 && !slices.ContainsFunc(g.hosts, func(h string) bool { return hostMatches(h, e.Request.Host) }) || srv.trusts(addr) {
					continue
				}
				k := peer{srv, addr.String()}
				if seen[k] == 0 {
					order = append(order, k)
					where[k] = name
				}
				seen[k]++
				break
			}
		}
		f.Close()
		if access {
			read++
		}
	}
	fmt.Fprintln(d.out, "proxies")
	for _, k := range order {
		d.problem("X-Forwarded-For arrives from %s (%s in %s), which server %s does not trust (trusted_proxies):\n"+
			"robots_guard sees every client behind that proxy as %s, so one trapped or rude bot gets them all refused.\n"+
			"Fix, in the global options: servers { trusted_proxies static %s; trusted_proxies_strict }",
			k.addr, report.Plural(seen[k], "request"), where[k], k.srv.name, k.addr, k.addr)
	}
	if read == 0 {
		d.note("no access log to look for X-Forwarded-For in (add log to the site, or --log FILE)")
	} else if len(order) == 0 {
		d.ok("no X-Forwarded-For from an untrusted peer in %s", report.Plural(read, "access log"))
	}
	for _, s := range d.orig {
		if s.raw["trusted_proxies"] == nil && loopbackOnly(s.listen) && slices.ContainsFunc(guards, func(g *guardSite) bool { return g.server == s.name }) {
			d.note("server %s listens on loopback only and trusts no proxy: if a proxy forwards to it, every client is the proxy's address to robots_guard; set trusted_proxies", s.name)
		}
	}
}

// accessLogs returns the files the config's logs write.
func accessLogs(cfg map[string]any) []string {
	logs, _ := dig(cfg, "logging", "logs").(map[string]any)
	var out []string
	for _, name := range slices.Sorted(maps.Keys(logs)) {
		if w, _ := dig(logs[name], "writer").(map[string]any); w != nil && w["output"] == "file" {
			if f, ok := w["filename"].(string); ok {
				out = append(out, f)
			}
		}
	}
	return out
}
