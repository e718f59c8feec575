package upstream

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// FuzzRedirectTarget: whatever a Location says, a followed redirect goes
// to the configured scheme and address, and only a Location within the
// configured origin or naming the Host header's authority is followed.
func FuzzRedirectTarget(f *testing.F) {
	for _, s := range []struct{ loc, host string }{
		{"/robots.txt", ""},
		{"http://127.0.0.1:3000/x", ""},
		{"http://127.0.0.1:80/x", ""},
		{"http://www.example.com/robots.txt", "www.example.com"},
		{"http://WWW.EXAMPLE.COM.:80/robots.txt", "www.example.com"},
		{"https://www.example.com/robots.txt", "www.example.com"},
		{"//evil.example/x", ""},
		{"http://127.0.0.1:3000@evil.example/", ""},
		{"http://[::1]:3000/", "[::1]:3000"},
		{"http://evil.example%2f@127.0.0.1:3000/", ""},
		{"\\\\evil.example/x", ""},
	} {
		f.Add(s.loc, s.host)
	}
	base, _ := url.Parse("http://127.0.0.1:3000/robots.txt")
	f.Fuzz(func(t *testing.T, loc, host string) {
		if CheckHost(host) != nil {
			host = ""
		}
		fe, err := New(Options{URL: base.String(), Host: host})
		if err != nil {
			t.Fatal(err)
		}
		u, err := base.Parse(loc) // as net/http resolves a Location
		if err != nil {
			return
		}
		to, err := fe.redirectTarget(u)
		if err != nil {
			return
		}
		if to.Scheme != "http" || to.Host != "127.0.0.1:3000" || to.User != nil {
			t.Fatalf("Location %q led to %s", loc, to)
		}
		auth := authority(u.Scheme, u.Host)
		if origin(auth) != fe.origin && auth != authority("http", fe.Host()) {
			t.Fatalf("Location %q (%s) followed with Host %q", loc, auth, fe.Host())
		}
	})
}

// FuzzParseRetryAfter: any Retry-After gives a wait between zero and a
// day.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "Sun, 01 Mar 2026 12:00:30 GMT", "-1", "1e9", "99999999999999999999", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		if d := parseRetryAfter(v, now); d < 0 || d > maxRetryAfter {
			t.Fatalf("parseRetryAfter(%q) = %v", v, d)
		}
	})
}

// scripted is a transport that answers every request with the same
// fuzzed response and records where each request went.
type scripted struct {
	status   int
	location string
	header   string
	body     []byte
	length   bool
	hosts    []string
}

func (s *scripted) RoundTrip(r *http.Request) (*http.Response, error) {
	s.hosts = append(s.hosts, r.URL.Scheme+"://"+r.URL.Host)
	h := http.Header{}
	if s.location != "" {
		h.Set("Location", s.location)
	}
	h.Set("ETag", s.header)
	h.Set("Last-Modified", s.header)
	h.Set("Retry-After", s.header)
	length := int64(-1)
	if s.length {
		length = int64(len(s.body))
	}
	return &http.Response{StatusCode: s.status, Header: h, Body: io.NopCloser(bytes.NewReader(s.body)), ContentLength: length, Request: r}, nil
}

// FuzzFetch: whatever the server answers, a fetch never panics, never
// leaves the configured address, reads at most MaxBody bytes, and gives
// Fetched only for a 2xx other than 206, NotModified only for a 304 to a
// conditional request, and Unavailable only for a 4xx other than 408 and
// 429.
func FuzzFetch(f *testing.F) {
	f.Add(200, "", `"v1"`, []byte("User-agent: *\nDisallow: /\n"), true, true)
	f.Add(301, "/robots.txt", "", []byte{}, false, false)
	f.Add(302, "http://evil.example/", "", []byte{}, false, false)
	f.Add(304, "", "Sun, 01 Mar 2026 12:00:30 GMT", []byte{}, true, true)
	f.Add(404, "", "", []byte("not found"), true, false)
	f.Add(503, "", "120", []byte{}, false, false)
	f.Add(99, "", "", []byte{}, false, false)
	f.Fuzz(func(t *testing.T, status int, location, header string, body []byte, length, conditional bool) {
		if status < 100 || status > 999 {
			status = 100 + (status%900+900)%900
		}
		tr := &scripted{status: status, location: location, header: header, body: body, length: length}
		fe, err := New(Options{URL: "http://127.0.0.1:3000/robots.txt", Host: "www.example.com", Transport: tr, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		v := Validators{}
		if conditional {
			v.ETag = `"v0"`
		}
		res := fe.Fetch(context.Background(), v)
		for _, h := range tr.hosts {
			if h != "http://127.0.0.1:3000" {
				t.Fatalf("a request went to %s", h)
			}
		}
		if len(tr.hosts) > MaxRedirects+1 {
			t.Fatalf("%d requests", len(tr.hosts))
		}
		if len(res.Body) > MaxBody || res.Size < int64(len(res.Body)) {
			t.Fatalf("body %d bytes, size %d", len(res.Body), res.Size)
		}
		is2xx := status >= 200 && status <= 299 && status != 206
		switch res.Outcome {
		case Fetched:
			if !is2xx {
				t.Fatalf("status %d fetched", status)
			}
		case NotModified:
			if status != 304 || !conditional {
				t.Fatalf("status %d not modified (conditional %v)", status, conditional)
			}
		case Unavailable:
			if status < 400 || status > 499 || status == 408 || status == 429 {
				t.Fatalf("status %d unavailable", status)
			}
		case Unreachable:
			if is2xx && res.Status == status {
				t.Fatalf("status %d unreachable: %s", status, res.Cause())
			}
			if res.RetryAfter < 0 || res.RetryAfter > maxRetryAfter {
				t.Fatalf("retry after %v", res.RetryAfter)
			}
			_ = res.Cause()
		default:
			t.Fatalf("outcome %v for status %s", res.Outcome, strconv.Itoa(status))
		}
	})
}
