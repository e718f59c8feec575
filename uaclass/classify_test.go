package uaclass

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/robotsguard/robotsguard/policy"
)

// sharedUA holds the public lists the database is built from.
const sharedUA = "internal/botsgen/data/"

func newTestClassifier(t testing.TB) *Classifier {
	t.Helper()
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readShared(t testing.TB, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(sharedUA + name)
	if err != nil {
		t.Fatalf("reading the shared User-Agent data: %v", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// browserCorpus returns the real browser strings of testdata/browsers.txt.
func browserCorpus(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile("testdata/browsers.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && l[0] != '#' {
			out = append(out, l)
		}
	}
	return out
}

// TestBrowserCorpus: no real browser string is classified as anything but a
// browser (a human must never be treated as a bot).
func TestBrowserCorpus(t *testing.T) {
	corpus := browserCorpus(t)
	if len(corpus) < 150 {
		t.Fatalf("browser corpus has %d strings, want at least 150", len(corpus))
	}
	c := newTestClassifier(t)
	for _, ua := range corpus {
		if r := c.Classify(ua); r.Class != Browser || len(r.Tokens) != 0 || r.Bot != nil {
			t.Errorf("Classify(%q) = %v %q, want browser", ua, r.Class, r.Tokens)
		}
	}
}

// TestCrawlerUserAgentsInstances: every example string of
// crawler-user-agents.json is a non-browser.
func TestCrawlerUserAgentsInstances(t *testing.T) {
	var crawlers []struct {
		Pattern   string   `json:"pattern"`
		Instances []string `json:"instances"`
	}
	readShared(t, "crawler-user-agents.json", &crawlers)
	c := newTestClassifier(t)
	dropped := droppedPatterns(t)
	n := 0
	for _, e := range crawlers {
		if dropped[e.Pattern] {
			// The curated file drops it: its examples are people's
			// browsers (TestCollisions checks they are browsers).
			continue
		}
		for _, ua := range e.Instances {
			n++
			if r := c.Classify(ua); r.Class == Browser || r.Class == Unknown {
				t.Errorf("Classify(%q) = %v, want a non-browser (pattern %q)", ua, r.Class, e.Pattern)
			}
		}
	}
	if n < 2000 {
		t.Errorf("only %d instances read", n)
	}
}

// TestAIRobotsJSON: every agent of ai.robots.txt is recognised in a
// User-Agent, with class ai (or the class its description makes clear) and
// the robots.txt token a site would write for it.
func TestAIRobotsJSON(t *testing.T) {
	var ai map[string]json.RawMessage
	readShared(t, "robots.json", &ai)
	if len(ai) < 150 {
		t.Fatalf("robots.json has %d agents", len(ai))
	}
	notAI := map[string]Class{
		"Applebot": Search, "PetalBot": Search, "Bravebot": Search, "Linguee Bot": Search,
		"facebookexternalhit": Social, "Scrapy": Script, "Lightpanda": Script, "img2dataset": Script,
		"Crawl4AI": Script, "YaK": SEO, "SemrushBot-OCOB": SEO, "SemrushBot-SWA": SEO,
		"ExaBot": Search, // Exalead's Exabot, a search engine, has the same name (issue 11)
	}
	c := newTestClassifier(t)
	for name := range ai {
		want, ok := notAI[name]
		if !ok {
			want = AI
		}
		ua := fmt.Sprintf("Mozilla/5.0 (compatible; %s/1.0; +https://example.com/bot)", name)
		r := c.Classify(ua)
		if r.Class != want {
			t.Errorf("Classify(%q) = %v, want %v", ua, r.Class, want)
		}
		if tok := policy.ProductToken(name); r.Token() != tok {
			t.Errorf("Classify(%q) token = %q, want %q", ua, r.Token(), tok)
		}
	}
}

// TestClassify pins the class and tokens of the major crawlers and clients.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		ua     string
		class  Class
		tokens []string
		ut     bool
	}{
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", Search, []string{"googlebot"}, false},
		{"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", Search, []string{"googlebot"}, false},
		{"Googlebot-Image/1.0", Search, []string{"googlebot-image", "googlebot"}, false},
		{"Googlebot-News", Search, []string{"googlebot-news", "googlebot"}, false},
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", Search, []string{"bingbot", "msnbot"}, false},
		{"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", Search, []string{"yandexbot", "yandex"}, false},
		{"Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", Search, []string{"baiduspider"}, false},
		{"DuckDuckBot-Https/1.1; (+https://duckduckgo.com/duckduckbot)", Search, []string{"duckduckbot-https", "duckduckbot"}, false},
		{"Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", Search, []string{"slurp"}, false},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", Search, []string{"applebot"}, false},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", AI, []string{"gptbot"}, false},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot", AI, []string{"chatgpt-user"}, true},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot)", AI, []string{"oai-searchbot"}, false},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", AI, []string{"claudebot"}, false},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)", AI, []string{"claude-user"}, true},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)", AI, []string{"perplexity-user"}, true},
		{"CCBot/2.0 (https://commoncrawl.org/faq/)", AI, []string{"ccbot"}, false},
		{"Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)", AI, []string{"bytespider"}, false},
		{"meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)", AI, []string{"meta-externalagent"}, false},
		{"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", SEO, []string{"ahrefsbot"}, false},
		{"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", SEO, []string{"semrushbot"}, false},
		{"Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", SEO, []string{"mj12bot"}, false},
		{"Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)", SEO, []string{"dotbot"}, false},
		{"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", Social, []string{"facebookexternalhit"}, false},
		{"Twitterbot/1.0", Social, []string{"twitterbot"}, false},
		{"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", Social, []string{"slackbot-linkexpanding", "slackbot"}, false},
		{"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", Social, []string{"discordbot"}, false},
		{"Mozilla/5.0 (compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", Monitor, []string{"uptimerobot"}, false},
		{"curl/8.5.0", Script, []string{"curl"}, false},
		{"Wget/1.21.3", Script, []string{"wget"}, false},
		{"python-requests/2.31.0", Script, []string{"python-requests"}, false},
		{"Go-http-client/1.1", Script, []string{"go-http-client"}, false},
		{"okhttp/4.12.0", Script, []string{"okhttp"}, false},
		{"Scrapy/2.11.0 (+https://scrapy.org)", Script, []string{"scrapy"}, false},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.109 Safari/537.36", Script, []string{"headlesschrome"}, false},
		{"EmailSiphon", Bad, []string{"emailsiphon"}, false},
		{"Mozilla/4.0 (compatible; Cherry Picker; Windows 95)", Bad, []string{"cherrypicker"}, false},
		{"EmailCollector/1.0", Bad, []string{"emailcollector"}, false},
		{"Mozilla/5.0 (compatible; Googlebot/2.1) EmailSiphon", Bad, []string{"emailsiphon"}, false},
		{"Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)", OtherBot, []string{"examplebot"}, false},
		{"FooCrawler/3.1", OtherBot, []string{"foocrawler"}, false},
		{"Mozilla/5.0 (compatible; Zzz/1.0; +https://example.com/info)", OtherBot, []string{"zzz"}, false},
		{"MyApp/2.0 (Linux)", Script, []string{"myapp"}, false},
		{"", Unknown, nil, false},
		{"   ", Unknown, nil, false},
		{"-", Unknown, nil, false},
		{"Mozilla/5.0", Unknown, nil, false},
		{"\xff\xfe\x00junk", Unknown, nil, false},
	} {
		r := newTestClassifier(t).Classify(tc.ua)
		if r.Class != tc.class || !slices.Equal(r.Tokens, tc.tokens) || r.UserTriggered() != tc.ut {
			t.Errorf("Classify(%q) = %v %q user-triggered=%v, want %v %q %v", tc.ua, r.Class, r.Tokens, r.UserTriggered(), tc.class, tc.tokens, tc.ut)
		}
	}
}

