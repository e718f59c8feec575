package policy

import (
	"strconv"
	"strings"
	"time"
)

// Robots is the parsed model of a robots.txt file. Nothing in the file is
// lost: lines that do not affect matching are kept as [Field]s, and
// [Robots.Generate] writes them back. A Robots may be edited (see
// [Robots.AddGroup], [Robots.AddRulesToAll], [Robots.AddSitemap]) and then
// compiled with [Compile]. It is not safe for concurrent mutation.
type Robots struct {
	// Groups holds the groups in file order. Groups that name the same agent
	// are merged by [Compile], not here.
	Groups []*Group

	// Fields holds the file-wide fields in file order: Sitemap, Host,
	// Domain and IndexPage wherever they stand, and every field that stands
	// before the first User-agent line (rules there have no effect and are
	// reported by [Robots.Lint]).
	Fields []Field

	diags []Diagnostic
	// truncated is the number of bytes beyond MaxSize that were ignored,
	// and lost what they held (nil when none were).
	truncated int
	lost      *Lost
	// binary is set for content that is binary data rather than text.
	binary bool
	// added is the line of the AddedHeading comment in a served file (0
	// for none): the lines from there on are robots_guard's.
	added int
}

// Group is one group of a robots.txt file: one or more User-agent lines and
// the rules and fields that follow them.
type Group struct {
	// Agents holds the User-agent lines of the group.
	Agents []Agent
	// Rules holds the Allow and Disallow lines in file order.
	Rules []Rule
	// Fields holds the group's other lines in file order: Crawl-delay,
	// QueryParam and unknown fields.
	Fields []Field
	// Line is the line number of the group's first User-agent line, or 0 for
	// a group that was added programmatically.
	Line int
	// JoinNext is set by [Parse] on a group without Allow or Disallow lines
	// whose User-agent lines are followed by another line (Crawl-delay,
	// Sitemap, Host, any unknown line) and then by the next group's
	// User-agent lines. Google's reference parser and RFC 9309 read the two
	// as one group ([GoogleReading]); Scrapy's protego and temoto read two
	// ([SplitReading]). Groups holds them as two; [Compile] compiles both
	// readings.
	JoinNext bool
}

// Agent is the value of one User-agent line.
type Agent struct {
	// Name is the value as written, e.g. "Googlebot" or "*".
	Name string
	// Line is the line number, or 0 for an added agent.
	Line int
}

// Token returns the product token that the agent line names: "*" for the
// global group (also for "* anything", as the reference parser reads it),
// otherwise [ProductToken] of the name. It returns "" when the name holds no
// product token; such a line names no crawler.
func (a Agent) Token() string {
	if isGlobalAgent(a.Name) {
		return "*"
	}
	return ProductToken(a.Name)
}

func isGlobalAgent(name string) bool {
	return name != "" && name[0] == '*' && (len(name) == 1 || isSpace(name[1]))
}

// Rule is one Allow or Disallow line, or, where a decision names the line
// that decided, one of the preference lines (Content-Usage,
// Content-Signal). A [Group]'s Rules are Allow and Disallow lines only.
type Rule struct {
	// Allow is true for an Allow line and false for a Disallow line.
	Allow bool
	// Pattern is the value as written, e.g. "/private/" or "/*.gif$"; for
	// a preference line, its whole value, e.g. "/ai-ok/ train-ai=y".
	Pattern string
	// Line is the line number, or 0 for a rule that was added
	// programmatically.
	Line int
	// Key is "" for Allow and Disallow, and the key of a preference line
	// ([KeyContentUsage], [KeyContentSignal]) that [Policy.MatchUsage]
	// names.
	Key string
}

// Verb returns "Allow" or "Disallow", or the key of a preference line.
func (r Rule) Verb() string {
	switch {
	case r.Key != "":
		return r.Key
	case r.Allow:
		return "Allow"
	}
	return "Disallow"
}

// String returns the rule as a robots.txt line, e.g. "Disallow: /private"
// or "Content-Usage: train-ai=n".
func (r Rule) String() string {
	return r.Verb() + ": " + r.Pattern
}

// Field is any robots.txt line other than User-agent, Allow and Disallow.
type Field struct {
	// Key is the standard spelling for the fields robotsguard knows
	// (Sitemap, Crawl-delay, Host, QueryParam, Domain, IndexPage) and the
	// key as written for any other field.
	Key string
	// Value is the value as written, without surrounding white space and
	// comment.
	Value string
	// Line is the line number, or 0 for an added field.
	Line int
}

// Standard field names.
const (
	KeyUserAgent  = "User-agent"
	KeyAllow      = "Allow"
	KeyDisallow   = "Disallow"
	KeySitemap    = "Sitemap"
	KeyCrawlDelay = "Crawl-delay"
	KeyHost       = "Host"
	KeyQueryParam = "QueryParam"
	KeyDomain     = "Domain"
	KeyIndexPage  = "IndexPage"
)

