// Package upstream reads a site's robots.txt from where the site serves it,
// usually the application behind the proxy (WordPress, Discourse, Mastodon
// make theirs in code), and says what the answer means for the rules, as
// RFC 9309 section 2.3.1 describes and as an enforcer must read it: a 2xx
// body is the robots.txt; a 4xx means there is none, so no rules; a 5xx, a
// timeout or a connection error says nothing about the rules, so the last
// good ones stay (never "disallow everything" because the backend
// hiccupped).
//
// A fetch goes only to the configured URL, with an http.Client of its own
// (no proxy from the environment, no keep-alive), a timeout, conditional
// requests (ETag, Last-Modified) and a size cap (RFC 9309 section 2.5). It
// follows at most five redirects (section 2.3.1.2), and only within the
// configured origin: the fetch cannot be led to another host. It does not
// import Caddy.
package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/robotsguard/robotsguard/policy"
)

// MaxRedirects is how many consecutive redirects a fetch follows: the five
// RFC 9309 section 2.3.1.2 asks crawlers to follow at least.
const MaxRedirects = 5

// MaxBody is how much of a body a fetch reads: the policy.MaxSize bytes
// that count (RFC 9309 section 2.5: at least 500 KiB) and one more, to
// know that there is more.
const MaxBody = policy.MaxSize + 1

// MaxDrain is how much of a body past MaxBody a fetch reads and drops, to
// tell its size and whether it ends a line.
const MaxDrain = 8 << 20

// DefaultTimeout bounds one fetch, redirects and body included.
const DefaultTimeout = 10 * time.Second

// DefaultUserAgent is the User-Agent of the fetches.
const DefaultUserAgent = "robotsguard (robots.txt refresh; +https://github.com/robotsguard/robotsguard)"

// Options configure a Fetcher.
type Options struct {
	// URL is the robots.txt's absolute http(s) URL. Required.
	URL string
	// Host is the Host header of the fetches, "host" or "host:port": the
	// site's name, for an application that answers by name. Default: the
	// URL's host.
	Host string
	// Timeout bounds one fetch. Default: DefaultTimeout.
	Timeout time.Duration
	// UserAgent is the User-Agent header. Default: DefaultUserAgent.
	UserAgent string
	// Header holds more request header fields, as the proxy would send
	// them to the application (X-Forwarded-Proto for one: an application
	// that redirects plain-HTTP requests to HTTPS answers a fetch without
	// it with a redirect). CheckHeader refuses the fields the fetch sets
	// itself. Default: none.
	Header http.Header
	// Transport carries the requests. Default: a transport of its own
	// that ignores proxy settings and keeps no idle connections.
	Transport http.RoundTripper
	// MaxBody is how much of a body a fetch reads, the last byte to know
	// that there is more (see Result.Truncated). Default: MaxBody.
	MaxBody int64
	// Accept is the Accept header. Default: "text/plain, */*;q=0.5".
	Accept string
}

// Fetcher fetches one configured robots.txt. It holds no state between
// fetches: the caller keeps the validators of the file in force. It is
// safe for concurrent use.
type Fetcher struct {
	url       *url.URL
	host      string // the Host header
	origin    origin // where redirects may lead
	alias     string // the Host header's authority, which redirects may name for the origin
	timeout   time.Duration
	userAgent string
	header    http.Header
	transport http.RoundTripper
	maxBody   int64
	accept    string
}

