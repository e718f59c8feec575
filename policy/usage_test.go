package policy

import (
	"fmt"
	"strings"
	"testing"
)

// usageOf answers what a crawler with tokens computes for target as the
// drafts read the file, and whether it is refused the categories u.
func usageOf(t *testing.T, p *Policy, tokens []string, target string, u Usage) UsageResult {
	t.Helper()
	tg, err := ParseTarget(target)
	if err != nil {
		t.Fatalf("ParseTarget(%q): %v", target, err)
	}
	return p.MatchUsage(tokens, &tg, u)
}

// The example of draft-ietf-aipref-attach section 3.4 and its table.
func TestUsageAttachExample(t *testing.T) {
	robots := `User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
`
	p := Compile(Parse([]byte(robots)))
	for _, c := range []struct {
		agent, path string
		crawl       bool
		prefs       string
		line        int
	}{
		{"otherbot", "/test", true, "train-ai=n", 4},
		{"otherbot", "/never/test", false, "", 0},
		{"otherbot", "/ai-ok/test", true, "train-ai=y", 5},
		{"examplebot", "/test", true, "train-ai=y", 9},
		{"examplebot", "/never/test", true, "train-ai=y", 9},
		{"examplebot", "/ai-ok/test", true, "train-ai=y", 9},
	} {
		tokens := []string{c.agent}
		tg, _ := ParseTarget(c.path)
		if got := p.MatchTarget(tokens, &tg).Allowed; got != c.crawl {
			t.Errorf("%s %s: crawl %v, want %v", c.agent, c.path, got, c.crawl)
		}
		if !c.crawl {
			continue // no preference applies to what may not be crawled
		}
		r := usageOf(t, p, tokens, c.path, UsageTrainAI)
		if r.Prefs.String() != c.prefs {
			t.Errorf("%s %s: prefs %q, want %q", c.agent, c.path, r.Prefs, c.prefs)
		}
		if r.Lines[0] == nil || r.Lines[0].Line != c.line {
			t.Errorf("%s %s: deciding line %v, want line %d", c.agent, c.path, r.Lines[0], c.line)
		}
		wantRefused := c.prefs == "train-ai=n"
		if (r.Refused == UsageTrainAI) != wantRefused {
			t.Errorf("%s %s: refused %v, want %v", c.agent, c.path, r.Refused, wantRefused)
		}
		if wantRefused && (r.Rule == nil || r.Rule.String() != "Content-Usage: train-ai=n" || r.Rule.Line != 4) {
			t.Errorf("%s %s: refusing rule %+v", c.agent, c.path, r.Rule)
		}
		// Search is not stated: never refused.
		if r := usageOf(t, p, tokens, c.path, UsageSearch); r.Refused != 0 {
			t.Errorf("%s %s: search refused", c.agent, c.path)
		}
	}
}

