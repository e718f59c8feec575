package policy

import (
	"fmt"
	"net/http"
	"strings"
)

// UsageRule is a compiled Content-Usage header rule
// (draft-ietf-aipref-attach section 2): the preferences stated to every
// client for the resources its pattern matches. It is immutable and safe
// for concurrent use.
type UsageRule struct {
	prefs Prefs
	match *PathSet
}

// UsageRules are the Content-Usage header rules of a site.
type UsageRules []UsageRule

// CompileUsageRule checks one header rule (a robots.txt pattern and a
// statement in the AIPREF vocabulary) and compiles it; its errors name the
// part that is wrong, and the caller names the rule.
func CompileUsageRule(pattern, preferences string) (UsageRule, error) {
	c := UsageRule{}
	if pattern == "" || pattern[0] != '/' && pattern[0] != '*' {
		return c, fmt.Errorf("pattern %q must start with '/' or '*'", pattern)
	}
	if strings.HasPrefix(strings.TrimSpace(preferences), "/") {
		return c, fmt.Errorf("preferences %q: a statement such as train-ai=n, not a path", preferences)
	}
	st := ParseStatement(KeyContentUsage, preferences)
	if len(st.Problems) > 0 {
		return c, fmt.Errorf("preferences %q: %s", preferences, st.Problems[0].Message)
	}
	c.prefs, c.match = st.Prefs, NewPathSet(pattern)
	return c, nil
}

// ForTarget returns the preferences of the rules that match a normalised
// target, combined (a "no" wins), and whether any matched.
func (us UsageRules) ForTarget(target string) (Prefs, bool) {
	var out Prefs
	found := false
	for _, u := range us {
		if u.match.Contains(target) {
			out, found = out.Combine(u.prefs), true
		}
	}
	return out, found
}

// MergeContentUsage states add in h's Content-Usage header, combined with
// what the backend's header states as draft-ietf-aipref-vocab combines
// statements: for each category, a "no" in either wins. The backend's
// field lines are kept as they are (their other labels and parameters
// included), and one line is added with the labels whose combined value
// they do not already carry: in a Structured Field Dictionary the last
// value of a key applies. A backend header that does not parse states
// nothing (every preference unknown), and is replaced; empty lines are
// dropped.
func MergeContentUsage(h http.Header, add Prefs) {
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
	st := ParseStatement(KeyContentUsage, strings.Join(have, ", "))
	if st.Syntax || st.Path != "" {
		h.Set("Content-Usage", add.String())
		return
	}
	want := st.Prefs.Combine(add)
	missing := Prefs{
		Allowed:    want.Allowed &^ st.Prefs.Allowed,
		Disallowed: want.Disallowed &^ st.Prefs.Disallowed,
	}
	if missing.Known() {
		h.Add("Content-Usage", missing.String())
	}
	if ParseStatement(KeyContentUsage, strings.Join(h.Values("Content-Usage"), ", ")).Syntax {
		// The backend's lines parse only trimmed (a form feed at an end):
		// joined, they would not.
		h.Set("Content-Usage", want.String())
	}
}
