package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/robotsguard/robotsguard/framing"
	"github.com/robotsguard/robotsguard/internal/stacktable"
)

// families names each client's HTTP stack by the HTTP version it spoke:
// the browsers' engines, and the libraries by the code that writes their
// requests (urllib and requests both through http.client, httpx through
// h11 and h2, the uTLS client through Go's net/http and x/net/http2).
var families = map[string]map[string]string{
	"chromium":        {"": "chromium"},
	"firefox-esr":     {"": "firefox"},
	"curl":            {"": "curl"},
	"wget":            {"": "wget"},
	"python-urllib":   {"": "python"},
	"python-requests": {"": "python"},
	"python-httpx":    {"h1": "python-h11", "h2": "python-h2"},
	"python-aiohttp":  {"": "aiohttp"},
	"scrapy":          {"": "twisted"},
	"node":            {"": "node"},
	"java":            {"": "java"},
	"go":              {"": "go"},
	"utls":            {"": "go"},
	"quic-go":         {"": "quic-go"},
}

// browserFamilies are the browser engines'.
var browserFamilies = map[string]bool{"chromium": true, "firefox": true, "webkit": true}

// familyOf returns the family of a client's stack over proto.
func familyOf(client, proto string) (string, error) {
	f, ok := families[client]
	if !ok {
		return "", fmt.Errorf("unknown client %q", client)
	}
	if s, ok := f[proto]; ok {
		return s, nil
	}
	if s, ok := f[""]; ok {
		return s, nil
	}
	return "", fmt.Errorf("no family of %s over %s", client, proto)
}

// row is one match of the table and everything that saw it.
type row struct {
	match, family string
	sources       []string
}

