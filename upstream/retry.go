package upstream

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// FirstRetry is the wait before the first retry of an unreachable
// robots.txt; it doubles with each failure after it.
const FirstRetry = time.Second

// Retry is how long to wait before fetching again after the failures-th
// unreachable fetch in a row (failures >= 1): FirstRetry, doubled with each
// further failure, less up to a fifth at random (so that a fleet restarted
// together does not retry in step), at least the server's Retry-After, and
// never longer than refresh: an outage costs the application a request per
// refresh at most, and the rules follow it within one refresh of its end.
func Retry(failures int, refresh, retryAfter time.Duration) time.Duration {
	d := FirstRetry
	for i := 1; i < failures && d < refresh; i++ {
		d *= 2
	}
	d -= time.Duration(rand.Int64N(int64(d)/5 + 1))
	d = max(d, retryAfter)
	return max(min(d, refresh), time.Millisecond)
}

// maxRetryAfter bounds the Retry-After that is believed.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date
// (RFC 9110 section 10.2.3). It returns zero for none, a bad value or a
// time past, and at most maxRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseUint(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if err != nil || n > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(n) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil || !t.After(now) {
		return 0
	}
	return min(t.Sub(now), maxRetryAfter)
}
