package policy

import (
	"fmt"
	"strings"
)

// AI usage preferences in robots.txt: what a crawler may do with what it
// reads, beside where it may go. Two forms are read, both per group:
//
//	Content-Usage: train-ai=n                  IETF AIPREF (draft-ietf-aipref-attach):
//	Content-Usage: /ai-ok/ train-ai=y          a path (optional) and a statement in the
//	                                           vocabulary of draft-ietf-aipref-vocab
//	Content-Signal: search=yes, ai-train=no    Cloudflare's Content Signals (contentsignals.org)
//
// A statement assigns each category of use a preference: allowed,
// disallowed or unknown. Within one form, the line with the longest
// matching path decides, as for Allow and Disallow; lines with equal paths
// combine, and for each category a disallowing one wins
// (draft-ietf-aipref-vocab section 5.1). The two forms are two methods of
// stating preferences, so their answers combine the same way: a "no" in
// either wins. Unknown keys and values other than the form's own ("y"/"n",
// "yes"/"no") leave a category unknown, and lint names them.

// Usage is a set of categories of use. The vocabulary is data: see
// [UsageLabels] and [SignalKeys].
type Usage uint8

// Categories of use.
const (
	// UsageTrainAI is AI model training: "train-ai" in AIPREF, "ai-train"
	// in Content Signals.
	UsageTrainAI Usage = 1 << iota
	// UsageSearch is search: building a search index and showing links and
	// excerpts, not AI-generated summaries ("search" in both forms).
	UsageSearch
	// UsageAIInput is AI input: content put into an AI model to answer a
	// query (retrieval-augmented generation, grounding). Content Signals
	// has it ("ai-input"); the AIPREF vocabulary does not, so a
	// Content-Usage line never states it.
	UsageAIInput
)

// usageNames are the names Usage.String and Prefs.String write, in
// AIPREF's spelling where AIPREF has the category.
var usageNames = []struct {
	u    Usage
	name string
}{{UsageTrainAI, "train-ai"}, {UsageSearch, "search"}, {UsageAIInput, "ai-input"}}