// New returns a Fetcher for o.URL. It fails on a URL or Host that Check
// refuses.
func New(o Options) (*Fetcher, error) {
	u, err := ParseURL(o.URL)
	if err != nil {
		return nil, err
	}
	if o.Host != "" {
		if err := CheckHost(o.Host); err != nil {
			return nil, err
		}
	}
	for name := range o.Header {
		if err := CheckHeader(name, o.Header.Get(name)); err != nil {
			return nil, err
		}
	}
	f := &Fetcher{url: u, host: o.Host, origin: originOf(u), timeout: o.Timeout, userAgent: o.UserAgent, header: o.Header.Clone(), transport: o.Transport, maxBody: o.MaxBody, accept: o.Accept}
	if f.maxBody <= 0 {
		f.maxBody = MaxBody
	}
	if f.accept == "" {
		f.accept = "text/plain, */*;q=0.5"
	}
	if f.host == "" {
		f.host = u.Host
	}
	f.alias = authority(u.Scheme, f.host)
	if f.timeout <= 0 {
		f.timeout = DefaultTimeout
	}
	if f.userAgent == "" {
		f.userAgent = DefaultUserAgent
	}
	if f.transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil // straight to the configured address
		t.DisableKeepAlives = true
		f.transport = t
	}
	return f, nil
}

// IsURL reports whether a robots option names a URL (http:// or https://)
// rather than a file.
func IsURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	return ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"))
}

// ParseURL checks a robots.txt URL: absolute http(s), with a host, and
// nothing that would make it ambiguous (white space, control characters).
// A fragment is dropped.
func ParseURL(s string) (*url.URL, error) {
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, fmt.Errorf("%q contains white space or control characters", s)
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" || u.Scheme != "http" && u.Scheme != "https" || u.Opaque != "" {
		return nil, fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	if u.Port() != "" && !validPort(u.Port()) {
		return nil, fmt.Errorf("%q has an invalid port", s)
	}
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// CheckHost checks a Host header value: a host name or IP address, with an
// optional port, and nothing else.
func CheckHost(h string) error {
	if h == "" || strings.ContainsFunc(h, func(r rune) bool { return r <= ' ' || r == 0x7f }) || strings.ContainsAny(h, "/?#@\\") {
		return fmt.Errorf("%q is not a host name (want host or host:port)", h)
	}
	u, err := url.Parse("http://" + h)
	if err != nil || u.Host != h || u.Hostname() == "" || u.Port() != "" && !validPort(u.Port()) || strings.HasSuffix(h, ":") {
		return fmt.Errorf("%q is not a host name (want host or host:port)", h)
	}
	return nil
}

// CheckHeader checks a request header field for the fetches: a valid
// field name and value, and not one the fetch sets itself (Host: see
// Options.Host; the conditional and framing fields).
func CheckHeader(name, value string) error {
	if name == "" || strings.ContainsFunc(name, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r)
	}) {
		return fmt.Errorf("%q is not a header field name", name)
	}
	if strings.ContainsFunc(value, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
		return fmt.Errorf("header %s: the value contains control characters", name)
	}
	switch http.CanonicalHeaderKey(name) {
	case "Host":
		return fmt.Errorf("header Host: set the host with its own option")
	case "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Range",
		"Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Te", "Trailer", "Expect", "Keep-Alive", "Proxy-Connection":
		return fmt.Errorf("header %s is set by the fetch itself", http.CanonicalHeaderKey(name))
	}
	return nil
}

func validPort(p string) bool {
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return false
		}
	}
	return len(p) > 0 && n > 0
}

// URL returns the configured URL with any password masked, for logs.
func (f *Fetcher) URL() string { return f.url.Redacted() }

// Host returns the Host header the fetches send.
func (f *Fetcher) Host() string { return f.host }

