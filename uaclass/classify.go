package uaclass

import (
	"fmt"
	"strings"
	"sync"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/policy"
)

// Result is the classification of one User-Agent.
type Result struct {
	// Class is the client's class.
	Class Class
	// Tokens are the robots.txt product tokens a site would write in
	// User-agent for this client, lower-cased, most specific first: the
	// client's own product names as written (hyphenated names whole), then
	// the database entry's family (for example msnbot-media, then msnbot;
	// googlebot-image, then googlebot). Browsers and unknown clients have
	// none. The slice is shared and must not be modified.
	Tokens []string
	// Bot is the database entry that matched, or nil. It is shared and must
	// not be modified.
	Bot *Bot
	// BrowserLike reports whether the client should get a browser's limits:
	// true for every [Browser], and for an [Unknown] client that looks like
	// one (a "Mozilla/..." string with a rendering engine such as
	// AppleWebKit, Gecko or Trident) and names no robot. A person's page
	// load fetches dozens of resources at once; such a client is not yet
	// known to be a person, so robots.txt still applies to it, but it should
	// not be paced like a script.
	BrowserLike bool
	// Claim is what a [Browser]'s User-Agent claims (evidence.ParseClaim),
	// to be held to how the request speaks; the zero Claim for the other
	// classes, and for browsers no check can judge.
	Claim evidence.Claim
}

// UserTriggered reports whether the client is a fetcher acting on a person's
// immediate request (ChatGPT-User, Claude-User, ...).
func (r Result) UserTriggered() bool {
	return r.Bot != nil && r.Bot.UserTriggered
}

// FeedReader reports whether the client is a feed reader (see
// [Bot].FeedReader).
func (r Result) FeedReader() bool {
	return r.Bot != nil && r.Bot.FeedReader
}

// Renders reports whether the client renders the pages it loads (see
// [Bot].Renders).
func (r Result) Renders() bool {
	return r.Bot != nil && r.Bot.Renders
}

// Token returns the most specific product token, or "".
func (r Result) Token() string {
	if len(r.Tokens) == 0 {
		return ""
	}
	return r.Tokens[0]
}

// Options configure a [Classifier].
type Options struct {
	// Bots is the bot database. Nil means [DefaultBots].
	Bots []Bot
	// Extra adds entries to the database; an entry whose token is already
	// there replaces that entry.
	Extra []Bot
	// CacheBytes bounds the memory of the result cache, counted as the length
	// of each cached User-Agent plus a fixed overhead per entry. Zero means
	// the default, 4 MiB; a negative value disables the cache.
	CacheBytes int
}

// DefaultCacheBytes is the default bound of the classification cache.
const DefaultCacheBytes = 4 << 20

// Classifier classifies User-Agent strings. It is safe for concurrent use.
type Classifier struct {
	index *phraseIndex
	cache *cache
	// results holds one shared Result per database entry, so that a match
	// costs no allocation.
	results []Result
}

// New returns a Classifier for the given options.
func New(opts Options) (*Classifier, error) {
	bots := opts.Bots
	if bots == nil {
		bots = DefaultBots()
	}
	bots = append([]Bot(nil), bots...)
	for i := range opts.Extra {
		e := opts.Extra[i]
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("extra bot %d: %w", i, err)
		}
		replaced := false
		for j := range bots {
			if bots[j].Token == e.Token {
				bots[j], replaced = e, true
				break
			}
		}
		if !replaced {
			bots = append(bots, e)
		}
	}
	c := &Classifier{index: newPhraseIndex(bots)}
	c.results = make([]Result, len(bots))
	for i := range bots {
		b := &c.index.bots[i]
		c.results[i] = Result{Class: b.Class, Tokens: b.Tokens(), Bot: b}
	}
	switch {
	case opts.CacheBytes == 0:
		c.cache = newCache(DefaultCacheBytes)
	case opts.CacheBytes > 0:
		c.cache = newCache(opts.CacheBytes)
	}
	return c, nil
}

