package audit

import (
	"cmp"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ReadDir reads the HTML files under a document root, at most maxPages of
// them, breadth first: the home page and the pages near it come first, so
// a cap never leaves out the top of the site. A directory's index.html is
// the page of the directory path ("/docs/"). Site.Unread counts the files
// left out.
func ReadDir(root string, maxPages int) (*Site, error) {
	type file struct{ fsPath, urlPath string }
	var files []file
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := strings.ToLower(filepath.Ext(p))
		if d.IsDir() || ext != ".html" && ext != ".htm" {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		urlPath := "/" + filepath.ToSlash(rel)
		if base := path.Base(urlPath); base == "index.html" || base == "index.htm" {
			urlPath = strings.TrimSuffix(urlPath, base)
		}
		files = append(files, file{p, (&url.URL{Path: urlPath}).EscapedPath()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Breadth first: by depth, then by path.
	slices.SortFunc(files, func(a, b file) int {
		return cmp.Or(cmp.Compare(depth(a.urlPath), depth(b.urlPath)), cmp.Compare(a.urlPath, b.urlPath))
	})
	site := &Site{Pages: map[string]*Page{}}
	for i, f := range files {
		if i >= maxPages {
			site.Unread = len(files) - maxPages
			break
		}
		page, err := readPage(f.fsPath, f.urlPath)
		if err != nil {
			return nil, err
		}
		site.Pages[page.Path] = page
	}
	return site, nil
}

// depth is the number of directories above a URL path's page: "/" and
// "/a.html" are 0, "/docs/" and "/docs/a.html" are 1.
func depth(p string) int { return strings.Count(p, "/") - 1 }

func readPage(fsPath, urlPath string) (*Page, error) {
	f, err := os.Open(fsPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	page, err := ParsePage(urlPath, "", f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fsPath, err)
	}
	return page, nil
}
