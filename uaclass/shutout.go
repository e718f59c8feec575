package uaclass

import (
	"fmt"
	"strings"
)

// AIParts is a set of the parts of class [AI], by what its bots do with
// what they fetch (their [Purposes]), for an operator who shuts out some
// AI bots and not others: "block_class ai-training" stops the crawlers
// that train models and serves AI search and the fetchers a person asks
// for. Every bot of class ai is in at least one part.
type AIParts uint8

// The parts of class ai.
const (
	// AITraining ("ai-training"): bots whose documented purposes include
	// training AI models, or whose purposes are unknown (GPTBot, ClaudeBot,
	// CCBot, Bytespider, ...).
	AITraining AIParts = 1 << iota
	// AISearch ("ai-search"): bots that fetch for AI search or AI answers
	// (search, ai-input): OAI-SearchBot, PerplexityBot, Claude-SearchBot,
	// DuckAssistBot, ...
	AISearch
	// AIUser ("ai-user"): fetchers that act on a person's request in an AI
	// assistant (user-triggered): ChatGPT-User, Claude-User,
	// Perplexity-User, ...
	AIUser
)

var aiPartNames = []struct {
	p    AIParts
	name string
}{
	{AITraining, "ai-training"},
	{AISearch, "ai-search"},
	{AIUser, "ai-user"},
}

// ParseAIPart returns the part of class ai with the given name:
// "ai-training", "ai-search" or "ai-user".
func ParseAIPart(name string) (AIParts, error) {
	for _, n := range aiPartNames {
		if n.name == name {
			return n.p, nil
		}
	}
	return 0, fmt.Errorf("unknown part of class ai %q (want ai-training, ai-search or ai-user)", name)
}

// String returns the parts' names joined by commas, or "none".
func (p AIParts) String() string {
	var names []string
	for _, n := range aiPartNames {
		if p&n.p != 0 {
			names = append(names, n.name)
		}
	}
	if names == nil {
		return "none"
	}
	return strings.Join(names, ",")
}

// AIParts returns the parts of class ai the bot is in, none for another
// class: ai-user for a user-triggered fetcher, ai-search for search or
// ai-input, ai-training for train-ai, and ai-training for a bot of class
// ai whose purposes are unknown (it may train). A bot with several
// purposes is in several parts, so that shutting out any of them shuts it
// out, as a refused purpose does for the AI usage preferences.
func (b *Bot) AIParts() AIParts {
	if b.Class != AI {
		return 0
	}
	var p AIParts
	if b.UserTriggered || b.Purposes&PurposeUserTriggered != 0 {
		p |= AIUser
	}
	if b.Purposes&(PurposeSearch|PurposeAIInput) != 0 {
		p |= AISearch
	}
	if b.Purposes&PurposeTrainAI != 0 || p == 0 {
		p |= AITraining
	}
	return p
}

// AIParts returns the parts of class ai the client is in (see
// [Bot.AIParts]); a client of class ai the database does not know (an
// unknown signed agent) is in ai-training.
func (r Result) AIParts() AIParts {
	switch {
	case r.Class != AI:
		return 0
	case r.Bot == nil:
		return AITraining
	}
	return r.Bot.AIParts()
}

// Shutout says what one block_class entry shuts out, for the served
// robots.txt, which gives its Tokens a "Disallow: /" group and can say
// Note in a comment, and for the documentation.
type Shutout struct {
	// Name is the entry as configured: a class ("ai", "seo", ...) or a
	// part of class ai ("ai-training", "ai-search", "ai-user").
	Name string
	// Tokens are the robots.txt tokens of the database entries it covers,
	// extra entries included, in database order without repeats, those
	// that are real product tokens only (see [Bot.RealToken]).
	Tokens []string
	// Note says in one sentence what it shuts out and what it spares,
	// with examples from the database (bots whose purposes their
	// operators document).
	Note string
}

// Shutout returns what the block_class entry name shuts out; the zero
// Shutout for a name that is neither a class nor a part of class ai.
//
// "ai" is the whole class: AI search crawlers and the fetchers a person
// asks for in an AI assistant included, since what they fetch goes into
// an AI model too. The parts name the narrower choices.
func (c *Classifier) Shutout(name string) Shutout {
	s := Shutout{Name: name}
	part, err := ParseAIPart(name)
	class := AI
	if err != nil {
		if class, err = ParseClass(name); err != nil {
			return Shutout{}
		}
	}
	seen := map[string]bool{}
	var examples [4][]string // by part bit, for the note
	for i := range c.index.bots {
		b := &c.index.bots[i]
		if b.Class != class || part != 0 && b.AIParts()&part == 0 || seen[b.Token] || !b.RealToken() {
			continue
		}
		seen[b.Token] = true
		s.Tokens = append(s.Tokens, b.Token)
		for j, n := range aiPartNames {
			if b.AIParts() == n.p && len(examples[j]) < 3 && strings.HasPrefix(b.PurposeSource, "https://") {
				examples[j] = append(examples[j], b.Token)
			}
		}
	}
	eg := func(j int) string {
		if len(examples[j]) == 0 {
			return ""
		}
		return " (" + strings.Join(examples[j], ", ") + ", ...)"
	}
	switch {
	case part == 0 && class == AI:
		s.Note = "every AI crawler and fetcher: those that train models" + eg(0) + ", AI search" + eg(1) +
			" and the fetchers a person asks for in an AI assistant" + eg(2) +
			"; block_class ai-training shuts out only the crawlers that may train models"
	case part == AITraining:
		s.Note = "AI crawlers whose documented purposes include training models, or are unknown" + eg(0) +
			"; AI search" + eg(1) + " and user-triggered AI fetchers" + eg(2) + " are served"
	case part == AISearch:
		s.Note = "AI crawlers that fetch for AI search and answers" + eg(1)
	case part == AIUser:
		s.Note = "fetchers that act on a person's request in an AI assistant" + eg(2)
	default:
		s.Note = "every client of class " + class.String() + " in the bot database"
	}
	return s
}

// RealToken reports whether the bot's token names the bot as a product
// token in a robots.txt would: not an everyday word or a vendor's name
// that other software calls itself too ("the" of "The Knowledge AI",
// "spider", "operator", "cursor", "google" of "Google Web Preview"). A
// group the served robots.txt adds names real tokens only; a bot without
// one is held to the rules of the group it reads.
func (b *Bot) RealToken() bool { return b.Token != "" && !everydayTokens[b.Token] }

// everydayTokens are database tokens that are everyday words or vendors'
// names: a crawler whose product token is one of them is not the bot the
// entry means.
var everydayTokens = map[string]bool{
	"a": true, "an": true, "the": true, "do": true, "new": true, "let": true, "hello": true, "test": true,
	"spider": true, "operator": true, "cursor": true, "code": true, "agent": true, "bot": true,
	"crawler": true, "fetcher": true, "user": true, "web": true, "http": true, "https": true,
	"fast": true, "bad": true, "better": true, "known": true, "online": true, "offline": true,
	"content": true, "feed": true, "server": true, "current": true, "compatible": true,
	"library": true, "download": true, "domain": true, "domains": true, "parse": true, "xml": true,
	"ssl": true, "tls": true, "chrome": true, "google": true, "microsoft": true, "amazon": true, "yahoo": true,
}
