// Package cli holds the `caddy robots` subcommands (check, lint, classify,
// report, audit, doctor, blocked, unblock, review) as cobra commands, with no
// Caddy: what they need of Caddy and of the robots_guard handler (the
// config adapter, the admin API, the handler's settings and decision)
// comes as plain functions in a [Caddy] value, which package caddymodule
// fills in when it registers the commands.
//
// [Commands] builds the subcommands; [Usage], [Short] and [Long] describe
// the robots command itself. [Checker] answers `caddy robots check` with
// a [Site]'s decision.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/spf13/cobra"
)

// Usage, Short and Long describe the robots command in `caddy help`.
const (
	Usage = "check|lint|classify|report|audit|doctor|blocked|unblock|review ..."
	Short = "Checks robots.txt rules, classifies User-Agents and reviews robots_guard logs"
	Long  = `
check, lint, classify, report and audit need no running Caddy: they use
robotsguard's own parser, classifier and decision, exactly as the
robots_guard handler does (check fetches the site's robots.txt once when
--config gives it as an application's URL; audit --url crawls the site);
doctor runs the config in this process. blocked, unblock and review need
a running Caddy: they use its admin API (--address, or the admin address
in --config, else localhost:2019).

  caddy robots check [--config FILE [--site NAME]] [--robots FILE] --user-agent UA URL...
      Says for each URL whether UA may fetch it, with the handler's own
      decision (traps, blocked classes, allow lists, bot entries and rules
      of the site's robots_guard in --config; defaults without), and why.
      UA may be a product token ("Googlebot/2.1") or a whole User-Agent.
      With neither --config nor --robots, the URLs' site's robots.txt is
      fetched, as the site serves it, and check says so.
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

  caddy robots classify [--config FILE [--site NAME]] [--verify ADDR] [UA...]
      Classifies User-Agents from the arguments or, one per line, from
      standard input, with the site's bot entries, and prints one JSON
      object per User-Agent; with --verify, which of the site's lists of
      IP ranges verifies a claim from ADDR, where it came from and how
      old it is.

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

  caddy robots doctor --config FILE [--adapter NAME]
      Runs the config in this process, on free loopback ports, and sends
      each site with robots_guard real requests: says which robots.txt is
      enforced, that a named bot is refused a disallowed path and a
      browser is served, that the guard is reached at all, and finds
      empty backend answers and missing trusted_proxies; exits 1 on any
      problem.

  caddy robots blocked [--address ADDR | --config FILE] [--zone NAME]
      Lists the clients a running Caddy holds blocked.

  caddy robots unblock IP [--address ADDR | --config FILE] [--zone NAME]
      Lifts every block of IP in a running Caddy and forgets its strikes.

  caddy robots review [--listen ADDR] [--open] [--address ADDR | --config FILE]
      Serves the review page of a running Caddy (what each bot did, the
      rules it broke, a 24-hour chart, unblock buttons) in a browser.

Each command's --help has examples, its output format and exit codes.
`
)

// Caddy is what the commands need of Caddy and of the robots_guard
// handler, as plain functions. Package caddymodule fills in every field.
type Caddy struct {
	// Adapt adapts the body of the config file named file to JSON with
	// the named config adapter and returns the adapter's warnings. Its
	// error wraps [ErrUnknownAdapter] when there is no such adapter.
	Adapt func(adapter, file string, body []byte) (out []byte, warnings []string, err error)
	// Site returns the robots_guard handler that raw, the handler's JSON
	// in a config, configures; nil raw gives the handler's defaults.
	Site func(raw json.RawMessage) (Site, error)
	// AdminAddress returns the admin API address of a running Caddy: the
	// address when given, else the one in the config (or configFile,
	// adapted with configAdapter), else the default.
	AdminAddress func(address string, config []byte, configFile, configAdapter string) (string, error)
	// AdminRequest sends one request to the admin API at addr and returns
	// its answer; an answer of 400 or more is an error.
	AdminRequest func(addr, method, uri string, headers http.Header, body io.Reader) (*http.Response, error)
	// Load runs a JSON config in this process, as caddy run does; Stop
	// stops it. The doctor runs its copy of a config with them.
	Load func(cfg []byte) error
	Stop func() error
}

// ErrUnknownAdapter is the error of [Caddy.Adapt] for a config adapter
// that does not exist.
var ErrUnknownAdapter = errors.New("unknown config adapter")

// Commands returns the subcommands of `caddy robots`, in the order its
// help lists them, using env for what needs Caddy.
func Commands(env *Caddy) []*cobra.Command {
	return []*cobra.Command{checkCommand(env), lintCommand(), classifyCommand(env), reportCommand(), auditCommand(env), doctorCommand(env), blockedCommand(env), unblockCommand(env), reviewCommand(env)}
}

// exitError carries a command's exit status.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// runE adapts a command function to cobra, exiting with its status; the
// command's output and errors are escaped (see [Escape]).
func runE(f func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		// What comes from the Internet is shown, never acted on.
		out, errs := terminal(cmd.OutOrStdout()), terminal(cmd.ErrOrStderr())
		cmd.SetOut(out)
		cmd.SetErr(errs)
		defer out.flush()
		defer errs.flush()
		err := f(cmd, args)
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		return err
	}
}
