package caddymodule

// The response header rules' configuration (x_robots_tags,
// content_usage_headers): policy.HeaderRules applies them.

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
