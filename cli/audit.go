package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/audit"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/upstream"
)

func auditCommand(env *Caddy) *cobra.Command {
	c := &cobra.Command{
		Use:   "audit [--robots FILE] (--root DIR | --url BASE) [--max-pages N] [--json]",
		Short: "Finds what robots.txt cannot do for a site: the noindex paradox and its relatives",
		Long: `
Reads the site's HTML, from its document root (--root) or by crawling it
(--url), and reports for the generic crawler, each with a fix: pages marked
noindex that robots.txt keeps crawlers from reading; disallowed pages
linked from allowed pages; disallowed images that allowed pages embed with
ALT text; images whose pages disagree about noimageindex; and the
robots.txt's lint findings. Hidden links (a robots_guard trap's) are no
finding.

With --url it crawls as a polite crawler (User-Agent ` + audit.UserAgent + `):
it reads the served robots.txt first and never requests a path it
disallows for robotsguard-audit (so it never walks into a trap or earns
strikes), keeps the Crawl-delay (else one request a second; --delay),
waits out a 429 once, and stops if the site blocks it. Pages it may not
read cannot be checked for noindex: audit --root can. Refusals, the page
cap and an early stop are reported after the findings. Pages are read
breadth first, so the home page and the top of the site come first.

Progress goes to standard error: a progress bar on a terminal, a line every
50 pages otherwise (--quiet: none).

Output: one block per finding ("severity: path [kind]: message", then
"pages:" and "fix:" lines) and a count; --json writes an object with
"findings" (kind, severity, path, line, message, fix, pages) and, for
--url, "crawl" (pages, requests, refusals, disallowed, unread, stopped).

Exit status: 0 when the audit ran (findings or not), 1 when it could not
(bad flags, unreadable robots.txt or root, unreachable site).`,
		Example: `  caddy robots audit --root /srv/www
  caddy robots audit --robots /srv/www/robots.txt --root /srv/www --max-pages 5000
  caddy robots audit --url https://example.com --json > audit.json`,
	}
	c.Flags().StringP("robots", "r", "", "robots.txt to audit against, a file or an http(s) URL (default: DIR/robots.txt, or the one BASE serves)")
	c.Flags().String("root", "", "the site's document root")
	c.Flags().String("url", "", "base URL of a running site to crawl")
	c.Flags().Int("max-pages", 1000, "most pages to read")
	c.Flags().Duration("delay", 0, "pause between requests with --url (default: the robots.txt's Crawl-delay, else 1s; -1s for none)")
	c.Flags().Bool("json", false, "write the findings as JSON")
	c.Flags().BoolP("quiet", "q", false, "no progress on standard error")
	c.RunE = runE(func(cmd *cobra.Command, _ []string) error {
		robotsFile, _ := cmd.Flags().GetString("robots")
		root, _ := cmd.Flags().GetString("root")
		base, _ := cmd.Flags().GetString("url")
		maxPages, _ := cmd.Flags().GetInt("max-pages")
		delay, _ := cmd.Flags().GetDuration("delay")
		asJSON, _ := cmd.Flags().GetBool("json")
		quiet, _ := cmd.Flags().GetBool("quiet")
		if (root == "") == (base == "") {
			return errors.New("give one of --root DIR and --url BASE")
		}
		if maxPages < 1 {
			return fmt.Errorf("--max-pages: %d is not a number of pages", maxPages)
		}
		var robots []byte
		var err error
		if robotsFile == "" && root != "" {
			robotsFile = filepath.Join(root, "robots.txt")
		}
		switch {
		case upstream.IsURL(robotsFile):
			// The application's own robots.txt, fetched as the
			// handler fetches it.
			if robots, err = robotsAt(cmd.Context(), env, robotsFile); err != nil {
				return err
			}
		case robotsFile != "":
			if robots, err = os.ReadFile(robotsFile); err != nil {
				return err
			}
		}
		var site *audit.Site
		var crawl *audit.Crawl
		if root != "" {
			if site, err = audit.ReadDir(root, maxPages); err != nil {
				return err
			}
		} else {
			o := audit.CrawlOptions{MaxPages: maxPages, Delay: delay}
			var bar *progress
			if !quiet {
				bar = newProgress(cmd.ErrOrStderr(), maxPages)
				o.Progress = bar.update
			}
			crawl, err = audit.CrawlSite(base, o)
			bar.end()
			if err != nil {
				return err
			}
			site = crawl.Site
			if robotsFile == "" {
				robots = crawl.Robots
			}
		}
		findings := audit.Audit(policy.Parse(robots), site)
		out := cmd.OutOrStdout()
		if asJSON {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			return enc.Encode(auditJSON(findings, site, crawl))
		}
		audit.WriteText(out, findings)
		if crawl != nil {
			audit.WriteCrawl(out, crawl, maxPages)
		} else {
			audit.WriteUnread(out, site, maxPages)
		}
		return nil
	})
	return c
}

