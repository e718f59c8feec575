package audit

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/robotsguard/robotsguard/policy"
)

// Finding is one problem the audit found.
type Finding struct {
	// Kind names the problem: noindex_disallowed, disallowed_linked,
	// disallowed_image_embedded, conflicting_image_robots or lint.
	Kind string `json:"kind"`
	// Severity is "warning" or "info" (or the lint finding's).
	Severity string `json:"severity"`
	// Path is the page or image the finding is about; Line is the
	// robots.txt line, for rules and lint findings.
	Path string `json:"path,omitempty"`
	Line int    `json:"line,omitempty"`
	// Message says what is wrong; Fix says what to do.
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
	// Pages are the pages involved (linking or embedding pages).
	Pages []string `json:"pages,omitempty"`
}

// Audit finds, for the generic crawler (the "*" group): pages marked
// noindex that crawlers may not read; disallowed pages linked from allowed
// pages (hidden links, such as a robots_guard trap's, do not count: nobody
// follows them into an index); disallowed images embedded in allowed pages;
// images whose pages disagree about noimageindex; and the robots.txt's lint
// findings.
func Audit(r *policy.Robots, site *Site) []Finding {
	p := policy.Compile(r)
	out := []Finding{}
	for _, d := range r.Lint() {
		out = append(out, Finding{Kind: "lint", Severity: d.Severity.String(), Line: d.Line, Message: d.Message})
	}
	rule := func(target string) (*policy.Rule, bool) {
		t, _ := policy.ParseTarget(target)
		res := p.MatchTarget(nil, &t)
		return res.Rule, !res.Allowed
	}
	ruleText := func(rl *policy.Rule) string {
		return fmt.Sprintf("robots.txt line %d (%s)", rl.Line, rl)
	}
	paths := slices.Sorted(maps.Keys(site.Pages))

	linkedFrom := map[string][]string{}   // disallowed target -> allowed pages linking it
	embeddedIn := map[string][]string{}   // disallowed image -> allowed pages embedding it
	imagePages := map[string][]string{}   // image -> pages embedding it
	imageNoIndex := map[string][]string{} // image -> embedding pages with noimageindex/none
	for _, path := range paths {
		page := site.Pages[path]
		if rl, disallowed := rule(path); disallowed && hasDirective(page.Robots, "noindex", "none") {
			out = append(out, Finding{
				Kind: "noindex_disallowed", Severity: "warning", Path: path, Line: rl.Line,
				Message: fmt.Sprintf("the page is marked noindex, but %s keeps crawlers from reading it: they never see the tag, and the URL can still be indexed from links", ruleText(rl)),
				Fix:     fmt.Sprintf("let crawlers fetch %s (narrow or remove the Disallow) so they see noindex, or send noindex as a header with robots_guard's x_robots_tag and still allow the fetch", path),
			})
		}
		if _, disallowed := rule(path); disallowed {
			continue // only allowed pages are read by crawlers
		}
		for _, l := range page.Links {
			if _, disallowed := rule(l.Target); disallowed && !l.Hidden {
				linkedFrom[l.Target] = appendOnce(linkedFrom[l.Target], path)
			}
		}
		for _, img := range page.Images {
			imagePages[img.Src] = appendOnce(imagePages[img.Src], path)
			if hasDirective(page.Robots, "noimageindex", "none") {
				imageNoIndex[img.Src] = appendOnce(imageNoIndex[img.Src], path)
			}
			if _, disallowed := rule(img.Src); disallowed && img.Alt != "" {
				embeddedIn[img.Src] = appendOnce(embeddedIn[img.Src], path)
			}
		}
	}
	for _, target := range slices.Sorted(maps.Keys(linkedFrom)) {
		rl, _ := rule(target)
		if page, ok := site.Pages[target]; ok && hasDirective(page.Robots, "noindex", "none") {
			continue // already reported as noindex_disallowed
		}
		out = append(out, Finding{
			Kind: "disallowed_linked", Severity: "warning", Path: target, Line: rl.Line, Pages: linkedFrom[target],
			Message: fmt.Sprintf("disallowed by %s for all crawlers, but linked from allowed pages: search engines can index the URL from the links without reading it", ruleText(rl)),
			Fix:     fmt.Sprintf("to keep %s out of the index, allow crawling it and mark it noindex (meta tag or x_robots_tag), or remove the links; to only save crawl budget, nothing to do", target),
		})
	}
	for _, img := range slices.Sorted(maps.Keys(embeddedIn)) {
		rl, _ := rule(img)
		out = append(out, Finding{
			Kind: "disallowed_image_embedded", Severity: "warning", Path: img, Line: rl.Line, Pages: embeddedIn[img],
			Message: fmt.Sprintf("the image is disallowed by %s, but allowed pages embed it with ALT text: image search can index it from the ALT text and the page", ruleText(rl)),
			Fix:     fmt.Sprintf("allow crawling %s and send noimageindex for it (x_robots_tag %s noimageindex), or drop the ALT text from public pages", img, img),
		})
	}
	for _, img := range slices.Sorted(maps.Keys(imageNoIndex)) {
		if len(imageNoIndex[img]) == len(imagePages[img]) {
			continue
		}
		var without []string
		for _, p := range imagePages[img] {
			if !slices.Contains(imageNoIndex[img], p) {
				without = append(without, p)
			}
		}
		out = append(out, Finding{
			Kind: "conflicting_image_robots", Severity: "warning", Path: img, Pages: imagePages[img],
			Message: fmt.Sprintf("pages disagree about indexing this image: %s mark noimageindex, %s do not; the image can be indexed from the pages that do not", strings.Join(imageNoIndex[img], ", "), strings.Join(without, ", ")),
			Fix:     fmt.Sprintf("put the directive on the image itself: x_robots_tag %s noimageindex", img),
		})
	}
	return out
}

