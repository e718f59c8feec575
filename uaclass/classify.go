package uaclass

import (
	"fmt"
	"strings"
	"sync"

	"github.com/mssola/useragent"

	"github.com/robotsguard/robotsguard/policy"
)

// Result is the classification of one User-Agent.
type Result struct {
	// Class is the client's class.
	Class Class
	// Tokens are the robots.txt product tokens a site would write in
	// User-agent for this client, lower-cased, most specific first (for
	// example googlebot-image, then googlebot). Browsers and unknown clients
	// have none. The slice is shared and must not be modified.
	Tokens []string
	// Bot is the database entry that matched, or nil. It is shared and must
	// not be modified.
	Bot *Bot
}

// UserTriggered reports whether the client is a fetcher acting on a person's
// immediate request (ChatGPT-User, Claude-User, ...).
func (r Result) UserTriggered() bool {
	return r.Bot != nil && r.Bot.UserTriggered
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
	lower := appendLower(buf[:0], s)
	if i := c.index.find(string(lower)); i >= 0 {
		return c.results[i]
	}
	if tok, ok := declaredBot(s); ok {
		return Result{Class: OtherBot, Tokens: tokenList(tok)}
	}
	if isBrowser(s) {
		return Result{Class: Browser}
	}
	// A client that names itself with a product and version is a script or
	// tool; "Mozilla/..." that is no recognisable browser stays unknown.
	if tok := policy.ProductToken(s); tok != "" && tok != "mozilla" && len(tok) < len(s) && s[len(tok)] == '/' {
		return Result{Class: Script, Tokens: []string{tok}}
	}
	return Result{}
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

// botSuffixes are the endings of self-declared robot names.
var botSuffixes = []string{"bot", "crawler", "spider", "scraper", "fetcher", "robot"}

// declaredBot reports whether s declares itself a robot and returns its
// product token: a product token with a version ("FooBot/1.0") or an entry
// of a "compatible;" comment ("(compatible; FooBot; ...)") whose name ends in
// bot, crawler, spider, scraper, fetcher or robot, or an info URL such as
// "+http://example.com/bot". Device names in a browser's platform comment
// ("Android 10; CUBOT X19") are neither, so they do not count.
func declaredBot(s string) (string, bool) {
	lower := string(appendLower(make([]byte, 0, len(s)), s)) // same length as s, unlike strings.ToLower
	// Product tokens with a version, anywhere.
	for i := 0; i < len(s); {
		n := tokenRun(s[i:])
		if n == 0 {
			i++
			continue
		}
		name := lower[i : i+n]
		if i+n < len(s) && s[i+n] == '/' && hasBotSuffix(name) {
			return policy.ProductToken(s[i:]), true
		}
		i += n
	}
	// Entries of "compatible;" comments.
	if k := strings.Index(lower, "compatible;"); k >= 0 {
		rest := s[k+len("compatible;"):]
		if end := strings.IndexByte(rest, ')'); end >= 0 {
			rest = rest[:end]
		}
		first := ""
		for _, part := range strings.Split(rest, ";") {
			part = strings.TrimSpace(part)
			tok := policy.ProductToken(part)
			if first == "" && tok != "" && !strings.HasPrefix(tok, "msie") {
				first = tok
			}
			if tok != "" && hasBotSuffix(tok) {
				return tok, true
			}
		}
		if strings.Contains(lower, "+http") || strings.Contains(lower, "+www.") {
			return first, true
		}
	}
	if strings.Contains(lower, "+http") || strings.Contains(lower, "+www.") {
		if tok := policy.ProductToken(s); tok != "mozilla" {
			return tok, true
		}
		return "", true
	}
	return "", false
}

func tokenRun(s string) int {
	n := 0
	for n < len(s) && (isAlnum(s[n]) || s[n] == '-' || s[n] == '_') {
		n++
	}
	return n
}

func hasBotSuffix(name string) bool {
	for _, suf := range botSuffixes {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

// browserEngines are the rendering engines of real browsers, as
// mssola/useragent names them.
var browserEngines = map[string]bool{"AppleWebKit": true, "Gecko": true, "Trident": true, "Presto": true, "EdgeHTML": true, "Blink": true}

// isBrowser reports whether s is a person's browser: mssola/useragent must
// find a platform and a browser engine and must not see a bot.
func isBrowser(s string) bool {
	ua := useragent.New(s)
	if ua.Bot() || ua.Platform() == "" {
		return false
	}
	engine, _ := ua.Engine()
	return browserEngines[engine]
}
