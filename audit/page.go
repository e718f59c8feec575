// Package audit finds what robots.txt cannot do for a site: pages marked
// noindex that crawlers never read, disallowed pages linked from allowed
// ones, disallowed images embedded with ALT text, images whose pages
// disagree about noimageindex, and the robots.txt's lint findings. It reads
// a document root or crawls a running site politely (robots.txt first,
// never a disallowed path). It does not import Caddy.
package audit

import (
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// Site is what the audit reads of a site: its HTML pages, and what it could
// not read.
type Site struct {
	// Pages are the pages read, by path (with query).
	Pages map[string]*Page
	// Unread counts the pages left unread because of the page cap.
	Unread int
}

// Page is what the audit reads of one HTML page.
type Page struct {
	// Path is the page's path (with query).
	Path string
	// Robots are the meta robots directives, lower-cased.
	Robots []string
	// Links are the same-site links (paths with query) made with <a href>.
	Links []Link
	// Images are the same-site images.
	Images []Image
}

// Link is one same-site link.
type Link struct {
	// Target is the linked path (with query, without fragment).
	Target string
	// Hidden marks a link people cannot see or follow (display:none,
	// visibility:hidden, the hidden attribute or aria-hidden, on the link
	// or an ancestor): a trap for crawlers, not a way into the index.
	Hidden bool
}

// Image is one same-site image.
type Image struct {
	Src, Alt string
}

// ParsePage reads the meta robots directives, links and images of an HTML
// page at pagePath; links and images are resolved against it, and only
// same-site ones are kept (host == "" for a document root).
func ParsePage(pagePath, host string, r io.Reader) (*Page, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return nil, err
	}
	p := &Page{Path: pagePath}
	base := &url.URL{Path: pagePath}
	if before, query, ok := strings.Cut(pagePath, "?"); ok {
		base = &url.URL{Path: before, RawQuery: query}
	}
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
	var walk func(n *html.Node, hidden bool)
	walk = func(n *html.Node, hidden bool) {
		if n.Type == html.ElementNode {
			attr := func(name string) (string, bool) {
				for _, a := range n.Attr {
					if strings.EqualFold(a.Key, name) {
						return a.Val, true
					}
				}
				return "", false
			}
			hidden = hidden || isHidden(attr)
			switch n.Data {
			case "meta":
				if name, _ := attr("name"); strings.EqualFold(name, "robots") {
					content, _ := attr("content")
					for _, d := range strings.Split(content, ",") {
						if d = strings.ToLower(strings.TrimSpace(d)); d != "" {
							p.Robots = append(p.Robots, d)
						}
					}
				}
			case "a":
				href, _ := attr("href")
				if t, ok := resolve(href); ok {
					p.Links = append(p.Links, Link{Target: t, Hidden: hidden})
				}
			case "img":
				src, _ := attr("src")
				if t, ok := resolve(src); ok {
					alt, _ := attr("alt")
					p.Images = append(p.Images, Image{Src: t, Alt: alt})
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, hidden)
		}
	}
	walk(doc, false)
	return p, nil
}

// isHidden reports whether an element's attributes hide it from people.
func isHidden(attr func(string) (string, bool)) bool {
	if _, ok := attr("hidden"); ok {
		return true
	}
	if v, _ := attr("aria-hidden"); strings.EqualFold(strings.TrimSpace(v), "true") {
		return true
	}
	style, _ := attr("style")
	style = strings.ToLower(strings.Join(strings.Fields(style), ""))
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden")
}
