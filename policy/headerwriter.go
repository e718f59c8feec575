package policy

import (
	"io"
	"net/http"
)

// HeaderRules are the response header rules of a site: X-Robots-Tag
// (x_robots_tags) and Content-Usage (content_usage_headers).
type HeaderRules struct {
	RobotsTag RobotsTagRules
	Usage     UsageRules
}

// Wrap returns w, or, where a rule matches target (a request target's
// normal form), a writer that merges the rules' fields into the response's
// headers when the backend writes them (MergeRobotsTag,
// MergeContentUsage), whatever the response's type. The writer passes
// Unwrap, ReadFrom and Push on, so that http.ResponseController (Flush,
// Hijack) and a backend's sendfile still reach w.
func (hr HeaderRules) Wrap(w http.ResponseWriter, target string) http.ResponseWriter {
	var robotsTag map[string][]string
	var usage Prefs
	var hasUsage bool
	if len(hr.RobotsTag) > 0 {
		robotsTag = hr.RobotsTag.ForTarget(target)
	}
	if len(hr.Usage) > 0 {
		usage, hasUsage = hr.Usage.ForTarget(target)
	}
	if robotsTag == nil && !hasUsage {
		return w
	}
	return &headerWriter{ResponseWriter: w, robotsTag: robotsTag, usage: usage, hasUsage: hasUsage}
}

// headerWriter merges header rules' fields into a response's headers.
type headerWriter struct {
	http.ResponseWriter
	robotsTag map[string][]string
	usage     Prefs
	hasUsage  bool
	done      bool
}

func (w *headerWriter) WriteHeader(status int) {
	if !w.done && status >= 200 {
		w.done = true
		if w.robotsTag != nil {
			MergeRobotsTag(w.Header(), w.robotsTag)
		}
		if w.hasUsage {
			MergeContentUsage(w.Header(), w.usage)
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *headerWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// ReadFrom passes a copy to the writer underneath (sendfile), after the
// headers.
func (w *headerWriter) ReadFrom(r io.Reader) (int64, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(w.ResponseWriter, r)
}

// Push passes an HTTP/2 server push on.
func (w *headerWriter) Push(target string, opts *http.PushOptions) error {
	if p, ok := w.ResponseWriter.(http.Pusher); ok {
		return p.Push(target, opts)
	}
	return http.ErrNotSupported
}

// Unwrap returns the writer underneath, for http.ResponseController.
func (w *headerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