// Table tests of the lines of one group: longest path, equal paths
// (disallow wins), lines without a path, both forms, spellings.
func TestUsageMatch(t *testing.T) {
	for _, c := range []struct {
		name, lines, path string
		want              string // Prefs.String()
		refused           Usage  // asked: every category
		line              int    // the refusing line (1-based within lines), 0 for none
	}{
		{"no lines", "", "/x", "unknown", 0, 0},
		{"whole group", "Content-Usage: train-ai=n", "/x", "train-ai=n", UsageTrainAI, 1},
		{"two categories", "Content-Usage: train-ai=n, search=y", "/x", "train-ai=n, search=y", UsageTrainAI, 1},
		{"conflict on one path: n wins", "Content-Usage: /x/ train-ai=y\nContent-Usage: /x/ train-ai=n", "/x/a", "train-ai=n", UsageTrainAI, 2},
		{"conflict without a path: n wins", "Content-Usage: train-ai=n\nContent-Usage: train-ai=y, search=y", "/x", "train-ai=n, search=y", UsageTrainAI, 1},
		{"conflict on equal paths spelled apart", "Content-Usage: /%7Esam/ search=y\nContent-Usage: /~sam/ search=n", "/~sam/a", "search=n", UsageSearch, 2},
		{"longest path wins", "Content-Usage: /a/ train-ai=n\nContent-Usage: /a/b/ train-ai=y", "/a/b/c", "train-ai=y", 0, 0},
		{"longest path, the other branch", "Content-Usage: /a/ train-ai=n\nContent-Usage: /a/b/ train-ai=y", "/a/c", "train-ai=n", UsageTrainAI, 1},
		{"a path beats no path", "Content-Usage: train-ai=n\nContent-Usage: / train-ai=y", "/x", "train-ai=y", 0, 0},
		{"the longest line decides the whole statement", "Content-Usage: train-ai=n\nContent-Usage: /docs/ search=y", "/docs/x", "search=y", 0, 0},
		{"no path matches, none without", "Content-Usage: /docs/ train-ai=n", "/x", "unknown", 0, 0},
		{"wildcard", "Content-Usage: /*.pdf$ train-ai=n", "/r/a.pdf", "train-ai=n", UsageTrainAI, 1},
		{"wildcard, a query does not lift it", "Content-Usage: /*.pdf$ train-ai=n", "/r/a.pdf?x=1", "unknown", UsageTrainAI, 1},
		{"wildcard ties a literal path of its length: n wins", "Content-Usage: /ab/ train-ai=y\nContent-Usage: /a*/ train-ai=n", "/ab/x", "train-ai=n", UsageTrainAI, 2},
		{"dot segments", "Content-Usage: /no-ai/ train-ai=n", "/x/../no-ai/a", "train-ai=n", UsageTrainAI, 1},
		{"another spelling", "Content-Usage: /no-ai/ train-ai=n", "//no-ai/a", "unknown", UsageTrainAI, 1},
		{"robots.txt states nothing", "Content-Usage: train-ai=n", "/robots.txt", "unknown", 0, 0},
		{"unknown label", "Content-Usage: train-ai=n, ai-input=n", "/x", "train-ai=n", UsageTrainAI, 1},
		{"bad value", "Content-Usage: train-ai=no", "/x", "unknown", 0, 0},
		{"not a dictionary: all unknown", "Content-Usage: train-ai=n search=n", "/x", "unknown", 0, 0},
		{"upper case: not a dictionary", "Content-Usage: Train-AI=n", "/x", "unknown", 0, 0},
		{"a path without a slash is no path", "Content-Usage: *.pdf train-ai=n", "/a.pdf", "unknown", 0, 0},
		{"a path and no statement decides: unknown", "Content-Usage: train-ai=n\nContent-Usage: /open/", "/open/x", "unknown", 0, 0},
		{"signal", "Content-Signal: search=yes, ai-input=no, ai-train=no", "/x", "train-ai=n, search=y, ai-input=n", UsageTrainAI | UsageAIInput, 1},
		{"signal, case", "Content-Signal: AI-Train=No", "/x", "train-ai=n", UsageTrainAI, 1},
		{"signal, no spaces", "Content-Signal: search=yes,ai-train=no", "/x", "train-ai=n, search=y", UsageTrainAI, 1},
		{"signal, bad value", "Content-Signal: ai-train=n", "/x", "unknown", 0, 0},
		{"signal, last value applies", "Content-Signal: ai-train=no, ai-train=yes", "/x", "train-ai=y", 0, 0},
		{"signal, AIPREF label is unknown", "Content-Signal: train-ai=no", "/x", "unknown", 0, 0},
		{"signal with a path", "Content-Signal: /blog/ ai-train=no", "/blog/a", "train-ai=n", UsageTrainAI, 1},
		{"signal with a path, elsewhere", "Content-Signal: /blog/ ai-train=no", "/about", "unknown", 0, 0},
		{"both forms combine: no wins", "Content-Signal: ai-train=no\nContent-Usage: /ai-ok/ train-ai=y", "/ai-ok/a", "train-ai=n", UsageTrainAI, 1},
		{"both forms agree", "Content-Signal: ai-train=yes\nContent-Usage: /ai-ok/ train-ai=y", "/ai-ok/a", "train-ai=y", 0, 0},
		{"parameters are ignored", "Content-Usage: train-ai=n;reason=\"licence\"", "/x", "train-ai=n", UsageTrainAI, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			robots := "User-agent: *\nAllow: /\n" + c.lines + "\n"
			p := Compile(Parse([]byte(robots)))
			r := usageOf(t, p, []string{"somebot"}, c.path, UsageTrainAI|UsageSearch|UsageAIInput)
			if got := r.Prefs.String(); got != c.want {
				t.Errorf("prefs %q, want %q", got, c.want)
			}
			if r.Refused != c.refused {
				t.Errorf("refused %v, want %v", r.Refused, c.refused)
			}
			switch {
			case c.line == 0 && r.Rule != nil:
				t.Errorf("rule %v, want none", r.Rule)
			case c.line != 0 && (r.Rule == nil || r.Rule.Line != c.line+2):
				t.Errorf("rule %+v, want line %d", r.Rule, c.line+2)
			}
			if c.refused != 0 && r.Rule != nil && !strings.Contains(robots, r.Rule.String()) {
				t.Errorf("rule %q is not a line of the file", r.Rule)
			}
		})
	}
}

