package source

import (
	"context"
	"crypto/sha256"
	"errors"
	"maps"
	"net/http"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/upstream"
)

// The site's robots.txt read from where the application serves it
// (robots <url>): a source whose file comes from package upstream's
// fetches instead of the disk. What a fetch means is upstream's (RFC 9309
// status classes); what is installed, and what is kept, is the source's,
// the same as for a file: parse, lint, keep the last good rules, refuse a
// file cut short.

// DefaultRefresh is how often a robots.txt read from a URL is
// fetched again: a change the application makes (an admin page, a plugin)
// is enforced within a minute, at the cost of one conditional request a
// minute, usually answered 304 with no body.
const DefaultRefresh = time.Minute

// FirstFetchWait is how long Start (Caddy's Provision) waits for the first fetch of a
// robots.txt when no earlier configuration fetched it: long enough for an
// application that answers, short enough that one that hangs does not hold
// up Caddy's start or a reload. Until the fetch answers, no rules apply.
const FirstFetchWait = 3 * time.Second

// unreachableRelog is how often a robots.txt that stays unreachable is
// logged again.
const unreachableRelog = 10 * time.Minute

// ServedHeader marks the robots.txt the handler serves. A robots URL that
// answers with it leads back to a robots_guard handler (the site's public
// address instead of the application's): that file is the handler's own,
// with its additions, and is refused.
const ServedHeader = "X-Robots-Guard-Served"

// ErrOwnFile refuses a served robots.txt fetched back.
var ErrOwnFile = errors.New("the answer is a robots_guard handler's own served robots.txt, not the application's")

// remote is what a source that reads a URL keeps besides the snapshot.
// Its fields are guarded by the source's mu.
type remote struct {
	fetcher *upstream.Fetcher
	refresh time.Duration
	pool    Pool
	carry   *Carried
	// validators are those of the file in force, for conditional
	// requests.
	validators upstream.Validators
	// failures counts the unreachable fetches in a row; cause is the
	// last one's, since when they began, logged when they were last
	// logged.
	failures      int
	cause         string
	since, logged time.Time
	// unavailable is the 4xx answer in force ("" when none).
	unavailable string
}

// FetchOptions returns the fetch options of a robots URL with its Host
// and header fields.
func FetchOptions(url, host string, header map[string]string) upstream.Options {
	o := upstream.Options{URL: url, Host: host}
	if len(header) > 0 {
		o.Header = http.Header{}
		for _, name := range slices.Sorted(maps.Keys(header)) {
			o.Header.Set(name, header[name])
		}
	}
	return o
}

// NewRemote returns a Source that reads the site's robots.txt with f
// every refresh, carried across reloads in pool (nil: not carried).
// Nothing is fetched until [Source.Start].
func NewRemote(f *upstream.Fetcher, refresh time.Duration, pool Pool, o Options) *Source {
	if pool == nil {
		pool = ownPool{}
	}
	s := New("", o)
	s.remote = &remote{fetcher: f, refresh: refresh, pool: pool}
	return s
}

// Start installs the robots.txt an earlier configuration fetched from the
// same URL, if any, or else no rules, and starts the refreshes until ctx
// ends. Without a carried robots.txt it waits up to FirstFetchWait for the
// first fetch.
func (s *Source) Start(ctx context.Context) {
	s.Run(ctx, !s.seed())
}

// Seed is the first half of [Source.Start], for a source whose fetches can
// begin only later (the site's own robots.txt, which the handler after
// robots_guard answers once a request has come in): it installs the
// carried robots.txt, or no rules, and reports whether it installed one.
func (s *Source) Seed() bool { return s.seed() }

