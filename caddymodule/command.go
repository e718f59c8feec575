package caddymodule

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "robots",
		Usage: "check|lint|classify|report|audit|blocked|unblock|review ...",
		Short: "Checks robots.txt rules, classifies User-Agents and reviews robots_guard logs",
		Long: `
The robots command works offline with robotsguard's own parser,
classifier and decision, exactly as the robots_guard handler does:

  caddy robots check [--config FILE [--site NAME]] [--robots FILE] --user-agent UA URL...
      Says for each URL whether UA may fetch it, with the handler's own
      decision (traps, blocked classes, allow lists, bot entries and rules
      of the site's robots_guard in --config; defaults without), and why.
      UA may be a product token ("Googlebot/2.1") or a whole User-Agent.
      Where mainstream readings of the file's groups differ, shows both.
      Where the file states AI usage preferences (Content-Usage,
      Content-Signal), shows the one that applies, its lines and UA's
      purposes.
      With --batch, reads JSON Lines {"robots": ..., "ua": ..., "url": ...}
      from standard input and writes one JSON object per line ("robots"
      may be left out with --config).

  caddy robots lint FILE|-
      Prints FILE:LINE: severity: message [code] for each finding; exits 1
      when there are errors.

  caddy robots classify [--config FILE [--site NAME]] [UA...]
      Classifies User-Agents from the arguments or, one per line, from
      standard input, with the site's bot entries, and prints one JSON
      object per User-Agent.

  caddy robots report [LOGFILE...]
      Summarises robots_guard's decisions in Caddy JSON logs, rolled
      (gzip) files and globs included (standard input when no file is
      given): totals, top bots, IPs and paths, clients that read
      robots.txt and ignored it, an hourly histogram, reload problems;
      filters --since, --until, --host, --reason, --class, --token;
      --json for machines, --html FILE for the review page.

  caddy robots audit --robots FILE --root DIR | --url BASE
      Finds what robots.txt cannot do on the site: noindex pages that
      crawlers never read, disallowed pages linked from allowed ones,
      disallowed images embedded in allowed pages; each with a fix.

  caddy robots blocked [--address ADDR | --config FILE] [--zone NAME]
      Lists the clients a running Caddy holds blocked (its admin API).

  caddy robots unblock IP [--address ADDR | --config FILE] [--zone NAME]
      Lifts every block of IP in a running Caddy and forgets its strikes.

  caddy robots review [--listen ADDR] [--open]
      Opens the review page of a running Caddy (what each bot did, the
      rules it broke, a 24-hour chart, unblock buttons) in a browser.

Each command's --help has examples, its output format and exit codes.
`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.AddCommand(checkCommand(), lintCommand(), classifyCommand(), reportCommand(), auditCommand(), blockedCommand(), unblockCommand(), reviewCommand())
		},
	})
}

// exitError carries a command's exit status.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// runE adapts a command function to cobra, exiting with its status.
func runE(f func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := f(cmd, args)
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		return err
	}
}

func checkCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "check [--config FILE [--site NAME]] [--robots FILE] --user-agent UA URL... | check --batch",
		Short: "Says whether a User-Agent may fetch URLs, as the robots_guard handler decides",
		Long: `
Says for each URL whether the User-Agent may fetch it, with the handler's
own decision: the same reading of the target, the same canonical-URL check,
the same engine, on the robots.txt the handler serves. With --config (a
Caddyfile or JSON; --site picks one of several robots_guard handlers by
host, server name or listen address) it uses the site's settings: its bot
entries, block_class, traps and allow lists (--ip sets the client address);
without, the defaults. UA may be a product token (Googlebot/2.1) or a whole
User-Agent.

Output: one line per URL, tab-separated: "allowed", "disallowed" or
"refused" (a refusal for another reason: trap, blocked_class, ...), the URL,
and why in parentheses (the group and the rule that decided, or the
reason; where mainstream readings of the file's groups differ, both
answers). With --batch, reads JSON Lines {"robots": "...", "ua": "...",
"url": "..."} ("robots" may be left out with --config or --robots) and
writes one JSON object per line: url, allowed, reason, class, group, line,
rule; a bad or over-long (over 1 MB) line gets {"error": "..."} and the
batch goes on.

Exit status: 0 when every URL was answered, allowed or not; 1 when a flag,
the config or the robots.txt file is wrong or unreadable.`,
		Example: `  caddy robots check --robots robots.txt --user-agent Googlebot/2.1 https://example.com/private/x
  caddy robots check --config Caddyfile --site shop.example.com -A GPTBot https://shop.example.com/x
  caddy robots check --batch < queries.jsonl`,
	}
	c.Flags().StringP("robots", "r", "", "robots.txt file (default: the site's robots.txt in --config: its file, or its application's URL, fetched once)")
	c.Flags().StringP("user-agent", "A", "", "product token or User-Agent string")
	c.Flags().String("ip", "192.0.2.1", "client IP the requests come from (for allow_ip)")
	c.Flags().Bool("batch", false, "read JSON Lines from standard input")
	siteFlags(c)
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		h, err := siteHandler(cmd)
		if err != nil {
			return err
		}
		ipFlag, _ := cmd.Flags().GetString("ip")
		ip, err := netip.ParseAddr(ipFlag)
		if err != nil {
			return fmt.Errorf("--ip: %v", err)
		}
		// The site's robots.txt as its handler reads it (a file, or the
		// application's URL fetched once), unless --robots names one.
		file, _ := cmd.Flags().GetString("robots")
		var data []byte
		if file != "" {
			data, err = os.ReadFile(file)
		} else {
			data, _, err = loadRobots(cmd.Context(), h)
		}
		if err != nil {
			return err
		}
		ck, err := newChecker(h, ip)
		if err != nil {
			return err
		}
		if batch, _ := cmd.Flags().GetBool("batch"); batch {
			return ck.batch(cmd.InOrStdin(), cmd.OutOrStdout(), data)
		}
		ua, _ := cmd.Flags().GetString("user-agent")
		if ua == "" || len(args) == 0 {
			return errors.New("usage: caddy robots check [--config FILE] [--robots FILE] --user-agent UA URL [URL ...]")
		}
		return ck.urls(cmd.OutOrStdout(), data, ua, args)
	})
	return c
}

// siteFlags adds the flags that select a site's robots_guard settings.
func siteFlags(c *cobra.Command) {
	c.Flags().StringP("config", "c", "", "Caddyfile or JSON config whose robots_guard settings to use")
	c.Flags().String("adapter", "", "config adapter (default: caddyfile for a Caddyfile, none for .json)")
	c.Flags().String("site", "", "with several robots_guard handlers in --config: a host, server name or listen address")
}

// siteHandler returns the robots_guard settings of the site that the flags
// select, or the defaults without --config.
func siteHandler(cmd *cobra.Command) (*Handler, error) {
	file, _ := cmd.Flags().GetString("config")
	if file == "" {
		return &Handler{}, nil
	}
	adapter, _ := cmd.Flags().GetString("adapter")
	site, _ := cmd.Flags().GetString("site")
	body, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return loadSiteHandler(file, body, adapter, site)
}

// siteEntry is one robots_guard handler found in a config.
type siteEntry struct {
	names []string // hosts of the enclosing routes, server name, listen addresses
	raw   json.RawMessage
}