// TestWholeWords: names match as whole words, never as bare substrings, so
// the classic false positives of public lists do not happen here.
func TestWholeWords(t *testing.T) {
	bots := []Bot{
		{Token: "disco", Match: []string{"Disco"}, Class: Bad, Name: "Disco"},
		{Token: "exabot", Match: []string{"Exabot"}, Class: Search, Name: "Exabot"},
		{Token: "lcc", Match: []string{"LCC"}, Class: AI, Name: "LCC"},
		{Token: "spider", Match: []string{"Spider/"}, Class: AI, Name: "Spider"},
		{Token: "code", Match: []string{"Code/"}, Class: AI, Name: "Code"},
		{Token: "discordbot", Match: []string{"Discordbot"}, Class: Social, Name: "Discordbot"},
	}
	c, err := New(Options{Bots: bots})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ua    string
		token string
		class Class
	}{
		{"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", "discordbot", Social},
		{"Disco/1.0", "disco", Bad},
		{"Mozilla/5.0 (compatible; Alexabot/1.0; +http://alexa.example)", "alexabot", OtherBot},
		{"Mozilla/5.0 (compatible; Exabot/3.0; +http://www.exabot.com/go/robot)", "exabot", Search},
		{"Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0; SLCC2; .NET CLR 2.0.50727)", "", Browser},
		{"LCC (+http://corpora.example)", "lcc", AI},
		{"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 SpiderMonkey", "", Browser},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Code/1.85.0 Chrome/114.0 Electron/25.9 Safari/537.36", "code", AI},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15 Codeweavers", "", Browser},
	} {
		r := c.Classify(tc.ua)
		if r.Class != tc.class || r.Token() != tc.token {
			t.Errorf("Classify(%q) = %v %q, want %v %q", tc.ua, r.Class, r.Token(), tc.class, tc.token)
		}
	}
	// The embedded database behaves the same on the real names.
	d := newTestClassifier(t)
	for ua, want := range map[string]string{
		"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)":                                  "discordbot",
		"Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0; SLCC1; .NET CLR 2.0.50727; Media Center PC 5.0)": "",
	} {
		if got := d.Classify(ua).Token(); got != want {
			t.Errorf("default Classify(%q) token = %q, want %q", ua, got, want)
		}
	}
}

