package upstream

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const robots = "User-agent: *\nDisallow: /private/\n"

func newFetcher(t *testing.T, o Options) *Fetcher {
	t.Helper()
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFetchStatusClasses: each status class means what RFC 9309 section
// 2.3.1 says, read as an enforcer must: 2xx is the file, 4xx is no file,
// and 5xx (with 408 and 429) says nothing about the file.
func TestFetchStatusClasses(t *testing.T) {
	var status atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := int(status.Load())
		if code == 503 || code == 429 {
			w.Header().Set("Retry-After", "7")
		}
		if code == 418 || code == 500 {
			w.Header().Set("Retry-After", "7") // ignored for a 4xx; used for a 5xx
		}
		w.WriteHeader(code)
		if code != 204 && code != 304 {
			io.WriteString(w, robots)
		}
	}))
	defer srv.Close()
	f := newFetcher(t, Options{URL: srv.URL + "/robots.txt"})
	for _, tc := range []struct {
		code       int
		want       Outcome
		body       string
		retryAfter time.Duration
	}{
		{200, Fetched, robots, 0},
		{203, Fetched, robots, 0},
		{204, Fetched, "", 0},
		{206, Unreachable, "", 0}, // never asked for: a part of the file is not the file
		{300, Unreachable, "", 0}, // no Location
		{304, Unreachable, "", 0}, // not asked for either
		{400, Unavailable, "", 0},
		{401, Unavailable, "", 0},
		{403, Unavailable, "", 0},
		{404, Unavailable, "", 0},
		{410, Unavailable, "", 0},
		{418, Unavailable, "", 0},
		{451, Unavailable, "", 0},
		{408, Unreachable, "", 0},
		{429, Unreachable, "", 7 * time.Second},
		{500, Unreachable, "", 7 * time.Second},
		{502, Unreachable, "", 0},
		{503, Unreachable, "", 7 * time.Second},
		{504, Unreachable, "", 0},
		{599, Unreachable, "", 0},
		{600, Unreachable, "", 0},
	} {
		status.Store(int64(tc.code))
		res := f.Fetch(context.Background(), Validators{})
		if res.Outcome != tc.want || res.Status != tc.code || string(res.Body) != tc.body || res.RetryAfter != tc.retryAfter {
			t.Errorf("status %d: outcome %v, status %d, body %q, retry after %v; want %v, %q, %v (%s)",
				tc.code, res.Outcome, res.Status, res.Body, res.RetryAfter, tc.want, tc.body, tc.retryAfter, res.Cause())
		}
		if tc.want == Fetched && (!res.EndsLine || res.Truncated || res.Size != int64(len(tc.body))) {
			t.Errorf("status %d: ends line %v, truncated %v, size %d", tc.code, res.EndsLine, res.Truncated, res.Size)
		}
	}
}

// TestFetchConditional: the validators of the file in force make the
// request conditional; a 304 is NotModified, with no body; a changed file
// comes whole with its new validators.
func TestFetchConditional(t *testing.T) {
	var mu sync.Mutex
	body, etag, modified := robots, `"v1"`, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var seen []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Header.Clone())
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, "robots.txt", modified, strings.NewReader(body))
	}))
	defer srv.Close()
	f := newFetcher(t, Options{URL: srv.URL + "/robots.txt"})
	first := f.Fetch(context.Background(), Validators{})
	if first.Outcome != Fetched || first.Validators.ETag != `"v1"` || !first.LastModified.Equal(modified) || first.Validators.LastModified != modified.Format(http.TimeFormat) {
		t.Fatalf("first fetch: %+v", first)
	}
	second := f.Fetch(context.Background(), first.Validators)
	if second.Outcome != NotModified || second.Status != 304 || second.Body != nil {
		t.Errorf("second fetch: %v %d %q", second.Outcome, second.Status, second.Body)
	}
	// Last-Modified alone.
	third := f.Fetch(context.Background(), Validators{LastModified: first.Validators.LastModified})
	if third.Outcome != NotModified {
		t.Errorf("If-Modified-Since alone: %v", third.Outcome)
	}
	mu.Lock()
	body, etag, modified = robots+"Disallow: /drafts/\n", `"v2"`, modified.Add(time.Hour)
	mu.Unlock()
	fourth := f.Fetch(context.Background(), first.Validators)
	if fourth.Outcome != Fetched || !strings.Contains(string(fourth.Body), "/drafts/") || fourth.Validators.ETag != `"v2"` {
		t.Errorf("changed file: %v %q %+v", fourth.Outcome, fourth.Body, fourth.Validators)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[0].Get("If-None-Match") != "" || seen[1].Get("If-None-Match") != `"v1"` || seen[1].Get("If-Modified-Since") != "Sun, 01 Mar 2026 12:00:00 GMT" || seen[2].Get("If-None-Match") != "" {
		t.Errorf("conditional headers sent: %v", seen)
	}
}