// Fetch fetches the robots.txt once. With validators of the file in force,
// the request is conditional and a 304 answers NotModified. It never
// returns an error: the Result says what the answer means, and why.
func (f *Fetcher) Fetch(ctx context.Context, v Validators) Result {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	var res Result
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url.String(), nil)
	if err != nil {
		return res.unreachable(err)
	}
	req.Host = f.host
	req.Header.Set("User-Agent", f.userAgent)
	req.Header.Set("Accept", f.accept)
	for name, values := range f.header {
		req.Header[name] = values
	}
	conditional := v.ETag != "" || v.LastModified != ""
	if v.ETag != "" {
		req.Header.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		req.Header.Set("If-Modified-Since", v.LastModified)
	}
	client := &http.Client{
		Transport: f.transport,
		CheckRedirect: func(next *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return fmt.Errorf("%w: more than %d redirects", ErrRedirect, MaxRedirects)
			}
			to, err := f.redirectTarget(next.URL)
			if err != nil {
				return err
			}
			res.Redirects = len(via)
			next.URL, next.Host = to, f.host
			// Go drops some fields on a redirect that names another
			// host; it is fetched from the configured one all the same.
			next.Header.Set("User-Agent", f.userAgent)
			for name, values := range f.header {
				next.Header[name] = values
			}
			return nil
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		if resp != nil {
			res.Status = resp.StatusCode // a redirect not followed
		}
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %v", f.timeout)
		}
		return res.unreachable(err)
	}
	defer resp.Body.Close()
	res.Status, res.Header = resp.StatusCode, resp.Header
	code := resp.StatusCode
	switch {
	case code == http.StatusNotModified && conditional:
		res.Outcome = NotModified
		return res
	case code >= 200 && code <= 299 && code != http.StatusPartialContent:
		return f.read(ctx, resp, res)
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests:
		// A timeout or a rate limit says nothing about the file: as
		// unreachable (Google reads 429 so too).
		res.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		return res.unreachable(nil)
	case code >= 400 && code <= 499:
		res.Outcome = Unavailable
		return res
	case code >= 500 && code <= 599:
		res.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		return res.unreachable(nil)
	case code >= 300 && code <= 399:
		return res.unreachable(fmt.Errorf("%w: status %d without a usable Location", ErrRedirect, code))
	}
	return res.unreachable(fmt.Errorf("unexpected status %d", code))
}

// read reads a 2xx body: at most maxBody bytes, and all of them, or the
// fetch is unreachable (a body cut short by the network is not the file).
func (f *Fetcher) read(ctx context.Context, resp *http.Response, res Result) Result {
	data, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBody))
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %v", f.timeout)
		}
		return res.unreachable(fmt.Errorf("reading the body: %w", err))
	}
	res.Outcome = Fetched
	res.Body = data
	res.Size = int64(len(data))
	res.EndsLine = len(data) == 0 || data[len(data)-1] == '\n' || data[len(data)-1] == '\r'
	if int64(len(data)) == f.maxBody && resp.ContentLength != int64(len(data)) {
		// Only the head counts. The rest is read, up to MaxDrain bytes,
		// and dropped, to tell the size and whether the body ends a
		// line (both unknown beyond MaxDrain, and then taken as the
		// Content-Length, or more, and a line end).
		n, last, err := drain(resp.Body)
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("timed out after %v", f.timeout)
			}
			return res.unreachable(fmt.Errorf("reading the body: %w", err))
		}
		if n > 0 {
			res.Truncated = true
			res.Size = int64(len(data)) + n
			res.EndsLine = last == '\n' || last == '\r'
			if n > MaxDrain {
				res.Size, res.EndsLine = max(resp.ContentLength, res.Size), true
			}
		}
	}
	res.Validators = Validators{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
	if t, err := http.ParseTime(res.Validators.LastModified); err == nil {
		res.LastModified = t
	}
	return res
}

// drain reads r to its end, at most MaxDrain+1 bytes, and returns how
// many it read and the last one.
func drain(r io.Reader) (n int64, last byte, err error) {
	buf := make([]byte, 32<<10)
	for n <= MaxDrain {
		k, err := r.Read(buf)
		if k > 0 {
			n += int64(k)
			last = buf[k-1]
		}
		if err == io.EOF {
			return n, last, nil
		}
		if err != nil {
			return n, last, err
		}
	}
	return n, last, nil
}

// ErrRedirect marks a redirect that was not followed: more than
// MaxRedirects, or out of the configured origin.
var ErrRedirect = errors.New("redirect not followed")
