package policy

import (
	"fmt"
	"net/url"
	"slices"
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
	// Code names the kind of finding; it is stable, so that tests and tools
	// need not match the message.
	Code Code
	// Message says what is wrong and what robotsguard made of it.
	Message string
}

// String formats d as "LINE: severity: message".
func (d Diagnostic) String() string {
	return fmt.Sprintf("%d: %s: %s", d.Line, d.Severity, d.Message)
}

// Code names a kind of [Diagnostic]. The values are stable.
type Code string

// Diagnostic codes.
const (
	// CodeHTML: the content is an HTML or XML page (an error page served as
	// robots.txt). Error.
	CodeHTML Code = "html"
	// CodeBinary: the content is binary data. Error.
	CodeBinary Code = "binary"
	// CodeTruncated: the file is longer than [MaxSize]; the message names
	// the groups and rules that are lost.
	CodeTruncated Code = "truncated"
	// CodeLongLine: a line is longer than the reference parser reads.
	CodeLongLine Code = "long-line"
	// CodeNoRules: the file has no Allow or Disallow line in any group:
	// every crawler may fetch everything.
	CodeNoRules Code = "no-rules"
	// CodeNotAField: a line that is no "key: value" field is ignored.
	CodeNotAField Code = "not-a-field"
	// CodeMissingColon: a field without ':' is read anyway.
	CodeMissingColon Code = "missing-colon"
	// CodeTypo: a misspelled key that the reference parser accepts
	// ("Diasllow") is read as the key it stands for.
	CodeTypo Code = "typo"
	// CodeLikelyTypo: an unknown key that is probably a misspelling of a
	// known one ("Alow") is ignored, as the reference parser ignores it.
	CodeLikelyTypo Code = "likely-typo"
	// CodeKeyPrefix: a key read by its start ("Disallowed" as Disallow).
	CodeKeyPrefix Code = "key-prefix"
	// CodeUnknownField: a field robots.txt does not define; kept, no effect.
	CodeUnknownField Code = "unknown-field"
	// CodeBeforeAgent: a rule or Crawl-delay before any User-agent line has
	// no effect.
	CodeBeforeAgent Code = "before-agent"
	// CodeSplitGroup: a line between User-agent lines that mainstream
	// parsers read differently (see [Reading]).
	CodeSplitGroup Code = "split-group"
	// CodeBlankInGroup: a blank line between User-agent lines (RFC 9309
	// keeps one group).
	CodeBlankInGroup Code = "blank-in-group"
	// CodeAgentNoToken: a User-agent value without a product token.
	CodeAgentNoToken Code = "agent-no-token"
	// CodeAgentGlobal: a User-agent value read as "*".
	CodeAgentGlobal Code = "agent-global"
	// CodeAgentWildcard: a '*' in a User-agent value other than "*".
	CodeAgentWildcard Code = "agent-wildcard"
	// CodeAgentSuffix: a User-agent value with more than its product token.
	CodeAgentSuffix Code = "agent-suffix"
	// CodeEmptyGroup: a group without rules, which allows everything.
	CodeEmptyGroup Code = "empty-group"
	// CodeBadPattern: a pattern that never matches.
	CodeBadPattern Code = "bad-pattern"
	// CodeBadCrawlDelay: a Crawl-delay that is not a number of seconds.
	CodeBadCrawlDelay Code = "bad-crawl-delay"
	// CodeSecondCrawlDelay: a second Crawl-delay in one group.
	CodeSecondCrawlDelay Code = "second-crawl-delay"
	// CodeBadQueryParam: a QueryParam item that cannot be read.
	CodeBadQueryParam Code = "bad-queryparam"
	// CodeDuplicateRule: a rule that repeats another.
	CodeDuplicateRule Code = "duplicate-rule"
	// CodeShadowedRule: a rule that another always beats.
	CodeShadowedRule Code = "shadowed-rule"
	// CodeBadURL: a Sitemap or Domain value that is no absolute http(s)
	// URL.
	CodeBadURL Code = "bad-url"
	// CodeBadIndexPage: an IndexPage value that is no file name.
	CodeBadIndexPage Code = "bad-indexpage"
	// CodeManyHosts: more than one Host line.
	CodeManyHosts Code = "many-hosts"
	// CodeUsageSyntax: a Content-Usage or Content-Signal line whose
	// statement cannot be read (not a structured-field dictionary, an
	// empty item, no statement): what it fails to state is unknown.
	CodeUsageSyntax Code = "usage-syntax"
	// CodeUsageUnknown: a key a preference line's vocabulary does not
	// define, or a value other than y/n (Content-Usage) or yes/no
	// (Content-Signal): that preference is unknown, as the drafts say.
	CodeUsageUnknown Code = "usage-unknown"
	// CodeUsageDuplicate: a key given twice in one preference line; the
	// last value applies.
	CodeUsageDuplicate Code = "usage-duplicate"
)

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
	add := func(line int, sev Severity, code Code, format string, args ...any) {
		ds = append(ds, Diagnostic{Line: line, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	for _, g := range r.Groups {
		for _, a := range g.Agents {
			tok := a.Token()
			switch {
			case tok == "":
				add(a.Line, Warning, CodeAgentNoToken, "user-agent %q has no product token and names no crawler", clip(a.Name))
			case tok == "*" && a.Name != "*":
				add(a.Line, Warning, CodeAgentGlobal, "user-agent %q is read as \"*\"", clip(a.Name))
			case tok != "*" && strings.Contains(a.Name, "*"):
				add(a.Line, Warning, CodeAgentWildcard, "wildcard in user-agent %q has no meaning: it names the product token %q", clip(a.Name), tok)
			case tok != "*" && len(tok) != len(a.Name):
				add(a.Line, Info, CodeAgentSuffix, "user-agent %q names the product token %q; the rest is ignored", clip(a.Name), tok)
			}
		}
		if len(g.Rules) == 0 && len(g.Fields) == 0 && !g.JoinNext {
			add(g.Line, Warning, CodeEmptyGroup, "group for %s has no rules: it allows everything, and the \"*\" group does not apply to it", agentList(g))
		}
		for _, rule := range g.Rules {
			if p := rule.Pattern; p != "" && p[0] != '/' && p[0] != '*' {
				add(rule.Line, Warning, CodeBadPattern, "pattern %q does not start with '/' or '*' and never matches", clip(p))
			}
		}
		delays := 0
		for _, f := range g.Fields {
			switch f.Key {
			case KeyCrawlDelay:
				if _, err := parseDelay(f.Value); err != nil {
					add(f.Line, Warning, CodeBadCrawlDelay, "Crawl-delay %q is not a number of seconds and is ignored", clip(f.Value))
				} else if delays++; delays > 1 {
					add(f.Line, Warning, CodeSecondCrawlDelay, "second Crawl-delay in the group is ignored")
				}
			case KeyQueryParam:
				if err := parseQueryParams(&queryRules{}, []string{f.Value}); err != nil {
					add(f.Line, Warning, CodeBadQueryParam, "%v; the item is ignored", err)
				}
			case KeyContentUsage, KeyContentSignal:
				for _, d := range ParseStatement(f.Key, f.Value).Problems {
					add(f.Line, d.Severity, d.Code, "%s: %s", f.Key, d.Message)
				}
			default:
				r.unknownField(add, f)
			}
		}
	}
	ds = append(ds, r.lintShadowed()...)
	for _, f := range r.Fields {
		switch f.Key {
		case KeySitemap, KeyDomain:
			if u, err := url.Parse(f.Value); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
				add(f.Line, Warning, CodeBadURL, "%s %q is not an absolute http(s) URL", f.Key, clip(f.Value))
			}
		case KeyIndexPage:
			if !validIndexPage(f.Value) {
				add(f.Line, Warning, CodeBadIndexPage, "IndexPage %q must be a file name such as index.html", clip(f.Value))
			}
		case KeyQueryParam:
			if err := parseQueryParams(&queryRules{}, []string{f.Value}); err != nil {
				add(f.Line, Warning, CodeBadQueryParam, "%v; the item is ignored", err)
			}
		case KeyAllow, KeyDisallow, KeyCrawlDelay, KeyHost, KeyContentUsage, KeyContentSignal:
		default:
			r.unknownField(add, f)
		}
	}
	if hosts := r.Values(KeyHost); len(hosts) > 1 {
		add(r.fieldLine(KeyHost, 1), Warning, CodeManyHosts, "more than one Host line; crawlers that read Host use the first")
	}
	rules := 0
	for _, g := range r.Groups {
		rules += len(g.Rules)
	}
	if rules == 0 {
		add(1, Info, CodeNoRules, "the file has no Allow or Disallow rules: every crawler may fetch everything")
	}
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Line < ds[j].Line })
	if r.binary {
		ds = summariseBinary(ds)
	}
	if r.added > 0 {
		// A served file: robots_guard's own lines are not the owner's to
		// fix.
		ds = slices.DeleteFunc(ds, func(d Diagnostic) bool { return d.Line >= r.added && d.Code != CodeTruncated })
	}
	return ds
}

