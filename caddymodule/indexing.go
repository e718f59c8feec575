package caddymodule

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

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

var (
	plainDirectives = map[string]bool{
		"all": true, "noindex": true, "nofollow": true, "none": true, "noarchive": true, "nocache": true,
		"nosnippet": true, "noimageindex": true, "notranslate": true, "nositelinkssearchbox": true,
		"indexifembedded": true, "noai": true, "noimageai": true, "noodp": true, "noydir": true,
	}
	valueDirectives = map[string]*regexp.Regexp{
		"max-snippet":       regexp.MustCompile(`^-?\d+$`),
		"max-image-preview": regexp.MustCompile(`^(none|standard|large)$`),
		"max-video-preview": regexp.MustCompile(`^-?\d+$`),
		"unavailable_after": regexp.MustCompile(`^\S.*$`),
	}
)

// normalizeDirective checks a directive and returns it in canonical form.
func normalizeDirective(d string) (string, error) {
	d = strings.TrimSpace(d)
	name, value, hasValue := strings.Cut(d, ":")
	name = strings.ToLower(strings.TrimSpace(name))
	if !hasValue {
		if plainDirectives[name] {
			return name, nil
		}
		return "", fmt.Errorf("unknown indexing directive %q", d)
	}
	value = strings.TrimSpace(value)
	re, ok := valueDirectives[name]
	if !ok || !re.MatchString(value) {
		return "", fmt.Errorf("invalid indexing directive %q", d)
	}
	return name + ": " + value, nil
}

// indexRules is the compiled form of the handler's IndexRules.
type indexRules []compiledIndexRule

type compiledIndexRule struct {
	agent      string
	directives []string
	match      *policy.PathSet
}

// compileIndexRule checks one rule and compiles it; its errors name the
// part of the rule that is wrong, and the caller names the rule.
func compileIndexRule(r IndexRule) (compiledIndexRule, error) {
	c := compiledIndexRule{}
	if r.Pattern == "" || r.Pattern[0] != '/' && r.Pattern[0] != '*' {
		return c, fmt.Errorf("pattern %q must start with '/' or '*'", r.Pattern)
	}
	if len(r.Directives) == 0 {
		return c, fmt.Errorf("no directives for %s", r.Pattern)
	}
	if r.Agent != "" {
		if c.agent = policy.ProductToken(r.Agent); c.agent == "" {
			return c, fmt.Errorf("agent %q is not a product token", r.Agent)
		}
	}
	for _, d := range r.Directives {
		nd, err := normalizeDirective(d)
		if err != nil {
			return c, err
		}
		c.directives = append(c.directives, nd)
	}
	c.match = policy.NewPathSet(r.Pattern)
	return c, nil
}

// forTarget returns the directives that apply to a normalised target, by
// agent ("" for all agents), in rule order without repeats.
func (ir indexRules) forTarget(target string) map[string][]string {
	var out map[string][]string
	for _, r := range ir {
		if !r.match.Contains(target) {
			continue
		}
		if out == nil {
			out = map[string][]string{}
		}
		for _, d := range r.directives {
			if !containsFold(out[r.agent], d) {
				out[r.agent] = append(out[r.agent], d)
			}
		}
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// parseRobotsTag splits X-Robots-Tag values into directives by agent. A
// value may start with "agent:" (a product token that is not a directive
// name) and lists directives separated by commas.
func parseRobotsTag(values []string) map[string][]string {
	out := map[string][]string{}
	for _, v := range values {
		agent := ""
		if name, rest, ok := strings.Cut(v, ":"); ok {
			n := strings.ToLower(strings.TrimSpace(name))
			if _, isDirective := valueDirectives[n]; !isDirective && policy.ProductToken(n) == n && n != "" {
				agent, v = n, rest
			}
		}
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				if nd, err := normalizeDirective(d); err == nil {
					d = nd
				}
				out[agent] = append(out[agent], d)
			}
		}
	}
	return out
}

// mergeRobotsTag adds to h the directives of add that its X-Robots-Tag
// values do not already carry: the backend's values are kept as they are,
// and one value is added per agent for what is missing.
func mergeRobotsTag(h http.Header, add map[string][]string) {
	have := parseRobotsTag(h.Values("X-Robots-Tag"))
	agents := make([]string, 0, len(add))
	for a := range add {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	for _, agent := range agents {
		var missing []string
		for _, d := range add[agent] {
			if !containsFold(have[agent], d) {
				missing = append(missing, d)
			}
		}
		if len(missing) == 0 {
			continue
		}
		v := strings.Join(missing, ", ")
		if agent != "" {
			v = agent + ": " + v
		}
		h.Add("X-Robots-Tag", v)
	}
}

// robotsTagWriter merges the X-Robots-Tag directives into the response
// headers when the backend writes them.
type robotsTagWriter struct {
	*caddyhttp.ResponseWriterWrapper
	add  map[string][]string
	done bool
}

func (w *robotsTagWriter) WriteHeader(status int) {
	if !w.done && status >= 200 {
		w.done = true
		mergeRobotsTag(w.Header(), w.add)
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
