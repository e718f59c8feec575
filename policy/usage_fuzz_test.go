package policy

import (
	"strings"
	"testing"

	"github.com/dunglas/httpsfv"
)

var statementSeeds = []string{
	"train-ai=n",
	"/ai-ok/ train-ai=y",
	"train-ai=y, search=n",
	`train-ai=y, train-ai, search=n, search="n"`,
	"train-ai;allow=n, train-ai=y",
	`train-ai;has;parameters="?";`,
	"search=?0, train-ai=(n y);a=1, x=:AQ==:, d=@1, s=%\"caf%c3%a9\", n=-1.5",
	"search=yes, ai-input=no, ai-train=no",
	"/blog/\tAI-Train=No,,search=yes",
	`*=n, a.b_c-d*=y;p="\"\\"`,
	"train-ai=n,",
	"",
}

// FuzzParseStatement: reading a preference line never panics, never both
// allows and disallows a category, states nothing when the statement does
// not parse, and reads Structured Field Dictionaries as dunglas/httpsfv
// (an independent RFC 9651 parser) does.
func FuzzParseStatement(f *testing.F) {
	for _, s := range statementSeeds {
		f.Add(false, s)
		f.Add(true, s)
	}
	f.Fuzz(func(t *testing.T, signal bool, value string) {
		key := KeyContentUsage
		if signal {
			key = KeyContentSignal
		}
		st := ParseStatement(key, value)
		if st.Prefs.Allowed&st.Prefs.Disallowed != 0 {
			t.Fatalf("%q: %v both allowed and disallowed", value, st.Prefs.Allowed&st.Prefs.Disallowed)
		}
		if st.Path != "" && (st.Path[0] != '/' || strings.ContainsAny(st.Path, " \t")) {
			t.Fatalf("%q: path %q", value, st.Path)
		}
		if st.Syntax && st.Prefs.Known() {
			t.Fatalf("%q: a statement that does not parse states %v", value, st.Prefs)
		}
		if !signal && (st.Prefs.Allowed|st.Prefs.Disallowed)&^(UsageTrainAI|UsageSearch) != 0 {
			t.Fatalf("%q: Content-Usage states %v", value, st.Prefs)
		}
		members, _, err := parseSFDictionary(value)
		dict, ref := httpsfv.UnmarshalDictionary([]string{value})
		switch {
		case err == nil && ref != nil:
			// RFC 9651 lets a parser accept base64 without its padding.
			if !strings.Contains(value, ":") {
				t.Fatalf("%q: parsed, httpsfv says %v", value, ref)
			}
		case err != nil && ref == nil:
			t.Fatalf("%q: %v, httpsfv parses it", value, err)
		case err == nil:
			if len(members) != len(dict.Names()) {
				t.Fatalf("%q: %d members, httpsfv %d", value, len(members), len(dict.Names()))
			}
			for i, name := range dict.Names() {
				m, _ := dict.Get(name)
				want := ""
				if it, ok := m.(httpsfv.Item); ok {
					if tok, ok := it.Value.(httpsfv.Token); ok {
						want = string(tok)
					}
				}
				if members[i].key != name || members[i].token != want {
					t.Fatalf("%q: member %d is %q=%q, httpsfv %q=%q", value, i, members[i].key, members[i].token, name, want)
				}
			}
		}
	})
}

// refUsage is MatchUsage's reference for one reading: it tries every line
// of each form with the textbook wildcard matcher, keeps the lines of the
// longest matching path (combined), else the lines without a path, and
// combines the two forms. A spelling is refused a category when its target,
// or its path alone (for the paths without '?'), gets a "no".
func refUsage(fields []Field, t *Target, u Usage) (normal Prefs, refused Usage) {
	eval := func(key, path, whole string) Prefs {
		best, bestPrefs, none, hasNone := -1, Prefs{}, Prefs{}, false
		for _, f := range fields {
			if f.Key != key {
				continue
			}
			st := ParseStatement(f.Key, f.Value)
			if st.Path == "" {
				none, hasNone = none.Combine(st.Prefs), true
				continue
			}
			np := normalizePattern(st.Path)
			subject := path
			if strings.Contains(np, "?") {
				subject = whole
			}
			if !globMatch(np, subject) {
				continue
			}
			switch l := len(np); {
			case l > best:
				best, bestPrefs = l, st.Prefs
			case l == best:
				bestPrefs = bestPrefs.Combine(st.Prefs)
			}
		}
		if best >= 0 {
			return bestPrefs
		}
		if hasNone {
			return none
		}
		return Prefs{}
	}
	both := func(path, whole string) Prefs {
		return eval(KeyContentUsage, path, whole).Combine(eval(KeyContentSignal, path, whole))
	}
	if !IsRobotsTxt(t.Normal) {
		normal = both(t.Normal, t.Normal)
	}
	for i := 0; i < t.spellings(); i++ {
		s := t.spelling(i)
		if IsRobotsTxt(s) {
			continue
		}
		refused |= both(s, s).Disallowed & u
		if path, _, q := strings.Cut(s, "?"); q {
			refused |= both(path, s).Disallowed & u
		}
	}
	return normal, refused
}

