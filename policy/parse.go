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
}

var canonicalKey = [...]string{
	kindUserAgent:  KeyUserAgent,
	kindAllow:      KeyAllow,
	kindDisallow:   KeyDisallow,
	kindSitemap:    KeySitemap,
	kindCrawlDelay: KeyCrawlDelay,
	kindHost:       KeyHost,
	kindQueryParam: KeyQueryParam,
	kindDomain:     KeyDomain,
	kindIndexPage:  KeyIndexPage,
}

// classifyKey returns the kind of key and, for a recognised key that is not
// spelled exactly, the diagnostic to report.
func classifyKey(key string) (fieldKind, string) {
	for _, s := range keySpellings {
		if s.whole && len(key) != len(s.prefix) || !hasPrefixFold(key, s.prefix) {
			continue
		}
		want := canonicalKey[s.kind]
		switch {
		case s.typo:
			return s.kind, fmt.Sprintf("misspelled field %q read as %q", key, want)
		case len(key) != len(s.prefix):
			return s.kind, fmt.Sprintf("field %q read as %q (only its start is recognised)", key, want)
		}
		return s.kind, ""
	}
	return kindUnknown, ""
}

// Parse reads a robots.txt body. It never fails: like the reference parser it
// takes what it can from any input, and [Robots.Lint] reports what it had to
// skip, guess or ignore. Only the first [MaxSize] bytes are read. Line ends
// may be CR, LF or CRLF, mixed; a UTF-8 byte order mark is skipped; keys are
// case-insensitive; '#' starts a comment anywhere.
//
// Groups follow RFC 9309: consecutive User-agent lines (blank lines and
// comments between them do not matter) start a group, and the group runs
// until the next User-agent line that follows any other field. As in the
// reference parser, a Crawl-delay or unknown field also ends the run of
// User-agent lines, but, as RFC 9309 section 2.2.4 requires and unlike the
// reference parser, a Sitemap line does not.
func Parse(data []byte) *Robots { return ParseHead(data, int64(len(data))) }

// ParseHead is [Parse] for a file of size bytes of which data holds the
// start: all of it, or at least its first MaxSize+1 bytes. A caller reading
// a file need not read more than Parse uses, and the lint warning still
// counts the bytes ignored.
func ParseHead(data []byte, size int64) *Robots {
	r := &Robots{}
	if len(data) > MaxSize {
		cut := MaxSize
		// Drop the partial last line rather than read half a pattern.
		if i := bytes.LastIndexAny(data[:cut], "\r\n"); i >= 0 {
			cut = i + 1
		}
		r.truncated = int(max(size, int64(len(data))) - int64(cut))
		data = data[:cut]
	}
	p := parser{r: r}
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
	line := 0
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			line++
			p.line(line, s)
			break
		}
		line++
		p.line(line, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	if r.truncated > 0 {
		p.diag(line, Warning, fmt.Sprintf("file is larger than %d bytes: the last %d bytes are ignored", MaxSize, r.truncated))
	}
	return r
}

type parser struct {
	r   *Robots
	cur *Group
	// closed is set once the current group has a line other than User-agent
	// and Sitemap: the next User-agent line starts a new group.
	closed bool
	// blankInAgents is set when a blank line follows a User-agent line and
	// no other field has followed yet.
	blankInAgents bool
	lastWasAgent  bool
}

func (p *parser) diag(line int, sev Severity, msg string) {
	p.r.diags = append(p.r.diags, Diagnostic{Line: line, Severity: sev, Message: msg})
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
				p.diag(lineOf(s, start), Error, "content looks like an HTML or XML page, not robots.txt (is the server answering /robots.txt with an error page?)")
				break
			}
		}
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		p.diag(lineOf(s, i), Error, "content holds NUL bytes: binary data, not robots.txt")
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
		p.diag(num, Warning, fmt.Sprintf("line is longer than %d bytes: the rest is ignored", maxLineLen))
		line = line[:maxLineLen]
	}
	if i := strings.IndexByte(line, '#'); i >= 0 {
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
		p.diag(num, Warning, fmt.Sprintf("not a robots.txt field (no ':'): %q is ignored", clip(line)))
		return
	}
	if !strings.Contains(line, ":") {
		p.diag(num, Warning, fmt.Sprintf("missing ':' after %q; read as %q", key, key+": "+value))
	}
	kind, msg := classifyKey(key)
	if msg != "" {
		p.diag(num, Warning, msg)
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
	wasAgent := p.lastWasAgent
	p.lastWasAgent = kind == kindUserAgent
	switch kind {
	case kindUserAgent:
		if p.cur == nil || p.closed {
			p.cur = &Group{Line: num}
			r.Groups = append(r.Groups, p.cur)
			p.closed = false
			p.blankInAgents = false
		} else if p.blankInAgents {
			p.diag(num, Info, "blank line between User-agent lines: RFC 9309 keeps them in one group, the 1994 standard would have ended the record")
			p.blankInAgents = false
		}
		p.cur.Agents = append(p.cur.Agents, Agent{Name: value, Line: num})
		return
	case kindAllow, kindDisallow:
		rule := Rule{Allow: kind == kindAllow, Pattern: value, Line: num}
		if p.cur == nil {
			p.diag(num, Warning, fmt.Sprintf("%q comes before any User-agent line and is ignored", rule.String()))
			r.Fields = append(r.Fields, Field{Key: canonicalKey[kind], Value: value, Line: num})
			return
		}
		p.cur.Rules = append(p.cur.Rules, rule)
	case kindSitemap:
		r.Fields = append(r.Fields, Field{Key: KeySitemap, Value: value, Line: num})
		if wasAgent && p.cur != nil && !p.closed {
			p.diag(num, Warning, "Sitemap line among User-agent lines: RFC 9309 keeps the group open, the reference parser ends it; move the Sitemap line to the end of the file")
			p.lastWasAgent = true
		}
		return
	case kindHost, kindDomain, kindIndexPage:
		r.Fields = append(r.Fields, Field{Key: canonicalKey[kind], Value: value, Line: num})
	default:
		if kind != kindUnknown {
			key = canonicalKey[kind]
		}
		f := Field{Key: key, Value: value, Line: num}
		if p.cur == nil {
			if kind == kindCrawlDelay {
				p.diag(num, Warning, "Crawl-delay comes before any User-agent line and is ignored")
			}
			r.Fields = append(r.Fields, f)
		} else {
			p.cur.Fields = append(p.cur.Fields, f)
		}
	}
	p.closed = true
	p.blankInAgents = false
}

// clip shortens s for a diagnostic message.
func clip(s string) string {
	const n = 60
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
