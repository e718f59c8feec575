package policy

import (
	"bytes"
	"strings"
	"testing"
)

// trapAndClass is what robots_guard adds for "trap /trap-here/" and
// "block_class ai" (two of its tokens), with the owner's agents named in
// the trap group.
func trapAndClass(owner *Robots) Added {
	trap := AddedGroup{Note: "trap", Agents: []string{"*"}, Rules: []Rule{{Pattern: "/trap-here/"}}}
	for _, t := range owner.Agents() {
		if t != "*" {
			trap.Agents = append(trap.Agents, t)
		}
	}
	return Added{Groups: []AddedGroup{
		{Note: "block_class ai", Agents: []string{"gptbot", "claudebot"}, Rules: []Rule{{Pattern: "/"}}},
		trap,
	}, Sitemaps: []string{"https://example.com/sitemap.xml"}}
}

// TestServeOwnersBytesFirst: the served file starts with the owner's file
// byte for byte (comments, order, unknown lines, no final line end), then
// the added block; every owner line keeps its number.
func TestServeOwnersBytesFirst(t *testing.T) {
	owner := []byte("# Our robots.txt\r\nUser-agent: *   # everyone\r\nDisallow: /admin/\r\nX-Unknown: kept\r\n\r\nUser-agent: Googlebot\r\nAllow: /\r\nDisallow: /tmp/")
	served, n := Serve(owner, trapAndClass(Parse(owner)))
	if !bytes.HasPrefix(served, owner) {
		t.Fatalf("served does not start with the owner's bytes:\n%s", served)
	}
	if n != 8 {
		t.Errorf("owner lines %d, want 8", n)
	}
	rest := string(served[len(owner):])
	if !strings.HasPrefix(rest, "\n\n"+AddedHeading) {
		t.Errorf("the block does not follow a line end and a blank line: %q", rest)
	}
	r := Parse(served)
	if r.OwnerLines() != n+1 { // and the blank line before the heading
		t.Errorf("OwnerLines %d, want %d", r.OwnerLines(), n+1)
	}
	p := Compile(r)
	if res := p.Match([]string{"googlebot"}, "/tmp/x"); res.Allowed || res.Rule.Line != 8 {
		t.Errorf("googlebot /tmp/x: %+v, want refused by line 8", res)
	}
	if res := p.Match(nil, "/admin/x"); res.Allowed || res.Rule.Line != 3 {
		t.Errorf("* /admin/x: %+v, want refused by line 3", res)
	}
	for _, tok := range [][]string{nil, {"googlebot"}, {"otherbot"}} {
		if res := p.Match(tok, "/trap-here/x"); res.Allowed || res.Rule.Line <= n {
			t.Errorf("%v /trap-here/x: %+v, want refused by an added line", tok, res)
		}
	}
	if res := p.Match([]string{"gptbot"}, "/page"); res.Allowed {
		t.Errorf("gptbot /page allowed, want the class block")
	}
	if got := r.Values(KeySitemap); len(got) != 1 {
		t.Errorf("sitemaps %v", got)
	}
	// Nothing added: the owner's file as it is.
	if s, _ := Serve(owner, Added{}); !bytes.Equal(s, owner) {
		t.Errorf("with no additions: %q", s)
	}
}

// TestServeEndsOpenGroup: an owner's file whose last group has no rule
// would take the added User-agent lines into it (in Google's reading
// across its Crawl-delay too): an empty Disallow ends it, and the owner's
// group keeps allowing everything but the trap.
func TestServeEndsOpenGroup(t *testing.T) {
	for _, owner := range []string{"User-agent: *\nDisallow: /x/\n\nUser-agent: FooBot\n", "User-agent: FooBot\nCrawl-delay: 5\n"} {
		served, _ := Serve([]byte(owner), trapAndClass(Parse([]byte(owner))))
		p := Compile(Parse(served))
		for _, reading := range []Reading{GoogleReading, SplitReading} {
			tg, _ := ParseTarget("/page")
			if res := p.MatchReading([]string{"foobot"}, &tg, reading); !res.Allowed {
				t.Errorf("%q, %v: foobot refused /page by %v: it joined an added group\n%s", owner, reading, res.Rule, served)
			}
			tt, _ := ParseTarget("/trap-here/a")
			if res := p.MatchReading([]string{"foobot"}, &tt, reading); res.Allowed {
				t.Errorf("%q, %v: foobot allowed the trap\n%s", owner, reading, served)
			}
		}
	}
}