// summariseBinary keeps the errors and the size warning of a binary file's
// diagnostics and replaces the rest, one per line of garbage, by a count.
func summariseBinary(ds []Diagnostic) []Diagnostic {
	var out []Diagnostic
	n, first := 0, 0
	for _, d := range ds {
		if d.Severity == Error || d.Code == CodeTruncated {
			out = append(out, d)
			continue
		}
		if n == 0 {
			first = d.Line
		}
		n++
	}
	if n > 0 {
		out = append(out, Diagnostic{Line: first, Severity: Warning, Code: CodeNotAField,
			Message: fmt.Sprintf("the content is binary data: %d findings from line %d on are not listed", n, first)})
		sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	}
	return out
}

// extensionKeys are fields that some crawlers read although robots.txt does
// not define them: they are not typos.
var extensionKeys = map[string]bool{
	"request-rate": true, "visit-time": true, "clean-param": true, "noindex": true, "nofollow": true,
	"noarchive": true, "content-signal": true, "content-usage": true, "comment": true,
	"robot-version": true, "cache-delay": true, "crawl-rate": true,
}

// standardKeys are the keys a likely typo is compared with.
var standardKeys = []string{KeyUserAgent, KeyAllow, KeyDisallow, KeySitemap, KeyCrawlDelay, KeyHost, KeyQueryParam, KeyDomain, KeyIndexPage, KeyContentUsage, KeyContentSignal}

