package policy

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Severity ranks a [Diagnostic].
type Severity int

// Severities, from least to most serious.
const (
	// Info notes something legal but worth knowing.
	Info Severity = iota
	// Warning notes input that was guessed at or ignored, or a rule that
	// cannot have the effect its author meant.
	Warning
	// Error notes input that is not a robots.txt file at all; a file with an
	// error should not replace a good policy.
	Error
)

// String returns "info", "warning" or "error".
func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// Diagnostic is one lint finding.
type Diagnostic struct {
	// Line is the 1-based line number the finding is about.
	Line int
	// Severity ranks the finding.
	Severity Severity
	// Message says what is wrong and what robotsguard made of it.
	Message string
}

// String formats d as "LINE: severity: message".
func (d Diagnostic) String() string {
	return fmt.Sprintf("%d: %s: %s", d.Line, d.Severity, d.Message)
}

// FileError is returned by [Robots.Err] for a file that must not replace a
// good policy.
type FileError struct {
	// Line is the line of the first error.
	Line int
	// Msg describes it.
	Msg string
}

// Error formats the error as "robots.txt line N: message".
func (e *FileError) Error() string {
	return fmt.Sprintf("robots.txt line %d: %s", e.Line, e.Msg)
}

// Err returns a [*FileError] for the first error-severity diagnostic of the
// file (content that is an HTML page or binary data rather than robots.txt),
// or nil when the file may be used.
func (r *Robots) Err() error {
	for _, d := range r.Lint() {
		if d.Severity == Error {
			return &FileError{Line: d.Line, Msg: d.Message}
		}
	}
	return nil
}

// Lint returns the diagnostics for the file, sorted by line: what the parser
// had to skip or guess (typos, missing colons, overlong lines, size), rules
// before any User-agent line, patterns that cannot match, wildcards in agent
// names, empty groups, rules shadowed by a longer or equal rule, unknown
// fields, bad Crawl-delay and Sitemap values, and content that is not
// robots.txt at all.
func (r *Robots) Lint() []Diagnostic {
	ds := append([]Diagnostic(nil), r.diags...)
	add := func(line int, sev Severity, format string, args ...any) {
		ds = append(ds, Diagnostic{Line: line, Severity: sev, Message: fmt.Sprintf(format, args...)})
	}
	for _, g := range r.Groups {
		for _, a := range g.Agents {
			tok := a.Token()
			switch {
			case tok == "":
				add(a.Line, Warning, "user-agent %q has no product token and names no crawler", clip(a.Name))
			case tok == "*" && a.Name != "*":
				add(a.Line, Warning, "user-agent %q is read as \"*\"", clip(a.Name))
			case tok != "*" && strings.Contains(a.Name, "*"):
				add(a.Line, Warning, "wildcard in user-agent %q has no meaning: it names the product token %q", clip(a.Name), tok)
			case tok != "*" && len(tok) != len(a.Name):
				add(a.Line, Info, "user-agent %q names the product token %q; the rest is ignored", clip(a.Name), tok)
			}
		}
		if len(g.Rules) == 0 && len(g.Fields) == 0 {
			add(g.Line, Warning, "group for %s has no rules: it allows everything, and the \"*\" group does not apply to it", agentList(g))
		}
		for _, rule := range g.Rules {
			if p := rule.Pattern; p != "" && p[0] != '/' && p[0] != '*' {
				add(rule.Line, Warning, "pattern %q does not start with '/' or '*' and never matches", clip(p))
			}
		}
		delays := 0
		for _, f := range g.Fields {
			switch f.Key {
			case KeyCrawlDelay:
				if _, err := parseDelay(f.Value); err != nil {
					add(f.Line, Warning, "Crawl-delay %q is not a number of seconds and is ignored", clip(f.Value))
				} else if delays++; delays > 1 {
					add(f.Line, Warning, "second Crawl-delay in the group is ignored")
				}
			case KeyQueryParam:
				if err := parseQueryParams(&queryRules{}, []string{f.Value}); err != nil {
					add(f.Line, Warning, "%v; the item is ignored", err)
				}
			default:
				add(f.Line, Info, "unknown field %q is kept but has no effect", clip(f.Key))
			}
		}
	}
	ds = append(ds, r.lintShadowed()...)
	for _, f := range r.Fields {
		switch f.Key {
		case KeySitemap, KeyDomain:
			if u, err := url.Parse(f.Value); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
				add(f.Line, Warning, "%s %q is not an absolute http(s) URL", f.Key, clip(f.Value))
			}
		case KeyIndexPage:
			if !validIndexPage(f.Value) {
				add(f.Line, Warning, "IndexPage %q must be a file name such as index.html", clip(f.Value))
			}
		case KeyQueryParam:
			if err := parseQueryParams(&queryRules{}, []string{f.Value}); err != nil {
				add(f.Line, Warning, "%v; the item is ignored", err)
			}
		case KeyAllow, KeyDisallow, KeyCrawlDelay, KeyHost:
		default:
			add(f.Line, Info, "unknown field %q is kept but has no effect", clip(f.Key))
		}
	}
	if hosts := r.Values(KeyHost); len(hosts) > 1 {
		add(r.fieldLine(KeyHost, 1), Warning, "more than one Host line; crawlers that read Host use the first")
	}
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Line < ds[j].Line })
	return ds
}

