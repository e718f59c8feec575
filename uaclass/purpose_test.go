package uaclass

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/robotsguard/robotsguard/policy"
)

// The purposes the issue names, on real User-Agent strings.
func TestPurposesOfMajorBots(t *testing.T) {
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ua   string
		want Purposes
	}{
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", PurposeTrainAI},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot", PurposeSearch},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot", PurposeUserTriggered},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", PurposeTrainAI},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)", PurposeUserTriggered},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)", PurposeSearch},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", PurposeSearch},
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", PurposeSearch},
		{"CCBot/2.0 (https://commoncrawl.org/faq/)", PurposeTrainAI},
		{"Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)", PurposeTrainAI},
		{"meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)", PurposeTrainAI},
		{"Scrapy/2.8.0 (+https://scrapy.org)", 0},
		{"curl/8.5.0", 0},
		{"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", 0},
		{"SomeUnknownBot/1.0 (+https://example.com/bot)", 0},
	} {
		r := c.Classify(tc.ua)
		if got := r.Purposes(); got != tc.want {
			t.Errorf("%s: %v (%s), want %v", tc.ua, got, r.Token(), tc.want)
		}
	}
}

// The embedded table: every purpose cites its source, vendors by their
// documentation's URL and the fallback by ai.robots.txt's function field;
// user-triggered fetchers and the user-triggered purpose agree; the
// robots.txt-only tokens are in it.
func TestPurposeTable(t *testing.T) {
	vendor, fallback := 0, 0
	for _, b := range DefaultBots() {
		switch {
		case b.Purposes != 0 && b.PurposeSource == "":
			t.Errorf("%s: purposes %v without a source", b.Token, b.Purposes)
		case strings.HasPrefix(b.PurposeSource, "https://"):
			vendor++
		case strings.HasPrefix(b.PurposeSource, "ai.robots.txt (MIT), function of "):
			fallback++
		case b.PurposeSource != "":
			t.Errorf("%s: source %q is neither a vendor URL nor ai.robots.txt", b.Token, b.PurposeSource)
		}
		if b.UserTriggered != (b.Purposes&PurposeUserTriggered != 0) {
			t.Errorf("%s: user_triggered %v, purposes %v", b.Token, b.UserTriggered, b.Purposes)
		}
	}
	var table struct {
		Vendors []struct {
			Token string `json:"token"`
		} `json:"vendors"`
	}
	data, err := os.ReadFile("internal/botsgen/purposes.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &table); err != nil {
		t.Fatal(err)
	}
	if vendor != len(table.Vendors) {
		t.Errorf("%d bots cite a vendor, the table has %d vendor entries", vendor, len(table.Vendors))
	}
	t.Logf("purposes: %d vendor entries, %d bots from ai.robots.txt's function field", vendor, fallback)
	if fallback < 50 {
		t.Errorf("only %d bots from the fallback", fallback)
	}
	byToken := map[string]Bot{}
	for _, b := range DefaultBots() {
		byToken[b.Token] = b
	}
	for tok, want := range map[string]Purposes{
		"google-extended":   PurposeTrainAI | PurposeAIInput,
		"applebot-extended": PurposeTrainAI,
		"gptbot":            PurposeTrainAI,
		"oai-searchbot":     PurposeSearch,
		"chatgpt-user":      PurposeUserTriggered,
	} {
		if got := byToken[tok].Purposes; got != want {
			t.Errorf("%s: %v, want %v", tok, got, want)
		}
	}
}

// Which refused categories refuse which purposes.
func TestPurposeUsage(t *testing.T) {
	for p, want := range map[Purposes]policy.Usage{
		0:                                     0,
		PurposeTrainAI:                        policy.UsageTrainAI,
		PurposeSearch:                         policy.UsageSearch,
		PurposeAIInput:                        policy.UsageAIInput,
		PurposeUserTriggered:                  policy.UsageAIInput,
		PurposeSearch | PurposeTrainAI:        policy.UsageSearch | policy.UsageTrainAI,
		PurposeAIInput | PurposeUserTriggered: policy.UsageAIInput,
	} {
		if got := p.Usage(); got != want {
			t.Errorf("%v: %v, want %v", p, got, want)
		}
	}
}

func TestPurposesJSON(t *testing.T) {
	var b Bot
	if err := json.Unmarshal([]byte(`{"token":"x","match":["x"],"purposes":["search","train-ai"]}`), &b); err != nil || b.Purposes != PurposeSearch|PurposeTrainAI {
		t.Fatalf("%v %v", b.Purposes, err)
	}
	out, _ := json.Marshal(b.Purposes)
	if string(out) != `["train-ai","search"]` {
		t.Errorf("marshal: %s", out)
	}
	if err := json.Unmarshal([]byte(`{"purposes":["training"]}`), &b); err == nil || !strings.Contains(err.Error(), "unknown purpose") {
		t.Errorf("unknown purpose: %v", err)
	}
	if Purposes(0).String() != "none" || (PurposeAIInput|PurposeUserTriggered).String() != "ai-input,user-triggered" {
		t.Error("String")
	}
}
