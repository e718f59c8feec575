package caddymodule

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/metrics"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/upstream"
)

// The site's robots.txt read from where the application serves it
// (robots <url>): a source whose file comes from package upstream's
// fetches instead of the disk. What a fetch means is upstream's (RFC 9309
// status classes); what is installed, and what is kept, is the source's,
// the same as for a file: parse, lint, keep the last good rules, refuse a
// file cut short.

// DefaultRobotsRefresh is how often a robots.txt read from a URL is
// fetched again: a change the application makes (an admin page, a plugin)
// is enforced within a minute, at the cost of one conditional request a
// minute, usually answered 304 with no body.
const DefaultRobotsRefresh = time.Minute

// firstFetchWait is how long Provision waits for the first fetch of a
// robots.txt when no earlier configuration fetched it: long enough for an
// application that answers, short enough that one that hangs does not hold
// up Caddy's start or a reload. Until the fetch answers, no rules apply.
const firstFetchWait = 3 * time.Second

// unreachableRelog is how often a robots.txt that stays unreachable is
// logged again.
const unreachableRelog = 10 * time.Minute

// servedHeader marks the robots.txt the handler serves. A robots URL that
// answers with it leads back to a robots_guard handler (the site's public
// address instead of the application's): that file is the handler's own,
// with its additions, and is refused.
const servedHeader = "X-Robots-Guard-Served"

// errOwnFile refuses a served robots.txt fetched back.
var errOwnFile = errors.New("the answer is a robots_guard handler's own served robots.txt, not the application's")

// remote is what a source that reads a URL keeps besides the snapshot.
// Its fields are guarded by the source's mu.
type remote struct {
	fetcher *upstream.Fetcher
	refresh time.Duration
	carry   *carried
	key     string // carry's key in the carried pool
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

// carried is the last robots.txt fetched from one URL (with one Host and
// header set), shared by the handlers that fetch it and kept across config
// reloads: Caddy provisions the new config before it cleans up the old
// one, so a reload starts from the rules in force instead of none while
// the new config fetches its own.
type carried struct {
	mu         sync.Mutex
	data       []byte // nil when none is known
	file       fileStamp
	modTime    time.Time
	validators upstream.Validators
}

// Destruct implements caddy.Destructor; carried holds no resources.
func (*carried) Destruct() error { return nil }

// carriedPool holds the carried robots.txt of each URL.
var carriedPool = caddy.NewUsagePool()

func (c *carried) store(data []byte, file fileStamp, modTime time.Time, v upstream.Validators) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.data, c.file, c.modTime, c.validators = data, file, modTime, v
}

func (c *carried) load() (data []byte, file fileStamp, modTime time.Time, v upstream.Validators) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.data, c.file, c.modTime, c.validators
}

// carriedKey names what a fetch gets: the URL, the Host header and the
// header fields.
func carriedKey(url, host string, header map[string]string) string {
	var b strings.Builder
	b.WriteString("robots_guard/upstream\n" + url + "\n" + host)
	for _, name := range slices.Sorted(maps.Keys(header)) {
		b.WriteString("\n" + http.CanonicalHeaderKey(name) + ": " + header[name])
	}
	return b.String()
}

// fetcherOptions returns the fetch options of a robots URL with its Host
// and header fields.
func fetcherOptions(url, host string, header map[string]string) upstream.Options {
	o := upstream.Options{URL: url, Host: host}
	if len(header) > 0 {
		o.Header = http.Header{}
		for _, name := range slices.Sorted(maps.Keys(header)) {
			o.Header.Set(name, header[name])
		}
	}
	return o
}

// newRemoteSource returns a source that reads the site's robots.txt with
// f every refresh. key names what f fetches, for carrying it across
// reloads.
func newRemoteSource(f *upstream.Fetcher, key string, refresh time.Duration, additions func(*policy.Robots), logger *zap.Logger, m *metrics.Collectors) *source {
	s := newSource("", additions, logger, m)
	s.remote = &remote{fetcher: f, refresh: refresh, key: key}
	return s
}

