package uaclass

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/robotsguard/robotsguard/policy"
)

// Purposes is a set of what a bot does with what it fetches, as its
// operator documents it. The bot database carries them (Bot.Purposes),
// from the vendors' documentation, with ai.robots.txt's "function" field as
// an attributed fallback (see internal/botsgen/purposes.json); a bot whose
// purposes are unknown has none.
type Purposes uint8

// Purposes.
const (
	// PurposeTrainAI: what it fetches may train AI models ("train-ai").
	PurposeTrainAI Purposes = 1 << iota
	// PurposeSearch: it builds a search index that shows links and
	// excerpts ("search").
	PurposeSearch
	// PurposeAIInput: what it fetches goes into an AI model to answer
	// queries: retrieval-augmented generation, grounding, AI assistants'
	// crawlers ("ai-input").
	PurposeAIInput
	// PurposeUserTriggered: it fetches a page because a person asked for
	// it, in an AI assistant or another product ("user-triggered").
	PurposeUserTriggered
)

var purposeNames = []struct {
	p    Purposes
	name string
}{
	{PurposeTrainAI, "train-ai"},
	{PurposeSearch, "search"},
	{PurposeAIInput, "ai-input"},
	{PurposeUserTriggered, "user-triggered"},
}

// ParsePurpose returns the purpose with the given name: "train-ai",
// "search", "ai-input" or "user-triggered".
func ParsePurpose(name string) (Purposes, error) {
	for _, n := range purposeNames {
		if n.name == name {
			return n.p, nil
		}
	}
	return 0, fmt.Errorf("unknown purpose %q (want train-ai, search, ai-input or user-triggered)", name)
}

// List returns the names of the purposes, in the order of their values.
func (p Purposes) List() []string {
	var out []string
	for _, n := range purposeNames {
		if p&n.p != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// String returns the names joined by commas, or "none".
func (p Purposes) String() string {
	if p == 0 {
		return "none"
	}
	return strings.Join(p.List(), ",")
}

// MarshalJSON writes the purposes as a list of names.
func (p Purposes) MarshalJSON() ([]byte, error) {
	list := p.List()
	if list == nil {
		list = []string{}
	}
	return json.Marshal(list)
}

// UnmarshalJSON reads a list of names.
func (p *Purposes) UnmarshalJSON(b []byte) error {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return err
	}
	*p = 0
	for _, n := range names {
		v, err := ParsePurpose(n)
		if err != nil {
			return err
		}
		*p |= v
	}
	return nil
}

// Usage returns the categories of use whose refusal in robots.txt (a
// Content-Usage or Content-Signal line) refuses a bot with these purposes:
//
//   - train-ai: AI training (AIPREF "train-ai", Content Signals "ai-train");
//   - search: search (both forms' "search");
//   - ai-input: Content Signals' "ai-input";
//   - user-triggered: "ai-input" too. A page fetched because a person
//     asked an AI assistant for it goes into the assistant's model to
//     answer, which is what "ai-input" names ("real-time taking of content
//     for generative AI answers"); AIPREF has no such category, so a
//     Content-Usage line never refuses a user-triggered fetcher.
//
// A bot is refused when any of its purposes is refused: the table lists
// only what the operator says the crawler's fetches are used for.
func (p Purposes) Usage() policy.Usage {
	var u policy.Usage
	if p&PurposeTrainAI != 0 {
		u |= policy.UsageTrainAI
	}
	if p&PurposeSearch != 0 {
		u |= policy.UsageSearch
	}
	if p&(PurposeAIInput|PurposeUserTriggered) != 0 {
		u |= policy.UsageAIInput
	}
	return u
}

// Purposes returns what the client does with what it fetches: its database
// entry's purposes, with PurposeUserTriggered for a user-triggered fetcher;
// none for a client the database does not know.
func (r Result) Purposes() Purposes {
	if r.Bot == nil {
		return 0
	}
	p := r.Bot.Purposes
	if r.Bot.UserTriggered {
		p |= PurposeUserTriggered
	}
	return p
}
