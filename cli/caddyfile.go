package cli

import (
	"net"
	"strconv"
	"strings"
)

// A Caddyfile read for its lines: the doctor names the lines of the
// directives it finds fault with, and prints fixes as lines to paste in
// place of others. It reads the Caddyfile's structure (sites, directives,
// blocks) as Caddy's lexer and parser do, without Caddy: tokens split by
// whitespace, quoted with "" or ``, comments from a '#' that starts a
// token, a block opened by a '{' that ends a line and closed by a lone
// '}'. Snippets and imports are not expanded: a directive that comes
// from one has no line here, and the doctor names its JSON path instead.

// cfLine is one directive (or a site's address line), with its block.
type cfLine struct {
	words []string // the directive and its arguments, unquoted
	line  int      // 1-based
	end   int      // the line of its block's closing '}', else line
	block bool     // it has a block
	body  []*cfLine
	up    *cfLine
}

// caddyfile is a Caddyfile's text and structure.
type caddyfile struct {
	name  string
	lines []string // the text, line by line, 1-based at lines[0]
	top   []*cfLine
}

// cfToken is one token of a Caddyfile.
type cfToken struct {
	text   string
	line   int
	quoted bool
}

// lexCaddyfile splits a Caddyfile into tokens, as Caddy's lexer does.
func lexCaddyfile(body string) []cfToken {
	var out []cfToken
	line := 1
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\n':
			line++
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '#':
			for i < len(body) && body[i] != '\n' {
				i++
			}
			continue
		}
		start := line
		var b strings.Builder
		quoted := false
		for i < len(body) {
			c := body[i]
			if c == '"' || c == '`' {
				quoted = true
				q := c
				i++
				for i < len(body) && body[i] != q {
					if body[i] == '\\' && q == '"' && i+1 < len(body) && (body[i+1] == '"' || body[i+1] == '\\') {
						i++
					}
					if body[i] == '\n' {
						line++
					}
					b.WriteByte(body[i])
					i++
				}
				i++ // the closing quote
				continue
			}
			if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
				break
			}
			if c == '\\' && i+1 < len(body) && body[i+1] == '\n' {
				i += 2 // an escaped line break joins the lines
				line++
				continue
			}
			b.WriteByte(c)
			i++
		}
		out = append(out, cfToken{text: b.String(), line: start, quoted: quoted})
	}
	return out
}

// parseCaddyfile reads a Caddyfile's structure.
func parseCaddyfile(name, body string) *caddyfile {
	cf := &caddyfile{name: name, lines: strings.Split(body, "\n")}
	toks := lexCaddyfile(body)
	var parse func(i int, up *cfLine) ([]*cfLine, int)
	parse = func(i int, up *cfLine) ([]*cfLine, int) {
		var out []*cfLine
		for i < len(toks) {
			t := toks[i]
			if t.text == "}" && !t.quoted {
				if up != nil {
					up.end = t.line
				}
				return out, i + 1
			}
			d := &cfLine{line: t.line, end: t.line, up: up}
			// A line: the tokens on it; a site's addresses may go on over
			// lines after a trailing comma.
			for i < len(toks) && (toks[i].line == d.line || len(d.words) > 0 && strings.HasSuffix(d.words[len(d.words)-1], ",") && up == nil) {
				if toks[i].text == "{" && !toks[i].quoted && (i+1 == len(toks) || toks[i+1].line != toks[i].line) {
					d.block = true
					i++
					break
				}
				if toks[i].text == "}" && !toks[i].quoted {
					break
				}
				d.words = append(d.words, toks[i].text)
				i++
			}
			if d.block {
				d.body, i = parse(i, d)
			}
			out = append(out, d)
		}
		return out, i
	}
	cf.top, _ = parse(0, nil)
	return cf
}