// The group that applies is the crawler's own, as for Allow and Disallow:
// the "*" group's preferences do not bind a crawler with a group of its
// own.
func TestUsageGroups(t *testing.T) {
	p := Compile(Parse([]byte("User-agent: *\nContent-Usage: train-ai=n\n\nUser-agent: GPTBot\nAllow: /\n\nUser-agent: CCBot\nContent-Signal: ai-train=no\n")))
	for tok, want := range map[string]Usage{"gptbot": 0, "ccbot": UsageTrainAI, "otherbot": UsageTrainAI} {
		if r := usageOf(t, p, []string{tok}, "/a", UsageTrainAI); r.Refused != want {
			t.Errorf("%s: refused %v, want %v", tok, r.Refused, want)
		}
	}
	if !p.HasUsage() || Compile(Parse([]byte("User-agent: *\nDisallow: /x\n"))).HasUsage() {
		t.Error("HasUsage")
	}
	if r := Compile(Parse([]byte("User-agent: a\nDisallow: /\n"))).MatchUsage([]string{"b"}, &Target{Normal: "/"}, UsageTrainAI); r != (UsageResult{}) {
		t.Errorf("no group: %+v", r)
	}
}

// A preference line between User-agent lines: Google's reading (and RFC
// 9309) keeps one group, protego's and temoto's (and the attachment
// draft's, where Content-Usage is a rule) start a new one. A preference
// binds an agent only where both readings give it the line.
func TestUsageReadings(t *testing.T) {
	robots := "User-agent: GPTBot\nContent-Signal: ai-train=no\nUser-agent: CCBot\nAllow: /\n"
	p := Compile(Parse([]byte(robots)))
	tg := Target{Normal: "/a"}
	gpt := p.MatchUsage([]string{"gptbot"}, &tg, UsageTrainAI)
	if gpt.Refused != UsageTrainAI || gpt.Ambiguous || gpt.Rule == nil || gpt.Rule.Line != 2 {
		t.Errorf("gptbot: %+v", gpt)
	}
	cc := p.MatchUsage([]string{"ccbot"}, &tg, UsageTrainAI)
	if cc.Refused != 0 || !cc.Ambiguous || cc.Rule != nil || cc.Prefs.Known() {
		t.Errorf("ccbot, both readings: %+v", cc)
	}
	if r := p.MatchUsageReading([]string{"ccbot"}, &tg, UsageTrainAI, GoogleReading); r.Refused != UsageTrainAI {
		t.Errorf("ccbot, Google's reading: %+v", r)
	}
	if r := p.MatchUsageReading([]string{"ccbot"}, &tg, UsageTrainAI, SplitReading); r.Refused != 0 {
		t.Errorf("ccbot, split reading: %+v", r)
	}
	// Where the readings refuse different categories, the line named
	// refuses one that both refuse.
	p2 := Compile(Parse([]byte("User-agent: GPTBot\nContent-Usage: / search=y, train-ai=n\nUser-agent: CCBot\nContent-Usage: search=n\nContent-Usage: train-ai=n\nAllow: /\n")))
	if r := p2.MatchUsage([]string{"ccbot"}, &tg, UsageTrainAI|UsageSearch); r.Refused != UsageTrainAI || !r.Ambiguous || r.Rule == nil || r.Rule.Line != 5 {
		t.Errorf("ccbot, readings differ: %+v", r)
	}
	// The split-group lint names the line.
	found := false
	for _, d := range Parse([]byte(robots)).Lint() {
		found = found || d.Code == CodeSplitGroup && d.Line == 2
	}
	if !found {
		t.Error("no split-group finding for the Content-Signal line")
	}
}

// The statements of draft-ietf-aipref-vocab's examples.
func TestParseStatementVocabExamples(t *testing.T) {
	for _, c := range []struct {
		value, want string
		syntax      bool
	}{
		{"train-ai=y, search=n", "train-ai=y, search=n", false},
		// Values of other types leave the categories unknown.
		{`train-ai=y, train-ai, search=n, search="n"`, "unknown", false},
		// The last value applies, without the parameters of the first.
		{"train-ai;allow=n, train-ai=y", "train-ai=y", false},
		{`train-ai;has;parameters="?"`, "unknown", false},
		{`train-ai;has;parameters="?";`, "unknown", true},
		{"train-ai=N", "unknown", false},
		{"TRAIN-AI=n", "unknown", true},
		{"train-ai=n,", "unknown", true},
		{"search=?0, train-ai=(n y), x=:AQ==:, d=@1, s=%\"caf%c3%a9\", n=-1.5", "unknown", false},
		{"train-ai=n   ,\tsearch=y", "train-ai=n, search=y", false},
	} {
		st := ParseStatement(KeyContentUsage, c.value)
		if st.Prefs.String() != c.want || st.Syntax != c.syntax {
			t.Errorf("%q: %s (syntax %v), want %s (syntax %v)", c.value, st.Prefs, st.Syntax, c.want, c.syntax)
		}
		if st.Prefs.Allowed&st.Prefs.Disallowed != 0 {
			t.Errorf("%q: a category both allowed and disallowed", c.value)
		}
	}
}