// TestFetchHeaders: the Host header is the configured site name, the
// configured fields go along, and the User-Agent says who asks.
func TestFetchHeaders(t *testing.T) {
	var got atomic.Pointer[http.Request]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r)
		io.WriteString(w, robots)
	}))
	defer srv.Close()
	res := newFetcher(t, Options{URL: srv.URL + "/robots.txt"}).Fetch(context.Background(), Validators{})
	if r := got.Load(); res.Outcome != Fetched || r.Host != strings.TrimPrefix(srv.URL, "http://") || !strings.HasPrefix(r.UserAgent(), "robotsguard") {
		t.Errorf("default Host %q, User-Agent %q", r.Host, r.UserAgent())
	}
	f := newFetcher(t, Options{URL: srv.URL + "/robots.txt", Host: "www.example.com", Header: http.Header{"X-Forwarded-Proto": {"https"}}})
	if f.Host() != "www.example.com" {
		t.Errorf("Host() = %q", f.Host())
	}
	f.Fetch(context.Background(), Validators{})
	if r := got.Load(); r.Host != "www.example.com" || r.Header.Get("X-Forwarded-Proto") != "https" || r.URL.Path != "/robots.txt" {
		t.Errorf("Host %q, X-Forwarded-Proto %q, path %q", r.Host, r.Header.Get("X-Forwarded-Proto"), r.URL.Path)
	}
}

// redirector answers /hop/N with a redirect to /hop/N-1 and /hop/0 with
// the file; the locations are built by loc.
func redirector(loc func(r *http.Request, n int) string) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if err != nil || n == 0 {
			fmt.Fprintf(w, "# host %s\n%s", r.Host, robots)
			return
		}
		w.Header().Set("Location", loc(r, n-1))
		w.WriteHeader([]int{301, 302, 303, 307, 308}[n%5])
	}))
	return srv, &hits
}

