package uaclass

import (
	"slices"
	"strings"
	"testing"
)

// TestFeedReaders: the feed readers peers broke (Anubis #721, #1737;
// miniflux #3340, #4454) are recognised by their real User-Agents (issue
// 27), and nothing that is no feed reader is: the flag lets feeds through
// a "*" group, so it must not land on a crawler.
func TestFeedReaders(t *testing.T) {
	c := newTestClassifier(t)
	for _, ua := range []string{
		"Mozilla/5.0 (compatible; Miniflux/2.2.4; +https://miniflux.app)",
		"FreshRSS/1.24.3 (Linux; https://freshrss.org)",
		"FreshRSS/1.11.2 (Linux; https://freshrss.org) like Googlebot",
		"Feedly/1.0 (+https://feedly.com/poller.html; 16 subscribers; )",
		"Mozilla/5.0 (compatible; inoreader.com; 12 subscribers)",
		"NewsBlur Feed Fetcher - 3 subscribers - https://www.newsblur.com/site/123/example (Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36)",
		"Feedbin feed-id:1234 - 5 subscribers",
		"Tiny Tiny RSS/23.12 (Unsupported) (https://tt-rss.org/)",
		"NetNewsWire (RSS Reader; https://netnewswire.com/)",
		"Newsboat/2.36.0 (Linux x86_64)",
		"FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)",
		"Overcast/1.0 Podcast Sync (123 subscribers; feed-id=456789; +http://overcast.fm/)",
	} {
		if r := c.Classify(ua); !r.FeedReader() || r.Class != Monitor {
			t.Errorf("%s: class %v, feed reader %v, want a feed reader of class monitor", ua, r.Class, r.FeedReader())
		}
	}
	for _, ua := range []string{
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (compatible; Mail.RU_Bot/2.0; +http://go.mail.ru/help/robots)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
		"curl/8.5.0",
		"UptimeRobot/2.0 (http://www.uptimerobot.com/)",
		"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
	} {
		if r := c.Classify(ua); r.FeedReader() {
			t.Errorf("%s: a feed reader (%v)", ua, r.Tokens)
		}
	}
	// A mail client's feed reader is a person's program: a browser.
	if r := c.Classify("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.5.0"); r.Class != Browser {
		t.Errorf("Thunderbird: %v", r.Class)
	}
	for _, b := range DefaultBots() {
		if b.FeedReader && b.Class != Monitor {
			t.Errorf("%s: a feed reader of class %v", b.Token, b.Class)
		}
	}
}

// TestRenderers: honest headless browsers and search engines' renderers
// render; scripts and other crawlers do not.
func TestRenderers(t *testing.T) {
	c := newTestClassifier(t)
	for ua, want := range map[string]bool{
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36":                                      true,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/131.0.6778.204 Safari/537.36": true,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36":   true,
		"Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1":                                             true,
		"curl/8.5.0":                          false,
		"Scrapy/2.11.2 (+https://scrapy.org)": false,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)": false,
	} {
		if r := c.Classify(ua); r.Renders() != want {
			t.Errorf("%s: renders %v, want %v", ua, r.Renders(), want)
		}
	}
}

// TestUserTriggeredVerification: the user-triggered fetchers the issue
// names are in the database, verified by their published ranges (never by
// reverse DNS under googleusercontent.com, which names Google Cloud
// customers' machines too), so that only a verified one is held to the
// groups that name it.
func TestUserTriggeredVerification(t *testing.T) {
	c := newTestClassifier(t)
	for _, ua := range []string{
		"FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)",
		"Mozilla/5.0 (compatible; Google-Read-Aloud; +https://support.google.com/webmasters/answer/1061943)",
		"Mozilla/5.0 (compatible; Google-Site-Verification/1.0)",
		"GoogleProducer; (+https://developers.google.com/search/docs/crawling-indexing/google-producer)",
		"Mozilla/5.0 (compatible; Google-CWS)",
		"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 (compatible; Google-Agent; +https://developers.google.com/crawling/docs/crawlers-fetchers/google-agent)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)",
	} {
		r := c.Classify(ua)
		if !r.UserTriggered() || r.Bot.Verify != VerifyRanges {
			t.Errorf("%s: %v user-triggered %v, verify %q; want a user-triggered fetcher verified by ranges", ua, r.Tokens, r.UserTriggered(), r.Bot.Verify)
		}
	}
	// Nor any other bot: a Google Cloud machine's address has a
	// forward-confirmed name under googleusercontent.com, so that a verified
	// "Googlebot" from one would get the reference reading and the gentle
	// end of the ladder.
	for _, b := range DefaultBots() {
		if slices.Contains(b.Domains, "googleusercontent.com") {
			t.Errorf("%s: verified by reverse DNS under googleusercontent.com", b.Token)
		}
	}
}

