package caddymodule

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "robots",
		Usage: "check|lint|classify|report|audit|blocked|unblock|review ...",
		Short: "Checks robots.txt rules, classifies User-Agents and reviews robots_guard logs",
		Long: `
The robots command works offline with robotsguard's own parser and
classifier, exactly as the robots_guard handler does:

  caddy robots check --robots FILE --user-agent UA URL...
      Says for each URL whether UA may fetch it, and which rule decided.
      UA may be a product token ("Googlebot/2.1") or a whole User-Agent.
      With --batch, reads JSON Lines {"robots": ..., "ua": ..., "url": ...}
      from standard input and writes one JSON object per line.

  caddy robots lint FILE
      Prints FILE:LINE: severity: message for each finding; exits 1 when
      there are errors.

  caddy robots classify [UA...]
      Classifies User-Agents from the arguments or, one per line, from
      standard input, and prints one JSON object per User-Agent.

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
		Use:   "check --robots FILE --user-agent UA URL... | check --batch",
		Short: "Says whether a User-Agent may fetch URLs under a robots.txt",
	}
	c.Flags().StringP("robots", "r", "", "robots.txt file")
	c.Flags().StringP("user-agent", "A", "", "product token or User-Agent string")
	c.Flags().Bool("batch", false, "read JSON Lines from standard input")
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		if batch, _ := cmd.Flags().GetBool("batch"); batch {
			return checkBatch(cmd.InOrStdin(), cmd.OutOrStdout())
		}
		file, _ := cmd.Flags().GetString("robots")
		ua, _ := cmd.Flags().GetString("user-agent")
		if file == "" || ua == "" || len(args) == 0 {
			return errors.New("usage: caddy robots check --robots FILE --user-agent UA URL [URL ...]")
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		return checkURLs(cmd.OutOrStdout(), data, ua, args)
	})
	return c
}

// checkTokens returns the robots.txt tokens of ua: a bare product token
// ("Googlebot/2.1") names itself, as RFC 9309 reads it; a whole User-Agent
// string is classified.
func checkTokens(ua string) []string {
	if !strings.ContainsAny(ua, " ();") {
		if t := policy.ProductToken(ua); t != "" {
			return []string{t}
		}
	}
	if r := uaclass.Classify(ua); len(r.Tokens) > 0 {
		return r.Tokens
	}
	return []string{policy.ProductToken(ua)}
}

// checkResult is one answer of "caddy robots check".
type checkResult struct {
	URL     string `json:"url,omitempty"`
	Allowed bool   `json:"allowed"`
	Group   string `json:"group"`
	Line    int    `json:"line"`
	Rule    string `json:"rule,omitempty"`
	// Canonical is the canonical URL by the file's QueryParam, Domain and
	// IndexPage fields, when it has any.
	Canonical string `json:"canonical,omitempty"`
}

// batchError answers a batch line that could not be read.
type batchError struct {
	Error string `json:"error"`
}

func check(p *policy.Policy, tokens []string, rawURL string) checkResult {
	target := policy.TargetOf(rawURL)
	res := p.Match(tokens, target)
	out := checkResult{URL: rawURL, Allowed: res.Allowed, Group: res.Agent}
	if res.Rule != nil {
		out.Line, out.Rule = res.Rule.Line, res.Rule.String()
	}
	if p.HasCanonical() {
		scheme, host := "http", ""
		if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
			scheme, host = u.Scheme, u.Host
		}
		out.Canonical, _, _ = p.Canonical(tokens, scheme, host, policy.NormalizeTarget(target))
	}
	return out
}

func checkURLs(w io.Writer, robots []byte, ua string, urls []string) error {
	p := policy.Compile(policy.Parse(robots))
	tokens := checkTokens(ua)
	for _, u := range urls {
		r := check(p, tokens, u)
		verdict := "allowed"
		if !r.Allowed {
			verdict = "disallowed"
		}
		why := "no rule matches"
		if r.Rule != "" {
			why = fmt.Sprintf("line %d: %s", r.Line, r.Rule)
		}
		group := r.Group
		if group == "" {
			group = "none"
		}
		canon := ""
		if r.Canonical != "" {
			canon = "; canonical " + r.Canonical
		}
		fmt.Fprintf(w, "%s\t%s\t(group %s; %s%s)\n", verdict, u, group, why, canon)
	}
	return nil
}

// checkBatch answers JSON Lines queries in order. A bad line gets an error
// object and the run goes on.
func checkBatch(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 2*policy.MaxSize)
	enc := json.NewEncoder(out)
	var lastBody string
	var lastPolicy *policy.Policy
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var q struct {
			Robots *string `json:"robots"`
			UA     *string `json:"ua"`
			URL    *string `json:"url"`
		}
		var res any
		switch err := json.Unmarshal([]byte(line), &q); {
		case err != nil:
			res = batchError{"invalid JSON: " + err.Error()}
		case q.Robots == nil || q.UA == nil || q.URL == nil:
			res = batchError{`want an object with "robots", "ua" and "url"`}
		default:
			if lastPolicy == nil || *q.Robots != lastBody {
				lastBody, lastPolicy = *q.Robots, policy.Compile(policy.Parse([]byte(*q.Robots)))
			}
			res = check(lastPolicy, checkTokens(*q.UA), *q.URL)
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return sc.Err()
}

func lintCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "lint FILE|-",
		Short: "Reports problems in a robots.txt file (- reads standard input)",
		Args:  cobra.ExactArgs(1),
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
		fmt.Fprintf(w, "%s:%d: %s: %s\n", name, d.Line, d.Severity, d.Message)
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
		Use:   "classify [UA...]",
		Short: "Classifies User-Agent strings",
	}
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		return classify(cmd.InOrStdin(), cmd.OutOrStdout(), args)
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
}

func classify(in io.Reader, out io.Writer, args []string) error {
	enc := json.NewEncoder(out)
	one := func(ua string) error {
		r := uaclass.Classify(ua)
		res := classifyResult{UA: ua, Class: r.Class.String(), Tokens: r.Tokens, UserTriggered: r.UserTriggered()}
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
