package enforce

import (
	"bufio"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// TestConformanceEngine re-scores the conformance corpus (policy/testdata/
// conformance: real robots.txt files and the answers of Google's reference
// parser) through the engine (issue 27): for every URL the reference
// allows, how often a verified crawler and an unverified bot are refused,
// by reason, and how many strikes those refusals cost. A verified crawler
// must be refused none and an unverified bot must get no strike from
// them, apart from the URLs and tokens robotsguard reads otherwise than
// Google's parser (RFC 9309's percent-decoding, digits in tokens; see
// policy's TestConformance), which are counted apart.
func TestConformanceEngine(t *testing.T) {
	dir := filepath.Join("..", "policy", "testdata", "conformance")
	f, err := os.Open(filepath.Join(dir, "answers.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	clock := newClock()
	// One client per query, none paced as its neighbours' crawler.
	e := newEngine(t, Config{ClassRates: map[uaclass.Class]time.Duration{}, Strikes: 1 << 20, AddressStrikes: 1 << 20, CrawlerShare: -1}, clock)
	policies := map[string]*policy.Policy{}
	type tally struct{ allowed, refused, strikes, apart int }
	var verified, unverified tally
	byReason := map[Reason]int{}
	ip := netip.MustParseAddr("10.0.0.0")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		col := strings.Split(line, "\t")
		file, agent, url, ref, refNormal := col[0], col[1], col[2], col[3] == "1", col[4]
		if !ref {
			continue
		}
		p := policies[file]
		if p == nil {
			data, err := os.ReadFile(filepath.Join(dir, "robots", file))
			if err != nil {
				t.Fatal(err)
			}
			p = policy.Compile(policy.Parse(data))
			policies[file] = p
		}
		target, err := policy.ParseTarget(policy.TargetOf(url))
		if err != nil {
			t.Fatal(err)
		}
		apart := refNormal == "0" || strings.ContainsAny(agent, "0123456789")
		for _, v := range []uaclass.Verdict{uaclass.Verified, uaclass.NotClaimed} {
			ip = ip.Next() // one client per query: its strikes are this request's
			class := uaclass.OtherBot
			if v == uaclass.Verified {
				class = uaclass.Search
			}
			r := &Request{IP: ip, UA: uaclass.Result{Class: class, Tokens: []string{policy.ProductToken(agent)}}, Verdict: v, Method: "GET", Target: target}
			d := e.Decide(r, p)
			tl := &unverified
			if v == uaclass.Verified {
				tl = &verified
			}
			tl.allowed++
			switch {
			case d.Action == Allow:
			case apart:
				tl.apart++
			default:
				tl.refused++
				tl.strikes += d.Strikes
				if v == uaclass.NotClaimed {
					byReason[d.Reason]++
				}
				if v == uaclass.Verified {
					t.Errorf("%s, %s, %s: the reference allows it, a verified crawler is refused: %v/%q", file, agent, url, d.Action, d.Reason)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d URLs the reference allows: verified crawlers refused %d; unverified bots refused %d (%v), strikes %d; apart (encoding, token digits): verified %d, unverified %d",
		verified.allowed, verified.refused, unverified.refused, byReason, verified.strikes+unverified.strikes, verified.apart, unverified.apart)
	if unverified.strikes != 0 || verified.strikes != 0 {
		t.Errorf("strikes for URLs the reference allows: %d, want 0", unverified.strikes+verified.strikes)
	}
	if byReason[ReasonDeparture] != unverified.refused {
		t.Errorf("unverified refusals other than departures: %v", byReason)
	}
	if unverified.refused == 0 {
		t.Error("no departure in the corpus: the test proves nothing")
	}
}