// Lint names the unknown keys and values with stable codes.
func TestUsageLint(t *testing.T) {
	robots := `Content-Usage: train-ai=n
User-agent: *
Content-Usage: train-ai=n, ai-input=n
Content-Usage: train-ai=no
Content-Usage: train-ai=n search=n
Content-Usage: /x/
Content-Usage: search=y, search=n
Content-Signal: search=yes, ai-train=maybe, foo=no
Content-Signal: ai-train=no,, search=yes
Content-Signal: train-ai=no
Content-Usage: /ok/ train-ai=y, search=n
Content-Signal: search=yes, ai-input=no, ai-train=no
Allow: /
`
	want := map[int][]Code{
		1:  {CodeBeforeAgent},
		3:  {CodeUsageUnknown},
		4:  {CodeUsageUnknown},
		5:  {CodeUsageSyntax},
		6:  {CodeUsageSyntax},
		7:  {CodeUsageDuplicate},
		8:  {CodeUsageUnknown, CodeUsageUnknown},
		9:  {CodeUsageSyntax},
		10: {CodeUsageUnknown},
	}
	got := map[int][]Code{}
	for _, d := range Parse([]byte(robots)).Lint() {
		if d.Code == CodeUnknownField || d.Code == CodeLikelyTypo {
			t.Errorf("line %d: %s: preference lines are known fields", d.Line, d.Message)
		}
		got[d.Line] = append(got[d.Line], d.Code)
		if strings.HasPrefix(string(d.Code), "usage-") && !strings.Contains(d.Message, "Content-") {
			t.Errorf("line %d: message %q does not name the field", d.Line, d.Message)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lint codes by line:\n got %v\nwant %v", got, want)
	}
}

// The served robots.txt keeps the lines, and the generated file answers as
// the original does, in both readings.
func TestUsageRoundTrip(t *testing.T) {
	robots := `User-agent: GPTBot
Content-Signal: ai-train=no
User-agent: CCBot
Disallow: /private/

User-agent: *
content-usage: train-ai=n
CONTENT-USAGE: /ai-ok/ train-ai=y   # comment
Allow: /
Content-Signal: /blog/ search=yes, ai-input=no
`
	orig := Compile(Parse([]byte(robots)))
	gen := orig.Robots().Generate()
	for _, line := range []string{"Content-Usage: train-ai=n\n", "Content-Usage: /ai-ok/ train-ai=y\n", "Content-Signal: ai-train=no\n", "Content-Signal: /blog/ search=yes, ai-input=no\n"} {
		if !strings.Contains(string(gen), line) {
			t.Errorf("generated file lacks %q:\n%s", line, gen)
		}
	}
	again := Compile(Parse(gen))
	all := UsageTrainAI | UsageSearch | UsageAIInput
	for _, tok := range []string{"gptbot", "ccbot", "otherbot"} {
		for _, path := range []string{"/", "/ai-ok/x", "/blog/a?b", "/private/x"} {
			tg, _ := ParseTarget(path)
			for _, rd := range []Reading{BothReadings, GoogleReading, SplitReading} {
				a := orig.MatchUsageReading([]string{tok}, &tg, all, rd)
				b := again.MatchUsageReading([]string{tok}, &tg, all, rd)
				if a.Prefs != b.Prefs || a.Refused != b.Refused || a.Ambiguous != b.Ambiguous || (a.Rule == nil) != (b.Rule == nil) || a.Rule != nil && a.Rule.String() != b.Rule.String() {
					t.Errorf("%s %s %s: %+v, after generating %+v", tok, path, rd, a, b)
				}
			}
		}
	}
}

// MatchUsage allocates nothing.
func TestMatchUsageAllocs(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Signal: search=yes, ai-input=no\n")
	for i := range 40 {
		fmt.Fprintf(&b, "Content-Usage: /d%d/ train-ai=y\nContent-Usage: /w%d/*.pdf$ train-ai=n\n", i, i)
	}
	p := Compile(Parse([]byte(b.String())))
	targets := []Target{{Normal: "/d7/x"}, {Normal: "/w3/a.pdf?x=1"}, {Normal: "/other"}, {Normal: "/d1/x", Variants: []string{"/w1/b.pdf"}}}
	tokens := []string{"gptbot"}
	allocs := testing.AllocsPerRun(200, func() {
		for i := range targets {
			p.MatchUsage(tokens, &targets[i], UsageTrainAI|UsageAIInput)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
}