// sites returns the Caddyfile's site blocks: the top-level blocks that are
// not the global options, a snippet or a named route. A Caddyfile whose
// one site has no braces is that site.
func (cf *caddyfile) sites() []*cfLine {
	var out []*cfLine
	for _, d := range cf.top {
		if len(d.words) == 0 || strings.HasPrefix(d.words[0], "(") || strings.HasPrefix(d.words[0], "&(") {
			continue // the global options, a snippet, a named route
		}
		if !d.block {
			// A single site without braces: its address, then its
			// directives at the top level.
			site := &cfLine{words: d.words, line: d.line, end: cf.top[len(cf.top)-1].end}
			for _, x := range cf.top {
				if x != d {
					site.body = append(site.body, x)
				}
			}
			return []*cfLine{site}
		}
		out = append(out, d)
	}
	return out
}

// addresses returns a site block's addresses: each with its host ("" for
// any) and port ("" when it names none).
func (d *cfLine) addresses() (hosts, ports []string) {
	for _, w := range d.words {
		for _, a := range strings.Split(w, ",") {
			if a = strings.TrimSpace(a); a == "" {
				continue
			}
			scheme := ""
			if i := strings.Index(a, "://"); i >= 0 {
				scheme, a = a[:i], a[i+3:]
			}
			if i := strings.IndexByte(a, '/'); i >= 0 {
				a = a[:i]
			}
			host, port := a, ""
			if h, p, err := net.SplitHostPort(a); err == nil {
				host, port = h, p
			}
			if port == "" {
				port = map[string]string{"http": "80", "https": "443"}[scheme]
			}
			hosts, ports = append(hosts, strings.ToLower(host)), append(ports, port)
		}
	}
	return hosts, ports
}

// siteFor returns the site block that a handler's site is: the one whose
// addresses name one of hosts (the host matchers around the handler) or,
// for a site of no host, whose port is the server's.
func (cf *caddyfile) siteFor(hosts, listen []string) *cfLine {
	var ports []string
	for _, l := range listen {
		if p, ok := listenPort(l); ok {
			ports = append(ports, strconv.Itoa(p))
		}
	}
	for _, s := range cf.sites() {
		sh, sp := s.addresses()
		for i := range sh {
			portOK := sp[i] == "" || containsString(ports, sp[i])
			switch {
			case len(hosts) > 0 && containsFold(hosts, sh[i]) && portOK:
				return s
			case len(hosts) == 0 && sh[i] == "" && portOK && sp[i] != "":
				return s
			}
		}
	}
	return nil
}

// walk calls f for every directive below d, depth first, in order.
func (d *cfLine) walk(f func(*cfLine)) {
	for _, x := range d.body {
		f(x)
		x.walk(f)
	}
}

// find returns the directives named name below d, in order.
func (d *cfLine) find(name string) []*cfLine {
	var out []*cfLine
	d.walk(func(x *cfLine) {
		if len(x.words) > 0 && x.words[0] == name {
			out = append(out, x)
		}
	})
	return out
}

// indent returns the leading whitespace of line n.
func (cf *caddyfile) indent(n int) string {
	if n < 1 || n > len(cf.lines) {
		return ""
	}
	l := cf.lines[n-1]
	return l[:len(l)-len(strings.TrimLeft(l, " \t"))]
}

// text returns lines a to b, inclusive.
func (cf *caddyfile) text(a, b int) []string {
	if a < 1 || b > len(cf.lines) || a > b {
		return nil
	}
	return append([]string(nil), cf.lines[a-1:b]...)
}

// reindent moves lines from the indentation from to to.
func reindent(lines []string, from, to string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = to + strings.TrimPrefix(l, from)
	}
	return out
}

// at names a line of the Caddyfile, as Caddy's errors do ("Caddyfile:7").
func (cf *caddyfile) at(n int) string { return cf.name + ":" + strconv.Itoa(n) }

// span names lines a to b ("Caddyfile:5-11").
func (cf *caddyfile) span(a, b int) string {
	if a == b {
		return cf.at(a)
	}
	return cf.at(a) + "-" + strconv.Itoa(b)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
