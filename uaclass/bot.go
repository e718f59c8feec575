package uaclass

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/robotsguard/robotsguard/policy"
)

// Verification methods a [Bot] can be checked with.
const (
	// VerifyNone: the operator publishes no way to verify the crawler.
	VerifyNone = ""
	// VerifyDNS: forward-confirmed reverse DNS; the PTR name must end in one
	// of the bot's Domains and resolve back to the client IP.
	VerifyDNS = "dns"
	// VerifyRanges: the client IP must be in the ranges the operator
	// publishes (loaded from files named in the configuration).
	VerifyRanges = "ranges"
)

// ConfigBot reads the Caddyfile's arguments of a bot the configuration
// adds, "<token> <class> <match phrase...>" (at least three): its display
// name is its token. A class is a keyword; the entry is checked by
// Validate.
func ConfigBot(args []string) (Bot, error) {
	c, err := ParseClass(args[1])
	if err != nil {
		return Bot{}, err
	}
	return Bot{Token: args[0], Class: c, Name: args[0], Match: args[2:], Source: "config"}, nil
}

// Bot is one entry of the bot database: a crawler, fetcher or client that
// the classifier recognises.
type Bot struct {
	// Token is the robots.txt product token a site writes for this bot,
	// lower-cased, e.g. "googlebot-image" or "duckduckbot".
	Token string `json:"token"`
	// Parents are less specific tokens the bot also obeys, most specific
	// first, e.g. ["googlebot"] for googlebot-image.
	Parents []string `json:"parents,omitempty"`
	// Match holds the phrases that identify the bot in a User-Agent. They are
	// matched case-insensitively, as whole words: a phrase that starts or ends
	// with a letter or digit must not continue a longer word, so "Exabot"
	// does not match "Alexabot". A leading '^' anchors a phrase at the start
	// of the User-Agent and a trailing '$' at its end; a phrase that ends in
	// '/' matches only a product token with a version, as in "Code/1.85".
	// Phrases match only where the User-Agent names a product (its start, a
	// product outside comments, the start of a comment entry), never in a
	// build ID, a device model or another product's comment; phrases with a
	// URL or mail fragment ("yandex.com/bots") match anywhere.
	Match []string `json:"match"`
	// Class is the bot's class.
	Class Class `json:"class"`
	// Name is the bot's display name.
	Name string `json:"name"`
	// Operator is who runs the bot, where known.
	Operator string `json:"operator,omitempty"`
	// Verify is the verification method: "", "dns" or "ranges".
	Verify string `json:"verify,omitempty"`
	// Domains are the PTR domain suffixes for "dns" verification.
	Domains []string `json:"domains,omitempty"`
	// Ranges are the https URLs where the operator publishes the bot's IP
	// ranges, which "verify { ranges published }" fetches and refreshes:
	// for a "ranges" bot, its verification; for a "dns" bot, lookups
	// spared (an address outside them is still checked by reverse DNS).
	Ranges []string `json:"ranges,omitempty"`
	// RangesDoc is the operator's page that documents Ranges.
	RangesDoc string `json:"ranges_doc,omitempty"`
	// UserTriggered marks fetchers that act on a person's immediate request
	// (ChatGPT-User, Claude-User, Perplexity-User, Google's user-triggered
	// fetchers), so that enforcement can treat them apart from bulk
	// crawlers.
	UserTriggered bool `json:"user_triggered,omitempty"`
	// FeedReader marks a feed reader (Miniflux, FreshRSS, Feedly,
	// Inoreader, NewsBlur, Feedbin, Tiny Tiny RSS, podcast apps, ...): it
	// fetches the feeds people subscribed to, so that a response that is a
	// feed is served to it even where the robots.txt "*" group disallows
	// the path. A claim of being one buys nothing but feeds (see package
	// enforce).
	FeedReader bool `json:"feed_reader,omitempty"`
	// Renders marks a client that renders the pages it loads and fetches
	// their images, style sheets, scripts and fonts as a browser does: an
	// honest headless browser (HeadlessChrome), a search engine's
	// renderer. Its subresources get a browser's rate, its page
	// navigations are paced as any bot's; for a bot with a verification
	// method, only once it is verified.
	Renders bool `json:"renders,omitempty"`
	// Purposes are what the bot does with what it fetches, as its operator
	// documents it (see [Purposes]); none where unknown. A user-triggered
	// fetcher has PurposeUserTriggered.
	Purposes Purposes `json:"purposes,omitempty"`
	// PurposeSource cites where Purposes come from: the vendor's
	// documentation, or ai.robots.txt's "function" field.
	PurposeSource string `json:"purpose_source,omitempty"`
	// Source names the list the entry came from, for attribution.
	Source string `json:"source,omitempty"`
}