// robotsAt reads the robots.txt at an application's URL once, as a
// handler whose robots option is that URL reads it.
func robotsAt(ctx context.Context, env *Caddy, url string) ([]byte, error) {
	raw, err := json.Marshal(struct {
		Robots string `json:"robots"`
	}{url})
	if err != nil {
		return nil, err
	}
	site, err := env.Site(raw)
	if err != nil {
		return nil, err
	}
	return site.Robots(ctx)
}

// auditJSON is the object "caddy robots audit --json" writes.
func auditJSON(findings []audit.Finding, site *audit.Site, crawl *audit.Crawl) any {
	type crawlJSON struct {
		Pages      int             `json:"pages"`
		Requests   int             `json:"requests"`
		Refusals   []audit.Refusal `json:"refusals"`
		Disallowed int             `json:"disallowed_links"`
		Unread     int             `json:"unread"`
		Stopped    string          `json:"stopped,omitempty"`
	}
	out := struct {
		Findings []audit.Finding `json:"findings"`
		Pages    int             `json:"pages"`
		Unread   int             `json:"unread"`
		Crawl    *crawlJSON      `json:"crawl,omitempty"`
	}{Findings: findings, Pages: len(site.Pages), Unread: site.Unread}
	if crawl != nil {
		out.Crawl = &crawlJSON{Pages: len(site.Pages), Requests: crawl.Requests, Refusals: crawl.Refusals, Disallowed: crawl.Disallowed, Unread: site.Unread, Stopped: crawl.Stopped}
		if out.Crawl.Refusals == nil {
			out.Crawl.Refusals = []audit.Refusal{}
		}
	}
	return out
}

// progress shows a crawl's progress on standard error: a bar redrawn in
// place on a terminal, a line every 50 pages otherwise.
type progress struct {
	w        io.Writer
	terminal bool
	max      int
	lastLine int
}

func newProgress(w io.Writer, maxPages int) *progress {
	p := &progress{w: w, max: maxPages}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

// end ends the bar's line on a terminal; elsewhere there is none.
func (p *progress) end() {
	if p != nil && p.terminal {
		fmt.Fprintln(p.w)
	}
}

func (p *progress) update(s audit.Progress) {
	total := min(p.max, s.Read+s.Queued)
	if !p.terminal {
		if s.Read >= p.lastLine+50 {
			p.lastLine = s.Read
			fmt.Fprintf(p.w, "audit: %d pages read, %d to go, %d refused\n", s.Read, s.Queued, s.Refused)
		}
		return
	}
	const width = 30
	done := width
	if total > 0 {
		done = min(width, s.Read*width/total)
	}
	path := s.Path
	if len(path) > 40 {
		path = path[:37] + "..."
	}
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d pages, %d refused  %s", strings.Repeat("#", done), strings.Repeat(".", width-done), s.Read, total, s.Refused, path)
}