// TestAIParts: block_class ai-training, ai-search and ai-user split class
// ai by documented purpose; every bot of class ai is in a part.
func TestAIParts(t *testing.T) {
	c := newTestClassifier(t)
	for ua, want := range map[string]AIParts{
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)":                         AITraining,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)":                        AITraining,
		"CCBot/2.0 (https://commoncrawl.org/faq/)":                                                                                       AITraining,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot":               AISearch,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)":        AISearch,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot":                      AIUser,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)":    AIUser,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)":                    AIUser,
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)":                                                       0,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; SomeNewAIBot/1.0; +https://example.com/bot) ChatGPT-Unknown/0.1": 0,
	} {
		if got := c.Classify(ua).AIParts(); got != want {
			t.Errorf("%s: parts %v, want %v", ua, got, want)
		}
	}
	if got := (Result{Class: AI}).AIParts(); got != AITraining {
		t.Errorf("an unknown signed agent: %v, want ai-training", got)
	}
	for _, b := range DefaultBots() {
		if b.Class == AI && b.AIParts() == 0 {
			t.Errorf("%s: in no part of class ai", b.Token)
		}
	}
	for _, name := range []string{"ai-training", "ai-search", "ai-user"} {
		p, err := ParseAIPart(name)
		if err != nil || p.String() != name {
			t.Errorf("ParseAIPart(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := ParseAIPart("ai-everything"); err == nil {
		t.Error("ParseAIPart accepts an unknown part")
	}
}

// TestShutout: what each block_class entry covers, for the served
// robots.txt: "ai" is every part, and the parts cover what they say.
func TestShutout(t *testing.T) {
	c := newTestClassifier(t)
	all := c.Shutout("ai")
	training, search, user := c.Shutout("ai-training"), c.Shutout("ai-search"), c.Shutout("ai-user")
	// Every real product token of the class (issue 26: the served file
	// names no "the", "spider", "operator" or "cursor").
	real := slices.DeleteFunc(slices.Clone(c.Tokens(AI)), func(tok string) bool { return everydayTokens[tok] })
	if !slices.Equal(all.Tokens, real) {
		t.Errorf("ai covers %d tokens, class ai has %d real ones", len(all.Tokens), len(real))
	}
	for _, word := range []string{"the", "spider", "operator", "cursor"} {
		if slices.Contains(c.Tokens(AI), word) && slices.Contains(all.Tokens, word) {
			t.Errorf("ai names %q", word)
		}
	}
	if !slices.Contains(c.Tokens(AI), "the") {
		t.Error(`the database has no "the" any more: pick another everyday token for this test`)
	}
	for _, tok := range all.Tokens {
		if !slices.Contains(training.Tokens, tok) && !slices.Contains(search.Tokens, tok) && !slices.Contains(user.Tokens, tok) {
			t.Errorf("%s: in ai, in no part", tok)
		}
	}
	for _, c := range []struct {
		s       Shutout
		in, out []string
		noteHas string
	}{
		{training, []string{"gptbot", "claudebot", "ccbot"}, []string{"oai-searchbot", "chatgpt-user", "perplexity-user"}, "are served"},
		{search, []string{"oai-searchbot", "perplexitybot"}, []string{"gptbot", "chatgpt-user"}, "AI search"},
		{user, []string{"chatgpt-user", "perplexity-user", "claude-user"}, []string{"gptbot", "oai-searchbot"}, "a person's request"},
		{all, []string{"gptbot", "oai-searchbot", "chatgpt-user"}, []string{"googlebot"}, "block_class ai-training"},
	} {
		for _, tok := range c.in {
			if !slices.Contains(c.s.Tokens, tok) {
				t.Errorf("%s lacks %s", c.s.Name, tok)
			}
		}
		for _, tok := range c.out {
			if slices.Contains(c.s.Tokens, tok) {
				t.Errorf("%s covers %s", c.s.Name, tok)
			}
		}
		if !strings.Contains(c.s.Note, c.noteHas) {
			t.Errorf("%s: note %q lacks %q", c.s.Name, c.s.Note, c.noteHas)
		}
	}
	if s := c.Shutout("seo"); len(s.Tokens) == 0 || !slices.Contains(s.Tokens, "ahrefsbot") {
		t.Errorf("seo: %v", s)
	}
	if s := c.Shutout("nonsense"); s.Name != "" || s.Tokens != nil {
		t.Errorf("unknown name: %+v", s)
	}
}
