package source

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/robotsguard/robotsguard/policy"
)

// Snapshot is one immutable version of the site's rules: the compiled
// policy the engine enforces and the robots.txt the handler serves. Requests
// load it with one atomic read and never wait on a lock. Its fields must not
// be modified.
type Snapshot struct {
	Policy  *policy.Policy
	Served  []byte // the robots.txt served: the site's, with the additions
	ETag    string // of Served, quoted
	ModTime time.Time
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
}

// install builds and publishes the snapshot for r. The caller holds s.mu.
func (s *Source) install(r *policy.Robots, body []byte, file fileStamp, modTime time.Time, missing bool) {
	rules, star := r.RuleCount()
	served := r.Clone()
	if s.additions != nil {
		s.additions(served)
	}
	text := served.Generate()
	sum := sha256.Sum256(text)
	version := ""
	if !missing {
		version = hex.EncodeToString(file.hash[:6])
	}
	s.cur.Store(&Snapshot{
		Policy:  policy.Compile(served),
		Served:  text,
		ETag:    `"` + hex.EncodeToString(sum[:12]) + `"`,
		ModTime: modTime.UTC().Truncate(time.Second),
		file:    file,
		Missing: missing,
		Body:    body,
		Version: version,
		rules:   rules, starRules: star,
	})
}
