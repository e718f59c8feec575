package policy

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
)

// Generate writes r as standard robots.txt text: deterministic, with keys
// in their standard spelling (typos corrected), and round-trip safe:
// parsing the output gives the same answer as r for every query, in both
// readings of the groups (see [Reading]).
//
// The layout is: file-wide fields that must precede the groups (QueryParam
// defaults and unknown fields), then each group with its User-agent lines,
// its other fields and its rules, groups separated by a blank line, then
// Sitemap, Host, Domain and IndexPage. A group that joins the next one in
// Google's reading ([Group.JoinNext]) keeps the line that ended it: its own
// fields, or the Sitemap, Host, Domain or IndexPage line that stood there.
// Any other group without rules that another group follows gets an empty
// "Disallow:" line, which allows everything as the group did but keeps the
// next group's User-agent lines from joining it in any reading. Rules that
// stood before any User-agent line had no effect and are written as
// comments.
func (r *Robots) Generate() []byte {
	var b bytes.Buffer
	var tail []Field
	for _, f := range r.Fields {
		switch f.Key {
		case KeySitemap, KeyHost, KeyDomain, KeyIndexPage:
			tail = append(tail, f)
		case KeyAllow, KeyDisallow:
			b.WriteString("# ignored, before any User-agent line: ")
			writeLine(&b, f.Key, f.Value)
		default:
			writeLine(&b, f.Key, f.Value)
		}
	}
	var groups []*Group
	for _, g := range r.Groups {
		if len(g.Agents) > 0 {
			groups = append(groups, g) // a group without agents applies to no crawler
		}
	}
	for i, g := range groups {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		for _, a := range g.Agents {
			writeLine(&b, KeyUserAgent, a.Name)
		}
		if g.JoinNext && len(g.Fields) == 0 && i+1 < len(groups) {
			// Write the file-wide lines that ended the group where they
			// stood.
			kept := tail[:0]
			for _, f := range tail {
				if g.Line < f.Line && f.Line < groups[i+1].Line {
					writeLine(&b, f.Key, f.Value)
				} else {
					kept = append(kept, f)
				}
			}
			tail = kept
		}
		for _, f := range g.Fields {
			writeLine(&b, f.Key, f.Value)
		}
		for _, rule := range g.Rules {
			writeLine(&b, rule.Verb(), escapePatternText(rule.Pattern))
		}
		if len(g.Rules) == 0 && !g.JoinNext && (len(g.Fields) == 0 || i+1 < len(groups)) {
			writeLine(&b, KeyDisallow, "")
		}
	}
	if len(tail) > 0 && b.Len() > 0 {
		b.WriteByte('\n')
	}
	for _, f := range tail {
		writeLine(&b, f.Key, f.Value)
	}
	if out := b.Bytes(); len(out) > 0 && out[0] == 0xEF {
		// Parse skips a (partial) byte order mark, which would eat the start
		// of a key that begins with the same byte.
		return append([]byte{'\n'}, out...)
	}
	return b.Bytes()
}

// writeLine writes "key: value\n". Line ends and '#' in programmatically
// added values would change the file's structure, so they are dropped.
func writeLine(b *bytes.Buffer, key, value string) {
	b.WriteString(cleanText(key))
	b.WriteByte(':')
	if value = cleanText(value); value != "" {
		b.WriteByte(' ')
		b.WriteString(value)
	}
	b.WriteByte('\n')
}

func cleanText(s string) string {
	if !strings.ContainsAny(s, "\r\n#") {
		return s
	}
	s = strings.NewReplacer("\r", " ", "\n", " ", "#", "").Replace(s)
	return trimSpace(s)
}

// patternEscaper writes the characters of a pattern that would change the
// line's meaning as the escapes they are equivalent to after normalisation:
// '#' would start a comment, white space at either end would be trimmed.
var patternEscaper = strings.NewReplacer("#", "%23", " ", "%20", "\t", "%09", "\r", "%0D", "\n", "%0A", "\v", "%0B", "\f", "%0C")

func escapePatternText(p string) string {
	return patternEscaper.Replace(p)
}

// CheckSitemap checks a Sitemap URL to be generated: absolute http(s), and
// nothing that would break the line it is written on.
func CheckSitemap(u string) error {
	if strings.ContainsFunc(u, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("%q contains white space or control characters", u)
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.Scheme != "http" && p.Scheme != "https" {
		return fmt.Errorf("%q is not an absolute http(s) URL", u)
	}
	return nil
}