// unknownField reports a field robots.txt does not define: as a likely typo
// when its key is close to a standard one, else as unknown.
func (r *Robots) unknownField(add func(int, Severity, Code, string, ...any), f Field) {
	if k := likelyTypo(f.Key); k != "" {
		add(f.Line, Warning, CodeLikelyTypo, "unknown field %q is probably a typo of %q; it is ignored, as the reference parser ignores it", clip(f.Key), k)
		return
	}
	add(f.Line, Info, CodeUnknownField, "unknown field %q is kept but has no effect", clip(f.Key))
}

// likelyTypo returns the standard key that key probably misspells, or "".
func likelyTypo(key string) string {
	k := strings.ToLower(key)
	if extensionKeys[k] || len(k) < 3 {
		return ""
	}
	for _, s := range standardKeys {
		limit := 1
		if len(s) >= 7 {
			limit = 2
		}
		if d := EditDistance(k, strings.ToLower(s)); d > 0 && d <= limit {
			return s
		}
	}
	return ""
}

// EditDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of adjacent bytes. To
// bound the work, a string longer than 64 bytes is 64 from any other.
func EditDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
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
				ds = append(ds, Diagnostic{Line: loser.rule.Line, Severity: Info, Code: CodeDuplicateRule,
					Message: fmt.Sprintf("%q repeats line %d (%q)", loser.rule.String(), winner.rule.Line, winner.rule.String())})
			} else {
				ds = append(ds, Diagnostic{Line: loser.rule.Line, Severity: Warning, Code: CodeShadowedRule,
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
