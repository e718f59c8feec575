package policy

import (
	"bytes"
	"fmt"
	"strings"
)

// MaxSize is the number of bytes of a robots.txt file that [Parse] reads:
// 500 KiB, the least RFC 9309 section 2.5 allows. What lies beyond is
// ignored and reported by [Robots.Lint].
const MaxSize = 500 << 10

// maxLineLen is the reference parser's line limit (2083 * 8 bytes); the rest
// of a longer line is ignored.
const maxLineLen = 2083 * 8

type fieldKind uint8

const (
	kindUnknown fieldKind = iota
	kindUserAgent
	kindAllow
	kindDisallow
	kindSitemap
	kindCrawlDelay
	kindHost
	kindQueryParam
	kindDomain
	kindIndexPage
	kindContentUsage
	kindContentSignal
)

// keySpelling maps a key to its kind. The three main keys and Sitemap are
// matched by prefix, as the reference parser does ("Disallowed" is read as
// Disallow); the typos it accepts are accepted too. Other keys must match
// whole, case-insensitively.
var keySpellings = []struct {
	prefix string
	kind   fieldKind
	typo   bool
	whole  bool
}{
	{"user-agent", kindUserAgent, false, false},
	{"useragent", kindUserAgent, true, false},
	{"user agent", kindUserAgent, true, false},
	{"allow", kindAllow, false, false},
	{"disallow", kindDisallow, false, false},
	{"dissallow", kindDisallow, true, false},
	{"dissalow", kindDisallow, true, false},
	{"disalow", kindDisallow, true, false},
	{"diasllow", kindDisallow, true, false},
	{"disallaw", kindDisallow, true, false},
	{"sitemap", kindSitemap, false, false},
	{"site-map", kindSitemap, true, false},
	{"crawl-delay", kindCrawlDelay, false, true},
	{"crawldelay", kindCrawlDelay, true, true},
	{"crawl delay", kindCrawlDelay, true, true},
	{"host", kindHost, false, true},
	{"queryparam", kindQueryParam, false, true},
	{"query-param", kindQueryParam, true, true},
	{"domain", kindDomain, false, true},
	{"indexpage", kindIndexPage, false, true},
	{"index-page", kindIndexPage, true, true},
	{"content-usage", kindContentUsage, false, true},
	{"content-signal", kindContentSignal, false, true},
}

var keyName = [...]string{
	kindUserAgent:     KeyUserAgent,
	kindAllow:         KeyAllow,
	kindDisallow:      KeyDisallow,
	kindSitemap:       KeySitemap,
	kindCrawlDelay:    KeyCrawlDelay,
	kindHost:          KeyHost,
	kindQueryParam:    KeyQueryParam,
	kindDomain:        KeyDomain,
	kindIndexPage:     KeyIndexPage,
	kindContentUsage:  KeyContentUsage,
	kindContentSignal: KeyContentSignal,
}

// classifyKey returns the kind of key and, for a recognised key that is not
// spelled exactly, the diagnostic to report.
func classifyKey(key string) (fieldKind, Code, string) {
	for _, s := range keySpellings {
		if s.whole && len(key) != len(s.prefix) || !hasPrefixFold(key, s.prefix) {
			continue
		}
		want := keyName[s.kind]
		switch {
		case s.typo:
			return s.kind, CodeTypo, fmt.Sprintf("misspelled field %q read as %q", key, want)
		case len(key) != len(s.prefix):
			return s.kind, CodeKeyPrefix, fmt.Sprintf("field %q read as %q (only its start is recognised)", key, want)
		}
		return s.kind, "", ""
	}
	return kindUnknown, "", ""
}

// Parse reads a robots.txt body. It never fails: like the reference parser it
// takes what it can from any input, and [Robots.Lint] reports what it had to
// skip, guess or ignore. Only the first [MaxSize] bytes are read. Line ends
// may be CR, LF or CRLF, mixed; a UTF-8 byte order mark is skipped; keys are
// case-insensitive; '#' starts a comment anywhere.
//
// Groups: consecutive User-agent lines (blank lines and comments between
// them do not matter) start a group, and the group runs until the next
// User-agent line that follows any other field. Where a line other than
// Allow and Disallow (Crawl-delay, Sitemap, Host, unknown) stands between
// User-agent lines, the group ends there, and the group before it is marked
// [Group.JoinNext]: Google's reference parser and RFC 9309 read one group
// there, Scrapy's protego and temoto two, and [Compile] compiles both
// readings.
func Parse(data []byte) *Robots { return ParseHead(data, int64(len(data))) }

