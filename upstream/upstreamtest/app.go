// Package upstreamtest is an application that serves robots.txt, for the
// tests of "robots <url>" (packages source and caddymodule), as
// enforce/redisstore/redistest is a Redis for theirs.
package upstreamtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// App is an application that serves robots.txt from its state, as
// WordPress or Discourse make theirs, and "app:<path>" for anything else.
// It can be taken down (connection refused) and brought up again on the
// same address.
type App struct {
	t    testing.TB
	addr string

	mu      sync.Mutex
	status  int
	body    string
	etag    bool          // send ETags and answer If-None-Match with 304
	delay   time.Duration // before answering robots.txt
	extra   http.Header   // more response header fields
	headers http.Header   // of the last robots.txt request
	host    string        // of the last robots.txt request
	srv     *http.Server

	// Requests counts robots.txt requests, NotModified the 304s sent.
	Requests, NotModified atomic.Int64
}

// New starts an App serving body with status 200 and ETags; it is stopped
// when the test ends.
func New(t testing.TB, body string) *App {
	t.Helper()
	a := &App{t: t, status: 200, body: body, etag: true}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.addr = l.Addr().String()
	a.serve(l)
	t.Cleanup(a.Down)
	return a
}

// Addr is the App's host:port.
func (a *App) Addr() string { return a.addr }

// URL is the App's robots.txt URL.
func (a *App) URL() string { return "http://" + a.addr + "/robots.txt" }

func (a *App) serve(l net.Listener) {
	srv := &http.Server{Handler: a}
	a.mu.Lock()
	a.srv = srv
	a.mu.Unlock()
	go srv.Serve(l)
}

// ServeHTTP answers robots.txt from the App's state, and anything else
// with "app:<path>".
func (a *App) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/robots.txt" {
		fmt.Fprintf(w, "app:%s", r.URL.Path)
		return
	}
	a.Requests.Add(1)
	a.mu.Lock()
	status, body, etag, delay := a.status, a.body, a.etag, a.delay
	a.headers, a.host = r.Header.Clone(), r.Host
	for k, v := range a.extra {
		w.Header()[k] = v
	}
	a.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if status == 200 && etag {
		sum := sha256.Sum256([]byte(body))
		tag := `"` + hex.EncodeToString(sum[:6]) + `"`
		w.Header().Set("ETag", tag)
		if r.Header.Get("If-None-Match") == tag {
			a.NotModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// Set changes what robots.txt answers.
func (a *App) Set(status int, body string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status, a.body = status, body
}

// SetDelay makes robots.txt answer after d.
func (a *App) SetDelay(d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.delay = d
}

// SetETag turns ETags (and 304 answers) on or off.
func (a *App) SetETag(on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.etag = on
}

// SetHeader sets more response header fields of robots.txt (nil: none).
func (a *App) SetHeader(h http.Header) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.extra = h
}

// LastRequest returns the header and Host of the last robots.txt request.
func (a *App) LastRequest() (http.Header, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.headers, a.host
}

// Down stops the application: connections are refused.
func (a *App) Down() {
	a.mu.Lock()
	srv := a.srv
	a.srv = nil
	a.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// Up starts it again on the same address.
func (a *App) Up() {
	a.t.Helper()
	var l net.Listener
	var err error
	for range 50 {
		if l, err = net.Listen("tcp", a.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		a.t.Fatal(err)
	}
	a.serve(l)
}