// TestFetchRedirects: five redirects are followed and a sixth is not (RFC
// 9309 section 2.3.1.2); redirects stay within the configured origin, and a
// redirect to the site's own name is fetched from the configured address.
// A redirect elsewhere is refused and never requested.
func TestFetchRedirects(t *testing.T) {
	other, otherHits := redirector(func(*http.Request, int) string { return "/hop/0" })
	defer other.Close()
	var target atomic.Value
	target.Store("")
	srv, hits := redirector(func(r *http.Request, n int) string {
		if to := target.Load().(string); to != "" {
			return to
		}
		if n%2 == 0 {
			return fmt.Sprintf("/hop/%d", n) // relative
		}
		return fmt.Sprintf("http://%s/hop/%d", r.Host, n) // absolute, by the Host header
	})
	defer srv.Close()
	f := newFetcher(t, Options{URL: srv.URL + "/hop/5"})
	res := f.Fetch(context.Background(), Validators{})
	if res.Outcome != Fetched || res.Redirects != 5 || hits.Load() != 6 {
		t.Errorf("five redirects: %v after %d redirects, %d requests (%s)", res.Outcome, res.Redirects, hits.Load(), res.Cause())
	}
	hits.Store(0)
	res = newFetcher(t, Options{URL: srv.URL + "/hop/6"}).Fetch(context.Background(), Validators{})
	if res.Outcome != Unreachable || !errors.Is(res.Err, ErrRedirect) || !strings.Contains(res.Cause(), "more than 5 redirects") || hits.Load() != 6 {
		t.Errorf("six redirects: %v, %d requests, %s", res.Outcome, hits.Load(), res.Cause())
	}

	// A redirect to the site's name (the Host header), as an application
	// that names itself does, is fetched from the configured address.
	hits.Store(0)
	f = newFetcher(t, Options{URL: srv.URL + "/hop/3", Host: "www.example.test"})
	res = f.Fetch(context.Background(), Validators{})
	if res.Outcome != Fetched || !strings.Contains(string(res.Body), "# host www.example.test") || hits.Load() != 4 {
		t.Errorf("redirects by the site's name: %v %q, %d requests (%s)", res.Outcome, res.Body, hits.Load(), res.Cause())
	}

	for _, to := range []string{
		other.URL + "/hop/0", // another port of the same address
		"http://localhost" + other.URL[len("http://127.0.0.1"):] + "/hop/0", // another name for it
		"https://" + strings.TrimPrefix(srv.URL, "http://") + "/hop/0",      // another scheme
		"https://www.example.test/hop/0",                                    // the site's name, another scheme
		"http://169.254.169.254/latest/meta-data/",                          // a metadata endpoint
		"ftp://" + strings.TrimPrefix(srv.URL, "http://") + "/hop/0",
	} {
		target.Store(to)
		hits.Store(0)
		res := f.Fetch(context.Background(), Validators{})
		if res.Outcome != Unreachable || !errors.Is(res.Err, ErrRedirect) || hits.Load() != 1 {
			t.Errorf("redirect to %s: %v, %d requests (%s)", to, res.Outcome, hits.Load(), res.Cause())
		}
	}
	if otherHits.Load() != 0 {
		t.Errorf("a refused redirect reached the other server %d times", otherHits.Load())
	}
}

// TestFetchTimeout: a server that does not answer, or stalls in the
// middle of the body, is unreachable after the timeout.
func TestFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stall-body" {
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, "User-agent: *\n")
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	for _, path := range []string{"/robots.txt", "/stall-body"} {
		f := newFetcher(t, Options{URL: srv.URL + path, Timeout: 300 * time.Millisecond})
		start := time.Now()
		res := f.Fetch(context.Background(), Validators{})
		took := time.Since(start)
		if res.Outcome != Unreachable || !strings.Contains(res.Cause(), "timed out after 300ms") {
			t.Errorf("%s: %v (%s)", path, res.Outcome, res.Cause())
		}
		if took > 10*time.Second {
			t.Errorf("%s: the fetch took %v", path, took)
		}
		t.Logf("%s: unreachable after %v: %s", path, took, res.Cause())
	}
}

