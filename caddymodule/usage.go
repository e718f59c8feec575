package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsguard/robotsguard/policy"
)

// UsageHeader adds a Content-Usage response header (draft-ietf-aipref-attach
// section 2) to the responses for the resources it matches, whatever their
// type. The header states the site's AI usage preferences for the content
// itself, to every client and cache alike; the robots.txt lines state them
// per crawler group, so the header is configured, not derived from them.
type UsageHeader struct {
	// Pattern selects resources with robots.txt pattern syntax, e.g.
	// "/blog/" or "/*.pdf$".
	Pattern string `json:"pattern"`
	// Preferences is the statement in the AIPREF vocabulary, e.g.
	// "train-ai=n, search=y": the labels train-ai and search with the
	// values y and n.
	Preferences string `json:"preferences"`
}

// contentUsageWriter merges the Content-Usage header into the response
// headers when the backend writes them (policy.MergeContentUsage).
type contentUsageWriter struct {
	*caddyhttp.ResponseWriterWrapper
	add  policy.Prefs
	done bool
}

func (w *contentUsageWriter) WriteHeader(status int) {
	if !w.done && status >= 200 {
		w.done = true
		policy.MergeContentUsage(w.Header(), w.add)
	}
	w.ResponseWriterWrapper.WriteHeader(status)
}

func (w *contentUsageWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriterWrapper.Write(b)
}

// Interface guard
var _ http.ResponseWriter = (*contentUsageWriter)(nil)
