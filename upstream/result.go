package upstream

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"
)

// Outcome is what a fetch says about the site's robots.txt, in the terms
// of RFC 9309 section 2.3.1.
type Outcome uint8

const (
	// Fetched: a 2xx with the whole body (or its first MaxBody bytes):
	// the body is the robots.txt (section 2.3.1.1).
	Fetched Outcome = iota + 1
	// NotModified: a 304 to a conditional request: the robots.txt in
	// force is current.
	NotModified
	// Unavailable: a 4xx other than 408 and 429: the site has no
	// robots.txt, so no rules apply (section 2.3.1.3).
	Unavailable
	// Unreachable: a 5xx, 408, 429, a timeout, a connection error, a
	// body cut short, or a redirect not followed (more than MaxRedirects,
	// or out of the configured origin). Nothing is known about the rules:
	// a crawler assumes a complete disallow (section 2.3.1.4); an enforcer
	// keeps the last good rules and tries again.
	Unreachable
)

// String returns the outcome's metric label.
func (o Outcome) String() string {
	switch o {
	case Fetched:
		return "ok"
	case NotModified:
		return "not_modified"
	case Unavailable:
		return "unavailable"
	case Unreachable:
		return "unreachable"
	}
	return "unknown"
}

// Validators are the conditional-request validators of a fetched
// robots.txt: its ETag and Last-Modified headers, as sent.
type Validators struct {
	ETag         string
	LastModified string
}

// Result is the outcome of one fetch.
type Result struct {
	Outcome Outcome
	// Status is the final response's status code; 0 when none came.
	Status int
	// Body is a Fetched body, or its first MaxBody bytes.
	Body []byte
	// Size is a Fetched body's size; beyond MaxBody+MaxDrain bytes, the
	// Content-Length or the bytes read, whichever is more.
	Size int64
	// Truncated reports that only the first MaxBody bytes are in Body.
	Truncated bool
	// EndsLine reports that a Fetched body is empty or ends with a line
	// end; it is true for a body longer than MaxBody+MaxDrain, whose end
	// is not read.
	EndsLine bool
	// Header is the final response's header, when one came.
	Header http.Header
	// Validators are a Fetched response's, for the next conditional
	// request.
	Validators Validators
	// LastModified is a Fetched response's Last-Modified time, zero when
	// it has none.
	LastModified time.Time
	// RetryAfter is the server's Retry-After on a 408, 429 or 5xx; zero
	// when none.
	RetryAfter time.Duration
	// Redirects is how many redirects were followed.
	Redirects int
	// Err says why a fetch is Unreachable, when no status says it.
	Err error
}

func (r Result) unreachable(err error) Result {
	r.Outcome, r.Err = Unreachable, err
	return r
}

// Cause is a short description of the outcome for logs, stable across
// fetches with the same cause, so that a change of cause can be told:
// "HTTP 503 Service Unavailable", "connection refused", "timed out after
// 10s", "redirect not followed: ...".
func (r *Result) Cause() string {
	if r.Err != nil {
		err := r.Err
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return "connection refused"
		case errors.Is(err, syscall.ECONNRESET):
			return "connection reset"
		}
		var dns *net.DNSError
		if errors.As(err, &dns) {
			return "DNS: " + dns.Err + " (" + dns.Name + ")"
		}
		if r.Status != 0 {
			return fmt.Sprintf("HTTP %d %s: %v", r.Status, http.StatusText(r.Status), err)
		}
		return err.Error()
	}
	if r.Status != 0 {
		return fmt.Sprintf("HTTP %d %s", r.Status, http.StatusText(r.Status))
	}
	return r.Outcome.String()
}
