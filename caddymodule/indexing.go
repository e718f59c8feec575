package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsguard/robotsguard/policy"
)

// IndexRule adds an X-Robots-Tag header to the responses for the resources
// it matches, whatever their type: the robots meta tag only works inside
// HTML, a header works for PDFs and images too.
type IndexRule struct {
	// Pattern selects resources with robots.txt pattern syntax, e.g.
	// "/reports/*.pdf$".
	Pattern string `json:"pattern"`
	// Agent, when set, addresses the directives to one crawler: the header
	// reads "X-Robots-Tag: googlebot: noindex".
	Agent string `json:"agent,omitempty"`
	// Directives are the indexing directives: noindex, nofollow, none,
	// noarchive, nosnippet, noimageindex, notranslate, indexifembedded,
	// max-snippet:N, max-image-preview:none|standard|large,
	// max-video-preview:N, unavailable_after:DATE, ...
	Directives []string `json:"directives"`
}

// robotsTagWriter merges the X-Robots-Tag directives into the response
// headers when the backend writes them (policy.MergeRobotsTag).
type robotsTagWriter struct {
	*caddyhttp.ResponseWriterWrapper
	add  map[string][]string
	done bool
}

func (w *robotsTagWriter) WriteHeader(status int) {
	if !w.done && status >= 200 {
		w.done = true
		policy.MergeRobotsTag(w.Header(), w.add)
	}
	w.ResponseWriterWrapper.WriteHeader(status)
}

func (w *robotsTagWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriterWrapper.Write(b)
}

// Interface guard
var _ http.ResponseWriter = (*robotsTagWriter)(nil)