// loadSiteHandler adapts a config and returns the robots_guard handler of
// the selected site.
func loadSiteHandler(file string, body []byte, adapter, site string) (*Handler, error) {
	if adapter == "" && !strings.HasSuffix(strings.ToLower(file), ".json") {
		adapter = "caddyfile"
	}
	if adapter != "" {
		a := caddyconfig.GetAdapter(adapter)
		if a == nil {
			return nil, fmt.Errorf("--adapter: unknown config adapter %q", adapter)
		}
		out, warnings, err := a.Adapt(body, map[string]any{"filename": file})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		for _, w := range warnings {
			fmt.Fprintf(os.Stderr, "%s: warning: %s\n", file, w.String())
		}
		body = out
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
	h := &Handler{}
	if err := json.Unmarshal(picked[0].raw, h); err != nil {
		return nil, fmt.Errorf("%s: robots_guard: %v", file, err)
	}
	return h, nil
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
				b, _ := json.Marshal(v)
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

// checker answers "caddy robots check" as the site's robots_guard handler
// does: it builds the handler's classifier and engine from its settings and
// calls the handler's own decide on the robots.txt the handler serves (the
// site's file with the handler's additions).
type checker struct {
	h    *Handler
	ip   netip.Addr
	now  time.Time
	last string
	p    *policy.Policy
}

func newChecker(h *Handler, ip netip.Addr) (*checker, error) {
	ck := &checker{h: h, ip: ip, now: time.Unix(1_800_000_000, 0)}
	set, err := h.checkConfig()
	if err != nil {
		return nil, err
	}
	h.blocked, h.index, h.usage = set.blocked, set.index, set.usage
	cfg := set.engine
	// Each query is answered 48 hours after the one before, so that no
	// rate, strike or block of one query touches the next.
	cfg.Now = func() time.Time {
		ck.now = ck.now.Add(48 * time.Hour)
		return ck.now
	}
	if h.classifier, err = uaclass.New(uaclass.Options{Extra: h.Bots, CacheBytes: -1}); err != nil {
		return nil, fmt.Errorf("bots: %v", err)
	}
	if h.engine, err = enforce.New(cfg, nil); err != nil {
		return nil, err
	}
	return ck, nil
}

// policy returns the policy the handler would enforce for the site's
// robots.txt body, compiling it once per body.
func (ck *checker) policy(robots []byte) *policy.Policy {
	if ck.p == nil || string(robots) != ck.last {
		served := policy.Parse(robots)
		ck.h.additions(served)
		ck.p, ck.last = policy.Compile(served), string(robots)
	}
	return ck.p
}

// checkResult is one answer of "caddy robots check".
type checkResult struct {
	URL     string `json:"url,omitempty"`
	Allowed bool   `json:"allowed"`
	// Reason is the handler's reason: "disallowed", "trap",
	// "blocked_class", "bad_agent", "allowlisted", "robots_txt", ...; empty
	// for an ordinary allowed request.
	Reason string `json:"reason,omitempty"`
	Class  string `json:"class"`
	Group  string `json:"group"`
	Line   int    `json:"line"`
	Rule   string `json:"rule,omitempty"`
	// Canonical is the canonical URL by the file's QueryParam, Domain and
	// IndexPage fields, when it has any.
	Canonical string `json:"canonical,omitempty"`
	// Readings holds the answers of Google's and of protego/temoto's
	// reading of the file's groups, when they differ.
	Readings map[string]readingResult `json:"readings,omitempty"`
	// Usage is the AI usage preference that applies, when the file states
	// any (Content-Usage, Content-Signal) and robots.txt binds the client.
	Usage *usageCheck `json:"usage,omitempty"`
}

// usageCheck is the AI usage preference that applies to a URL, and why.
type usageCheck struct {
	// Purposes are the client's purposes from the bot database (none for
	// a client of unknown purpose, which no preference refuses).
	Purposes []string `json:"purposes"`
	// Preferences is what the client's group states for the URL, e.g.
	// "train-ai=n, search=y", or "unknown".
	Preferences string `json:"preferences"`
	// Lines are the lines that decide it, e.g. "line 4: Content-Usage:
	// train-ai=n".
	Lines []string `json:"lines,omitempty"`
	// Refused lists the categories of the client's purposes that the
	// preferences refuse (in both readings of the groups), or is empty.
	Refused string `json:"refused,omitempty"`
	// Ambiguous is set when the two readings of the file's groups refuse
	// different categories.
	Ambiguous bool `json:"ambiguous,omitempty"`
}

// usageOf answers which AI usage preference applies to the request.
func usageOf(p *policy.Policy, req *enforce.Request) *usageCheck {
	if !p.HasUsage() || req.UA.Class == uaclass.Browser {
		return nil
	}
	purposes := req.UA.Purposes()
	r := p.MatchUsage(req.UA.Tokens, &req.Target, purposes.Usage())
	if r.Agent == "" {
		return nil
	}
	u := &usageCheck{Purposes: purposes.List(), Preferences: r.Prefs.String(), Ambiguous: r.Ambiguous}
	if u.Purposes == nil {
		u.Purposes = []string{}
	}
	for _, l := range r.Lines {
		if l != nil {
			u.Lines = append(u.Lines, fmt.Sprintf("line %d: %s", l.Line, l))
		}
	}
	if r.Refused != 0 {
		u.Refused = r.Refused.String()
	}
	return u
}

// describe says which preference applies and what it means for the
// client.
func (u *usageCheck) describe() string {
	out := "AI usage " + u.Preferences
	if len(u.Lines) > 0 {
		out += " by " + strings.Join(u.Lines, " and ")
	}
	switch {
	case len(u.Purposes) == 0:
		out += "; purpose unknown: judged by Allow/Disallow only"
	case u.Refused != "":
		out += "; its purposes " + strings.Join(u.Purposes, ",") + ": " + u.Refused + " refused"
	default:
		out += "; its purposes " + strings.Join(u.Purposes, ",") + ": none refused"
	}
	if u.Ambiguous {
		out += " (the readings of the groups differ: refused only what both refuse)"
	}
	return out
}

// readingResult is one reading's answer.
type readingResult struct {
	Allowed bool   `json:"allowed"`
	Line    int    `json:"line"`
	Rule    string `json:"rule,omitempty"`
}

// batchError answers a batch line that could not be read.
type batchError struct {
	Error string `json:"error"`
}

// check decides on one URL for ua.
func (ck *checker) check(robots []byte, ua, rawURL string) (checkResult, error) {
	p := ck.policy(robots)
	req := enforce.Request{IP: ck.ip, UA: ck.h.classifier.Classify(ua), Method: http.MethodGet}
	if len(req.UA.Tokens) == 0 && !strings.ContainsAny(ua, " ();") && policy.ProductToken(ua) != "" {
		// A bare product token names itself, as RFC 9309 reads it.
		req.UA.Tokens = []string{policy.ProductToken(ua)}
	}
	scheme := "http"
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		scheme, req.Host = u.Scheme, u.Host
	}
	v, err := ck.h.decide(&req, p, policy.TargetOf(rawURL), scheme)
	if err != nil {
		return checkResult{}, err
	}
	d := &v.Decision
	out := checkResult{URL: rawURL, Allowed: !d.Enforced(), Reason: string(d.Reason), Class: req.UA.Class.String(), Group: d.Group, Canonical: v.canonURL}
	if d.Rule != nil {
		out.Line, out.Rule = d.Rule.Line, d.Rule.String()
	}
	if d.Reason != enforce.ReasonDisallowed {
		out.Usage = usageOf(p, &req)
	}
	if req.UA.Class != uaclass.Browser {
		g := p.MatchReading(req.UA.Tokens, &req.Target, policy.GoogleReading)
		s := p.MatchReading(req.UA.Tokens, &req.Target, policy.SplitReading)
		if g.Allowed != s.Allowed {
			out.Readings = map[string]readingResult{"google": reading(g), "split": reading(s)}
		}
	}
	return out, nil
}

func reading(r policy.Result) readingResult {
	out := readingResult{Allowed: r.Allowed}
	if r.Rule != nil {
		out.Line, out.Rule = r.Rule.Line, r.Rule.String()
	}
	return out
}

// urls prints one line per URL: the verdict, the URL and why.
func (ck *checker) urls(w io.Writer, robots []byte, ua string, urls []string) error {
	for _, u := range urls {
		r, err := ck.check(robots, ua, u)
		if err != nil {
			fmt.Fprintf(w, "refused\t%s\t(400: %v)\n", u, err)
			continue
		}
		verdict := "allowed"
		switch {
		case r.Reason == string(enforce.ReasonDisallowed):
			verdict = "disallowed"
		case !r.Allowed:
			verdict = "refused"
		}
		var why []string
		switch {
		case r.Class == uaclass.Browser.String():
			why = append(why, "a browser: robots.txt does not bind people")
		case r.Reason != "" && r.Reason != string(enforce.ReasonDisallowed) && r.Reason != string(enforce.ReasonContentUsage):
			why = append(why, r.Reason)
		default:
			if r.Reason == string(enforce.ReasonContentUsage) {
				why = append(why, "content_usage: the site's AI usage preferences refuse its purpose")
			}
			group := r.Group
			if group == "" {
				group = "none"
			}
			why = append(why, "group "+group)
			if r.Rule != "" {
				why = append(why, fmt.Sprintf("line %d: %s", r.Line, r.Rule))
			} else {
				why = append(why, "no rule matches")
			}
		}
		if g, ok := r.Readings["google"]; ok {
			s := r.Readings["split"]
			why = append(why, fmt.Sprintf("the readings of the groups differ: Google's %s, protego/temoto's %s; refused only when both disallow", describe(g), describe(s)))
		}
		if r.Usage != nil {
			why = append(why, r.Usage.describe())
		}
		if r.Canonical != "" {
			why = append(why, "canonical "+r.Canonical)
		}
		fmt.Fprintf(w, "%s\t%s\t(%s)\n", verdict, u, strings.Join(why, "; "))
	}
	return nil
}

func describe(r readingResult) string {
	verdict := "allows"
	if !r.Allowed {
		verdict = "disallows"
	}
	if r.Rule != "" {
		return fmt.Sprintf("%s by line %d: %s", verdict, r.Line, r.Rule)
	}
	return verdict
}

// maxBatchLine bounds one line of "check --batch".
const maxBatchLine = 1 << 20

// batch answers JSON Lines queries {"robots", "ua", "url"} in order;
// "robots" may be left out to use the site's file. A bad or over-long line
// gets an error object of its own and the run goes on.
func (ck *checker) batch(in io.Reader, out io.Writer, siteRobots []byte) error {
	enc := json.NewEncoder(out)
	return eachLine(in, maxBatchLine, func(line []byte, tooLong bool) error {
		line = bytes.TrimSpace(line)
		if len(line) == 0 && !tooLong {
			return nil
		}
		var q struct {
			Robots *string `json:"robots"`
			UA     *string `json:"ua"`
			URL    *string `json:"url"`
		}
		var res any
		switch err := json.Unmarshal(line, &q); {
		case tooLong:
			res = batchError{fmt.Sprintf("line longer than %d bytes", maxBatchLine)}
		case err != nil:
			res = batchError{"invalid JSON: " + err.Error()}
		case q.UA == nil || q.URL == nil || q.Robots == nil && siteRobots == nil:
			res = batchError{`want an object with "robots", "ua" and "url"`}
		default:
			robots := siteRobots
			if q.Robots != nil {
				robots = []byte(*q.Robots)
			}
			r, err := ck.check(robots, *q.UA, *q.URL)
			if err != nil {
				res = batchError{err.Error()}
			} else {
				res = r
			}
		}
		return enc.Encode(res)
	})
}

// eachLine calls fn for each line of in, without its line end. A line
// longer than max is not kept: fn gets it empty with tooLong set, and the
// reading goes on with the next line.
func eachLine(in io.Reader, max int, fn func(line []byte, tooLong bool) error) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var buf []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			buf = append(buf, chunk...)
			if len(bytes.TrimRight(buf, "\r\n")) > max {
				tooLong, buf = true, buf[:0]
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(chunk) > 0 || tooLong {
			if ferr := fn(bytes.TrimRight(buf, "\r\n"), tooLong); ferr != nil {
				return ferr
			}
		}
		buf, tooLong = buf[:0], false
		if err == io.EOF {
			return nil
		}
	}
}

func lintCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "lint FILE|-",
		Short: "Reports problems in a robots.txt file (- reads standard input)",
		Long: `
Reports problems in a robots.txt file, as robotsguard's parser reads it:
errors (content that is no robots.txt at all, such as an HTML page or
binary data; the handler never lets such a file replace the rules in
force), warnings (input guessed at or ignored, such as a likely typo of a
field, a rule before any User-agent line, groups that mainstream parsers
read differently, a rule that cannot have the effect its author meant) and
information. FILE "-" reads standard input.

Output: one line per finding, "FILE:LINE: severity: message [code]"
("stdin" for -); nothing when the file is clean.

Exit status: 0 when there is no error (warnings and information
included); 1 when there are errors, or the file cannot be read.`,
		Example: `  caddy robots lint /srv/www/robots.txt
  curl -s https://example.com/robots.txt | caddy robots lint -`,
		Args: cobra.ExactArgs(1),
	}
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		name := args[0]
		var data []byte
		var err error
		if name == "-" {
			name = "stdin"
			data, err = io.ReadAll(cmd.InOrStdin())
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			return err
		}
		return lint(cmd.OutOrStdout(), name, data)
	})
	return c
}

func lint(w io.Writer, name string, data []byte) error {
	errs := 0
	for _, d := range policy.Parse(data).Lint() {
		fmt.Fprintf(w, "%s:%d: %s: %s [%s]\n", name, d.Line, d.Severity, d.Message, d.Code)
		if d.Severity == policy.Error {
			errs++
		}
	}
	if errs > 0 {
		return exitError{1}
	}
	return nil
}

func classifyCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "classify [--config FILE [--site NAME]] [UA...]",
		Short: "Classifies User-Agent strings",
		Long: `
Classifies User-Agents as the robots_guard handler does, from the
arguments or, one per line, from standard input; with --config, with the
site's bot entries, and saying whether its block_class shuts the class out.

Output: one JSON object per User-Agent: ua, class (browser, search, ai,
seo, social, monitor, script, bad, bot, unknown), tokens (the product
tokens robots.txt groups are matched against), and where known bot,
operator, verify (how a claim is verified: dns, ranges), user_triggered,
blocked_class.

Exit status: 0 on success; 1 when a flag or the config is wrong.`,
		Example: `  caddy robots classify 'curl/8.5.0' 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)'
  cut -d'"' -f6 access.log | sort -u | caddy robots classify --config /etc/caddy/Caddyfile`,
	}
	siteFlags(c)
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		h, err := siteHandler(cmd)
		if err != nil {
			return err
		}
		return classify(h, cmd.InOrStdin(), cmd.OutOrStdout(), args)
	})
	return c
}

// classifyResult is one line of "caddy robots classify".
type classifyResult struct {
	UA            string   `json:"ua"`
	Class         string   `json:"class"`
	Tokens        []string `json:"tokens"`
	Bot           string   `json:"bot,omitempty"`
	Operator      string   `json:"operator,omitempty"`
	Verify        string   `json:"verify,omitempty"`
	UserTriggered bool     `json:"user_triggered,omitempty"`
	// Purposes are what the bot does with what it fetches (train-ai,
	// search, ai-input, user-triggered), with their source.
	Purposes      []string `json:"purposes,omitempty"`
	PurposeSource string   `json:"purpose_source,omitempty"`
	// BlockedClass is set when the site's block_class shuts the class out.
	BlockedClass bool `json:"blocked_class,omitempty"`
}