// start installs the robots.txt an earlier configuration fetched from the
// same URL, if any, or else no rules, and starts the refreshes until ctx
// ends. Without a carried robots.txt it waits up to firstFetchWait for the
// first fetch.
func (s *source) start(ctx context.Context) {
	seeded := s.seed()
	first := make(chan struct{})
	go s.refreshLoop(ctx, first)
	if seeded {
		return
	}
	t := time.NewTimer(firstFetchWait)
	defer t.Stop()
	select {
	case <-first:
	case <-ctx.Done():
	case <-t.C:
		s.logger.Warn("robots.txt: the first fetch is taking long; no rules are enforced until it answers", s.where(), zap.Duration("waited", firstFetchWait))
	}
}

// seed joins the carried robots.txt of the source's URL and installs it,
// or no rules when there is none; it reports whether it installed one.
func (s *source) seed() bool {
	rm := s.remote
	v, _, err := carriedPool.LoadOrNew(rm.key, func() (caddy.Destructor, error) { return &carried{}, nil })
	if err != nil { // LoadOrNew fails only when the constructor does
		v = &carried{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rm.carry = v.(*carried)
	now := time.Now()
	if data, file, modTime, validators := rm.carry.load(); data != nil && s.accept(data, file, modTime, nil, now) {
		rm.validators = validators
		s.logger.Info("robots.txt carried over from the previous configuration until it is fetched again", s.where())
		return true
	}
	s.install(policy.Parse(nil), nil, fileStamp{}, now, true)
	return false
}

// refreshLoop fetches the robots.txt now, and then every refresh, or
// sooner after a failure, until ctx ends. It closes first after the first
// fetch.
func (s *source) refreshLoop(ctx context.Context, first chan<- struct{}) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		wait := s.refresh(ctx)
		if ctx.Err() != nil {
			return
		}
		if first != nil {
			close(first)
			first = nil
		}
		t.Reset(wait)
	}
}

