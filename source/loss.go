package source

import (
	"fmt"
	"io"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsguard/robotsguard/policy"
)

// The reload results (Counters.Reload) of a robots.txt that is installed
// but takes rules away; a reload that takes none counts "ok".
const (
	// ResultNoRules: the file has no Allow or Disallow line (an empty
	// file, a plain-text page): every crawler may fetch everything.
	ResultNoRules = "no_rules"
	// ResultTruncated: rules are lost to the 500 KiB cut.
	ResultTruncated = "truncated"
	// ResultStarLifted: rules are left, but none for "*", where the rules
	// in force had some.
	ResultStarLifted = "star_lifted"
)

// loss is what installing a robots.txt takes away, for its log line and
// reload result; the zero loss takes nothing.
type loss struct {
	result string
	level  zapcore.Level
	msg    string
	detail string // counted as "caddy robots lint" counts it
	// cut is set when detail holds the truncated lint finding.
	cut bool
}

// judgeLoss says what r takes away from the rules in force (prev; nil or
// Missing: none). A file with no rules, or rules lost to the cut, is
// logged at warn, and at error when no rule for "*" is left where the
// rules in force, or the file's lost end, have some. It is installed
// all the same: an empty robots.txt is a valid choice.
func judgeLoss(r *policy.Robots, prev *Snapshot) loss {
	rules, star := r.RuleCount()
	var prevRules, prevStar int
	if prev != nil && !prev.Missing {
		prevRules, prevStar = prev.rules, prev.starRules
	}
	lost := r.Lost()
	l := loss{level: zapcore.WarnLevel}
	if star == 0 && (prevStar > 0 || lost.StarRules > 0) {
		l.level = zapcore.ErrorLevel
	}
	inForce := ""
	if prevRules > 0 {
		inForce = fmt.Sprintf("lifted: the %s in force (%d for \"*\")", policy.Rules(prevRules), prevStar)
	}
	switch {
	case rules == 0:
		l.result = ResultNoRules
		l.msg = "robots.txt has no Allow or Disallow rules: every crawler may fetch everything; installed, as an empty robots.txt is a valid choice: restore the file if this was not meant"
		l.detail = inForce
	case lost.Rules > 0:
		l.result = ResultTruncated
		l.msg = "robots.txt is larger than 500 KiB (RFC 9309's limit): the rules after the cut are not enforced; move them up or shorten the file"
	case star == 0 && prevStar > 0:
		l.result = ResultStarLifted
		l.msg = `robots.txt has no rules for "*" any more: crawlers without a group of their own may fetch everything`
		l.detail = fmt.Sprintf(`lifted: the %s for "*" in force; left: %s of other groups`, policy.Rules(prevStar), policy.Rules(rules))
		return l
	default:
		return loss{}
	}
	for _, d := range r.Lint() {
		if d.Code == policy.CodeTruncated && lost.Rules > 0 {
			l.cut = true
			if l.detail != "" {
				l.detail += "; "
			}
			l.detail += d.Message
		}
	}
	return l
}

// log writes the loss's line, with the source's fields.
func (l loss) log(logger *zap.Logger, where zap.Field) {
	if ce := logger.Check(l.level, l.msg); ce != nil {
		ce.Write(where, zap.String("message", l.detail))
	}
}

// parse parses data, the start of the robots.txt whose stamp is file. For
// a file larger than what was read, the rest is read from the file, in
// pieces, up to maxCounted, to count what the cut loses
// (policy.ParseHeadRest); a URL's body is counted as far as it was
// fetched.
func (s *Source) parse(data []byte, file fileStamp) *policy.Robots {
	if s.remote != nil || file.size <= int64(len(data)) {
		return policy.ParseHead(data, file.size)
	}
	f, err := os.Open(s.path)
	if err != nil {
		return policy.ParseHead(data, file.size)
	}
	defer f.Close()
	rest := min(file.size-int64(len(data)), maxCounted)
	r, _ := policy.ParseHeadRest(data, file.size, io.NewSectionReader(f, int64(len(data)), rest))
	return r
}

// maxCounted bounds how much of a large file's rest is read to count what
// the cut loses (about a second's reading): beyond it the count says how
// far it went.
const maxCounted = 128 << 20