// FuzzMatchUsage: the compiled preference lines answer as refUsage does,
// in each reading of the groups, and MatchUsage refuses exactly what both
// readings refuse.
func FuzzMatchUsage(f *testing.F) {
	f.Add("Content-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n", "/ai-ok/x")
	f.Add("Content-Usage: /a*/ train-ai=y\nContent-Usage: /ab/ train-ai=n\nContent-Signal: ai-train=yes\n", "/ab/c?d")
	f.Add("Content-Usage: /*.pdf$ train-ai=n, search=y\nContent-Usage: /x?y train-ai=y\n", "/x?y.pdf")
	f.Add("Content-Signal: /b/ ai-input=no\nUser-agent: other\nContent-Usage: search=n\nUser-agent: *\nDisallow: /z\n", "//b/../b/%7e")
	f.Add("Content-Usage: /%7Esam/ search=y\nContent-Usage: /~sam/$ search=n\n", "/~sam/")
	f.Fuzz(func(t *testing.T, lines, target string) {
		robots := "User-agent: *\n" + lines
		r := Parse([]byte(robots))
		p := Compile(r)
		tg, err := ParseTarget(target)
		if err != nil {
			return
		}
		all := UsageTrainAI | UsageSearch | UsageAIInput
		tokens := []string{"zzz"}
		var split, google []int
		for i, g := range r.Groups {
			if g.names("*") && !g.names("zzz") {
				split = append(split, i)
				google = append(google, i)
				for j := i; r.Groups[j].JoinNext && j+1 < len(r.Groups); j++ {
					google = append(google, j+1)
				}
			}
		}
		if p.lookup(tokens) == nil || p.lookup(tokens).agent != "*" {
			return // another group names zzz: not this test's subject
		}
		var refused [2]Usage
		for k, rd := range []Reading{SplitReading, GoogleReading} {
			idx := split
			if rd == GoogleReading {
				idx = r.joinedBefore(dedup(google))
			}
			wantPrefs, wantRefused := refUsage(r.groupPrefs(idx), &tg, all)
			got := p.MatchUsageReading(tokens, &tg, all, rd)
			if got.Prefs != wantPrefs || got.Refused != wantRefused {
				t.Fatalf("%s reading of\n%s\ntarget %q: prefs %v refused %v, want %v refused %v", rd, robots, target, got.Prefs, got.Refused, wantPrefs, wantRefused)
			}
			if (got.Rule != nil) != (got.Refused != 0) || got.Rule != nil && got.Rule.Key == "" {
				t.Fatalf("%s reading: rule %+v for refused %v", rd, got.Rule, got.Refused)
			}
			refused[k] = wantRefused
		}
		got := p.MatchUsage(tokens, &tg, all)
		if got.Refused != refused[0]&refused[1] {
			t.Fatalf("both readings of\n%s\ntarget %q: refused %v, want %v", robots, target, got.Refused, refused[0]&refused[1])
		}
		if got.Rule != nil && ParseStatement(got.Rule.Key, got.Rule.Pattern).Prefs.Disallowed&got.Refused == 0 {
			t.Fatalf("both readings of\n%s\ntarget %q: line %d %q refuses none of %v", robots, target, got.Rule.Line, got.Rule, got.Refused)
		}
	})
}

// dedup drops repeated indexes of an ascending list.
func dedup(idx []int) []int {
	var out []int
	for _, i := range idx {
		if len(out) == 0 || out[len(out)-1] < i {
			out = append(out, i)
		}
	}
	return out
}
