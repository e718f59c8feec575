package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// behaviourFigures is what one client did, from the access log: what the
// behaviour evidence of issue 37 is chosen from.
type behaviourFigures struct {
	Name                     string
	Requests, Docs, Subs     int
	Images, Conditional      int // image requests; conditional requests (revalidations)
	Refused                  int // 403 and 429 answers
	Disallowed, DisServed    int // documents robots.txt disallows; of them served
	Unlinked                 int // documents no visible link names
	Blind                    int // documents with Sec-Fetch-Site: none
	Referred, UserActivated  int // documents with a Referer; with Sec-Fetch-User: ?1
	CookieBack, AfterFirst   int // documents after the first that returned a cookie; all documents after the first
	Conns                    int // connections (client ports)
	Span                     time.Duration
	Max1, Max5, Max10, Max30 int // most documents in any 1, 5, 10, 30 s
	MaxBlind5                int // most documents with Sec-Fetch-Site: none in any 5 s
	MaxDis10                 int // most disallowed documents in any 10 s
	LongestPause, MedianGap  time.Duration
	NoSubsAfter              int // documents that no subresource followed before the next document (within 2 s)
	// SelfStarted counts the navigations no page of the site led to with
	// a person's gesture: typed or automated (Sec-Fetch-Site none with
	// Sec-Fetch-User ?1) or made by a script (from the site, without ?1),
	// not revalidations; MaxSelf10 and MaxSelfDis10 are the most distinct
	// targets of them, and of them disallowed, in any 10 s.
	SelfStarted, MaxSelf10, MaxSelfDis10 int
}

// selfStarted reports a navigation no page of the site led to with a
// person's gesture (see behaviourFigures.SelfStarted).
func selfStarted(h *behaviourHit) bool {
	if h.Dest != "document" || h.Mode != "navigate" || h.Conditional {
		return false
	}
	return h.Site == "none" && h.User == "?1" || h.Site != "none" && h.User != "?1"
}

// maxDistinctIn returns the most distinct targets among hits in any
// window of length w.
func maxDistinctIn(hits []behaviourHit, w time.Duration) int {
	best := 0
	for i := range hits {
		seen := map[string]bool{}
		for _, h := range hits[i:] {
			if h.At.Sub(hits[i].At) >= w {
				break
			}
			seen[h.URI] = true
		}
		best = max(best, len(seen))
	}
	return best
}

// figuresOf computes the figures of hits.
func figuresOf(name string, hits []behaviourHit) behaviourFigures {
	f := behaviourFigures{Name: name, Requests: len(hits)}
	if len(hits) == 0 {
		return f
	}
	conns := map[string]bool{}
	var docs, blind, dis []time.Time
	for i, h := range hits {
		conns[h.Conn] = true
		if h.Status == 403 || h.Status == 429 {
			f.Refused++
		}
		if h.Conditional {
			f.Conditional++
		}
		if !h.Document() {
			f.Subs++
			if h.Dest == "image" {
				f.Images++
			}
			continue
		}
		f.Docs++
		docs = append(docs, h.At)
		if len(docs) > 1 {
			f.AfterFirst++
			if h.Cookie {
				f.CookieBack++
			}
		}
		if disallowedPath(h.Path) {
			f.Disallowed++
			dis = append(dis, h.At)
			if h.Status == 200 || h.Status == 304 {
				f.DisServed++
			}
		}
		if unlinkedPath(h.Path) {
			f.Unlinked++
		}
		if h.Site == "none" {
			f.Blind++
			blind = append(blind, h.At)
		}
		if h.Referer != "" {
			f.Referred++
		}
		if h.User == "?1" {
			f.UserActivated++
		}
		// A subresource of the document follows before the next
		// document, within 2 s.
		sub := false
		for _, n := range hits[i+1:] {
			if n.Document() || n.At.Sub(h.At) > 2*time.Second {
				break
			}
			sub = true
			break
		}
		if !sub {
			f.NoSubsAfter++
		}
	}
	var self, selfDis []behaviourHit
	for _, h := range hits {
		if selfStarted(&h) {
			self = append(self, h)
			if disallowedPath(h.Path) {
				selfDis = append(selfDis, h)
			}
		}
	}
	f.SelfStarted, f.MaxSelf10, f.MaxSelfDis10 = len(self), maxDistinctIn(self, 10*time.Second), maxDistinctIn(selfDis, 10*time.Second)
	f.Conns = len(conns)
	f.Span = hits[len(hits)-1].At.Sub(hits[0].At)
	f.Max1, f.Max5, f.Max10, f.Max30 = maxIn(docs, time.Second), maxIn(docs, 5*time.Second), maxIn(docs, 10*time.Second), maxIn(docs, 30*time.Second)
	f.MaxBlind5, f.MaxDis10 = maxIn(blind, 5*time.Second), maxIn(dis, 10*time.Second)
	var gaps []time.Duration
	for i := 1; i < len(docs); i++ {
		g := docs[i].Sub(docs[i-1])
		gaps = append(gaps, g)
		f.LongestPause = max(f.LongestPause, g)
	}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		f.MedianGap = gaps[len(gaps)/2]
	}
	return f
}

// maxIn returns the most times in any window of length w.
func maxIn(ts []time.Time, w time.Duration) int {
	best, j := 0, 0
	for i := range ts {
		for ts[i].Sub(ts[j]) >= w {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

// behaviourHeader and row print the figures as a table.
const behaviourHeader = "| client | requests | docs | subresources (images, conditional) | disallowed docs (served) | unlinked | Sec-Fetch-Site none | Referer | ?1 | cookie back | conns | span | docs in 1/5/10/30 s | none in 5 s | disallowed in 10 s | median gap | longest pause | docs with no subresource after | self-started (distinct in 10 s, disallowed) | refused |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"

func (f behaviourFigures) row() string {
	r := func(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }
	return fmt.Sprintf("| %s | %d | %d | %d (%d, %d) | %d (%d) | %d | %d | %d | %d | %d/%d | %d | %s | %d/%d/%d/%d | %d | %d | %s | %s | %d | %d (%d, %d) | %d |",
		f.Name, f.Requests, f.Docs, f.Subs, f.Images, f.Conditional, f.Disallowed, f.DisServed, f.Unlinked, f.Blind, f.Referred, f.UserActivated,
		f.CookieBack, f.AfterFirst, f.Conns, r(f.Span), f.Max1, f.Max5, f.Max10, f.Max30, f.MaxBlind5, f.MaxDis10, r(f.MedianGap), r(f.LongestPause), f.NoSubsAfter, f.SelfStarted, f.MaxSelf10, f.MaxSelfDis10, f.Refused)
}

// dumpHits writes each request of a client to $ROBOTSGUARD_BEHAVIOUR_DUMP/name.tsv
// when that variable names a directory: the raw material of the figures.
func dumpHits(t *testing.T, name string, hits []behaviourHit) {
	dir := os.Getenv("ROBOTSGUARD_BEHAVIOUR_DUMP")
	if dir == "" || len(hits) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("t\tstatus\tconn\tmethod\turi\tdest\tmode\tsite\tuser\treferer\tcookie\tconditional\n")
	for _, h := range hits {
		fmt.Fprintf(&b, "%.3f\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%v\t%v\n", h.At.Sub(hits[0].At).Seconds(), h.Status, h.Conn, h.Method, h.URI,
			h.Dest, h.Mode, h.Site, h.User, h.Referer, h.Cookie, h.Conditional)
	}
	if err := os.WriteFile(filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".tsv"), []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
}
