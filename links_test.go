package robotsguard

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinks: every relative link of the README and of the pages under
// docs/ resolves: the file exists, and an anchor (#section) names a heading
// of the page it points to, spelled as GitHub makes heading anchors. A
// reference link ([text][name] or [name]) whose definition another page
// holds but this one does not is reported too: GitHub does not look across
// files.
func TestDocLinks(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "README.md")
	defs := map[string]map[string]string{} // page → name → target
	texts := map[string]string{}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[p] = prose(string(b))
		defs[p] = map[string]string{}
		for _, m := range refDef.FindAllStringSubmatch(texts[p], -1) {
			defs[p][strings.ToLower(m[1])] = m[2]
		}
	}
	anyDef := map[string]bool{}
	for _, d := range defs {
		for name := range d {
			anyDef[name] = true
		}
	}
	checked := 0
	for _, p := range pages {
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(texts[p], -1) {
			targets = append(targets, m[1])
		}
		for _, target := range defs[p] {
			targets = append(targets, target)
		}
		for _, m := range refUse.FindAllStringSubmatch(texts[p], -1) {
			name := strings.ToLower(m[2])
			if name == "" {
				name = strings.ToLower(m[1])
			}
			if _, ok := defs[p][name]; !ok && (m[2] != "" || anyDef[name]) {
				t.Errorf("%s: reference link [%s] has no definition in this file", p, name)
			}
		}
		for _, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			dest := p
			if file != "" {
				dest = filepath.Join(filepath.Dir(p), file)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: %v", p, target, err)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			b, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: link %q: %v", p, target, err)
				continue
			}
			if !anchors(string(b))[anchor] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", p, target, dest, anchor)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked only %d relative links", checked)
	}
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refDef     = regexp.MustCompile(`(?m)^\[([^\]]+)\]:\s*(\S+)`)
	refUse     = regexp.MustCompile(`\[([^\]\[]+)\](?:\[([^\]]*)\])?(?:[^(\[:]|$)`)
	fence      = regexp.MustCompile("(?ms)^```.*?^```")
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
)

// prose is a page without its code blocks and code spans, where brackets
// are code, not links.
func prose(s string) string {
	s = fence.ReplaceAllString(s, "")
	return codeSpan.ReplaceAllString(s, "code")
}

// anchors are the anchors GitHub gives a page's headings: lower case,
// punctuation dropped but for '-' and '_', spaces made '-', a repeated
// heading numbered.
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for line := range strings.SplitSeq(fence.ReplaceAllString(page, ""), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}