// Run is the second half of [Source.Start]: it starts the refreshes until
// ctx ends and, with wait, waits up to FirstFetchWait for the first fetch.
func (s *Source) Run(ctx context.Context, wait bool) {
	first := make(chan struct{})
	go refreshEvery(ctx, first, s.refresh) // refresh.go
	if !wait {
		return
	}
	t := time.NewTimer(FirstFetchWait)
	defer t.Stop()
	select {
	case <-first:
	case <-ctx.Done():
	case <-t.C:
		s.logger.Warn("robots.txt: the first fetch is taking long; no rules are enforced until it answers", s.where(), zap.Duration("waited", FirstFetchWait))
	}
}

// seed joins the carried robots.txt of the source's URL and installs it,
// or no rules when there is none; it reports whether it installed one.
func (s *Source) seed() bool {
	rm := s.remote
	carry := rm.pool.Join()
	s.mu.Lock()
	defer s.mu.Unlock()
	rm.carry = carry
	now := time.Now()
	if data, file, modTime, validators := rm.carry.load(); data != nil && s.accept(data, file, modTime, nil, now) {
		rm.validators = validators
		s.logger.Info("robots.txt carried over from the previous configuration until it is fetched again", s.where())
		return true
	}
	s.install(policy.Parse(nil), nil, fileStamp{}, now, true)
	return false
}

// refresh fetches the robots.txt once, conditionally on the file in
// force, and applies the result; it returns how long to wait before the
// next fetch.
func (s *Source) refresh(ctx context.Context) time.Duration {
	s.mu.Lock()
	v := s.remote.validators
	s.mu.Unlock()
	res := s.remote.fetcher.Fetch(ctx, v)
	if ctx.Err() != nil {
		return 0
	}
	return s.applyFetch(res, time.Now())
}