// ParseHead is [Parse] for a file of size bytes of which data holds the
// start: all of it, or at least its first MaxSize+1 bytes. A caller reading
// a file need not read more than Parse uses, and the lint warning still
// counts the bytes ignored (the groups it names as lost are those whose
// lines data holds).
func ParseHead(data []byte, size int64) *Robots {
	r, _ := ParseHeadRest(data, size, nil)
	return r
}

// parseHead parses what ParseHead keeps of data and returns the Robots,
// the bytes of data after the cut and the parser, which holds the group
// the cut falls in and the number of lines read.
func parseHead(data []byte, size int64) (*Robots, []byte, *parser) {
	r := &Robots{}
	var lost []byte
	if len(data) > MaxSize {
		cut := MaxSize
		// Drop the partial last line rather than read half a pattern.
		if i := bytes.LastIndexAny(data[:cut], "\r\n"); i >= 0 {
			cut = i + 1
		}
		r.truncated = int(max(size, int64(len(data))) - int64(cut))
		data, lost = data[:cut], data[cut:]
	}
	p := &parser{r: r}
	s := string(data)
	switch {
	case strings.HasPrefix(s, "\xEF\xBB\xBF"):
		s = s[3:]
	case strings.HasPrefix(s, "\xEF\xBB"):
		s = s[2:]
	case strings.HasPrefix(s, "\xEF"):
		s = s[1:]
	}
	p.checkContent(s)
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			p.lines++
			p.line(p.lines, s)
			break
		}
		p.lines++
		p.line(p.lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return r, lost, p
}

type parser struct {
	r     *Robots
	cur   *Group
	lines int // lines read
	// closed is set once the current group has a line other than
	// User-agent: the next User-agent line starts a new group. closedBy
	// and closedAt are the key and line number of that line.
	closed   bool
	closedBy string
	closedAt int
	// blankInAgents is set when a blank line follows a User-agent line and
	// no other field has followed yet.
	blankInAgents bool
	lastWasAgent  bool
}

func (p *parser) diag(line int, sev Severity, code Code, msg string) {
	p.r.diags = append(p.r.diags, Diagnostic{Line: line, Severity: sev, Code: code, Message: msg})
}

// checkContent reports bodies that are not robots.txt at all: HTML pages
// (servers that answer /robots.txt with a soft 404) and binary data.
func (p *parser) checkContent(s string) {
	start := len(s) - len(strings.TrimLeft(s, " \t\r\n\v\f"))
	head := s[start:min(len(s), start+1024)]
	if strings.HasPrefix(head, "<") {
		lower := strings.ToLower(head)
		for _, tag := range []string{"<!doctype html", "<html", "<head", "<body", "<title", "<?xml"} {
			if strings.Contains(lower, tag) {
				p.diag(lineOf(s, start), Error, CodeHTML, "content looks like an HTML or XML page, not robots.txt (is the server answering /robots.txt with an error page?)")
				break
			}
		}
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		p.diag(lineOf(s, i), Error, CodeBinary, "content holds NUL bytes: binary data, not robots.txt")
		p.r.binary = true
	}
	controls := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && !isSpace(c) || c == 0x7F {
			controls++
		}
	}
	if controls > 0 && controls*20 > len(s) {
		p.r.binary = true // more than 5% control characters
	}
}

// lineOf returns the line number of byte offset i of s, counting line ends
// as Parse does (CR, LF and CRLF).
func lineOf(s string, i int) int {
	line := 1
	for k := 0; k < i; k++ {
		switch s[k] {
		case '\n':
			line++
		case '\r':
			line++
			if k+1 < i && s[k+1] == '\n' {
				k++
			}
		}
	}
	return line
}

