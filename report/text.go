package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Plural returns "1 finding", "2 findings": n and the noun, pluralised with
// an "s" unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// WriteText prints the summary for people.
func (s *Summary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "robots_guard report: %s", Plural(s.Decisions, "decision"))
	// The sites: every row below is one site's; with several, each row
	// names its own.
	many := len(s.BySite) > 1
	switch {
	case many:
		fmt.Fprintf(w, " on %d sites (%s)", len(s.BySite), Counts(s.BySite))
	case len(s.BySite) == 1:
		for site := range s.BySite {
			if site != "" {
				fmt.Fprintf(w, " on %s", site)
			}
		}
	}
	if s.From != nil {
		fmt.Fprintf(w, " from %s to %s UTC", s.From.UTC().Format(time.DateTime), s.To.UTC().Format(time.DateTime))
	}
	fmt.Fprintln(w)
	var notes []string
	if s.Folded > 0 {
		notes = append(notes, fmt.Sprintf("%d of them counted from %s of log_repeats", s.Folded, Plural(s.SummaryLines, "summary line")))
	}
	if s.Filtered > 0 {
		notes = append(notes, fmt.Sprintf("%d filtered out", s.Filtered))
	}
	if s.Skipped > 0 {
		notes = append(notes, fmt.Sprintf("%s of other loggers skipped", Plural(s.Skipped, "line")))
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "(%s)\n", strings.Join(notes, "; "))
	}
	if s.DryRun > 0 {
		fmt.Fprintf(w, "dry run: %s reported, not enforced\n", Plural(s.DryRun, "decision"))
	}
	if len(s.Problems) > 0 {
		n := 0
		for _, p := range s.Problems {
			n += p.Count
		}
		fmt.Fprintf(w, "\nreload and provisioning problems (%s):\n", Plural(n, "message"))
		for _, p := range s.Problems {
			fmt.Fprintf(w, "  %-5s %s", p.Level, p.Message)
			if where := p.File + p.URL; where != "" {
				fmt.Fprintf(w, " (%s", where)
				if p.Line > 0 {
					fmt.Fprintf(w, ":%d", p.Line)
				}
				fmt.Fprint(w, ")")
			}
			for _, s := range []string{p.Error, p.Detail} {
				if s != "" {
					fmt.Fprintf(w, ": %s", s)
				}
			}
			if p.Count > 1 {
				fmt.Fprintf(w, " [%d times", p.Count)
				if p.First != nil {
					fmt.Fprintf(w, ", %s to %s", p.First.UTC().Format(time.DateTime), p.Last.UTC().Format(time.DateTime))
				}
				fmt.Fprint(w, "]")
			} else if p.First != nil {
				fmt.Fprintf(w, " [%s]", p.First.UTC().Format(time.DateTime))
			}
			fmt.Fprintln(w)
		}
	}
	if s.Decisions == 0 {
		return
	}
	fmt.Fprintf(w, "\nby action: %s\nby reason: %s\nby class:  %s\n", Counts(s.ByAction), Counts(s.ByReason), Counts(s.ByClass))
	section := func(title string, es []TopEntry, showTokens bool) {
		fmt.Fprintf(w, "\n%s\n", title)
		if len(es) == 0 {
			fmt.Fprintln(w, "  (none)")
		}
		for _, e := range es {
			fmt.Fprintf(w, "  %-40s %6d", e.row(many), e.Count)
			if len(e.Actions) > 0 {
				fmt.Fprintf(w, "  %s", Counts(e.Actions))
			}
			if showTokens && len(e.Tokens) > 0 {
				fmt.Fprintf(w, "  tokens: %s", strings.Join(e.Tokens, ","))
			}
			switch {
			case e.ReadRobots && e.RobotsAt != nil:
				fmt.Fprintf(w, "  read robots.txt %s, then broke a rule", e.RobotsAt.UTC().Format(time.DateTime))
			case e.ReadRobots:
				fmt.Fprint(w, "  read robots.txt (time not logged), then broke a rule")
			}
			fmt.Fprintln(w)
		}
	}
	section("top bots (by product token):", s.TopBots, false)
	section("top client IPs:", s.TopIPs, true)
	section("top paths:", s.TopPaths, false)
	section("read robots.txt, then ignored it:", s.ReadIgnored, true)
	s.BrowserDisallowed.writeText(w, many)
	if len(s.Hourly) == 0 {
		return
	}
	fmt.Fprintln(w, "\nhourly (UTC):")
	maxN := 0
	for _, h := range s.Hourly {
		maxN = max(maxN, h.Count)
	}
	for _, h := range s.Hourly {
		bar := strings.Repeat("#", max(1, h.Count*40/max(maxN, 1)))
		fmt.Fprintf(w, "  %s  %-40s %d\n", h.Hour.UTC().Format("2006-01-02 15:00"), bar, h.Count)
	}
}

// row is how a row names its key: with its site when the report has
// several ("gptbot @ shop.example.com").
func (e *TopEntry) row(many bool) string {
	if many && e.Site != "" {
		return e.Key + " @ " + e.Site
	}
	return e.Key
}

// Counts formats a map as "a 3, b 1", largest first, or "(none)".
func Counts(m map[string]int) string {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	if len(keys) == 0 {
		return "(none)"
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
