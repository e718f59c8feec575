package upstream

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// Recorder is the http.ResponseWriter of a robots.txt request answered in
// process (by the handler that follows robots_guard in the site's chain):
// it keeps the status, the header and the first MaxBody bytes of the body,
// and counts the rest, so that [Recorder.Response] gives a Fetcher's
// transport what a server would have sent, with no more memory than a
// fetch reads. It is safe to abandon: writes after [Recorder.Response] are
// dropped.
type Recorder struct {
	mu     sync.Mutex
	header http.Header
	status int
	body   bytes.Buffer
	more   int64 // bytes written past MaxBody
	last   byte  // the last byte written
	done   bool
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{header: http.Header{}} }

// Header returns the response header fields.
func (rec *Recorder) Header() http.Header { return rec.header }

// WriteHeader records the status, the first one only.
func (rec *Recorder) WriteHeader(code int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.status == 0 && !rec.done {
		rec.status = code
	}
}

// Write keeps the first MaxBody bytes and counts the rest.
func (rec *Recorder) Write(p []byte) (int, error) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.done {
		return 0, http.ErrHandlerTimeout
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if len(p) == 0 {
		return 0, nil
	}
	keep := min(int64(len(p)), max(MaxBody-int64(rec.body.Len()), 0))
	rec.body.Write(p[:keep])
	rec.more += int64(len(p)) - keep
	rec.last = p[len(p)-1]
	return len(p), nil
}

// Flush does nothing: the response is read once it is complete.
func (rec *Recorder) Flush() {}

// Written reports whether anything was written (a status or a body).
func (rec *Recorder) Written() bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.status != 0
}

// Response returns the recorded response for req, status the status if
// none was written (an error's, or 200 for a handler that wrote nothing).
// Its body holds the kept bytes and then as many as were counted, ending
// with the last byte written, so that a Fetcher sees the size and the end
// of line it would have seen.
func (rec *Recorder) Response(req *http.Request, status int) *http.Response {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.done = true
	if rec.status == 0 {
		rec.status = status
	}
	size := int64(rec.body.Len()) + rec.more
	var body io.Reader = bytes.NewReader(rec.body.Bytes())
	if rec.more > 0 {
		body = io.MultiReader(body, io.LimitReader(zeros{}, rec.more-1), bytes.NewReader([]byte{rec.last}))
	}
	return &http.Response{
		Status: http.StatusText(rec.status), StatusCode: rec.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rec.header.Clone(), Body: io.NopCloser(body), ContentLength: size, Request: req,
	}
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Answer asks a handler in process for req: serve writes the response to
// a Recorder, and Answer returns it once serve returns, or req's context
// error once that ends first (the handler is left to finish alone; its
// later writes are dropped). A non-nil error of serve is the response's
// status where status says which (file_server's 404), else the error.
// An answer that writes nothing is 200 with an empty body.
func Answer(req *http.Request, serve func(http.ResponseWriter) error, status func(error) (int, bool)) (*http.Response, error) {
	rec := NewRecorder()
	done := make(chan error, 1)
	go func() { done <- serve(rec) }()
	select {
	case err := <-done:
		code := http.StatusOK
		if err != nil {
			var ok bool
			if code, ok = status(err); !ok {
				return nil, err
			}
		}
		return rec.Response(req, code), nil
	case <-req.Context().Done():
		rec.Response(req, 0)
		return nil, req.Context().Err()
	}
}