// TestExtraBots: operators add and override entries from configuration.
func TestExtraBots(t *testing.T) {
	c, err := New(Options{Extra: []Bot{
		{Token: "acmebot", Match: []string{"AcmeBot"}, Class: Monitor, Name: "Acme monitor", Operator: "Acme"},
		{Token: "ahrefsbot", Match: []string{"AhrefsBot"}, Class: Bad, Name: "AhrefsBot"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Classify("AcmeBot/1.0"); r.Class != Monitor || r.Bot.Operator != "Acme" {
		t.Errorf("added bot: %+v", r)
	}
	if r := c.Classify("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)"); r.Class != Bad {
		t.Errorf("overridden bot: %v", r.Class)
	}
	for _, bad := range []Bot{
		{Token: "", Match: []string{"x"}},
		{Token: "Upper", Match: []string{"x"}},
		{Token: "x"},
		{Token: "x", Match: []string{"//"}},
		{Token: "x", Match: []string{"x"}, Verify: "dns"},
		{Token: "x", Match: []string{"x"}, Verify: "carrier-pigeon"},
	} {
		if _, err := New(Options{Extra: []Bot{bad}}); err == nil {
			t.Errorf("New accepted the invalid entry %+v", bad)
		}
	}
}

// TestTokensOfClass: the tokens of a class include extra entries, once.
func TestTokensOfClass(t *testing.T) {
	c, err := New(Options{Extra: []Bot{{Token: "acmeai", Match: []string{"AcmeAI"}, Class: AI, Name: "AcmeAI"}}})
	if err != nil {
		t.Fatal(err)
	}
	ai := c.Tokens(AI)
	for _, want := range []string{"gptbot", "claudebot", "ccbot", "acmeai"} {
		if !slices.Contains(ai, want) {
			t.Errorf("Tokens(ai) lacks %q", want)
		}
	}
	if slices.Contains(ai, "googlebot") {
		t.Error("Tokens(ai) has googlebot")
	}
	seen := map[string]bool{}
	for _, tok := range ai {
		if seen[tok] {
			t.Errorf("%q twice", tok)
		}
		seen[tok] = true
	}
}

// TestDatabase: the embedded database is well formed and carries the
// verification methods of the major crawlers.
func TestDatabase(t *testing.T) {
	bots := DefaultBots()
	if len(bots) < 1000 {
		t.Fatalf("only %d bots", len(bots))
	}
	byToken := map[string]Bot{}
	for _, b := range bots {
		if _, dup := byToken[b.Token]; dup {
			t.Errorf("duplicate token %q", b.Token)
		}
		byToken[b.Token] = b
		if b.Source == "" {
			t.Errorf("%q has no source", b.Token)
		}
	}
	for tok, domains := range map[string][]string{
		"googlebot":   {"googlebot.com", "google.com"},
		"bingbot":     {"search.msn.com"},
		"applebot":    {"applebot.apple.com"},
		"yandexbot":   {"yandex.ru", "yandex.net", "yandex.com"},
		"baiduspider": {"baidu.com", "baidu.jp"},
	} {
		b := byToken[tok]
		if b.Verify != VerifyDNS {
			t.Errorf("%s: verify %q, want dns", tok, b.Verify)
		}
		for _, d := range domains {
			if !slices.Contains(b.Domains, d) {
				t.Errorf("%s: domains %q lack %q", tok, b.Domains, d)
			}
		}
	}
	for _, tok := range []string{"gptbot", "chatgpt-user", "oai-searchbot", "duckduckbot", "perplexitybot"} {
		if byToken[tok].Verify != VerifyRanges {
			t.Errorf("%s: verify %q, want ranges", tok, byToken[tok].Verify)
		}
	}
}

// TestCacheBounded: the cache never holds more than its budget.
func TestCacheBounded(t *testing.T) {
	c, err := New(Options{CacheBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20000; i++ {
		c.Classify(fmt.Sprintf("FooBot/%d", i))
	}
	// Each generation of each shard holds at most its budget.
	perEntry := entryOverhead + len("FooBot/00000")
	if n, max := c.cache.len(), 2*cacheShards*(c.cache.budget/perEntry+1); n > max {
		t.Errorf("cache holds %d entries, budget allows %d", n, max)
	}
	// Recently used entries survive.
	c.Classify("FooBot/19999")
	if _, ok := c.cache.get("FooBot/19999"); !ok {
		t.Error("the most recent entry was evicted")
	}
	// Hostile User-Agents are not cached.
	huge := strings.Repeat("A", 64<<10)
	if r := c.Classify(huge); r.Class != Unknown {
		t.Errorf("64 KiB junk User-Agent: %v", r.Class)
	}
	if _, ok := c.cache.get(huge); ok {
		t.Error("a 64 KiB User-Agent was cached")
	}
	// A disabled cache still classifies.
	nc, _ := New(Options{CacheBytes: -1})
	if nc.cache != nil || nc.Classify("curl/8.0").Class != Script {
		t.Error("classifier without cache")
	}
}

// TestClassifyCachedAllocs: a cached classification allocates nothing.
func TestClassifyCachedAllocs(t *testing.T) {
	c := newTestClassifier(t)
	ua := "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	c.Classify(ua)
	if n := testing.AllocsPerRun(100, func() { c.Classify(ua) }); n != 0 {
		t.Errorf("cached Classify allocates %v times", n)
	}
}

// TestClassNames: the class names are the configuration and log format.
func TestClassNames(t *testing.T) {
	want := []string{"unknown", "browser", "search", "ai", "seo", "social", "monitor", "script", "bad", "bot", "poser"}
	for i, c := range Classes() {
		if c.String() != want[i] {
			t.Errorf("Class(%d) = %q, want %q", i, c, want[i])
		}
		got, err := ParseClass(want[i])
		if err != nil || got != c {
			t.Errorf("ParseClass(%q) = %v, %v", want[i], got, err)
		}
	}
	if _, err := ParseClass("robot"); err == nil || !strings.Contains(err.Error(), `"robot"`) {
		t.Errorf("ParseClass(robot) error = %v", err)
	}
}

// FuzzClassify: classification never panics, always yields a valid class,
// and tokens are lower-case product tokens.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"", "curl/8.0", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "(dbot)", "^LCC x", "\xff\x00", "Mozilla/5.0 (compatible; Foo",
		"zoho-scrapy/2.1", "Mozilla/5.0 (Linux; Android 15; X Build/AP3A.240617.008) AppleWebKit/537.36", "JUC (Linux; U; 2.3.5) UCWEB7.9", "a-b_c-(;;compatible;x-", "www.x.com)(("} {
		f.Add(s)
	}
	c := newTestClassifier(f)
	f.Fuzz(func(t *testing.T, ua string) {
		r := c.Classify(ua)
		if int(r.Class) >= len(classNames) {
			t.Fatalf("Classify(%q) = invalid class %d", ua, r.Class)
		}
		for _, tok := range r.Tokens {
			if tok == "" || policy.ProductToken(tok) != tok {
				t.Fatalf("Classify(%q) token %q is not a product token", ua, tok)
			}
		}
		if r.Class == Browser && len(r.Tokens) > 0 {
			t.Fatalf("Classify(%q): browser with tokens %q", ua, r.Tokens)
		}
		if r.Class == Browser && !r.BrowserLike || r.BrowserLike && r.Class != Browser && r.Class != Unknown {
			t.Fatalf("Classify(%q): class %v with browser-like %v", ua, r.Class, r.BrowserLike)
		}
	})
}

// TestCacheConcurrent: many goroutines classifying overlapping User-Agents
// through a small cache (so that generations turn over and entries are
// published while others read) get exactly what an uncached classifier
// says. Run with -race.
func TestCacheConcurrent(t *testing.T) {
	cached, err := New(Options{CacheBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := New(Options{CacheBytes: -1})
	uas := make([]string, 600)
	for i := range uas {
		switch i % 3 {
		case 0:
			uas[i] = fmt.Sprintf("Mozilla/5.0 (compatible; Bot%d/1.0; +https://example.com/bot)", i)
		case 1:
			uas[i] = fmt.Sprintf("curl/8.%d.0", i)
		default:
			uas[i] = fmt.Sprintf("Mozilla/5.0 (X11; Linux x86_64; rv:%d.0) Gecko/20100101 Firefox/%d.0", i, i)
		}
	}
	want := make([]Result, len(uas))
	for i, ua := range uas {
		want[i] = plain.Classify(ua)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := 0; n < 5000; n++ {
				i := (n*7 + g*13) % len(uas)
				if got := cached.Classify(uas[i]); got.Class != want[i].Class || strings.Join(got.Tokens, ",") != strings.Join(want[i].Tokens, ",") {
					t.Errorf("%q: cached %v %v, uncached %v %v", uas[i], got.Class, got.Tokens, want[i].Class, want[i].Tokens)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

// TestDefaultBotsParsedOnce: the embedded database is parsed once per
// process, and a caller that replaces entries of its copy does not change
// what the next caller gets.
func TestDefaultBotsParsedOnce(t *testing.T) {
	a := DefaultBots()
	if allocs := testing.AllocsPerRun(10, func() { _ = DefaultBots() }); allocs > 1 {
		t.Errorf("DefaultBots allocates %v times: it parses the database again", allocs)
	}
	token := a[0].Token
	a[0] = Bot{Token: "replaced"}
	if b := DefaultBots(); b[0].Token != token {
		t.Errorf("a caller's copy changed the database: %q", b[0].Token)
	}
}