// TestFetchSizeCap: only the first MaxBody bytes of a body are kept, with
// or without a Content-Length, compressed or not; the rest is read up to
// MaxDrain bytes and dropped, to tell the size and whether the body ends a
// line.
func TestFetchSizeCap(t *testing.T) {
	big := strings.Repeat("Disallow: /x/\n", 600<<10/14) // about 600 KiB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body string
		switch r.URL.Path {
		case "/exact":
			body = strings.Repeat("#", MaxBody-1) + "\n"
		case "/max":
			body = strings.Repeat("#", MaxBody-2) + "\n"
		case "/big-cut":
			body = big[:len(big)-1]
		default:
			body = big
		}
		switch r.URL.Query().Get("as") {
		case "chunked":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte(body[:1000]))
			w.(http.Flusher).Flush()
			w.Write([]byte(body[1000:]))
		case "gzip":
			// A compression bomb: 64 MiB of comment lines in a few
			// hundred KiB.
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			line := []byte("#" + strings.Repeat("x", 1022) + "\n")
			for range 64 << 10 {
				if _, err := zw.Write(line); err != nil {
					return
				}
			}
			zw.Close()
		default:
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			io.WriteString(w, body)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		path      string
		size      int64
		truncated bool
	}{
		{"/big", int64(len(big)), true},
		{"/big?as=chunked", int64(len(big)), true},
		{"/big?as=gzip", -1, true}, // more than MaxBody+MaxDrain: not read to its end
		{"/big-cut", int64(len(big)) - 1, true},
		{"/exact", MaxBody, false},
		{"/exact?as=chunked", MaxBody, false},
		{"/max", MaxBody - 1, false},
	} {
		res := newFetcher(t, Options{URL: srv.URL + tc.path}).Fetch(context.Background(), Validators{})
		sizeOK := res.Size == tc.size || tc.size == -1 && res.Size > MaxBody+MaxDrain
		if tc.size == -1 {
			tc.size = MaxBody
		}
		wantEnds := tc.path != "/big-cut" // the cut is past the head: only the end tells
		if res.Outcome != Fetched || res.Truncated != tc.truncated || !sizeOK || len(res.Body) != int(min(tc.size, MaxBody)) || res.EndsLine != wantEnds {
			t.Errorf("%s: %v, %d bytes read, size %d, truncated %v, ends line %v; want size %d, truncated %v (%s)",
				tc.path, res.Outcome, len(res.Body), res.Size, res.Truncated, res.EndsLine, tc.size, tc.truncated, res.Cause())
		}
	}
}

// TestFetchCutShort: a body the connection cuts short of its
// Content-Length, or in the middle of a chunk, is not the file.
func TestFetchCutShort(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		if r.URL.Path == "/chunked" {
			buf.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nUser-agent: *\nDi")
		} else {
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nUser-agent: *\nDisallow: /pri")
		}
		buf.Flush()
	}))
	defer srv.Close()
	for _, path := range []string{"/length", "/chunked"} {
		res := newFetcher(t, Options{URL: srv.URL + path}).Fetch(context.Background(), Validators{})
		if res.Outcome != Unreachable || !strings.Contains(res.Cause(), "reading the body") || res.Body != nil {
			t.Errorf("%s: %v %q (%s)", path, res.Outcome, res.Body, res.Cause())
		}
	}
}

// TestFetchConnectionErrors: a closed port, a reset connection and a
// garbled answer are unreachable, each with its cause.
func TestFetchConnectionErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	res := newFetcher(t, Options{URL: "http://" + closed + "/robots.txt"}).Fetch(context.Background(), Validators{})
	if res.Outcome != Unreachable || res.Cause() != "connection refused" {
		t.Errorf("closed port: %v (%s)", res.Outcome, res.Cause())
	}
	l, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			bufio.NewReader(c).ReadString('\n')
			c.Write([]byte("garbage\r\n\r\n"))
			c.Close()
		}
	}()
	res = newFetcher(t, Options{URL: "http://" + l.Addr().String() + "/robots.txt"}).Fetch(context.Background(), Validators{})
	if res.Outcome != Unreachable || res.Err == nil {
		t.Errorf("garbled answer: %v (%s)", res.Outcome, res.Cause())
	}
	t.Logf("garbled answer: %s", res.Cause())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := newFetcher(t, Options{URL: "http://" + closed + "/"}).Fetch(ctx, Validators{}); res.Outcome != Unreachable {
		t.Errorf("cancelled: %v", res.Outcome)
	}
}

// TestFetchNoKeepAlive: the fetcher's own transport keeps no connection
// open between fetches, so that a handler that is unloaded leaves none.
func TestFetchNoKeepAlive(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, robots)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	f := newFetcher(t, Options{URL: srv.URL + "/robots.txt"})
	for range 3 {
		if res := f.Fetch(context.Background(), Validators{}); res.Outcome != Fetched {
			t.Fatal(res.Cause())
		}
	}
	if conns.Load() != 3 {
		t.Errorf("3 fetches used %d connections", conns.Load())
	}
}

