package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/report"
)

func doctorCommand(env *Caddy) *cobra.Command {
	c := &cobra.Command{
		Use:   "doctor --config FILE [--adapter NAME] [--log FILE...]",
		Short: "Checks with real requests that a config's robots_guard protects its sites",
		Long: `
Loads the config as caddy run does (any adapter) and runs it in this
process, on free loopback ports, with the admin API off, automatic HTTPS
off and TLS left out, its robots_guard handlers deciding with in-process
state (no Redis) and without DNS verification. For every site with
robots_guard it sends real requests through the site's own handler chain
(its routes, matchers, file_server, reverse_proxy to the real backends)
with the site's Host, and says in plain words:

  - which robots.txt is enforced, and where it comes from;
  - that a named bot (GPTBot, or a token of the site's robots.txt groups)
    is refused on one of the paths robots.txt disallows for it;
  - that a browser (desktop Firefox) is served content;
  - that the guard is reached at all: not after a handler that answers
    first (route { file_server; robots_guard }), not behind a matcher the
    request does not pass;
  - empty 200 answers from the backend (a backend site written
    http://127.0.0.1:3000 { ... } answers no proxied Host);
  - X-Forwarded-For arriving from an address trusted_proxies does not
    list, in the access logs the config writes (and --log files).

The running server is not touched: the doctor's requests come from its
own copy, which writes its logs to a temporary directory.

Output: per site, "ok:" lines for what works, "PROBLEM:" paragraphs with
the cause and the fix, "note:" lines; then a summary.

Exit status: 0 when every check passed; 1 on any problem, or when the
config cannot be loaded.`,
		Example: `  caddy robots doctor --config /etc/caddy/Caddyfile
  caddy robots doctor --config caddy.json
  caddy robots doctor --config Caddyfile --log /var/log/caddy/access.log`,
		Args: cobra.NoArgs,
	}
	c.Flags().StringP("config", "c", "", "config file, as caddy run takes it")
	c.Flags().StringP("adapter", "a", "", "config adapter (default: caddyfile, none for .json)")
	c.Flags().StringSlice("log", nil, "more access logs (Caddy's JSON) to look for X-Forwarded-For in")
	c.RunE = runE(func(cmd *cobra.Command, _ []string) error {
		file, _ := cmd.Flags().GetString("config")
		adapter, _ := cmd.Flags().GetString("adapter")
		logs, _ := cmd.Flags().GetStringSlice("log")
		if file == "" {
			return errors.New("--config: name the config file to check")
		}
		problems, err := Doctor(cmd.Context(), env, file, adapter, logs, cmd.OutOrStdout())
		if err != nil {
			return err
		}
		if problems > 0 {
			return exitError{1}
		}
		return nil
	})
	return c
}

// The User-Agents of the doctor's requests.
const (
	doctorUA  = "robotsguard-doctor/1.0"
	firefoxUA = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	gptbotUA  = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
)

// doctor is one run of `caddy robots doctor`.
type doctor struct {
	env      *Caddy
	out      io.Writer
	logFile  string // the running copy's log
	logAt    int64  // how far the doctor has read it
	problems int
	srvs     []*server  // the running copy's servers
	orig     []*server  // the config's servers, as written
	cf       *caddyfile // the config, when it is a Caddyfile
	// start holds the module's warnings and errors of the config's start,
	// by the robots URL or file they are about.
	start []*logLine
}

// Doctor checks the config in file (adapted with adapter, as caddy run
// does) by running it in this process and sending real requests to each
// site with robots_guard; logs are more access logs to read. It writes
// its findings to out and returns the number of problems; an error means
// that the config cannot be checked at all.
func Doctor(ctx context.Context, env *Caddy, file, adapter string, logs []string, out io.Writer) (int, error) {
	body, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	adapted, err := adaptFile(env, file, body, adapter)
	if err != nil {
		if f, ok := missingRobotsFix(file, body, adapter, err); ok {
			// A typo in the robots path: the config does not load, and
			// the file it meant is near.
			fmt.Fprintf(out, "config %s\n  PROBLEM: %s\n", file, indent(fmt.Sprintf("the config does not load: %v\n%s", err, f)))
			fmt.Fprintf(out, "\n1 problem found\n")
			return 1, nil
		}
		return 0, err
	}
	cfg, err := decodeTree(adapted)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", file, err)
	}
	run, _ := decodeTree(adapted)
	d := &doctor{env: env, out: out, orig: servers(cfg), srvs: servers(run)}
	if isCaddyfile(file, adapter) {
		d.cf = parseCaddyfile(file, string(body))
	}
	guards := findGuards(d.srvs)
	if len(guards) == 0 {
		return 0, fmt.Errorf("%s: no robots_guard handler: nothing enforces any robots.txt", file)
	}
	dir, err := os.MkdirTemp("", "robots-doctor")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	d.logFile = filepath.Join(dir, "caddy.log")
	js, err := d.prepare(run, guards, dir)
	if err != nil {
		return 0, err
	}
	if err := env.Load(js); err != nil {
		return 0, fmt.Errorf("%s: the config does not load: %v", file, err)
	}
	defer func() { _ = env.Stop() }()
	var other []*logLine
	for _, e := range d.startMessages(ctx, guards) {
		// A guard's robots URL that cannot be read is its site's finding,
		// with the line and the fix.
		if e.URL != "" && unreadable(e) && slices.ContainsFunc(guards, func(g *guardSite) bool { return g.handler["robots"] == e.URL }) {
			d.start = append(d.start, e)
		} else {
			other = append(other, e)
		}
	}
	if len(other) > 0 {
		// A robots.txt a guard cannot read, before any request.
		fmt.Fprintln(out, "start")
		d.reportMessages(other)
	}
	for _, g := range guards {
		d.checkSite(ctx, g)
	}
	d.checkProxies(guards, append(accessLogs(cfg), logs...))
	d.checkWrappers(guards, intOf(dig(cfg, "apps", "http", "http_port")), intOf(dig(cfg, "apps", "http", "https_port"))) // doctorwrappers.go
	if d.problems == 0 {
		fmt.Fprintf(out, "\nall good: %s checked; bots are refused where robots.txt disallows, browsers are served\n", report.Plural(len(guards), "site"))
	} else {
		fmt.Fprintf(out, "\n%s found\n", report.Plural(d.problems, "problem"))
	}
	return d.problems, nil
}

