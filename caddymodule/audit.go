package caddymodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/net/html"

	"github.com/robotsguard/robotsguard/policy"
)

// auditUA is the User-Agent of "caddy robots audit --url". Allowlist it
// (allow_token robotsguard-audit) so that robots_guard lets it read the
// pages it must inspect.
const auditUA = "robotsguard-audit/1.0 (+https://github.com/robotsguard/robotsguard)"

func auditCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "audit --robots FILE (--root DIR | --url BASE)",
		Short: "Finds what robots.txt cannot do for a site: the noindex paradox and its relatives",
	}
	c.Flags().StringP("robots", "r", "", "robots.txt file (default: DIR/robots.txt, or BASE/robots.txt)")
	c.Flags().String("root", "", "the site's document root")
	c.Flags().String("url", "", "base URL of a running site to crawl")
	c.Flags().Int("max-pages", 1000, "most pages to read")
	c.Flags().Bool("json", false, "write the findings as JSON")
	c.RunE = runE(func(cmd *cobra.Command, _ []string) error {
		robotsFile, _ := cmd.Flags().GetString("robots")
		root, _ := cmd.Flags().GetString("root")
		base, _ := cmd.Flags().GetString("url")
		maxPages, _ := cmd.Flags().GetInt("max-pages")
		asJSON, _ := cmd.Flags().GetBool("json")
		if (root == "") == (base == "") {
			return errors.New("give one of --root DIR and --url BASE")
		}
		var site *auditSite
		var robots []byte
		var err error
		if root != "" {
			if robotsFile == "" {
				robotsFile = filepath.Join(root, "robots.txt")
			}
			if robots, err = os.ReadFile(robotsFile); err != nil {
				return err
			}
			if site, err = readSiteDir(root, maxPages); err != nil {
				return err
			}
		} else {
			if robotsFile != "" {
				if robots, err = os.ReadFile(robotsFile); err != nil {
					return err
				}
			}
			if site, robots, err = crawlSite(base, robots, maxPages); err != nil {
				return err
			}
		}
		findings := audit(policy.Parse(robots), site)
		if asJSON {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(findings)
		}
		writeFindings(cmd.OutOrStdout(), findings)
		return nil
	})
	return c
}

// auditSite is what the audit reads of a site: its HTML pages.
type auditSite struct {
	pages map[string]*auditPage // by path
}

type auditPage struct {
	path   string
	robots []string // meta robots directives, lower-cased
	links  []string // same-site paths (with query) linked with <a href>
	images []auditImage
}

type auditImage struct {
	src, alt string
}

