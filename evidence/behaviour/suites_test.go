package behaviour

import (
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// suiteHit is one request of testdata/suites.
type suiteHit struct {
	at     int64
	status int
	uri    string
	r      Request
}

// readSuite reads one client's requests; Disallowed by the suites'
// robots.txt (testdata/README.md).
func readSuite(t *testing.T, path string) []suiteHit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := csv.NewReader(f)
	rd.Comma, rd.LazyQuotes = '\t', true
	head, err := rd.Read()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	var out []suiteHit
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sec, _ := strconv.ParseFloat(rec[col["t"]], 64)
		status, _ := strconv.Atoi(rec[col["status"]])
		uri := rec[col["uri"]]
		path, _, _ := strings.Cut(uri, "?")
		out = append(out, suiteHit{at: start + int64(sec*float64(time.Second)), status: status, uri: uri, r: Request{
			Dest: rec[col["dest"]], Mode: rec[col["mode"]], Site: rec[col["site"]], User: rec[col["user"]],
			Conditional: rec[col["conditional"]] == "true", Target: Hash(uri),
			Disallowed: strings.HasPrefix(path, "/private/") || strings.HasPrefix(path, "/search") || strings.HasPrefix(path, "/account"),
			Gestures:   true, // Chromium's and Firefox's TLS stacks
		}})
	}
	return out
}

// replay runs a client's requests through one summary; it returns the
// request at which the client was first held (-1: never) and how many
// disallowed documents it was served before.
func replay(hits []suiteHit, c *Config) (held, read int) {
	var s Summary
	for i, h := range hits {
		if v := s.Observe(h.at, &h.r, c); v.Held {
			return i, read
		}
		if h.r.Navigation() && h.r.Disallowed && h.status == 200 { // a page read; not a redirect
			read++
		}
	}
	return -1, read
}

// firstBurst returns how many of the pages of a client's first burst (see
// BurstGap) robots.txt disallows, and its pages: what it reads that its
// burst counts as one.
func firstBurst(hits []suiteHit) (disallowed, pages int) {
	var last int64
	var prev uint32
	var prevDis bool
	seen := map[uint32]bool{}
	for _, h := range hits {
		if !h.r.MayCount() || !h.r.selfStarted(true) {
			continue
		}
		if last != 0 && h.at-last < int64(BurstGap) && !seen[h.r.Target] && h.r.Target != prev && len(seen) < Slots {
			if len(seen) == 0 {
				seen[prev] = prevDis
			}
			seen[h.r.Target] = h.r.Disallowed
		} else if len(seen) > 0 {
			break
		}
		last, prev, prevDis = h.at, h.r.Target, h.r.Disallowed
	}
	for _, d := range seen {
		if d {
			disallowed++
		}
	}
	return disallowed, len(seen)
}

// TestSuites replays what the browsers of examples/e2e's behaviour suites
// did: no person is held, ever (pages opened at once among them); every
// crawler that loads URLs is held having read at most 3 disallowed pages,
// images off or on, besides those of its first burst, which count as one
// (a crawler opening tabs at once); the two that this evidence does not
// see (a crawler clicking a link it adds to each page, one paced 3 s a
// page) are not.
func TestSuites(t *testing.T) {
	files, err := filepath.Glob("testdata/suites/*.tsv")
	if err != nil || len(files) < 17 {
		t.Fatalf("%d files: %v", len(files), err)
	}
	c := Default
	unseen := map[string]bool{"crawler-chromium-clicks": true, "crawler-chromium-paced": true}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".tsv")
		hits := readSuite(t, f)
		held, read := replay(hits, &c)
		docs := 0
		for _, h := range hits[:max(held, 0)] {
			if h.r.Navigation() {
				docs++
			}
		}
		switch {
		case strings.HasPrefix(name, "person-"):
			if held >= 0 {
				t.Errorf("%s: a person held at request %d (%s)", name, held, hits[held].uri)
			}
			t.Logf("%-42s never held (%d requests)", name, len(hits))
		case unseen[name]:
			if held >= 0 {
				t.Errorf("%s: held at request %d: the docs say this is not detected", name, held)
			}
			t.Logf("%-42s never held, %d disallowed pages read: not detected", name, read)
		default:
			dis, pages := firstBurst(hits)
			if held < 0 || read > 3+dis {
				t.Errorf("%s: held at request %d, %d disallowed pages read before, want held within 3 and its first burst's %d", name, held, read, dis)
			} else {
				t.Logf("%-42s held at its navigation %d (%s), %d disallowed pages read before; its first burst: %d pages, %d disallowed",
					name, docs+1, hits[held].uri, read, pages, dis)
			}
		}
	}
}

// TestSuitesTooTight: with thresholds of 1, the people are held: the
// suites' check of every request would fail (see examples/e2e
// TestBehaviourPeopleTooTight for the same against the real binary).
func TestSuitesTooTight(t *testing.T) {
	c := Config{Window: 10 * time.Second, Pages: 1, Disallowed: 1, Hold: time.Minute}
	files, _ := filepath.Glob("testdata/suites/person-*.tsv")
	n := 0
	for _, f := range files {
		if held, _ := replay(readSuite(t, f), &c); held >= 0 {
			n++
		}
	}
	if n != len(files) || n == 0 {
		t.Errorf("%d of %d people held with pages 1", n, len(files))
	}
}