// classify classifies User-Agents with the site's bot entries (h.Bots) and
// says which classes its block_class shuts out.
func classify(h *Handler, in io.Reader, out io.Writer, args []string) error {
	c, err := uaclass.New(uaclass.Options{Extra: h.Bots, CacheBytes: -1})
	if err != nil {
		return fmt.Errorf("bots: %v", err)
	}
	blocked := map[uaclass.Class]bool{}
	for _, name := range h.BlockClasses {
		if bc, err := uaclass.ParseClass(name); err == nil {
			blocked[bc] = true
		}
	}
	enc := json.NewEncoder(out)
	one := func(ua string) error {
		r := c.Classify(ua)
		res := classifyResult{UA: ua, Class: r.Class.String(), Tokens: r.Tokens, UserTriggered: r.UserTriggered(), Purposes: r.Purposes().List(), BlockedClass: blocked[r.Class]}
		if r.Bot != nil {
			res.PurposeSource = r.Bot.PurposeSource
		}
		if res.Tokens == nil {
			res.Tokens = []string{}
		}
		if b := r.Bot; b != nil {
			res.Bot, res.Operator, res.Verify = b.Name, b.Operator, b.Verify
		}
		return enc.Encode(res)
	}
	if len(args) > 0 {
		for _, ua := range args {
			if err := one(ua); err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if err := one(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}
