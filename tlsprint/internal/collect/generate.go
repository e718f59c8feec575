package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/robotsguard/robotsguard/internal/tlsclients"
	"github.com/robotsguard/robotsguard/tlsprint"
)

// row is one JA4 of the table and everything that saw it.
type row struct {
	ja4, family string
	browser     bool
	sources     []string
}

// families of public data: curl-impersonate's browser names.
var impersonated = map[string]string{"chrome": "chromium", "edge": "chromium", "firefox": "firefox", "safari": "webkit"}

// generate makes the table from the inputs in dir.
func generate(dir string) (string, error) {
	rows := map[string]*row{}
	add := func(ja4, family string, browser bool, source string) error {
		if !tlsprint.Valid(ja4) {
			return fmt.Errorf("%q is not a JA4 (%s)", ja4, source)
		}
		r := rows[ja4]
		if r == nil {
			r = &row{ja4: ja4, family: family, browser: browser}
			rows[ja4] = r
		}
		if r.family != family {
			return fmt.Errorf("%s is %s (%s) and %s (%s)", ja4, r.family, strings.Join(r.sources, "; "), family, source)
		}
		for _, s := range r.sources {
			if s == source {
				return nil
			}
		}
		r.sources = append(r.sources, source)
		return nil
	}
	// checked returns a JA4 recomputed from its JA4_ro, which must agree.
	checked := func(ja4, ro string) (string, error) {
		h, err := tlsprint.ParseRaw(ro)
		if err != nil {
			return "", err
		}
		if got := h.JA4(); got != ja4 {
			return "", fmt.Errorf("JA4_ro %s makes %s, not %s", ro, got, ja4)
		}
		return ja4, nil
	}
	clients := map[string]*tlsclients.Client{}
	for _, c := range tlsclients.Clients {
		clients[c.Name] = c
	}
	err := readTSV(filepath.Join(dir, "observed.tsv"), 5, func(f []string) error {
		c := clients[f[0]]
		if c == nil {
			return fmt.Errorf("unknown client %q", f[0])
		}
		ja4, err := checked(f[3], f[4])
		if err != nil {
			return err
		}
		return add(ja4, c.Family, c.Browser, fmt.Sprintf("observed: %s, %s (%s)", f[0], short(f[1]), f[2]))
	})
	if err == nil {
		err = readTSV(filepath.Join(dir, "curl-impersonate.tsv"), 3, func(f []string) error {
			browser, _, _ := strings.Cut(f[0], "_")
			family, ok := impersonated[browser]
			if !ok {
				return fmt.Errorf("curl-impersonate signature %q: unknown browser", f[0])
			}
			h, err := tlsprint.ParseRaw(f[1])
			if err != nil {
				return err
			}
			return add(h.JA4(), family, true, f[2]+": "+f[0])
		})
	}
	if err == nil {
		err = readTSV(filepath.Join(dir, "foxio.tsv"), 4, func(f []string) error {
			return add(f[0], f[1], f[2] == "browser", "FoxIO ja4plus-mapping.csv@0e54bc8: "+f[3])
		})
	}
	if err != nil {
		return "", err
	}
	// A browser engine's cipher sets, each sent by it alone.
	ciphers := map[string]map[string]bool{} // cipher hash -> families
	for _, r := range rows {
		b := r.ja4[11:23]
		if ciphers[b] == nil {
			ciphers[b] = map[string]bool{}
		}
		ciphers[b][r.family] = true
	}
	var sets []*row
	for b, fams := range ciphers {
		if len(fams) != 1 {
			continue
		}
		var seen []string
		var family string
		for _, r := range rows {
			if r.ja4[11:23] == b && r.browser && r.ja4[4:6] > "03" {
				family = r.family
				seen = append(seen, r.sources...)
			}
		}
		if family == "" {
			continue
		}
		sort.Strings(seen)
		sets = append(sets, &row{ja4: "*_" + b + "_*", family: family, browser: true, sources: []string{fmt.Sprintf("cipher set of %d rows: %s", len(seen), summary(seen))}})
	}
	all := make([]*row, 0, len(rows)+len(sets))
	for _, r := range rows {
		all = append(all, r)
	}
	all = append(all, sets...)
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.browser != b.browser {
			return a.browser
		}
		if a.family != b.family {
			return a.family < b.family
		}
		return a.ja4 < b.ja4
	})
	var out strings.Builder
	out.WriteString(`# TLS stacks by JA4 (see docs/tls-fingerprint.md). Made by go run ./tlsprint/internal/collect
# from tlsprint/internal/collect/testdata: do not edit. Columns: match, family, kind, sources.
# A match is a JA4 (its cipher and extension hashes are compared) or *_<cipher hash>_*, a
# cipher set that only that browser engine sends.
`)
	for _, r := range all {
		kind := "library"
		if r.browser {
			kind = "browser"
		}
		fmt.Fprintf(&out, "%s\t%s\t%s\t%s\n", r.ja4, r.family, kind, strings.Join(r.sources, "; "))
	}
	if _, err := tlsprint.ParseTable(out.String()); err != nil {
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
		name := s
		if i := strings.LastIndex(s, ": "); i >= 0 {
			name = s[i+2:]
		}
		if strings.HasPrefix(s, "observed: ") {
			name, _, _ = strings.Cut(strings.TrimPrefix(s, "observed: "), " (")
		}
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

// readTSV calls f with the fields of each line of a tab-separated file
// that is not a "#" comment; each must have n fields.
func readTSV(path string, n int, f func([]string) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if sc.Text() == "" || strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != n {
			return fmt.Errorf("%s:%d: %d fields, want %d", path, line, len(fields), n)
		}
		if err := f(fields); err != nil {
			return fmt.Errorf("%s:%d: %v", path, line, err)
		}
	}
	return sc.Err()
}
