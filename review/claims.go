package review

import (
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/record"
	"github.com/robotsguard/robotsguard/uaclass"
)

// claimStats count a zone's requests whose User-Agent claims a browser for
// a path the robots.txt "*" group disallows (Event.BrowserDisallowed),
// served or refused, as record.ClaimOf counts them (the rule the report
// and the metrics count by too): by class (browser, poser) and outcome,
// the findings against their claims, their top paths and the rules. The
// counts take no lock; the top lists take the row's.
type claimStats struct {
	counts   [2][2]atomic.Uint64 // [browser, poser][served, refused]
	evidence [16]atomic.Uint64   // by the finding's bit
	mu       sync.Mutex
	paths    top[string]
	rules    top[ruleKey]
}

// record counts e, a request marked BrowserDisallowed; path is its path
// without the query.
func (c *claimStats) record(e *Event, path string, in *interned) {
	claim := record.ClaimOf(e.Class, e.Evidence, e.Outcome)
	class, refused := 0, 0
	if claim.Class == uaclass.Poser {
		class = 1
	}
	if !claim.Served {
		refused = 1
	}
	c.counts[class][refused].Add(1)
	for f := range claim.Evidence.Each() {
		c.evidence[bits.TrailingZeros16(uint16(f))].Add(1)
	}
	c.mu.Lock()
	c.paths.add(keepString(path), TopPaths, nil)
	if e.Rule != nil {
		addRule(&c.rules, e, in)
	}
	c.mu.Unlock()
}

// ClaimsView is what a zone's statistics say of the requests whose
// User-Agent claims a browser for a path the robots.txt "*" group
// disallows: how much of the "browser" traffic walks where robots may
// not, whether it was served or refused.
type ClaimsView struct {
	// Served counts those allowed; Refused those refused, throttled or
	// blocked (in dry run, what would have been done).
	Served  uint64 `json:"served"`
	Refused uint64 `json:"refused"`
	// ByClass splits them into "browser" (the claim stands) and "poser"
	// (decisive evidence against it: class poser, or served by posers
	// "log"); classes without any are left out.
	ByClass map[string]ClaimCount `json:"by_class"`
	// Evidence counts the findings against their claims, once per finding
	// (evidence.Evidence's codes); findings without any are left out.
	Evidence map[string]uint64 `json:"evidence"`
	// Paths are the top disallowed paths asked for, and Rules the rules
	// that disallow them.
	Paths []PathCount `json:"paths,omitempty"`
	Rules []RuleCount `json:"rules,omitempty"`
}

// ClaimCount is one class's served and refused requests.
type ClaimCount struct {
	Served  uint64 `json:"served"`
	Refused uint64 `json:"refused"`
}

func (c *claimStats) view() ClaimsView {
	v := ClaimsView{ByClass: map[string]ClaimCount{}, Evidence: map[string]uint64{}}
	for i, class := range [...]uaclass.Class{uaclass.Browser, uaclass.Poser} {
		n := ClaimCount{Served: c.counts[i][0].Load(), Refused: c.counts[i][1].Load()}
		v.Served += n.Served
		v.Refused += n.Refused
		if n.Served+n.Refused > 0 {
			v.ByClass[class.String()] = n
		}
	}
	for f := range evidence.AllEvidence() {
		if n := c.evidence[bits.TrailingZeros16(uint16(f))].Load(); n > 0 {
			v.Evidence[f.Code()] = n
		}
	}
	c.mu.Lock()
	v.Paths = pathCounts(c.paths)
	v.Rules = ruleCounts(c.rules)
	c.mu.Unlock()
	return v
}

// cutQuery returns a target's path.
func cutQuery(target string) string {
	path, _, _ := strings.Cut(target, "?")
	return path
}