// CrawlDelay returns the group's Crawl-delay: the first Crawl-delay field
// whose value is a non-negative number of seconds (decimals allowed). ok is
// false when the group has none.
func (g *Group) CrawlDelay() (d time.Duration, ok bool) {
	for _, f := range g.Fields {
		if f.Key != KeyCrawlDelay {
			continue
		}
		if d, err := parseDelay(f.Value); err == nil {
			return d, true
		}
	}
	return 0, false
}

// maxDelay bounds Crawl-delay values so that the conversion to a Duration
// cannot overflow: a day between requests is as good as a ban.
const maxDelay = 24 * time.Hour

func parseDelay(v string) (time.Duration, error) {
	s, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, err
	}
	if s < 0 || s != s {
		return 0, strconv.ErrRange
	}
	if s > maxDelay.Seconds() {
		return maxDelay, nil
	}
	return time.Duration(s * float64(time.Second)), nil
}

// Values returns the values of the group's fields with the given standard
// key, in file order.
func (g *Group) Values(key string) []string {
	return fieldValues(g.Fields, key)
}

// Values returns the values of the file-wide fields with the given standard
// key, in file order; r.Values(KeySitemap) lists the sitemaps.
func (r *Robots) Values(key string) []string {
	return fieldValues(r.Fields, key)
}

func fieldValues(fields []Field, key string) []string {
	var out []string
	for _, f := range fields {
		if f.Key == key {
			out = append(out, f.Value)
		}
	}
	return out
}

// Clone returns a deep copy of r, so that the copy can be edited without
// changing r.
func (r *Robots) Clone() *Robots {
	c := &Robots{
		Groups:    make([]*Group, len(r.Groups)),
		Fields:    append([]Field(nil), r.Fields...),
		diags:     append([]Diagnostic(nil), r.diags...),
		truncated: r.truncated,
		lost:      r.lost,
		binary:    r.binary,
		added:     r.added,
	}
	for i, g := range r.Groups {
		c.Groups[i] = &Group{
			Agents:   append([]Agent(nil), g.Agents...),
			Rules:    append([]Rule(nil), g.Rules...),
			Fields:   append([]Field(nil), g.Fields...),
			Line:     g.Line,
			JoinNext: g.JoinNext,
		}
	}
	return c
}

// OwnerLines returns the number of lines before [AddedHeading] in a served
// file (the site's own, and a blank line), or 0 when the file has no added
// block: every line is the owner's.
func (r *Robots) OwnerLines() int { return max(r.added-1, 0) }

// AddGroup appends a group for the given agent names with the given rules
// and returns it. An agent name may be a product token or "*".
func (r *Robots) AddGroup(agents []string, rules ...Rule) *Group {
	g := &Group{Rules: append([]Rule(nil), rules...)}
	for _, a := range agents {
		g.Agents = append(g.Agents, Agent{Name: a})
	}
	r.Groups = append(r.Groups, g)
	return g
}

// AddRulesToAll adds rules to every group, so that they bind every crawler
// whatever group it obeys, and to a "*" group, which is added when the file
// has none. The module uses it for trap paths. A group that joins the next
// one in Google's reading (see [Group.JoinNext]) is left as it is, since a
// rule would end the join; its agents get the rules in a group of their own
// at the end instead.
func (r *Robots) AddRulesToAll(rules ...Rule) {
	hasGlobal := false
	var joined []string
	for _, g := range r.Groups {
		if g.JoinNext {
			for _, a := range g.Agents {
				joined = append(joined, a.Name)
			}
		} else {
			g.Rules = append(g.Rules, rules...)
		}
		for _, a := range g.Agents {
			if a.Token() == "*" {
				hasGlobal = true
			}
		}
	}
	if len(joined) > 0 {
		r.AddGroup(joined, rules...)
	}
	if !hasGlobal {
		r.AddGroup([]string{"*"}, rules...)
	}
}

// AddSitemap adds a Sitemap line unless the file already lists url.
func (r *Robots) AddSitemap(url string) {
	for _, s := range r.Values(KeySitemap) {
		if s == url {
			return
		}
	}
	r.Fields = append(r.Fields, Field{Key: KeySitemap, Value: url})
}

// Agents returns the distinct product tokens named by the file's groups, in
// order of first appearance, "*" included.
func (r *Robots) Agents() []string {
	var out []string
	seen := map[string]bool{}
	for _, g := range r.Groups {
		for _, a := range g.Agents {
			if t := a.Token(); t != "" && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n'
}

func trimSpace(s string) string {
	for s != "" && isSpace(s[0]) {
		s = s[1:]
	}
	for s != "" && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// hasPrefixFold reports whether s starts with the lower-case ASCII prefix.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