// TestContradictions (issue 29, item 2): the owner's Allow under the trap
// and the owner's GPTBot "Allow: /" under block_class ai are named with
// both lines; a file that contradicts nothing gives none.
func TestContradictions(t *testing.T) {
	owner := []byte("User-agent: *\nAllow: /trap-here/open/\nDisallow: /private/\n\nUser-agent: GPTBot\nAllow: /\n")
	served, n := Serve(owner, trapAndClass(Parse(owner)))
	p := Compile(Parse(served))
	cs := Contradictions(p, n)
	var got []string
	for _, c := range cs {
		got = append(got, c.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`robots.txt line 2 "Allow: /trap-here/open/" allows /trap-here/open/ for * that line`,
		`robots.txt line 6 "Allow: /" allows / for gptbot that line`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	for _, c := range cs {
		if c.Added.Line <= n || c.Owner.Line > n || !c.Owner.Allow || c.Added.Allow {
			t.Errorf("bad lines: %+v", c)
		}
		// The served file allows the path: the enforcer must too.
		tokens := []string{c.Agent}
		if c.Agent == "*" {
			tokens = nil
		}
		if !p.Match(tokens, c.Path).Allowed {
			t.Errorf("%s: the served file refuses %s", c, c.Path)
		}
	}
	clean := []byte("User-agent: *\nAllow: /open/\nDisallow: /private/\n\nUser-agent: GPTBot\nDisallow: /private/\n")
	served, n = Serve(clean, trapAndClass(Parse(clean)))
	if cs := Contradictions(Compile(Parse(served)), n); len(cs) != 0 {
		t.Errorf("contradictions in a file without any: %v", cs)
	}
}

// TestLintSkipsAddedBlock: lint of a served file reports the owner's lines
// only.
func TestLintSkipsAddedBlock(t *testing.T) {
	owner := []byte("User-agent: *\nDisalow: /x/\n")
	served, _ := Serve(owner, Added{Groups: []AddedGroup{{Agents: []string{"weird*bot"}, Rules: []Rule{{Pattern: "nope"}}}}})
	ds := Parse(served).Lint()
	if len(ds) == 0 || ds[0].Line != 2 {
		t.Fatalf("owner's typo not reported: %v", ds)
	}
	for _, d := range ds {
		if d.Line > 2 {
			t.Errorf("lint of an added line: %+v", d)
		}
	}
	if ds := Parse([]byte("User-agent: weird*bot\nDisallow: nope\n")).Lint(); len(ds) < 2 {
		t.Errorf("the same lines in an owner's file: %v", ds)
	}
}

// FuzzServe: whatever the owner's file, the served file starts with it
// (when it fits), the owner's rules keep their lines, and the trap is
// disallowed for every agent the file names.
func FuzzServe(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /a\n"))
	f.Add([]byte("User-agent: a\nUser-agent: b\n# c\nCrawl-delay: 1"))
	f.Add([]byte("\xEF\xBB\xBFUser-agent: x\rAllow: /trap-here/\r"))
	f.Fuzz(func(t *testing.T, owner []byte) {
		if len(owner) > 4096 {
			return
		}
		r := Parse(owner)
		served, n := Serve(owner, trapAndClass(r))
		if !bytes.HasPrefix(served, owner) {
			t.Fatalf("owner's bytes not first")
		}
		p := Compile(Parse(served))
		for _, g := range r.Groups {
			for _, rl := range g.Rules {
				if rl.Line > n {
					t.Fatalf("owner rule %v past owner lines %d", rl, n)
				}
			}
		}
		allowed := map[string]bool{}
		for _, c := range Contradictions(p, n) {
			allowed[c.Agent] = true
		}
		for _, tok := range append(r.Agents(), "*") {
			tokens := []string{tok}
			if tok == "*" {
				tokens = nil
			}
			if res := p.Match(tokens, "/trap-here/"); res.Allowed && !allowed[tok] && tok != "gptbot" && tok != "claudebot" {
				t.Fatalf("%q may fetch the trap and no contradiction says so:\n%s", tok, served)
			}
		}
	})
}