// TestChecks: the configuration checks of the URL, the Host and the
// header fields.
func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		url, err string
	}{
		{"http://127.0.0.1:3000/robots.txt", ""},
		{"https://app.internal/robots.txt#x", ""},
		{"HTTP://127.0.0.1:3000", ""},
		{"http://user:secret@127.0.0.1/robots.txt", ""},
		{"http:///robots.txt", "not an absolute http(s) URL"},
		{"https://:443/robots.txt", "not an absolute http(s) URL"},
		{"ftp://example.com/robots.txt", "not an absolute http(s) URL"},
		{"/srv/robots.txt", "not an absolute http(s) URL"},
		{"http://exa mple.com/", "white space"},
		{"http://example.com:99999/", "invalid port"},
		{"http://example.com:0/", "invalid port"},
		{"http://[::1/", "not an absolute"},
	} {
		u, err := ParseURL(tc.url)
		if tc.err == "" && (err != nil || u.Fragment != "" || u.Path == "") || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseURL(%q) = %v, %v; want error %q", tc.url, u, err, tc.err)
		}
	}
	for _, h := range []string{"example.com", "example.com:8443", "127.0.0.1", "[::1]:80", "xn--bcher-kva.example"} {
		if err := CheckHost(h); err != nil {
			t.Errorf("CheckHost(%q): %v", h, err)
		}
	}
	for _, h := range []string{"", "example.com/x", "a b", "example.com:", "example.com:http", "user@example.com", "[::1", "example.com:70000", "ex\r\nample.com"} {
		if err := CheckHost(h); err == nil {
			t.Errorf("CheckHost(%q) accepted", h)
		}
	}
	for _, tc := range []struct{ name, value, err string }{
		{"X-Forwarded-Proto", "https", ""},
		{"authorization", "Bearer x", ""},
		{"Host", "x", "own option"},
		{"If-None-Match", "x", "set by the fetch"},
		{"X Bad", "x", "not a header field name"},
		{"X-Ok", "a\r\nInjected: 1", "control characters"},
	} {
		err := CheckHeader(tc.name, tc.value)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CheckHeader(%q, %q) = %v, want %q", tc.name, tc.value, err, tc.err)
		}
	}
	if _, err := New(Options{URL: "http://x/", Header: http.Header{"Range": {"bytes=0-1"}}}); err == nil {
		t.Error("New accepted a Range header")
	}
	for s, want := range map[string]bool{"http://x/": true, "HTTPS://x": true, "/srv/robots.txt": false, "robots.txt": false, "file:///x": false, "http:/x": false} {
		if IsURL(s) != want {
			t.Errorf("IsURL(%q) = %v", s, !want)
		}
	}
	f := newFetcher(t, Options{URL: "http://user:secret@127.0.0.1/robots.txt"})
	if strings.Contains(f.URL(), "secret") {
		t.Errorf("URL() shows the password: %s", f.URL())
	}
}

// TestCause: causes are short and stable.
func TestCause(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{Result{Outcome: Unavailable, Status: 404}, "HTTP 404 Not Found"},
		{Result{Outcome: Unreachable, Status: 503}, "HTTP 503 Service Unavailable"},
		{Result{Outcome: Unreachable, Status: 302, Err: fmt.Errorf("%w: more than 5 redirects", ErrRedirect)}, "HTTP 302 Found: redirect not followed: more than 5 redirects"},
		{Result{Outcome: NotModified}, "not_modified"},
	} {
		if got := tc.r.Cause(); got != tc.want {
			t.Errorf("Cause() = %q, want %q", got, tc.want)
		}
	}
	if s := (Outcome(0)).String(); s != "unknown" {
		t.Errorf("Outcome(0) = %s", s)
	}
}
