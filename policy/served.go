package policy

import (
	"bytes"
	"fmt"
	"strings"
)

// AddedHeading is the comment line that starts the block robots_guard
// appends to the site's robots.txt: every line above it is the owner's, as
// written; every line below it is robots_guard's.
const AddedHeading = "# Added by robots_guard"

// Added is what robots_guard adds to the site's robots.txt: groups of its
// own and Sitemap lines.
type Added struct {
	Groups   []AddedGroup
	Sitemaps []string
}

// AddedGroup is one added group. RFC 9309 section 2.2.1 combines the
// groups that name the same agent, so a group that names an agent the
// owner names adds its rules to the owner's for that agent.
type AddedGroup struct {
	// Note is written as a comment line above the group: what it is for.
	Note   string
	Agents []string
	Rules  []Rule
}

// Empty reports whether a adds nothing.
func (a Added) Empty() bool { return len(a.Groups) == 0 && len(a.Sitemaps) == 0 }

// Serve returns the robots.txt to serve: owner, the site's file, byte for
// byte, then a's lines in a block that AddedHeading starts. Line numbers of
// the owner's lines are the same in the served file. When the owner's last
// group has no Allow or Disallow line, an empty "Disallow:" line (which
// changes none of its rules) ends it first, so that the added User-agent
// lines do not join it. ownerLines is the number of the owner's last line
// in served. When owner and the block together exceed MaxSize
// (crawlers read no further), the owner's rules are written as
// [Robots.Generate] writes them, without comments, before the block.
func Serve(owner []byte, a Added) (served []byte, ownerLines int) {
	if a.Empty() {
		return owner, Lines(owner)
	}
	block := a.block()
	if len(owner)+len(block)+len("Disallow:\n\n") > MaxSize {
		owner = ParseHead(owner, int64(len(owner))).Generate()
	}
	ownerLines = Lines(owner)
	out := make([]byte, 0, len(owner)+len(block)+16)
	out = append(out, owner...)
	if n := len(out); n > 0 && out[n-1] != '\n' && out[n-1] != '\r' {
		out = append(out, '\n')
	}
	if len(owner) > 0 && openLastGroup(owner) {
		out = append(out, "# (ends the group above; an empty Disallow changes none of its rules)\nDisallow:\n"...)
	}
	if len(owner) > 0 {
		out = append(out, '\n')
	}
	return append(out, block...), ownerLines
}

// block writes a's lines under AddedHeading.
func (a Added) block() []byte {
	var b bytes.Buffer
	b.WriteString(AddedHeading)
	b.WriteString(" (the lines above are the site's own)\n")
	for i, g := range a.Groups {
		if i > 0 {
			b.WriteByte('\n')
		}
		if g.Note != "" {
			b.WriteString("# ")
			b.WriteString(strings.NewReplacer("\r", " ", "\n", " ").Replace(g.Note))
			b.WriteByte('\n')
		}
		for _, name := range g.Agents {
			writeLine(&b, KeyUserAgent, name)
		}
		for _, r := range g.Rules {
			writeLine(&b, r.Verb(), escapePatternText(r.Pattern))
		}
	}
	if len(a.Sitemaps) > 0 && len(a.Groups) > 0 {
		b.WriteByte('\n')
	}
	for _, s := range a.Sitemaps {
		writeLine(&b, KeySitemap, s)
	}
	return b.Bytes()
}

// openLastGroup reports whether the file's last group has User-agent lines
// and no Allow or Disallow line: User-agent lines that follow would join it.
func openLastGroup(owner []byte) bool {
	r := ParseHead(owner, int64(len(owner)))
	for i := len(r.Groups) - 1; i >= 0; i-- {
		if g := r.Groups[i]; len(g.Agents) > 0 {
			return len(g.Rules) == 0
		}
	}
	return false
}

// Contradiction is a line of the site's robots.txt that allows, for one
// agent, what a line robots_guard added disallows (a trap, a blocked
// class): the served file allows it (RFC 9309: the longest match wins, and
// Allow wins a tie), so a crawler that obeys the file may fetch it, and
// robots_guard, which enforces what it serves, does not trap or block it
// there.
type Contradiction struct {
	// Agent is the product token, "*" for the global group.
	Agent string
	// Owner is the site's line that allows; Added the added line.
	Owner, Added Rule
	// Path is a path the owner's line allows and the added line would
	// disallow.
	Path string
}

// String names both lines, e.g. `robots.txt line 3 "Allow: /trap-here/open/"
// allows /trap-here/open/ for * that line 12 "Disallow: /trap-here/" (added
// by robots_guard) disallows`.
func (c Contradiction) String() string {
	return fmt.Sprintf("robots.txt line %d %q allows %s for %s that line %d %q (added by robots_guard) disallows",
		c.Owner.Line, c.Owner.String(), c.Path, c.Agent, c.Added.Line, c.Added.String())
}

// Contradictions returns where the served file p (the owner's first
// ownerLines lines, then the added block; see [Serve]) allows, for an
// agent, what an added Disallow line disallows, because of one of the
// owner's lines. At most one is returned per pair of lines.
func Contradictions(p *Policy, ownerLines int) []Contradiction {
	if p == nil {
		return nil
	}
	r := p.Robots()
	byAgent := map[string][]*Group{}
	var agents []string
	for _, g := range r.Groups {
		for _, a := range g.Agents {
			t := a.Token()
			if t == "" {
				continue
			}
			if _, ok := byAgent[t]; !ok {
				agents = append(agents, t)
			}
			byAgent[t] = append(byAgent[t], g)
		}
	}
	var out []Contradiction
	seen := map[[2]int]bool{}
	for _, t := range agents {
		var owner, added []Rule
		for _, g := range byAgent[t] {
			for _, rl := range g.Rules {
				switch {
				case rl.Line > ownerLines && !rl.Allow:
					added = append(added, rl)
				case rl.Line <= ownerLines && rl.Allow:
					owner = append(owner, rl)
				}
			}
		}
		if len(owner) == 0 || len(added) == 0 {
			continue
		}
		tokens := []string{t}
		if t == "*" {
			tokens = nil
		}
		for _, d := range added {
			one := Compile(Parse([]byte("User-agent: *\nDisallow: " + d.Pattern + "\n")))
			samples := []string{samplePath(d.Pattern)}
			for _, a := range owner {
				samples = append(samples, samplePath(a.Pattern))
			}
			for _, path := range samples {
				if one.Match(nil, path).Allowed {
					continue // not what d disallows
				}
				res := p.Match(tokens, path)
				if !res.Allowed || res.Rule == nil || res.Rule.Line > ownerLines || seen[[2]int{res.Rule.Line, d.Line}] {
					continue
				}
				seen[[2]int{res.Rule.Line, d.Line}] = true
				out = append(out, Contradiction{Agent: t, Owner: *res.Rule, Added: d, Path: path})
			}
		}
	}
	return out
}

// samplePath returns a path that pattern matches: its wildcards written as
// "x", its end anchor dropped.
func samplePath(pattern string) string {
	p := strings.TrimSuffix(pattern, "$")
	p = strings.ReplaceAll(p, "*", "x")
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// Lines returns the number of lines of data as the parser counts them.
func Lines(data []byte) int {
	n := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			n++
		case '\r':
			n++
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' && data[len(data)-1] != '\r' {
		n++
	}
	return n
}
