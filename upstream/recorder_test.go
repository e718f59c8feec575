package upstream

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAnswerInProcess: a Fetcher whose transport asks a handler in
// process reads what it answers as it reads a server's answer: the body
// (the first MaxBody bytes, with the real size and end of line), a 404
// from a handler error, a conditional 304, and a handler that outlives the
// fetch's deadline is unreachable.
func TestAnswerInProcess(t *testing.T) {
	var serve func(w http.ResponseWriter, r *http.Request) error
	rt := roundTripper(func(req *http.Request) (*http.Response, error) {
		return Answer(req, func(w http.ResponseWriter) error { return serve(w, req) }, func(err error) (int, bool) {
			return http.StatusNotFound, errors.Is(err, errNotFound)
		})
	})
	f, err := New(Options{URL: "http://in-process.internal/robots.txt", Transport: rt, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	serve = func(w http.ResponseWriter, r *http.Request) error {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return nil
		}
		w.Header().Set("ETag", `"v1"`)
		_, err := w.Write([]byte("User-agent: *\nDisallow: /admin/\n"))
		return err
	}
	res := f.Fetch(context.Background(), Validators{})
	if res.Outcome != Fetched || string(res.Body) != "User-agent: *\nDisallow: /admin/\n" || res.Validators.ETag != `"v1"` {
		t.Fatalf("fetched: %+v", res)
	}
	if res := f.Fetch(context.Background(), res.Validators); res.Outcome != NotModified {
		t.Errorf("conditional: %v", res.Outcome)
	}
	big := strings.Repeat("Disallow: /x\n", 100_000) // 1.3 MB
	serve = func(w http.ResponseWriter, r *http.Request) error {
		for i := 0; i < len(big); i += 4096 {
			w.Write([]byte(big[i:min(i+4096, len(big))]))
		}
		return nil
	}
	if res := f.Fetch(context.Background(), Validators{}); res.Outcome != Fetched || !res.Truncated || res.Size != int64(len(big)) || !res.EndsLine || int64(len(res.Body)) != MaxBody {
		t.Errorf("big: %v: outcome %v truncated %v size %d ends %v body %d", res.Err, res.Outcome, res.Truncated, res.Size, res.EndsLine, len(res.Body))
	}
	serve = func(http.ResponseWriter, *http.Request) error { return errNotFound }
	if res := f.Fetch(context.Background(), Validators{}); res.Outcome != Unavailable || res.Status != 404 {
		t.Errorf("handler error: %v %d", res.Outcome, res.Status)
	}
	serve = func(http.ResponseWriter, *http.Request) error { return errors.New("backend down") }
	if res := f.Fetch(context.Background(), Validators{}); res.Outcome != Unreachable {
		t.Errorf("other error: %v", res.Outcome)
	}
	release := make(chan struct{})
	defer close(release)
	serve = func(w http.ResponseWriter, r *http.Request) error {
		<-release
		_, err := w.Write([]byte("late"))
		return err
	}
	if res := f.Fetch(context.Background(), Validators{}); res.Outcome != Unreachable {
		t.Errorf("hanging handler: %v", res.Outcome)
	}
}

var errNotFound = errors.New("not found")

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