// unreadable reports whether a message of the module says that a robots
// URL cannot be read (unreachable, or no robots.txt there).
func unreadable(e *logLine) bool {
	return strings.Contains(e.Msg, "fetched") || strings.Contains(e.Msg, "has none") || strings.Contains(e.Msg, "first fetch is taking long")
}

// isCaddyfile reports whether a config file is read as a Caddyfile.
func isCaddyfile(file, adapter string) bool {
	return adapter == "caddyfile" || adapter == "" && !strings.HasSuffix(strings.ToLower(file), ".json")
}

// adaptFile adapts a config file as caddy run does: with the named
// adapter, else caddyfile unless the file is JSON.
func adaptFile(env *Caddy, file string, body []byte, adapter string) ([]byte, error) {
	if isCaddyfile(file, adapter) {
		adapter = "caddyfile"
	}
	if adapter == "" {
		return body, nil
	}
	out, warnings, err := env.Adapt(adapter, file, body)
	if errors.Is(err, ErrUnknownAdapter) {
		return nil, fmt.Errorf("--adapter: unknown config adapter %q", adapter)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	for _, w := range warnings {
		fmt.Fprintf(os.Stderr, "%s: warning: %s\n", file, w)
	}
	return out, nil
}

// decodeTree decodes JSON into maps and lists, numbers as json.Number so
// that they are written back as they were.
func decodeTree(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// prepare turns the config into the one the doctor runs: every server on a
// free loopback port (the loopback upstreams and robots URLs that pointed
// at a server follow it), plain HTTP, the admin API off, the logs in dir,
// only the http app; each robots_guard logs every decision in full, keeps
// its state in process and does not verify by DNS (the doctor's requests
// come from loopback).
func (d *doctor) prepare(run map[string]any, guards []*guardSite, dir string) ([]byte, error) {
	if _, err := moveServers(d.srvs); err != nil { // ownrobots.go
		return nil, err
	}
	for _, g := range guards {
		_, g.store = g.handler["store"]
		g.handler["log_allowed"] = 1
		g.handler["log_repeats"] = 0
		// Many requests from one address, at once: no throttle, strike
		// or held refusal may stand in for the decision on a path.
		g.handler["burst"] = 100000
		g.handler["strikes"] = 100000
		g.handler["address_strikes"] = 200000
		delete(g.handler, "tarpit")
		delete(g.handler, "tarpit_max")
		g.handler["verify"] = map[string]any{"disabled": true}
		delete(g.handler, "store")
	}
	apps, _ := run["apps"].(map[string]any)
	run["apps"] = map[string]any{"http": apps["http"]}
	// No admin API, and no autosave: the running server's --resume
	// config stays its own.
	run["admin"] = map[string]any{"disabled": true, "config": map[string]any{"persist": false}}
	run["storage"] = map[string]any{"module": "file_system", "root": filepath.Join(dir, "storage")}
	run["logging"] = map[string]any{"logs": map[string]any{"default": map[string]any{
		"writer":  map[string]any{"output": "file", "filename": d.logFile},
		"encoder": map[string]any{"format": "json"},
		"level":   "INFO",
	}}}
	return json.Marshal(run)
}

// follow rewrites the loopback dial addresses and URLs in v whose port is
// a moved server's.
func follow(v any, moved map[int]int) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = follow(x, moved)
		}
	case []any:
		for i, x := range v {
			v[i] = follow(x, moved)
		}
	case string:
		port, ok := loopbackPort(v)
		to, moving := moved[port]
		if !ok || !moving {
			return v
		}
		if u, err := url.Parse(v); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			u.Scheme, u.Host = "http", net.JoinHostPort("127.0.0.1", strconv.Itoa(to))
			return u.String()
		}
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(to))
	}
	return v
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