func (r *Robots) fieldLine(key string, n int) int {
	for _, f := range r.Fields {
		if f.Key == key {
			if n == 0 {
				return f.Line
			}
			n--
		}
	}
	return 0
}

func agentList(g *Group) string {
	names := make([]string, len(g.Agents))
	for i, a := range g.Agents {
		names[i] = fmt.Sprintf("%q", clip(a.Name))
	}
	return strings.Join(names, ", ")
}

// lintShadowed reports rules that can never decide a match, per merged
// group: a rule whose pattern matches the same paths as a longer rule (they
// differ only by trailing '*'), or as a rule of equal length that wins the
// tie (Allow beats Disallow), and exact duplicates.
func (r *Robots) lintShadowed() []Diagnostic {
	var ds []Diagnostic
	reported := map[int]bool{}
	for _, tok := range r.Agents() {
		type entry struct {
			rule Rule
			n    int // normalised length, the rule's priority
		}
		seen := map[string]entry{}
		for _, rule := range mergedRules(r, tok) {
			np := normalizePattern(rule.Pattern)
			if np == "" {
				continue
			}
			key := strings.TrimRight(np, "*")
			e := entry{rule, len(np)}
			prev, ok := seen[key]
			if !ok {
				seen[key] = e
				continue
			}
			winner, loser := prev, e
			if e.n > prev.n || e.n == prev.n && e.rule.Allow && !prev.rule.Allow {
				winner, loser = e, prev
			}
			seen[key] = winner
			if reported[loser.rule.Line] || loser.rule.Line == 0 {
				continue
			}
			reported[loser.rule.Line] = true
			if winner.rule.Allow == loser.rule.Allow {
				ds = append(ds, Diagnostic{Line: loser.rule.Line, Severity: Info,
					Message: fmt.Sprintf("%q repeats line %d (%q)", loser.rule.String(), winner.rule.Line, winner.rule.String())})
			} else {
				ds = append(ds, Diagnostic{Line: loser.rule.Line, Severity: Warning,
					Message: fmt.Sprintf("%q never decides: line %d (%q) matches the same paths and wins", loser.rule.String(), winner.rule.Line, winner.rule.String())})
			}
		}
	}
	return ds
}

// mergedRules returns the rules of every group that names tok, in file
// order.
func mergedRules(r *Robots, tok string) []Rule {
	var rules []Rule
	for _, g := range r.Groups {
		for _, a := range g.Agents {
			if a.Token() == tok {
				rules = append(rules, g.Rules...)
				break
			}
		}
	}
	return rules
}