func (p *parser) line(num int, line string) {
	if len(line) > maxLineLen {
		p.diag(num, Warning, CodeLongLine, fmt.Sprintf("line is longer than %d bytes: the rest is ignored", maxLineLen))
		line = line[:maxLineLen]
	}
	if i := strings.IndexByte(line, '#'); i >= 0 {
		if p.r.added == 0 && strings.HasPrefix(line[i:], AddedHeading) && trimSpace(line[:i]) == "" {
			p.r.added = num
		}
		line = line[:i]
	}
	line = trimSpace(line)
	if line == "" {
		if p.lastWasAgent {
			p.blankInAgents = true
		}
		return
	}
	key, value, ok := splitKeyValue(line)
	if !ok {
		p.diag(num, Warning, CodeNotAField, fmt.Sprintf("not a robots.txt field (no ':'): %q is ignored", clip(line)))
		return
	}
	if !strings.Contains(line, ":") {
		p.diag(num, Warning, CodeMissingColon, fmt.Sprintf("missing ':' after %q; read as %q", key, key+": "+value))
	}
	kind, code, msg := classifyKey(key)
	if msg != "" {
		p.diag(num, Warning, code, msg)
	}
	p.emit(num, kind, key, value)
}

// splitKeyValue splits a trimmed, comment-free line at its first ':'. Like
// the reference parser it accepts white space instead of a missing colon
// when the line has exactly two words ("Disallow /x").
func splitKeyValue(line string) (key, value string, ok bool) {
	sep := strings.IndexByte(line, ':')
	if sep < 0 {
		sep = strings.IndexAny(line, " \t")
		if sep < 0 {
			return "", "", false
		}
		rest := trimSpace(line[sep:])
		if strings.ContainsAny(rest, " \t") {
			return "", "", false
		}
		key, value = line[:sep], rest
	} else {
		key, value = trimSpace(line[:sep]), trimSpace(line[sep+1:])
	}
	return key, value, key != ""
}

func (p *parser) emit(num int, kind fieldKind, key, value string) {
	r := p.r
	p.lastWasAgent = kind == kindUserAgent
	switch kind {
	case kindUserAgent:
		if p.cur == nil || p.closed {
			if p.cur != nil && len(p.cur.Rules) == 0 {
				p.cur.JoinNext = true
				p.splitDiag(num)
			}
			p.cur = &Group{Line: num}
			r.Groups = append(r.Groups, p.cur)
			p.closed = false
			p.blankInAgents = false
		} else if p.blankInAgents {
			p.diag(num, Info, CodeBlankInGroup, "blank line between User-agent lines: RFC 9309 keeps them in one group, the 1994 standard would have ended the record")
			p.blankInAgents = false
		}
		p.cur.Agents = append(p.cur.Agents, Agent{Name: value, Line: num})
		return
	case kindAllow, kindDisallow:
		rule := Rule{Allow: kind == kindAllow, Pattern: value, Line: num}
		if p.cur == nil {
			p.diag(num, Warning, CodeBeforeAgent, fmt.Sprintf("%q comes before any User-agent line and is ignored", rule.String()))
			r.Fields = append(r.Fields, Field{Key: keyName[kind], Value: value, Line: num})
			return
		}
		p.cur.Rules = append(p.cur.Rules, rule)
	case kindSitemap, kindHost, kindDomain, kindIndexPage:
		r.Fields = append(r.Fields, Field{Key: keyName[kind], Value: value, Line: num})
		key = keyName[kind]
	default:
		if kind != kindUnknown {
			key = keyName[kind]
		}
		f := Field{Key: key, Value: value, Line: num}
		if p.cur == nil {
			switch kind {
			case kindCrawlDelay, kindContentUsage, kindContentSignal:
				p.diag(num, Warning, CodeBeforeAgent, key+" comes before any User-agent line and is ignored")
			}
			r.Fields = append(r.Fields, f)
		} else {
			p.cur.Fields = append(p.cur.Fields, f)
		}
	}
	if !p.closed {
		p.closed, p.closedBy, p.closedAt = true, key, num
	}
	p.blankInAgents = false
}

// splitDiag reports the line that ends a group without rules before the
// User-agent line num: mainstream parsers read the groups around it
// differently.
func (p *parser) splitDiag(num int) {
	fix := "move it below an Allow or Disallow line of the group (an empty \"Disallow:\" allows everything)"
	switch p.closedBy {
	case KeySitemap, KeyHost, KeyDomain, KeyIndexPage:
		fix = "move it to the end of the file"
	}
	p.diag(p.closedAt, Warning, CodeSplitGroup, fmt.Sprintf(
		"%q between User-agent lines %d and %d: Google's parser (and RFC 9309) read one group here, Scrapy's protego and temoto start a new group at line %d; robotsguard refuses only what both readings disallow. To say what you mean, %s",
		clip(p.closedBy), p.cur.Line, num, num, fix))
}

// clip shortens s for a diagnostic message.
func clip(s string) string {
	const n = 60
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