// generate makes the table from the inputs in dir: a row for each
// fingerprint observed (one family each: a fingerprint of two stops the
// generator), and a row for each HTTP/2 and HTTP/3 shape that only one
// family was seen to send. No browser's fingerprint may be one the rules
// of HTTP/1.1 stacks (framing.H1Stack) give a library.
func generate(dir string) (string, error) {
	rows := map[string]*row{}
	add := func(match, family, source string) error {
		r := rows[match]
		if r == nil {
			r = &row{match: match, family: family}
			rows[match] = r
		}
		if r.family != family {
			return fmt.Errorf("%s is %s (%s) and %s (%s)", match, r.family, strings.Join(r.sources, "; "), family, source)
		}
		for _, s := range r.sources {
			if s == source {
				return nil
			}
		}
		r.sources = append(r.sources, source)
		return nil
	}
	err := stacktable.ReadFile(filepath.Join(dir, "observed.tsv"), 5, func(f []string) error {
		if f[4] == "-" {
			return nil // no fingerprint (the client's first request was incomplete)
		}
		proto, _, _ := strings.Cut(f[2], " ")
		if !strings.HasPrefix(f[4], proto+":") {
			return fmt.Errorf("%s over %s: fingerprint %s", f[0], f[2], f[4])
		}
		family, err := familyOf(f[0], proto)
		if err != nil {
			return err
		}
		if browserFamilies[family] && proto == "h1" {
			if s := framing.H1Stack(f[4][5:]); s.Known {
				return fmt.Errorf("%s's %s is %s by the rules of HTTP/1.1 stacks", f[0], f[4], s.Family)
			}
		}
		return add(f[4], family, fmt.Sprintf("observed: %s, %s (%s)", f[0], short(f[1]), f[2]))
	})
	if err != nil {
		return "", err
	}
	// Shapes that one family alone sends, and pseudo-header orders that
	// only libraries send: observed, and (browsers' only) published.
	shapes := map[string]map[string]bool{}
	shapeSources := map[string][]string{}
	orders := map[string]map[string]bool{} // HTTP/2 pseudo-header order -> families
	seeShape := func(shape, family string, sources ...string) {
		if shapes[shape] == nil {
			shapes[shape] = map[string]bool{}
		}
		shapes[shape][family] = true
		shapeSources[shape] = append(shapeSources[shape], sources...)
		if order, ok := strings.CutPrefix(shape, "h2~"); ok {
			_, order, _ = strings.Cut(order, "|")
			if orders[order] == nil {
				orders[order] = map[string]bool{}
			}
			orders[order][family] = true
		}
	}
	for _, r := range rows {
		if s := framing.Shape(r.match); s != "" {
			seeShape(s, r.family, r.sources...)
		}
	}
	err = stacktable.ReadFile(filepath.Join(dir, "published.tsv"), 3, func(f []string) error {
		if !browserFamilies[f[0]] {
			return fmt.Errorf("published %s: %s is not a browser", f[1], f[0])
		}
		shape := f[1]
		if !strings.HasPrefix(shape, "h2~") {
			shape = framing.Shape("h2:" + f[1] + "|0")
		}
		if strings.Count(shape, "|") != 1 {
			return fmt.Errorf("published %q: not a fingerprint or shape", f[1])
		}
		seeShape(shape, f[0], "published: "+f[2])
		return nil
	})
	if err == nil {
		err = stacktable.ReadFile(filepath.Join(dir, "curl-impersonate.tsv"), 2, func(f []string) error {
			browser, _, _ := strings.Cut(f[0], "_")
			family, ok := map[string]string{"chrome": "chromium", "edge": "chromium", "firefox": "firefox", "safari": "webkit"}[browser]
			if !ok {
				return fmt.Errorf("curl-impersonate signature %q: unknown browser", f[0])
			}
			if orders[f[1]] == nil {
				orders[f[1]] = map[string]bool{}
			}
			orders[f[1]][family] = true
			return nil
		})
	}
	if err != nil {
		return "", err
	}
	var all []*row
	for _, r := range rows {
		all = append(all, r)
	}
	for s, fams := range shapes {
		if len(fams) != 1 {
			continue
		}
		var family string
		for f := range fams {
			family = f
		}
		seen := slices.Clone(shapeSources[s])
		sort.Strings(seen)
		all = append(all, &row{match: s, family: family, sources: []string{fmt.Sprintf("shape of %d rows: %s", len(seen), summary(seen))}})
	}
	for order, fams := range orders {
		var libs []string
		for f := range fams {
			if browserFamilies[f] {
				libs = nil
				break
			}
			libs = append(libs, f)
		}
		if len(libs) == 0 {
			continue
		}
		sort.Strings(libs)
		all = append(all, &row{match: "h2~*|" + order, family: strings.Join(libs, "/"), sources: []string{"a pseudo-header order no browser sends (observed, published, curl-impersonate)"}})
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if ab, bb := browserFamilies[a.family], browserFamilies[b.family]; ab != bb {
			return ab
		}
		if a.family != b.family {
			return a.family < b.family
		}
		return a.match < b.match
	})
	var out strings.Builder
	out.WriteString(`# HTTP stacks by framing fingerprint (see docs/tls-fingerprint.md). Made by go run ./framing/internal/collect
# from framing/internal/collect/testdata: do not edit. Columns: match, family, kind, sources.
# A match is a fingerprint, or a shape (h2~settings ids|pseudo-header order, h3~settings ids)
# that only that stack was seen to send, or an HTTP/2 pseudo-header order no browser sends (h2~*|order).
`)
	for _, r := range all {
		fmt.Fprintf(&out, "%s\t%s\t%s\t%s\n", r.match, r.family, stacktable.Kind(browserFamilies[r.family]), strings.Join(r.sources, "; "))
	}
	if _, err := framing.ParseTable(out.String()); err != nil {
		return "", err
	}
	return out.String(), nil
}

// short keeps the first words of a version line.
func short(v string) string {
	f := strings.Fields(v)
	return strings.Join(f[:min(len(f), 5)], " ")
}

// summary names the clients of sources, at most a few.
func summary(sources []string) string {
	var names []string
	seen := map[string]bool{}
	for _, s := range sources {
		name, _, _ := strings.Cut(strings.TrimPrefix(s, "observed: "), ",")
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	if len(names) > 6 {
		names = append(names[:6], fmt.Sprintf("%d more", len(names)-6))
	}
	return strings.Join(names, ", ")
}
