package policy

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestConformance replays the answers of Google's reference parser on the
// corpus of real robots.txt files in testdata/conformance (see NOTICE.md
// there; answers.tsv is written by generate.go) and sorts every query into
// one of the categories the README's list of departures names:
//
//   - agree: robotsguard's enforcement answer (MatchTarget) is the
//     reference's;
//   - both readings: the reference refuses, but the other mainstream
//     reading of the file's groups allows, and robotsguard refuses only
//     what both refuse;
//   - query: the reference allows a URL whose path a rule without '?'
//     refuses (a query never turns a disallowed resource into an allowed
//     one);
//   - encoding: the reference answers otherwise for robotsguard's normal
//     form of the URL, and robotsguard answers as the reference does for
//     that;
//   - token digits: the agent's token has a digit, which the reference
//     drops;
//   - robots.txt: /robots.txt is always allowed.
//
// Any other disagreement fails the test. Match, the reading a polite
// crawler computes, must agree with the reference except for encoding,
// token digits and robots.txt.
func TestConformance(t *testing.T) {
	dir := filepath.Join("testdata", "conformance")
	f, err := os.Open(filepath.Join(dir, "answers.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	policies := map[string]*Policy{}
	counts := map[string]int{}
	rescored := map[string]int{} // refusals of what the reference allows
	files := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		col := strings.Split(line, "\t")
		if len(col) != 5 {
			t.Fatalf("bad line %q", line)
		}
		file, agent, url, ref, refNormal := col[0], col[1], col[2], col[3] == "1", col[4]
		files[file] = true
		p := policies[file]
		if p == nil {
			data, err := os.ReadFile(filepath.Join(dir, "robots", file))
			if err != nil {
				t.Fatal(err)
			}
			p = Compile(Parse(data))
			policies[file] = p
		}
		raw := TargetOf(url)
		target, err := ParseTarget(raw)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		tokens := []string{agent}
		mt := p.MatchTarget(tokens, &target)
		enforced := mt.Allowed
		match := p.Match(tokens, raw).Allowed
		// Refusals of what the reference allows (issue 27): a verified
		// crawler is refused only what MatchTarget refuses without a
		// departure; an unverified bot, MatchTarget's refusals. Where
		// robotsguard reads the URL or the token otherwise than Google's
		// parser (RFC 9309's percent-decoding, digits in tokens) the
		// reference answers another question; those are counted apart.
		if ref && !enforced {
			kind := mt.Departure.String()
			switch {
			case kind != "":
			case refNormal == "0":
				kind = "encoding"
			case refTokenDiffers(agent):
				kind = "token digits"
			default:
				kind = "other"
			}
			rescored["unverified "+kind]++
			if mt.Departure == NoDeparture {
				rescored["verified "+kind]++
			}
			if kind == "other" {
				t.Errorf("%s, %s, %s: the reference allows it, refused without a departure (rule %v)", file, agent, url, mt.Rule)
			}
		}
		why := ""
		switch {
		case enforced == ref && match == ref:
			why = "agree"
		case IsRobotsTxt(target.Normal):
			why = "robots.txt"
		case refNormal != "-" && (refNormal == "1") == match:
			why = "encoding"
		case refTokenDiffers(agent):
			why = "token digits"
		case match == ref && !enforced && p.MatchReading(tokens, &target, GoogleReading).Allowed == ref:
			why = "" // not a departure: enforcement must agree with Google's reading here
		case match == ref && enforced && !ref:
			why = "both readings"
		case match == ref && !enforced && ref && strings.Contains(raw, "?"):
			why = "query"
		}
		if why == "" {
			t.Errorf("%s, %s, %s: reference allows %v, Match %v, MatchTarget %v (normal %q, variants %q)", file, agent, url, ref, match, enforced, target.Normal, target.Variants)
			continue
		}
		counts[why]++
		if why == "both readings" && !p.MatchTarget(tokens, &target).Ambiguous {
			t.Errorf("%s, %s, %s: counted as both readings but not ambiguous", file, agent, url)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	total := 0
	var cats []string
	for k, v := range counts {
		total += v
		cats = append(cats, k)
	}
	sort.Strings(cats)
	var b strings.Builder
	for _, k := range cats {
		b.WriteString("; " + k + ": " + strconv.Itoa(counts[k]))
	}
	t.Logf("%d files, %d queries%s", len(files), total, b.String())
	t.Logf("refusals of what the reference allows: verified crawlers %d; unverified bots %d (query departure %d, spelling departure %d); "+
		"apart, for both, where robotsguard reads the URL or token otherwise than Google's parser: encoding %d, token digits %d",
		rescored["verified other"], rescored["unverified query"]+rescored["unverified spelling"], rescored["unverified query"], rescored["unverified spelling"],
		rescored["unverified encoding"], rescored["unverified token digits"])
	if n := rescored["verified other"]; n != 0 {
		t.Errorf("%d refusals of what the reference allows for verified crawlers, want 0", n)
	}
	if len(files) < 10 || total < 1000 {
		t.Errorf("corpus too small: %d files, %d queries", len(files), total)
	}
}

// refTokenDiffers reports whether the reference reads agent as another
// token: it keeps only letters, '-' and '_'.
func refTokenDiffers(agent string) bool {
	for i := 0; i < len(agent); i++ {
		if c := agent[i]; '0' <= c && c <= '9' {
			return true
		}
	}
	return false
}
