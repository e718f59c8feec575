package uaclass

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/robotsguard/robotsguard/evidence"
)

// TestClaims: every browser of the corpus that evidence.ParseClaim judges
// is a browser here too, and its Result carries the claim, cached or not;
// no robot of the crawler list whose claim is judged is a browser here
// (the engine judges browsers' claims only), and robots carry no claim.
func TestClaims(t *testing.T) {
	c := newTestClassifier(t)
	f, err := os.Open("testdata/browsers.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	judged := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ua := strings.TrimSpace(sc.Text())
		if ua == "" || strings.HasPrefix(ua, "#") {
			continue
		}
		claim := evidence.ParseClaim(ua)
		if !claim.Judged() {
			continue
		}
		judged++
		for range 2 { // classified, then from the cache
			if r := c.Classify(ua); r.Class != Browser || r.Claim != claim {
				t.Errorf("%q: judged as %s, but classified %s with claim %s", ua, claim, r.Class, r.Claim)
			}
		}
	}
	if judged < 100 {
		t.Fatalf("only %d judged claims in the corpus", judged)
	}
	b, err := os.ReadFile("internal/botsgen/data/crawler-user-agents.json")
	if err != nil {
		t.Fatal(err)
	}
	var list []struct{ Instances []string }
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		for _, ua := range e.Instances {
			r := c.Classify(ua)
			if r.Class != Browser && r.Claim.Judged() {
				t.Errorf("%q: %s with a judged claim", ua, r.Class)
			}
			if r.Class == Browser && evidence.ParseClaim(ua).Judged() {
				t.Logf("a robot's User-Agent classified as a browser, its claim judged: %q", ua)
			}
		}
	}
}
