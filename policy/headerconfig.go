package policy

import "strings"

// The response header rules as a configuration writes them (robots_guard's
// x_robots_tags and content_usage_headers): each compiles to the rule
// HeaderRules applies.

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

// IndexRuleOf reads the Caddyfile's arguments of an index rule,
// "<pattern> [<agent>:] <directive...>" (at least two).
func IndexRuleOf(args []string) (IndexRule, error) {
	r := IndexRule{Pattern: args[0], Directives: args[1:]}
	if a, ok := strings.CutSuffix(args[1], ":"); ok && len(args) > 2 {
		r.Agent, r.Directives = a, args[2:]
	}
	return r, nil
}

// Compile checks the rule and compiles it (CompileRobotsTagRule).
func (r IndexRule) Compile() (RobotsTagRule, error) {
	return CompileRobotsTagRule(r.Pattern, r.Agent, r.Directives)
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

// UsageHeaderOf reads the Caddyfile's arguments of a usage header,
// "<pattern> <preferences...>" (at least two).
func UsageHeaderOf(args []string) (UsageHeader, error) {
	return UsageHeader{Pattern: args[0], Preferences: strings.Join(args[1:], " ")}, nil
}

// Compile checks the header rule and compiles it (CompileUsageRule).
func (u UsageHeader) Compile() (UsageRule, error) { return CompileUsageRule(u.Pattern, u.Preferences) }
