package report

import (
	"fmt"
	"io"
	"maps"
	"strconv"

	"github.com/robotsguard/robotsguard/record"
)

// claims counts the entries marked browser_disallowed: requests whose
// User-Agent claims a browser for a path the "*" group disallows.
type claims struct {
	count, served             int
	byClass, evidence, byPath map[string]int
	byRule                    map[string]int
}

func newClaims() claims {
	return claims{byClass: map[string]int{}, evidence: map[string]int{}, byPath: map[string]int{}, byRule: map[string]int{}}
}

// add counts r (of weight w) if it is a browser's claim on a disallowed
// path, as the review page counts it (record.Record.Claim).
func (c *claims) add(r *record.Record, w int) {
	claim, ok := r.Claim()
	if !ok {
		return
	}
	c.count += w
	if claim.Served {
		c.served += w
	}
	c.byClass[claim.Class.String()] += w
	for f := range claim.Evidence.Each() {
		c.evidence[f.Code()] += w
	}
	site := r.SiteName()
	c.byPath[siteKey(site, r.PathOnly())] += w
	if r.Rule != nil {
		rule := r.Rule.String()
		if r.Rule.Line > 0 {
			rule = "line " + strconv.Itoa(r.Rule.Line) + ": " + rule
		}
		c.byRule[siteKey(site, rule)] += w // a line of that site's robots.txt
	}
}

// ClaimsSummary is what the report says of the requests whose User-Agent
// claims a browser for a path the robots.txt "*" group disallows (entries
// marked browser_disallowed), served or refused.
type ClaimsSummary struct {
	// Count is how many there were; Served how many were served (action
	// allow), Refused the others (deny, throttle, tarpit; in dry run, what
	// would have been done).
	Count   int `json:"count"`
	Served  int `json:"served"`
	Refused int `json:"refused"`
	// ByClass counts them as browser (the claim stands) or poser
	// (decisive evidence against it: class poser, or served by posers
	// "log"); Evidence counts the findings against their claims, once per
	// finding.
	ByClass  map[string]int `json:"by_class"`
	Evidence map[string]int `json:"evidence"`
	// TopPaths and TopRules rank the disallowed paths asked for and the
	// rules that disallow them.
	TopPaths []TopEntry `json:"top_paths"`
	TopRules []TopEntry `json:"top_rules"`
}

// summary ranks the counts; top bounds each ranking.
func (c *claims) summary(top int) ClaimsSummary {
	return ClaimsSummary{Count: c.count, Served: c.served, Refused: c.count - c.served,
		ByClass: maps.Clone(c.byClass), Evidence: maps.Clone(c.evidence),
		TopPaths: rankCounts(c.byPath, top), TopRules: rankCounts(c.byRule, top)}
}

// rankCounts ranks a map's keys by count, at most top of them.
func rankCounts(m map[string]int, top int) []TopEntry {
	out := []TopEntry{}
	for k, n := range m {
		site, key := splitSiteKey(k)
		out = append(out, TopEntry{Key: key, Site: site, Count: n})
	}
	sortTop(out)
	if len(out) > top {
		out = out[:top]
	}
	return out
}

// writeText prints the section "browser claims on disallowed paths", with
// its classes, evidence, top paths and rules; nothing when there were none.
func (c *ClaimsSummary) writeText(w io.Writer, many bool) {
	if c.Count == 0 {
		return
	}
	fmt.Fprintf(w, "\nbrowser claims on disallowed paths: %d (served %d, refused %d)\n", c.Count, c.Served, c.Refused)
	fmt.Fprintf(w, "  by class:  %s\n", Counts(c.ByClass))
	if len(c.Evidence) > 0 {
		fmt.Fprintf(w, "  evidence:  %s\n", Counts(c.Evidence))
	}
	for _, l := range []struct {
		title string
		es    []TopEntry
	}{{"top paths:", c.TopPaths}, {"top rules:", c.TopRules}} {
		if len(l.es) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s\n", l.title)
		for _, e := range l.es {
			fmt.Fprintf(w, "    %-38s %6d\n", e.row(many), e.Count)
		}
	}
}
