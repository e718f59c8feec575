package policy

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
)

// The indexing directives an X-Robots-Tag rule may state: those without a
// value, and those with one, with the form of the value.
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

// normalizeDirective checks a directive and returns it in its normal form.
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

// RobotsTagRule is a compiled X-Robots-Tag rule: the indexing directives
// added to the responses for the resources its pattern matches. It is
// immutable and safe for concurrent use.
type RobotsTagRule struct {
	agent      string
	directives []string
	match      *PathSet
}

// RobotsTagRules are the X-Robots-Tag rules of a site, in order.
type RobotsTagRules []RobotsTagRule

// CompileRobotsTagRule checks one rule (a robots.txt pattern, an optional
// agent, the directives) and compiles it; its errors name the part of the
// rule that is wrong, and the caller names the rule.
func CompileRobotsTagRule(pattern, agent string, directives []string) (RobotsTagRule, error) {
	c := RobotsTagRule{}
	if pattern == "" || pattern[0] != '/' && pattern[0] != '*' {
		return c, fmt.Errorf("pattern %q must start with '/' or '*'", pattern)
	}
	if len(directives) == 0 {
		return c, fmt.Errorf("no directives for %s", pattern)
	}
	if agent != "" {
		if c.agent = ProductToken(agent); c.agent == "" {
			return c, fmt.Errorf("agent %q is not a product token", agent)
		}
	}
	for _, d := range directives {
		nd, err := normalizeDirective(d)
		if err != nil {
			return c, err
		}
		c.directives = append(c.directives, nd)
	}
	c.match = NewPathSet(pattern)
	return c, nil
}

// ForTarget returns the directives that apply to a normalised target, by
// agent ("" for all agents), in rule order without repeats; nil when no
// rule matches.
func (ir RobotsTagRules) ForTarget(target string) map[string][]string {
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
			if _, isDirective := valueDirectives[n]; !isDirective && ProductToken(n) == n && n != "" {
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

// MergeRobotsTag adds to h the directives of add that its X-Robots-Tag
// values do not already carry: the backend's values are kept as they are,
// and one value is added per agent for what is missing.
func MergeRobotsTag(h http.Header, add map[string][]string) {
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
