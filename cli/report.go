package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/review"
	"github.com/robotsguard/robotsguard/uaclass"
)

func reportCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "report [--json | --html FILE] [--since T] [--until T] [--host H] [--action A] [--reason R] [--class C] [--token T] [LOGFILE...]",
		Short: "Summarises robots_guard decisions from Caddy JSON logs",
		Long: `
Reads the JSON logs that robots_guard's logger (http.handlers.robots_guard)
writes, plain or gzip-compressed as Caddy rolls them, from the files given
(glob patterns are expanded, so a quoted 'robots_guard*.log*' reads every
rolled file), or from standard input when none is given.

It prints totals by action, reason and class; the top bots, client IPs and
paths, each row of one site (named on the row when the logs hold
several, else in the first line); the clients that read robots.txt and ignored it; an hourly histogram;
and the module's reload and provisioning problems (an invalid robots.txt
that was kept out, a missing file). Those are logged by the robots_guard
logger, to Caddy's main log unless a log of yours includes that name: give
report that log too.

Output: text for people; --json writes one object (decisions, dry_run,
skipped_lines, from, to, by_action, by_reason, by_class, by_site, top_bots,
top_ips, top_paths, read_robots_and_ignored, hourly, problems; every row of
a ranking has its key and its site); --html FILE writes
the review page (the same view as the admin endpoint's /robots_guard/) as
one self-contained file, built from the logs.

Exit status: 0 on success, 1 when a file cannot be read or a flag is wrong.`,
		Example: `  caddy robots report /var/log/caddy/robots_guard.log
  caddy robots report '/var/log/caddy/robots_guard*.log*' --since 24h
  caddy robots report robots_guard.log robots_guard-2026-11-29T10-00-00.000.log.gz --class ai --reason disallowed
  caddy robots report robots_guard.log --action deny,tarpit
  caddy robots report robots_guard.log /var/log/caddy/caddy.log      # with the problems from Caddy's main log
  caddy robots report --json --top 20 < robots_guard.log
  caddy robots report --html review.html --robots /srv/www/robots.txt robots_guard.log`,
	}
	c.Flags().Bool("json", false, "write the report as JSON")
	c.Flags().String("html", "", "write the review page, built from the logs, to this file")
	c.Flags().StringSlice("robots", nil, "robots.txt files to show in the --html page, matched to the logged versions by hash")
	c.Flags().Int("top", 10, "how many bots, IPs and paths to list")
	c.Flags().String("since", "", "only entries at or after this time (2026-11-30, '2026-11-30 15:04', RFC 3339, or a duration before now: 24h)")
	c.Flags().String("until", "", "only entries before this time (same forms as --since)")
	c.Flags().StringSlice("host", nil, "only requests for these hosts")
	c.Flags().StringSlice("action", nil, "only these actions ("+strings.Join(actionNames(), ", ")+")")
	c.Flags().StringSlice("reason", nil, "only these reasons ("+strings.Join(reasonNames(), ", ")+")")
	c.Flags().StringSlice("class", nil, "only these User-Agent classes ("+strings.Join(classNames(), ", ")+")")
	c.Flags().StringSlice("token", nil, "only these product tokens (gptbot, ...)")
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		asJSON, _ := cmd.Flags().GetBool("json")
		htmlFile, _ := cmd.Flags().GetString("html")
		top, _ := cmd.Flags().GetInt("top")
		if asJSON && htmlFile != "" {
			return fmt.Errorf("--json and --html: give one")
		}
		f, err := reportFilter(cmd)
		if err != nil {
			return err
		}
		files, err := report.ExpandFiles(args)
		if err != nil {
			return err
		}
		if htmlFile != "" {
			robotsFiles, _ := cmd.Flags().GetStringSlice("robots")
			return writeReportHTML(cmd, htmlFile, files, f, robotsFiles)
		}
		rep := report.New()
		lines, err := report.ReadFiles(files, cmd.InOrStdin(), f, rep.Add, rep.AddMessage)
		if err != nil {
			return err
		}
		sum := rep.Summary(top, lines)
		if asJSON {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(sum)
		}
		sum.WriteText(cmd.OutOrStdout())
		return nil
	})
	return c
}

// reportFilter reads the filter flags.
func reportFilter(cmd *cobra.Command) (*report.Filter, error) {
	f := &report.Filter{}
	now := time.Now()
	for _, flag := range []struct {
		name string
		to   *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		v, _ := cmd.Flags().GetString(flag.name)
		if v == "" {
			continue
		}
		t, err := report.ParseTime(v, now)
		if err != nil {
			return nil, fmt.Errorf("--%s: %v", flag.name, err)
		}
		*flag.to = t
	}
	lower := func(name string) []string {
		vs, _ := cmd.Flags().GetStringSlice(name)
		for i, v := range vs {
			vs[i] = strings.ToLower(strings.TrimSpace(v))
		}
		return vs
	}
	f.Hosts, f.Actions, f.Reasons, f.Classes, f.Tokens = lower("host"), lower("action"), lower("reason"), lower("class"), lower("token")
	if err := checkValues("action", f.Actions, actionNames()); err != nil {
		return nil, err
	}
	if err := checkValues("reason", f.Reasons, reasonNames()); err != nil {
		return nil, err
	}
	if err := checkValues("class", f.Classes, classNames()); err != nil {
		return nil, err
	}
	return f, nil
}

// checkValues refuses a value of an enumerated flag that is not one of
// valid, naming the valid ones: a misspelt filter would select nothing,
// and "0 decisions" would read as "nothing was refused".
func checkValues(flag string, values, valid []string) error {
	for _, v := range values {
		if !slices.Contains(valid, v) {
			return fmt.Errorf("--%s: unknown %s %q%s; want one of %s", flag, flag, v, field.Suggest(v, valid, nil, nil), strings.Join(valid, ", "))
		}
	}
	return nil
}

// reasonNames are the reasons of the decision log, as --reason takes
// them: enforce.Reasons, "none" for an ordinary request.
func reasonNames() []string {
	var out []string
	for _, r := range enforce.Reasons {
		if r == enforce.ReasonNone {
			r = "none"
		}
		out = append(out, string(r))
	}
	return out
}

// actionNames are the actions of the decision log, as --action takes
// them.
func actionNames() []string {
	var out []string
	for _, a := range enforce.Actions {
		out = append(out, a.String())
	}
	return out
}

// classNames are the User-Agent classes, as --class takes them.
func classNames() []string {
	var out []string
	for _, c := range uaclass.Classes() {
		out = append(out, c.String())
	}
	return out
}

// writeReportHTML writes the review page built from the logs.
func writeReportHTML(cmd *cobra.Command, name string, files []string, f *report.Filter, robotsFiles []string) error {
	var texts [][]byte
	for _, rf := range robotsFiles {
		data, err := os.ReadFile(rf)
		if err != nil {
			return fmt.Errorf("--robots: %v", err)
		}
		texts = append(texts, data)
	}
	v, err := report.View(files, f, texts)
	if err != nil {
		return err
	}
	page, err := review.StaticPage(v)
	if err != nil {
		return err
	}
	if err := os.WriteFile(name, page, 0o644); err != nil {
		return err
	}
	bots := 0
	for _, z := range v.Zones {
		bots += len(z.Bots)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%d bytes): %s in %s\n", name, len(page), report.Plural(bots, "row"), report.Plural(len(v.Zones), "zone"))
	return nil
}