// Tokens returns the robots.txt tokens of every database entry of class c,
// extra entries included, in database order without repeats. The served
// robots.txt names them for a class an operator shuts out.
func (c *Classifier) Tokens(class Class) []string {
	var out []string
	seen := map[string]bool{}
	for i := range c.index.bots {
		if b := &c.index.bots[i]; b.Class == class && !seen[b.Token] {
			seen[b.Token] = true
			out = append(out, b.Token)
		}
	}
	return out
}

var (
	defaultOnce       sync.Once
	defaultClassifier *Classifier
)

// Classify classifies ua with a shared Classifier built from the embedded
// database.
func Classify(ua string) Result {
	defaultOnce.Do(func() {
		c, err := New(Options{})
		if err != nil {
			panic("uaclass: " + err.Error()) // the embedded database is tested
		}
		defaultClassifier = c
	})
	return defaultClassifier.Classify(ua)
}

// Classify returns the class, tokens and bot entry of a User-Agent. An empty
// or blank User-Agent is [Unknown]. Results are cached by the exact string.
//
// A string that names a database entry, as a whole word, is that bot, even
// when it also looks like a browser ("Mozilla/5.0 ... (compatible;
// Googlebot/2.1; ...)"). Otherwise a string that declares itself a robot (a
// product token ending in bot, crawler or spider, or an info URL) is [Bot];
// a string that github.com/mssola/useragent reads as a browser on a known
// platform and engine is [Browser]; another client with a product token is
// [Script]; the rest is [Unknown].
func (c *Classifier) Classify(ua string) Result {
	if c.cache != nil {
		if r, ok := c.cache.get(ua); ok {
			return r
		}
	}
	r := c.classify(ua)
	if r.Class == Browser {
		r.Claim = evidence.ParseClaim(ua)
	}
	if c.cache != nil {
		c.cache.put(ua, r)
	}
	return r
}

func (c *Classifier) classify(ua string) Result {
	s := strings.TrimSpace(ua)
	if len(s) > scanLimit {
		s = s[:scanLimit]
	}
	if s == "" {
		return Result{}
	}
	var buf [512]byte
	lower := string(appendLower(buf[:0], s))
	if m := c.index.find(lower); m.bot >= 0 {
		r := c.results[m.bot]
		if r.Class == Browser {
			return r
		}
		var own [4]string
		names := own[:0]
		switch {
		case m.suffix:
			// "zoho-scrapy" is not Scrapy: its own name only.
			if tok := policy.ProductToken(lower[m.at:]); tok != "" {
				names = appendToken(names, tok)
			}
			return Result{Class: r.Class, Tokens: joinTokens(names, nil), Bot: r.Bot}
		case r.Class == Bad:
			// A harvester gets no good name's group by adding it.
		default:
			names = ownNames(names, s, lower)
		}
		if m.at >= 0 {
			if tok := policy.ProductToken(lower[m.at:]); len(tok) >= m.n {
				names = appendToken(names, tok) // "msnbot-media" for msnbot
			}
		}
		if len(names) == 0 || len(names) == 1 && names[0] == r.Tokens[0] {
			return r
		}
		r.Tokens = joinTokens(names, r.Tokens)
		return r
	}
	if tok, ok := declaredBot(s, lower); ok {
		var own [4]string
		return Result{Class: OtherBot, Tokens: joinTokens(ownNames(own[:0], s, lower), tokenList(tok))}
	}
	browser, looksLike := browserKind(s, lower)
	if browser {
		return Result{Class: Browser, BrowserLike: true}
	}
	// A client that names itself with a product and version is a script or
	// tool; "Mozilla/..." that is no recognisable browser stays unknown,
	// with browser limits when it has a rendering engine.
	if tok := policy.ProductToken(lower); tok != "" && tok != "mozilla" && len(tok) < len(s) && s[len(tok)] == '/' && !looksLike {
		return Result{Class: Script, Tokens: []string{tok}}
	}
	return Result{BrowserLike: looksLike && strings.Contains(lower, "mozilla")}
}

// joinTokens returns own, then the tokens of tail that own lacks, in a new
// slice.
func joinTokens(own, tail []string) []string {
	out := make([]string, 0, len(own)+len(tail))
	out = append(out, own...)
	for _, t := range tail {
		out = appendToken(out, t)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func tokenList(tok string) []string {
	if tok == "" {
		return nil
	}
	return []string{tok}
}

func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}