// refresh fetches the robots.txt once, conditionally on the file in
// force, and applies the result; it returns how long to wait before the
// next fetch.
func (s *source) refresh(ctx context.Context) time.Duration {
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
func (s *source) applyFetch(res upstream.Result, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	rm := s.remote
	if s.closed {
		return rm.refresh
	}
	if res.Outcome == upstream.Fetched && res.Header.Get(servedHeader) != "" {
		res.Outcome, res.Err = upstream.Unreachable, errOwnFile
	}
	s.metrics.Fetch(res.Outcome.String())
	prev := s.cur.Load()
	if res.Outcome != upstream.Unreachable {
		s.reachable(now)
	}
	switch res.Outcome {
	case upstream.Fetched:
		s.availableAgain()
		file := fileStamp{size: res.Size, modTime: res.LastModified, hash: sha256.Sum256(res.Body), endsLine: res.EndsLine, read: true}
		if !prev.missing && file.sameContent(prev.file) {
			// The same file, from a server without validators or with
			// new ones: nothing to parse.
			rm.validators = res.Validators
			rm.carry.store(res.Body, prev.file, prev.modTime, res.Validators)
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
				s.metrics.RobotsMissing(+1)
			}
			rm.unavailable = cause
			fields := []zap.Field{s.where(), zap.String("answer", cause), zap.String("host", rm.fetcher.Host())}
			if res.Status == http.StatusUnauthorized || res.Status == http.StatusForbidden || res.Status == http.StatusMisdirectedRequest {
				fields = append(fields, zap.String("hint", "if the application refuses the fetch's Host header, set robots_host to the site's name"))
			}
			if prev.missing {
				s.logger.Warn("robots.txt: the application has none (a 4xx answer): no rules are enforced until it serves one (RFC 9309: unavailable means allow all)", fields...)
			} else {
				s.logger.Warn("robots.txt: the application has none any more (a 4xx answer): the rules are cleared until it serves one (RFC 9309: unavailable means allow all)", fields...)
			}
		}
		if !prev.missing {
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
		if errors.Is(res.Err, errOwnFile) {
			fields = append(fields, zap.String("hint", "point robots at the application's own address (e.g. http://127.0.0.1:3000/robots.txt), not at the site"))
		}
		if errors.Is(res.Err, upstream.ErrRedirect) {
			fields = append(fields, zap.String("hint", "redirects are followed only within the URL's scheme and host, or to robots_host's name; if the application redirects to its public name, set robots_host to it; if it redirects to HTTPS, send it robots_header X-Forwarded-Proto https"))
		}
		switch {
		case rm.failures == 1:
			rm.since, rm.logged, rm.cause = now, now, cause
			s.metrics.RobotsUnreachable(+1)
			if prev.missing {
				s.logger.Error("robots.txt could not be fetched: no rules are enforced until it is; retrying", fields...)
			} else {
				s.logger.Warn("robots.txt could not be fetched; keeping the last good rules and retrying", fields...)
			}
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
func (s *source) reachable(now time.Time) {
	rm := s.remote
	if rm.failures == 0 {
		return
	}
	s.logger.Info("robots.txt can be fetched again", s.where(), zap.Duration("failed_for", now.Sub(rm.since)), zap.Int("attempts", rm.failures))
	rm.failures, rm.cause = 0, ""
	s.metrics.RobotsUnreachable(-1)
}

// availableAgain ends a spell of 4xx answers. The caller holds s.mu.
func (s *source) availableAgain() {
	rm := s.remote
	if rm.unavailable == "" {
		return
	}
	s.logger.Info("robots.txt: the application serves one again", s.where(), zap.String("was", rm.unavailable))
	rm.unavailable = ""
	s.metrics.RobotsMissing(-1)
}

// closeRemote gives back the gauges the source holds and its share of the
// carried robots.txt. The caller holds s.mu.
func (s *source) closeRemote() {
	rm := s.remote
	if rm.failures > 0 {
		s.metrics.RobotsUnreachable(-1)
		rm.failures = 0
	}
	if rm.unavailable != "" {
		s.metrics.RobotsMissing(-1)
		rm.unavailable = ""
	}
	if rm.carry != nil {
		_, _ = carriedPool.Delete(rm.key)
		rm.carry = nil
	}
}

// loadRobots reads the site's robots.txt that h's robots option names,
// once, as the handler reads it, for the commands that work without a
// running Caddy ("caddy robots check --config", the review tools): a file
// (its first policy.MaxSize+1 bytes, all that counts), or a URL fetched
// with h's robots_host and robots_header, redirects and status classes as
// the handler follows them. It returns nil data and no error when the site
// has no rules: no robots option, or an application that answers 4xx
// (RFC 9309: unavailable). A missing or unreadable file, and a URL that
// cannot be fetched (5xx, timeout, connection error, redirect not
// followed), are errors: a running handler would keep the rules it had.
// from says where the file came from, for messages.
func loadRobots(ctx context.Context, h *Handler) (data []byte, from string, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	switch {
	case h.Robots == "":
		return nil, "no robots option", nil
	case !upstream.IsURL(h.Robots):
		data, _, err := readRobots(h.Robots)
		if errors.Is(err, errChanging) {
			err = nil // what was read is what a handler would install at start
		}
		if err != nil {
			return nil, h.Robots, fmt.Errorf("robots: %v", unwrapPathError(err))
		}
		return data, h.Robots, nil
	}
	f, err := upstream.New(fetcherOptions(h.Robots, h.RobotsHost, h.RobotsHeaders))
	if err != nil {
		return nil, h.Robots, fmt.Errorf("robots: %v", err)
	}
	res := f.Fetch(ctx, upstream.Validators{})
	from = f.URL() + " (" + res.Cause() + ")"
	switch {
	case res.Outcome == upstream.Fetched && res.Header.Get(servedHeader) != "":
		return nil, from, fmt.Errorf("robots: %s: %v", f.URL(), errOwnFile)
	case res.Outcome == upstream.Fetched:
		return res.Body, from, nil
	case res.Outcome == upstream.Unavailable:
		return nil, from + ": no rules", nil
	}
	return nil, from, fmt.Errorf("robots: %s could not be fetched: %s", f.URL(), res.Cause())
}
