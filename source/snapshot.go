package source

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/policy"
)

// Snapshot is one immutable version of the site's rules: the compiled
// policy the engine enforces and the robots.txt the handler serves. Requests
// load it with one atomic read and never wait on a lock. Its fields must not
// be modified.
type Snapshot struct {
	Policy  *policy.Policy
	Served  []byte    // the robots.txt served: the site's, with the additions
	ETag    string    // of Served, quoted
	ModTime time.Time // when Served was first served (its Last-Modified)
	file    fileStamp // of the source file, to skip reloads that change nothing
	// Missing is set when no file was ever read: no rules are in force, so
	// the first file that appears is installed without waiting.
	Missing bool
	// Body is the site's file as read, and Version the first 12 hex
	// digits of its hash ("" without a file): the logs and the review page
	// name the robots.txt each decision was judged against.
	Body    []byte
	Version string
	// rules and starRules count the site's Allow and Disallow lines, and
	// those for "*" (policy.Robots.RuleCount), to tell what a reload lifts.
	rules, starRules int
	// Contradictions are the site's lines that allow what an addition
	// disallows (policy.Contradictions), logged when installed; a
	// configuration that loads with one is refused.
	Contradictions []policy.Contradiction
}

// install builds and publishes the snapshot for r, whose file is body:
// the served robots.txt is body as written with the additions appended
// (policy.Serve), and the policy enforced is that file's, as a crawler
// reads it. A line of the site's that contradicts an addition (an Allow
// under a trap) is logged with both lines. The caller holds s.mu.
func (s *Source) install(r *policy.Robots, body []byte, file fileStamp, modTime time.Time, missing bool) {
	rules, star := r.RuleCount()
	var add policy.Added
	if s.additions != nil {
		add = s.additions(r)
	}
	text, ownerLines := policy.Serve(body, add)
	p := policy.Compile(policy.Parse(text))
	cs := policy.Contradictions(p, ownerLines)
	for _, c := range cs {
		s.logger.Warn("robots.txt allows what robots_guard's additions disallow: crawlers that obey the served file may fetch it, so it is not trapped or blocked there; remove the site's line or change the trap or block_class",
			s.where(), zap.Int("line", c.Owner.Line), zap.String("rule", c.Owner.String()), zap.String("agent", c.Agent), zap.String("path", c.Path),
			zap.Int("added_line", c.Added.Line), zap.String("added_rule", c.Added.String()))
	}
	sum := sha256.Sum256(text)
	version := ""
	if !missing {
		version = hex.EncodeToString(file.hash[:6])
	}
	s.cur.Store(&Snapshot{
		Policy:         p,
		Served:         text,
		ETag:           `"` + hex.EncodeToString(sum[:12]) + `"`,
		ModTime:        servedSince(sum, time.Now()),
		file:           file,
		Missing:        missing,
		Body:           body,
		Version:        version,
		Contradictions: cs,
		rules:          rules, starRules: star,
	})
}

// served records when each served robots.txt (by hash) was first served
// in this process, for its Last-Modified: the time the served bytes
// changed, not the source file's, whose time stays when a reload changes
// the additions (a trap added), and a crawler asking If-Modified-Since
// would get 304 and keep the copy without it. Each new text gets a second
// later than any before it, so that two texts never share a
// Last-Modified.
var served struct {
	sync.Mutex
	since map[[32]byte]time.Time
	last  time.Time
}

// maxServed bounds served.since; when it is full it starts over, which
// only makes crawlers fetch the file once more.
const maxServed = 256

// servedSince returns the Last-Modified of the served text whose hash is
// sum, now if it is new.
func servedSince(sum [32]byte, now time.Time) time.Time {
	served.Lock()
	defer served.Unlock()
	if t, ok := served.since[sum]; ok {
		return t
	}
	if served.since == nil || len(served.since) >= maxServed {
		served.since = map[[32]byte]time.Time{}
	}
	t := now.UTC().Truncate(time.Second)
	if !t.After(served.last) {
		t = served.last.Add(time.Second)
	}
	served.since[sum], served.last = t, t
	return t
}

// Serve answers GET and HEAD /robots.txt with the served file, with an
// ETag and Last-Modified; http.ServeContent answers conditional requests
// (If-None-Match, If-Modified-Since) with 304.
func (s *Snapshot) Serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("ETag", s.ETag)
	h.Set("Cache-Control", "public, max-age=300")
	h.Set(ServedHeader, "generated") // so that a robots URL that leads back here is refused
	http.ServeContent(w, r, "robots.txt", s.ModTime, bytes.NewReader(s.Served))
}
