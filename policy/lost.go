package policy

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Lost is what a robots.txt larger than [MaxSize] loses to the cut (RFC
// 9309 section 2.5): the rules of its ignored end and the groups they
// belong to. "caddy robots lint" (the whole file in memory) and a running
// handler (the file's head in memory, the rest streamed through
// [ParseHeadRest]) count it the same way, and the truncated lint finding
// says it.
type Lost struct {
	// Bytes is how many bytes are ignored, and Counted how many of them
	// were read and counted (fewer when the rest of the file was not at
	// hand, as for a body fetched up to MaxSize+1 bytes).
	Bytes, Counted int64
	// Rules is how many Allow and Disallow lines they hold, and StarRules
	// how many of those are in groups for "*" (the end of the group the
	// cut falls in, if it names "*", and the groups for "*" after it).
	Rules, StarRules int
	// Cut is the group the cut falls in when rules of its end are lost;
	// nil when none are.
	Cut *Group
	// Agents are the User-agent values of the groups after the cut (the
	// first maxLostAgents different ones, in file order), and MoreAgents
	// how many User-agent lines follow that are not among them.
	Agents     []string
	MoreAgents int
}

// maxLostAgents bounds the User-agent values a [Lost] keeps.
const maxLostAgents = 1000

// maxLostLine is how much of a line of the ignored end is kept to read its
// key and value: a key is short, and a User-agent value is shown clipped.
const maxLostLine = 1024

// Lost returns what the cut lost (the zero Lost for a file within
// [MaxSize]).
func (r *Robots) Lost() Lost {
	if r.lost == nil {
		return Lost{}
	}
	return *r.lost
}

// RuleCount returns how many Allow and Disallow lines the file's groups
// hold, and how many of them apply to "*" (groups that name "*", and the
// groups a group for "*" joins in the reference reading, [Group.JoinNext]).
func (r *Robots) RuleCount() (rules, star int) {
	joined := false // the group before joins this one and names "*"
	for _, g := range r.Groups {
		isStar := joined || names(g, "*")
		rules += len(g.Rules)
		if isStar {
			star += len(g.Rules)
		}
		joined = g.JoinNext && isStar
	}
	return rules, star
}

// names reports whether g names the product token tok.
func names(g *Group, tok string) bool {
	for _, a := range g.Agents {
		if a.Token() == tok {
			return true
		}
	}
	return false
}

// ParseHeadRest is [ParseHead] for a file whose bytes after data can be
// read from rest (nil: none), for a caller that keeps only the head in
// memory: rest is read to its end, in pieces, to count what the cut loses
// ([Robots.Lost], the truncated lint finding), as [Parse] counts it with
// the whole file. On a read error it returns the Robots with what was
// counted so far, and the error.
func ParseHeadRest(data []byte, size int64, rest io.Reader) (*Robots, error) {
	r, lost, p := parseHead(data, size)
	if r.truncated == 0 {
		return r, nil
	}
	c := newLostCounter(p.cur)
	_, _ = c.Write(lost)
	var err error
	if rest != nil {
		_, err = io.Copy(c, rest)
	}
	c.end()
	c.lost.Bytes, c.lost.Counted = max(int64(r.truncated), c.bytes), c.bytes
	r.lost = &c.lost
	_, star := r.RuleCount()
	p.diag(p.lines, Warning, CodeTruncated, fmt.Sprintf("file is larger than %d bytes: the last %d bytes are ignored%s", MaxSize, c.lost.Bytes, c.lost.summary(star)))
	return r, err
}

// summary says what the cut lost: its rules and the groups they belong
// to, and that no rule is left for "*" when so; kept is the number of
// rules for "*" before the cut.
func (l *Lost) summary(kept int) string {
	if l.Rules == 0 {
		return ""
	}
	var parts []string
	if l.Cut != nil {
		parts = append(parts, fmt.Sprintf("the end of the group for %s (line %d)", agentList(l.Cut), l.Cut.Line))
	}
	if len(l.Agents) > 0 {
		const show = 8
		names := make([]string, 0, show)
		for _, a := range l.Agents[:min(len(l.Agents), show)] {
			names = append(names, fmt.Sprintf("%q", clip(a)))
		}
		more := ""
		if n := len(l.Agents) - show + l.MoreAgents; n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		parts = append(parts, "the groups for "+strings.Join(names, ", ")+more)
	}
	read := ""
	if l.Counted < l.Bytes {
		read = fmt.Sprintf(" in the first %d of them (the rest was not read)", l.Counted)
	}
	s := fmt.Sprintf(", with %s%s: %s are lost", Rules(l.Rules), read, strings.Join(parts, " and "))
	if l.StarRules > 0 && kept == 0 {
		s += fmt.Sprintf(`; every rule for "*" is lost (%d)`, l.StarRules)
	}
	return s
}

// Rules says "1 rule" or "n rules".
func Rules(n int) string {
	if n == 1 {
		return "1 rule"
	}
	return fmt.Sprintf("%d rules", n)
}

// lostCounter counts the lines of the ignored end of a file as they are
// written to it, keeping only the start of the current line.
type lostCounter struct {
	lost  Lost
	bytes int64
	line  []byte // the current line's start, up to maxLostLine bytes
	seen  map[string]bool
	// cut is the group the cut falls in; star is set while the lines read
	// belong to a group for "*"; agents is set after a User-agent line
	// that no other field has followed yet (the next one joins its
	// group); after is set once a User-agent line was read.
	cut                 *Group
	star, agents, after bool
}

func newLostCounter(cut *Group) *lostCounter {
	c := &lostCounter{cut: cut, seen: map[string]bool{}}
	c.star = cut != nil && names(cut, "*")
	return c
}

// Write counts p's lines; a line may span calls.
func (c *lostCounter) Write(p []byte) (int, error) {
	n := len(p)
	c.bytes += int64(n)
	for len(p) > 0 {
		i := lineEnd(p)
		if i < 0 {
			c.keep(p)
			break
		}
		if len(c.line) == 0 { // the whole line is in p
			c.countLine(p[:min(i, maxLostLine)])
		} else {
			c.keep(p[:i])
			c.countLine(c.line)
			c.line = c.line[:0]
		}
		p = p[i+1:]
	}
	return n, nil
}

func (c *lostCounter) keep(p []byte) {
	if room := maxLostLine - len(c.line); room > 0 {
		c.line = append(c.line, p[:min(len(p), room)]...)
	}
}

// end counts the last line, which has no line end.
func (c *lostCounter) end() {
	if len(c.line) > 0 {
		c.countLine(c.line)
		c.line = c.line[:0]
	}
}

// lineEnd returns the index of the first CR or LF in p, or -1.
func lineEnd(p []byte) int {
	for i, b := range p {
		if b == '\n' || b == '\r' {
			return i
		}
	}
	return -1
}

// ruleLine reports whether line is plainly an Allow or Disallow line
// ("Disallow:" or "Allow:" after any white space, in any case), the lines
// most of a large file holds, read without making a string of them.
func ruleLine(line []byte) bool {
	line = bytes.TrimLeft(line, " \t")
	for _, key := range []string{"disallow:", "allow:"} {
		if len(line) >= len(key) && bytes.EqualFold(line[:len(key)], []byte(key)) {
			return true
		}
	}
	return false
}

// countLine counts one line (its first maxLostLine bytes).
func (c *lostCounter) countLine(b []byte) {
	if ruleLine(b) {
		c.rule()
		c.agents = false
		return
	}
	line := string(b)
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	key, value, ok := splitKeyValue(trimSpace(line))
	if !ok {
		return
	}
	kind, _, _ := classifyKey(key)
	switch kind {
	case kindUserAgent:
		if !c.agents {
			c.star = false // a new group
		}
		c.agents, c.after = true, true
		c.star = c.star || isGlobalAgent(value)
		switch {
		case c.seen[value]:
		case len(c.lost.Agents) < maxLostAgents:
			c.seen[value] = true
			c.lost.Agents = append(c.lost.Agents, value)
		default:
			c.lost.MoreAgents++
		}
		return
	case kindAllow, kindDisallow:
		c.rule()
	}
	c.agents = false
}

// rule counts an Allow or Disallow line.
func (c *lostCounter) rule() {
	c.lost.Rules++
	if c.star {
		c.lost.StarRules++
	}
	if !c.after && c.cut != nil {
		c.lost.Cut = c.cut
	}
}