// String lists the categories, e.g. "train-ai,search", or "none".
func (u Usage) String() string {
	var parts []string
	for _, n := range usageNames {
		if u&n.u != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// UsageLabels maps the labels of the AIPREF vocabulary
// (draft-ietf-aipref-vocab section 6.1) to categories. Labels are case
// sensitive; values are the Tokens y and n.
var UsageLabels = map[string]Usage{
	"train-ai": UsageTrainAI,
	"search":   UsageSearch,
}

// SignalKeys maps the keys of Content Signals (contentsignals.org) to
// categories: "ai-train" is AIPREF's "train-ai", "search" is "search", and
// "ai-input" is its own category. Keys and the values yes and no are read
// case-insensitively.
var SignalKeys = map[string]Usage{
	"ai-train": UsageTrainAI,
	"search":   UsageSearch,
	"ai-input": UsageAIInput,
}

// Prefs is a statement of preference: the categories it allows and those
// it disallows; every other category is unknown. The two sets are
// disjoint.
type Prefs struct {
	Allowed, Disallowed Usage
}

// Combine returns the preference of two statements about one resource, by
// draft-ietf-aipref-vocab section 5.1: for each category, disallowed if
// either disallows it, else allowed if either allows it, else unknown.
func (p Prefs) Combine(o Prefs) Prefs {
	d := p.Disallowed | o.Disallowed
	return Prefs{Allowed: (p.Allowed | o.Allowed) &^ d, Disallowed: d}
}

// Known reports whether the statement says anything.
func (p Prefs) Known() bool { return p.Allowed|p.Disallowed != 0 }

// String writes the statement in the AIPREF format, e.g. "train-ai=n,
// search=y, ai-input=n" (ai-input being Content Signals' category), or
// "unknown" when it states nothing.
func (p Prefs) String() string {
	var parts []string
	for _, n := range usageNames {
		switch {
		case p.Disallowed&n.u != 0:
			parts = append(parts, n.name+"=n")
		case p.Allowed&n.u != 0:
			parts = append(parts, n.name+"=y")
		}
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, ", ")
}

// Standard keys of the preference lines.
const (
	KeyContentUsage  = "Content-Usage"
	KeyContentSignal = "Content-Signal"
)

// isUsageKey reports whether a field key is one of the preference lines.
func isUsageKey(key string) bool {
	return key == KeyContentUsage || key == KeyContentSignal
}

// Statement is one Content-Usage or Content-Signal line read.
type Statement struct {
	// Path is the line's path pattern, or "" for a line without one (it
	// applies to every path of its group).
	Path string
	// Prefs is what the line states.
	Prefs Prefs
	// Problems say what the line states that is unknown (an unknown key, a
	// value other than y/n or yes/no, a statement that does not parse, a
	// key given twice), for lint: their Line is 0. They do not stop the
	// line from stating the rest.
	Problems []Diagnostic
	// Syntax is set when the statement does not parse at all (it then
	// states nothing).
	Syntax bool
}

// ParseStatement reads the value of a Content-Usage line (key
// KeyContentUsage) or of a Content-Signal line (KeyContentSignal), as
// draft-ietf-aipref-attach section 3.2 reads the former: a value that
// starts with '/' starts with a path, which ends at the first space or tab;
// the rest is the statement of preference. Content-Usage statements are
// Structured Field Dictionaries (RFC 9651) in the AIPREF vocabulary:
// a dictionary that does not parse states nothing, a label other than
// train-ai and search or a value other than the Token y or n leaves its
// category unknown, and a label given twice keeps its last value.
// Content-Signal statements are comma-separated key=value pairs with the
// keys of [SignalKeys] and the values yes and no, case-insensitive; a
// path before them is not in contentsignals.org's text but seen in the
// wild, and read the same way.
func ParseStatement(key, value string) Statement {
	var st Statement
	value = trimSpace(value)
	pref := value
	if strings.HasPrefix(value, "/") {
		end := strings.IndexAny(value, " \t")
		if end < 0 {
			end = len(value)
		}
		st.Path, pref = value[:end], strings.TrimLeft(value[end:], " \t")
	}
	if key == KeyContentSignal {
		parseSignal(&st, pref)
	} else {
		parseUsage(&st, pref)
	}
	if pref == "" {
		st.problem(CodeUsageSyntax, "the line states no preference")
	}
	return st
}

// problem records a lint finding about the statement.
func (st *Statement) problem(code Code, format string, args ...any) {
	st.Problems = append(st.Problems, Diagnostic{Severity: Warning, Code: code, Message: fmt.Sprintf(format, args...)})
}

// parseUsage reads an AIPREF statement.
func parseUsage(st *Statement, s string) {
	members, dups, err := parseSFDictionary(s)
	if err != nil {
		st.Syntax = true
		st.problem(CodeUsageSyntax, "%q is not a structured-field dictionary (%v): every preference of the line is unknown", clip(s), err)
		return
	}
	for _, m := range members {
		u, ok := UsageLabels[m.key]
		switch {
		case !ok:
			msg := fmt.Sprintf("unknown label %q is ignored", clip(m.key))
			if _, isSignal := SignalKeys[m.key]; isSignal {
				msg += " (a Content Signals key: write it in a Content-Signal line, or use train-ai and search)"
			}
			st.problem(CodeUsageUnknown, "%s", msg)
		case m.token == "y":
			st.Prefs.Allowed |= u
		case m.token == "n":
			st.Prefs.Disallowed |= u
		case m.token != "":
			st.problem(CodeUsageUnknown, "%s=%s: the value is y or n; the preference is unknown", m.key, clip(m.token))
		default:
			st.problem(CodeUsageUnknown, "%s: the value is the token y or n, not a %s; the preference is unknown", m.key, m.kind)
		}
	}
	for _, k := range dups {
		st.problem(CodeUsageDuplicate, "%s is given more than once: the last value applies", clip(k))
	}
}

// parseSignal reads a Content Signals statement.
func parseSignal(st *Statement, s string) {
	set := map[Usage]bool{} // the value each category had last: true for yes
	count := map[string]int{}
	for _, item := range strings.Split(s, ",") {
		item = trimSpace(item)
		if item == "" {
			if s != "" {
				st.problem(CodeUsageSyntax, "empty item between commas")
			}
			continue
		}
		k, v, hasValue := strings.Cut(item, "=")
		k, v = strings.ToLower(trimSpace(k)), strings.ToLower(trimSpace(v))
		if count[k]++; count[k] == 2 {
			st.problem(CodeUsageDuplicate, "%s is given more than once: the last value applies", clip(k))
		}
		u, ok := SignalKeys[k]
		switch {
		case !ok:
			msg := fmt.Sprintf("unknown signal %q is ignored", clip(k))
			if _, isLabel := UsageLabels[k]; isLabel && k != "search" {
				msg += " (an AIPREF label: Content Signals writes ai-train)"
			}
			st.problem(CodeUsageUnknown, "%s", msg)
			continue
		case !hasValue || v != "yes" && v != "no":
			st.problem(CodeUsageUnknown, "%s: the value is yes or no, got %q; the preference is unknown", k, clip(v))
			delete(set, u)
			continue
		}
		set[u] = v == "yes"
	}
	for u, yes := range set {
		if yes {
			st.Prefs.Allowed |= u
		} else {
			st.Prefs.Disallowed |= u
		}
	}
}