func hasDirective(ds []string, names ...string) bool {
	return slices.ContainsFunc(ds, func(d string) bool { return slices.Contains(names, d) })
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// WriteText prints findings as text, one block each, then their count.
func WriteText(w io.Writer, fs []Finding) {
	if len(fs) == 0 {
		fmt.Fprintln(w, "no findings")
		return
	}
	for _, f := range fs {
		where := f.Path
		if f.Kind == "lint" {
			where = fmt.Sprintf("robots.txt:%d", f.Line)
		}
		fmt.Fprintf(w, "%s: %s [%s]: %s\n", f.Severity, where, f.Kind, f.Message)
		if len(f.Pages) > 0 {
			fmt.Fprintf(w, "  pages: %s\n", strings.Join(f.Pages, ", "))
		}
		if f.Fix != "" {
			fmt.Fprintf(w, "  fix: %s\n", f.Fix)
		}
	}
	fmt.Fprintln(w, plural(len(fs), "finding", "findings"))
}

// plural returns "1 page" or "2 pages".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// WriteCrawl prints what a crawl could not do, so that findings over a
// partial crawl are not taken for the whole story: refusals, the page cap,
// an early stop and the links left alone because robots.txt disallows them.
func WriteCrawl(w io.Writer, c *Crawl, maxPages int) {
	fmt.Fprintf(w, "crawl: %s read in %s", plural(len(c.Site.Pages), "page", "pages"), plural(c.Requests, "request", "requests"))
	if c.Disallowed > 0 {
		fmt.Fprintf(w, "; %s not followed because robots.txt disallows them", plural(c.Disallowed, "link", "links"))
	}
	if c.NotPages > 0 {
		fmt.Fprintf(w, "; %s not an HTML page", plural(c.NotPages, "answer was", "answers were"))
	}
	fmt.Fprintln(w)
	if len(c.Site.Pages) == 0 && c.FirstNotPage != "" {
		fmt.Fprintf(w, "warning: no page could be read: %s\n", c.FirstNotPage)
	}
	WriteUnread(w, c.Site, maxPages)
	if len(c.Refusals) > 0 {
		fmt.Fprintf(w, "warning: the site refused %d of %s; the findings cover only the pages read:\n", len(c.Refusals), plural(c.Requests, "request", "requests"))
		for i, r := range c.Refusals {
			if i == 10 {
				fmt.Fprintf(w, "  ... and %d more\n", len(c.Refusals)-10)
				break
			}
			fmt.Fprintf(w, "  %d %s", r.Status, r.Path)
			if r.Guard != "" {
				fmt.Fprintf(w, " (X-Robots-Guard: %s)", r.Guard)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "  to let the audit read every allowed page, add allow_token %s to the site's robots_guard\n", Token)
	}
	if c.Stopped != "" {
		fmt.Fprintf(w, "warning: the crawl stopped early: %s\n", c.Stopped)
	}
}

// WriteUnread warns when the page cap left pages unread.
func WriteUnread(w io.Writer, s *Site, maxPages int) {
	if s.Unread > 0 {
		fmt.Fprintf(w, "warning: stopped at --max-pages %d; %d more were not read (raise --max-pages to read them)\n", maxPages, s.Unread)
	}
}