// parsePage reads the meta robots directives, links and images of an HTML
// page at pagePath; links and images are resolved against it, and only
// same-site ones are kept (host == "" for a document root).
func parsePage(pagePath, host string, r io.Reader) (*auditPage, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return nil, err
	}
	p := &auditPage{path: pagePath}
	base := &url.URL{Path: pagePath}
	resolve := func(ref string) (string, bool) {
		u, err := url.Parse(strings.TrimSpace(ref))
		if err != nil || u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" {
			return "", false
		}
		if u.Host != "" && !strings.EqualFold(u.Host, host) {
			return "", false // another site
		}
		u = base.ResolveReference(u)
		if u.Path == "" {
			return "", false
		}
		t := u.EscapedPath()
		if u.RawQuery != "" {
			t += "?" + u.RawQuery
		}
		return t, true
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			attr := func(name string) string {
				for _, a := range n.Attr {
					if strings.EqualFold(a.Key, name) {
						return a.Val
					}
				}
				return ""
			}
			switch n.Data {
			case "meta":
				if strings.EqualFold(attr("name"), "robots") {
					for _, d := range strings.Split(attr("content"), ",") {
						if d = strings.ToLower(strings.TrimSpace(d)); d != "" {
							p.robots = append(p.robots, d)
						}
					}
				}
			case "a":
				if t, ok := resolve(attr("href")); ok {
					p.links = append(p.links, t)
				}
			case "img":
				if t, ok := resolve(attr("src")); ok {
					p.images = append(p.images, auditImage{src: t, alt: attr("alt")})
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return p, nil
}

// readSiteDir reads the HTML files under a document root. A directory's
// index.html is the page of the directory path ("/docs/").
func readSiteDir(root string, maxPages int) (*auditSite, error) {
	site := &auditSite{pages: map[string]*auditPage{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := strings.ToLower(filepath.Ext(p))
		if d.IsDir() || ext != ".html" && ext != ".htm" || len(site.pages) >= maxPages {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		urlPath := "/" + filepath.ToSlash(rel)
		if base := path.Base(urlPath); base == "index.html" || base == "index.htm" {
			urlPath = strings.TrimSuffix(urlPath, base)
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		page, err := parsePage((&url.URL{Path: urlPath}).EscapedPath(), "", f)
		if err != nil {
			return fmt.Errorf("%s: %v", p, err)
		}
		site.pages[page.path] = page
		return nil
	})
	return site, err
}

// crawlSite reads a running site from base, following same-site links,
// with the robots.txt it serves unless one is given.
func crawlSite(base string, robots []byte, maxPages int) (*auditSite, []byte, error) {
	u, err := url.Parse(strings.TrimSuffix(base, "/"))
	if err != nil || u.Host == "" {
		return nil, nil, fmt.Errorf("--url %q is not an absolute URL", base)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(p string) (*http.Response, error) {
		req, err := http.NewRequest("GET", u.Scheme+"://"+u.Host+p, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("User-Agent", auditUA)
		return client.Do(req)
	}
	if robots == nil {
		resp, err := get("/robots.txt")
		if err != nil {
			return nil, nil, err
		}
		robots, _ = io.ReadAll(io.LimitReader(resp.Body, policy.MaxSize))
		resp.Body.Close()
		if resp.StatusCode != 200 {
			robots = nil
		}
	}
	site := &auditSite{pages: map[string]*auditPage{}}
	queue := []string{"/"}
	seen := map[string]bool{"/": true}
	for len(queue) > 0 && len(site.pages) < maxPages {
		p := queue[0]
		queue = queue[1:]
		resp, err := get(p)
		if err != nil {
			return nil, nil, err
		}
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			resp.Body.Close()
			continue
		}
		page, err := parsePage(p, u.Host, io.LimitReader(resp.Body, 8<<20))
		resp.Body.Close()
		if err != nil {
			continue
		}
		site.pages[p] = page
		for _, l := range page.links {
			l, _, _ = strings.Cut(l, "#")
			if !seen[l] {
				seen[l] = true
				queue = append(queue, l)
			}
		}
	}
	return site, robots, nil
}

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

// audit finds, for the generic crawler (the "*" group): pages marked
// noindex that crawlers may not read; disallowed pages linked from allowed
// pages; disallowed images embedded in allowed pages; images whose pages
// disagree about noimageindex; and the robots.txt's lint findings.
func audit(r *policy.Robots, site *auditSite) []Finding {
	p := policy.Compile(r)
	var out []Finding
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
	paths := make([]string, 0, len(site.pages))
	for path := range site.pages {
		paths = append(paths, path)
	}
	sort.Strings(paths)

	linkedFrom := map[string][]string{}   // disallowed target -> allowed pages linking it
	embeddedIn := map[string][]string{}   // disallowed image -> allowed pages embedding it
	imagePages := map[string][]string{}   // image -> pages embedding it
	imageNoIndex := map[string][]string{} // image -> embedding pages with noimageindex/none
	for _, path := range paths {
		page := site.pages[path]
		if rl, disallowed := rule(path); disallowed && hasDirective(page.robots, "noindex", "none") {
			out = append(out, Finding{
				Kind: "noindex_disallowed", Severity: "warning", Path: path, Line: rl.Line,
				Message: fmt.Sprintf("the page is marked noindex, but %s keeps crawlers from reading it: they never see the tag, and the URL can still be indexed from links", ruleText(rl)),
				Fix:     fmt.Sprintf("let crawlers fetch %s (narrow or remove the Disallow) so they see noindex, or send noindex as a header with robots_guard's x_robots_tag and still allow the fetch", path),
			})
		}
		if _, disallowed := rule(path); disallowed {
			continue // only allowed pages are read by crawlers
		}
		for _, l := range page.links {
			if _, disallowed := rule(l); disallowed {
				linkedFrom[l] = appendOnce(linkedFrom[l], path)
			}
		}
		for _, img := range page.images {
			imagePages[img.src] = appendOnce(imagePages[img.src], path)
			if hasDirective(page.robots, "noimageindex", "none") {
				imageNoIndex[img.src] = appendOnce(imageNoIndex[img.src], path)
			}
			if _, disallowed := rule(img.src); disallowed && img.alt != "" {
				embeddedIn[img.src] = appendOnce(embeddedIn[img.src], path)
			}
		}
	}
	for _, target := range slices.Sorted(maps.Keys(linkedFrom)) {
		rl, _ := rule(target)
		if page, ok := site.pages[target]; ok && hasDirective(page.robots, "noindex", "none") {
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
			if !contains(imageNoIndex[img], p) {
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
	for _, d := range ds {
		for _, n := range names {
			if d == n {
				return true
			}
		}
	}
	return false
}

func appendOnce(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	return append(list, s)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeFindings prints findings as text, one block each.
func writeFindings(w io.Writer, fs []Finding) {
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
	fmt.Fprintf(w, "%d findings\n", len(fs))
}