// applyFetch installs, keeps or clears the rules after a fetch, logs and
// counts it, and returns how long to wait before the next one.
func (s *Source) applyFetch(res upstream.Result, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	rm := s.remote
	if s.closed {
		return rm.refresh
	}
	if res.Outcome == upstream.Fetched && res.Header.Get(ServedHeader) != "" {
		res.Outcome, res.Err = upstream.Unreachable, ErrOwnFile
	}
	s.counters.fetch(res.Outcome.String())
	prev := s.cur.Load()
	if res.Outcome != upstream.Unreachable {
		s.reachable(now)
	}
	switch res.Outcome {
	case upstream.Fetched:
		s.availableAgain()
		file := fileStamp{size: res.Size, modTime: res.LastModified, hash: sha256.Sum256(res.Body), endsLine: res.EndsLine, read: true}
		if !prev.Missing && file.sameContent(prev.file) {
			// The same file, from a server without validators or with
			// new ones: nothing to parse.
			rm.validators = res.Validators
			rm.carry.store(res.Body, prev.file, prev.ModTime, res.Validators)
			return rm.refresh
		}
		modTime := res.LastModified
		if modTime.IsZero() {
			modTime = now
		}
		if s.accept(res.Body, file, modTime, prev, now) {
			rm.validators = res.Validators
			rm.carry.store(res.Body, file, modTime, res.Validators)
		}
	case upstream.Unavailable:
		// RFC 9309 section 2.3.1.3: no robots.txt, so no rules.
		cause := res.Cause()
		if rm.unavailable != cause {
			if rm.unavailable == "" {
				s.counters.robotsMissing(+1)
			}
			rm.unavailable = cause
			fields := []zap.Field{s.where(), zap.String("answer", cause), zap.String("host", rm.fetcher.Host())}
			if res.Status == http.StatusUnauthorized || res.Status == http.StatusForbidden || res.Status == http.StatusMisdirectedRequest {
				fields = append(fields, zap.String("hint", "if the application refuses the fetch's Host header, set robots_host to the site's name"))
			}
			if prev.Missing {
				s.logger.Warn("robots.txt: the application has none (a 4xx answer): no rules are enforced until it serves one (RFC 9309: unavailable means allow all)", fields...)
			} else {
				s.logger.Warn("robots.txt: the application has none any more (a 4xx answer): the rules are cleared until it serves one (RFC 9309: unavailable means allow all)", fields...)
			}
		}
		if !prev.Missing {
			s.install(policy.Parse(nil), nil, fileStamp{}, now, true)
		}
		rm.validators = upstream.Validators{}
		rm.carry.store(nil, fileStamp{}, time.Time{}, upstream.Validators{})
	case upstream.Unreachable:
		// RFC 9309 section 2.3.1.4: nothing is known about the rules.
		// The last good ones stay; no rules are made up.
		rm.failures++
		wait := upstream.Retry(rm.failures, rm.refresh, res.RetryAfter)
		cause := res.Cause()
		fields := []zap.Field{s.where(), zap.String("error", cause), zap.Duration("retry_in", wait)}
		if errors.Is(res.Err, ErrOwnFile) {
			fields = append(fields, zap.String("hint", "point robots at the application's own address (e.g. http://127.0.0.1:3000/robots.txt), not at the site"))
		}
		if errors.Is(res.Err, upstream.ErrRedirect) {
			fields = append(fields, zap.String("hint", "redirects are followed only within the URL's scheme and host, or to robots_host's name; if the application redirects to its public name, set robots_host to it; if it redirects to HTTPS, send it robots_header X-Forwarded-Proto https"))
		}
		switch {
		case rm.failures == 1:
			rm.since, rm.logged, rm.cause = now, now, cause
			s.counters.robotsUnreachable(+1)
			if prev.Missing {
				// A warning, not yet an error: at start the application
				// may come up a moment after Caddy (or be one of its own
				// sites, which listen only once every handler is
				// provisioned), and `caddy validate`, which never starts
				// the sites, must not print an error above "Valid
				// configuration". The next failure is the error.
				s.logger.Warn("robots.txt cannot be fetched yet: no rules are enforced until it is; retrying (caddy robots doctor checks the URL)", fields...)
			} else {
				s.logger.Warn("robots.txt could not be fetched; keeping the last good rules and retrying", fields...)
			}
		case rm.failures == 2 && prev.Missing:
			rm.cause, rm.logged = cause, now
			s.logger.Error("robots.txt still cannot be fetched: no rules are enforced until it is; retrying",
				append(fields, zap.Duration("failing_for", now.Sub(rm.since)), zap.Int("attempts", rm.failures))...)
		case cause != rm.cause || now.Sub(rm.logged) >= unreachableRelog:
			rm.cause, rm.logged = cause, now
			s.logger.Warn("robots.txt still cannot be fetched; keeping the last good rules and retrying",
				append(fields, zap.Duration("failing_for", now.Sub(rm.since)), zap.Int("attempts", rm.failures))...)
		}
		return wait
	}
	return rm.refresh
}

// reachable ends a spell of unreachable fetches. The caller holds s.mu.
func (s *Source) reachable(now time.Time) {
	rm := s.remote
	if rm.failures == 0 {
		return
	}
	s.logger.Info("robots.txt can be fetched again", s.where(), zap.Duration("failed_for", now.Sub(rm.since)), zap.Int("attempts", rm.failures))
	rm.failures, rm.cause = 0, ""
	s.counters.robotsUnreachable(-1)
}

// availableAgain ends a spell of 4xx answers. The caller holds s.mu.
func (s *Source) availableAgain() {
	rm := s.remote
	if rm.unavailable == "" {
		return
	}
	s.logger.Info("robots.txt: the application serves one again", s.where(), zap.String("was", rm.unavailable))
	rm.unavailable = ""
	s.counters.robotsMissing(-1)
}

// closeRemote gives back the gauges the source holds and its share of the
// carried robots.txt. The caller holds s.mu.
func (s *Source) closeRemote() {
	rm := s.remote
	if rm.failures > 0 {
		s.counters.robotsUnreachable(-1)
		rm.failures = 0
	}
	if rm.unavailable != "" {
		s.counters.robotsMissing(-1)
		rm.unavailable = ""
	}
	if rm.carry != nil {
		rm.pool.Leave()
		rm.carry = nil
	}
}
