package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/robotsguard/robotsguard/internal/stacktable"
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
var impersonated = map[string]string{"chrome": "chromium", "edge": "chromium", "firefox": "firefox", "tor": "firefox", "safari": "webkit"}

// generate makes the table (stacks.tsv) from the inputs in dir.
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
	err := readObserved(filepath.Join(dir, "observed.tsv"), func(o observed) error {
		ja4, err := checked(o.ja4, o.raw)
		if err != nil {
			return err
		}
		return add(ja4, o.family, o.browser, fmt.Sprintf("observed: %s, %s (%s)", o.client, short(o.version), o.transport))
	})
	if err == nil {
		err = readImpersonated(filepath.Join(dir, "curl-impersonate.tsv"), func(s signature) error {
			return add(s.hello.JA4(), s.family, true, s.source+": "+s.name)
		})
	}
	if err == nil {
		err = stacktable.ReadFile(filepath.Join(dir, "foxio.tsv"), 4, func(f []string) error {
			return add(f[0], f[1], f[2] == "browser", "FoxIO ja4plus-mapping.csv@0e54bc8: "+f[3])
		})
	}
	if err != nil {
		return "", err
	}
	all := make([]*row, 0, len(rows))
	for _, r := range rows {
		all = append(all, r)
	}
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
	out.WriteString(`# TLS stacks by exact JA4 (see docs/tls-fingerprint.md), for a JA4 a CDN passes on (ja4_header):
# a handshake Caddy sees is judged by its family (families.tsv). Made by go run ./tlsprint/internal/collect
# from tlsprint/internal/collect/testdata: do not edit. Columns: JA4 (its cipher and extension
# hashes are compared), family, kind, sources.
`)
	for _, r := range all {
		fmt.Fprintf(&out, "%s\t%s\t%s\t%s\n", r.ja4, r.family, stacktable.Kind(r.browser), strings.Join(r.sources, "; "))
	}
	if _, err := tlsprint.ParseTable(out.String()); err != nil {
		return "", err
	}
	return out.String(), nil
}

// observed is one line of observed.tsv.
type observed struct {
	client, version, transport, ja4, raw string
	family                               string
	browser                              bool
	// hello is the whole hello; nil where the run that saw it kept none.
	hello *tlsprint.Hello
}

// families returns the family of each client -observe drives, and whether
// it is a browser's.
func families() map[string]tlsclients.Client {
	m := map[string]tlsclients.Client{}
	for _, c := range tlsclients.Clients {
		m[c.Name] = tlsclients.Client{Family: c.Family, Browser: c.Browser}
	}
	for _, v := range variants(nil) {
		m[v.name] = tlsclients.Client{Family: v.family, Browser: v.browser}
	}
	return m
}

// signature is one line of curl-impersonate.tsv.
type signature struct {
	name, source, family string
	hello                tlsprint.Hello
}

// readImpersonated reads curl-impersonate.tsv, checking that each line's
// hello makes its JA4_ro.
func readImpersonated(path string, f func(signature) error) error {
	return stacktable.ReadFile(path, 4, func(l []string) error {
		browser, _, _ := strings.Cut(l[0], "_")
		family, ok := impersonated[browser]
		if !ok {
			return fmt.Errorf("curl-impersonate signature %q: unknown browser", l[0])
		}
		h, err := tlsprint.ParseHello(l[3])
		if err != nil {
			return err
		}
		if got := h.Raw(true); got != l[1] {
			return fmt.Errorf("%s: the hello makes %s, not the JA4_ro %s", l[0], got, l[1])
		}
		return f(signature{name: l[0], source: l[2], family: family, hello: h})
	})
}

// readObserved reads observed.tsv, checking each line: a client -observe
// knows, and a hello (where kept) whose JA4 is the line's.
func readObserved(path string, f func(observed) error) error {
	fams := families()
	return stacktable.ReadFile(path, 6, func(l []string) error {
		c, ok := fams[l[0]]
		if !ok {
			return fmt.Errorf("unknown client %q", l[0])
		}
		o := observed{client: l[0], version: l[1], transport: l[2], ja4: l[3], raw: l[4], family: c.Family, browser: c.Browser}
		if l[5] != "-" {
			h, err := tlsprint.ParseHello(l[5])
			if err != nil {
				return err
			}
			if got := h.JA4(); got != o.ja4 {
				return fmt.Errorf("the hello's JA4 is %s, not %s", got, o.ja4)
			}
			o.hello = &h
		}
		return f(o)
	})
}

// short keeps the first words of a version line.
func short(v string) string {
	f := strings.Fields(v)
	return strings.Join(f[:min(len(f), 5)], " ")
}

// familyHello is a whole hello of a known family, and where it was seen.
type familyHello struct {
	family, source string
	browser        bool
	hello          tlsprint.Hello
}

// familyHellos returns every whole hello of the inputs in dir.
func familyHellos(dir string) ([]familyHello, error) {
	var out []familyHello
	err := readObserved(filepath.Join(dir, "observed.tsv"), func(o observed) error {
		if o.hello != nil {
			out = append(out, familyHello{o.family, "observed: " + o.client + ", " + short(o.version), o.browser, *o.hello})
		}
		return nil
	})
	if err == nil {
		err = readImpersonated(filepath.Join(dir, "curl-impersonate.tsv"), func(s signature) error {
			out = append(out, familyHello{s.family, s.source + ": " + s.name, true, s.hello})
			return nil
		})
	}
	return out, err
}

// deriveFamilies derives a profile of each family and transport from
// hellos, in a stable order: browsers first, then by name, TCP first.
func deriveFamilies(hellos []familyHello) (*tlsprint.Families, error) {
	type key struct {
		family  string
		browser bool
		quic    bool
	}
	groups := map[key][]tlsprint.Hello{}
	var keys []key
	for _, h := range hellos {
		k := key{h.family, h.browser, h.browser && h.hello.QUIC}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], h.hello)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.browser != b.browser {
			return a.browser
		}
		if a.family != b.family {
			return a.family < b.family
		}
		return !a.quic && b.quic
	})
	f := &tlsprint.Families{}
	for _, k := range keys {
		p, err := tlsprint.DeriveProfile(k.family, k.browser, k.quic, groups[k])
		if err != nil {
			return nil, err
		}
		f.Profiles = append(f.Profiles, p)
	}
	return f, nil
}

// generateFamilies makes families.tsv from the inputs in dir.
func generateFamilies(dir string) (string, error) {
	hellos, err := familyHellos(dir)
	if err != nil {
		return "", err
	}
	f, err := deriveFamilies(hellos)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	out.WriteString(`# TLS stacks by family (see docs/tls-fingerprint.md): what every hello of a stack has that its
# caller does not set in one line. Made by go run ./tlsprint/internal/collect from the whole hellos
# of tlsprint/internal/collect/testdata: do not edit. Columns: family, kind, transport (a library's
# profile is of both), marks (in every hello), browser marks sent (in any), signature algorithms
# in the family's order, extensions in its order ("-": its hellos disagree), number of hellos.
`)
	for _, p := range f.Profiles {
		line, _ := p.MarshalText()
		out.Write(line)
		out.WriteByte('\n')
	}
	if _, err := tlsprint.ParseFamilies(out.String()); err != nil {
		return "", err
	}
	return out.String(), nil
}