// Tokens returns the bot's robots.txt tokens, most specific first.
func (b *Bot) Tokens() []string {
	return append([]string{b.Token}, b.Parents...)
}

// Validate reports what is wrong with an entry, for entries added from
// configuration.
func (b *Bot) Validate() error {
	if b.Token == "" {
		return fmt.Errorf("bot %q: token is empty", b.Name)
	}
	if t := policy.ProductToken(b.Token); t != b.Token {
		return fmt.Errorf("bot %q: token %q is not a lower-case product token (want %q)", b.Name, b.Token, t)
	}
	if len(b.Match) == 0 {
		return fmt.Errorf("bot %q: no match phrases", b.Token)
	}
	for _, m := range b.Match {
		if firstWord(strings.ToLower(strings.TrimPrefix(m, "^"))) == "" {
			return fmt.Errorf("bot %q: match phrase %q has no letter or digit", b.Token, m)
		}
	}
	for _, u := range b.Ranges {
		if !strings.HasPrefix(u, "https://") || strings.ContainsAny(u, " \t\r\n") {
			return fmt.Errorf("bot %q: ranges URL %q is not an https URL", b.Token, u)
		}
	}
	if len(b.Ranges) > 0 && b.RangesDoc == "" {
		return fmt.Errorf("bot %q: ranges URLs without ranges_doc, the page that documents them", b.Token)
	}
	switch b.Verify {
	case VerifyNone, VerifyRanges:
	case VerifyDNS:
		if len(b.Domains) == 0 {
			return fmt.Errorf("bot %q: dns verification needs domains", b.Token)
		}
	default:
		return fmt.Errorf("bot %q: unknown verification method %q (want dns or ranges)", b.Token, b.Verify)
	}
	return nil
}

//go:generate go run ./internal/botsgen -data internal/botsgen/data -curated internal/botsgen/curated.json -purposes internal/botsgen/purposes.json -out bots.json

// botsJSON is the embedded bot database, generated from public lists (see
// NOTICE.md) by the go:generate step above.
//
//go:embed bots.json
var botsJSON []byte

// defaultBots is the embedded database, parsed once per process.
var defaultBots = sync.OnceValue(func() []Bot {
	bots, err := ParseBots(botsJSON)
	if err != nil {
		panic("uaclass: embedded bots.json: " + err.Error()) // caught by every test run
	}
	return bots
})

// DefaultBots returns a copy of the embedded bot database. The database is
// parsed once per process; the copy's entries share their slices (Parents,
// Match, Domains) with it, so a caller changes an entry by replacing it,
// never by writing into those slices.
func DefaultBots() []Bot {
	return slices.Clone(defaultBots())
}

// ParseBots reads a bot database in the format of the embedded bots.json: a
// JSON array of [Bot] objects.
func ParseBots(data []byte) ([]Bot, error) {
	var bots []Bot
	if err := json.Unmarshal(data, &bots); err != nil {
		return nil, fmt.Errorf("parsing bot database: %w", err)
	}
	for i := range bots {
		if err := bots[i].Validate(); err != nil {
			return nil, fmt.Errorf("bot database entry %d: %w", i, err)
		}
	}
	return bots, nil
}
