package caddymodule

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsguard/robotsguard/enforce"
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

// usageHeaders is the compiled form of the handler's UsageHeaders.
type usageHeaders []compiledUsageHeader

type compiledUsageHeader struct {
	prefs policy.Prefs
	match *policy.PathSet
}

// compileUsageHeader checks one header rule; its errors name the part that
// is wrong, and the caller names the rule.
func compileUsageHeader(u UsageHeader) (compiledUsageHeader, error) {
	c := compiledUsageHeader{}
	if u.Pattern == "" || u.Pattern[0] != '/' && u.Pattern[0] != '*' {
		return c, fmt.Errorf("pattern %q must start with '/' or '*'", u.Pattern)
	}
	if strings.HasPrefix(strings.TrimSpace(u.Preferences), "/") {
		return c, fmt.Errorf("preferences %q: a statement such as train-ai=n, not a path", u.Preferences)
	}
	st := policy.ParseStatement(policy.KeyContentUsage, u.Preferences)
	if len(st.Problems) > 0 {
		return c, fmt.Errorf("preferences %q: %s", u.Preferences, st.Problems[0].Message)
	}
	c.prefs, c.match = st.Prefs, policy.NewPathSet(u.Pattern)
	return c, nil
}

// forTarget returns the preferences of the rules that match a normalised
// target, combined (a "no" wins), and whether any matched.
func (us usageHeaders) forTarget(target string) (policy.Prefs, bool) {
	var out policy.Prefs
	found := false
	for _, u := range us {
		if u.match.Contains(target) {
			out, found = out.Combine(u.prefs), true
		}
	}
	return out, found
}

// mergeContentUsage states add in h's Content-Usage header, combined with
// what the backend's header states as draft-ietf-aipref-vocab combines
// statements: for each category, a "no" in either wins. The backend's
// field lines are kept as they are (their other labels and parameters
// included), and one line is added with the labels whose combined value
// they do not already carry: in a Structured Field Dictionary the last
// value of a key applies. A backend header that does not parse states
// nothing (every preference unknown), and is replaced; empty lines are
// dropped.
func mergeContentUsage(h http.Header, add policy.Prefs) {
	var have []string
	for _, v := range h.Values("Content-Usage") {
		if strings.TrimSpace(v) != "" {
			have = append(have, v) // an empty line would break the joined dictionary
		}
	}
	h.Del("Content-Usage")
	for _, v := range have {
		h.Add("Content-Usage", v)
	}
	if len(have) == 0 {
		h.Set("Content-Usage", add.String())
		return
	}
	st := policy.ParseStatement(policy.KeyContentUsage, strings.Join(have, ", "))
	if st.Syntax || st.Path != "" {
		h.Set("Content-Usage", add.String())
		return
	}
	want := st.Prefs.Combine(add)
	missing := policy.Prefs{
		Allowed:    want.Allowed &^ st.Prefs.Allowed,
		Disallowed: want.Disallowed &^ st.Prefs.Disallowed,
	}
	if missing.Known() {
		h.Add("Content-Usage", missing.String())
	}
	if policy.ParseStatement(policy.KeyContentUsage, strings.Join(h.Values("Content-Usage"), ", ")).Syntax {
		// The backend's lines parse only trimmed (a form feed at an end):
		// joined, they would not.
		h.Set("Content-Usage", want.String())
	}
}

// contentUsageWriter merges the Content-Usage header into the response
// headers when the backend writes them.
type contentUsageWriter struct {
	*caddyhttp.ResponseWriterWrapper
	add  policy.Prefs
	done bool
}

func (w *contentUsageWriter) WriteHeader(status int) {
	if !w.done && status >= 200 {
		w.done = true
		mergeContentUsage(w.Header(), w.add)
	}
	w.ResponseWriterWrapper.WriteHeader(status)
}

func (w *contentUsageWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriterWrapper.Write(b)
}

// parseUsageMode reads the content_usage option.
func parseUsageMode(s string) (enforce.UsageMode, error) {
	switch s {
	case "", "enforce":
		return enforce.UsageEnforce, nil
	case "log":
		return enforce.UsageLog, nil
	case "off":
		return enforce.UsageOff, nil
	}
	return 0, fmt.Errorf("unknown mode %q (want enforce, log or off)", s)
}

// Interface guard
var _ http.ResponseWriter = (*contentUsageWriter)(nil)
