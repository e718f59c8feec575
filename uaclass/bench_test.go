package uaclass

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"unsafe"
)

// benchMix is a realistic request mix: mostly browsers, then crawlers,
// scripts and the odd unknown bot.
func benchMix(b *testing.B) []string {
	corpus := browserCorpus(b)
	mix := append([]string(nil), corpus[:60]...)
	mix = append(mix,
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
		"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
		"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
		"curl/8.5.0", "python-requests/2.31.0", "Go-http-client/1.1",
		"Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)",
	)
	return mix
}

// regexpMatcher is what most existing configurations do: one regular
// expression per bot, tried in turn.
type regexpMatcher []*regexp.Regexp

func newRegexpMatcher(b *testing.B) regexpMatcher {
	var crawlers []struct {
		Pattern string `json:"pattern"`
	}
	readShared(b, "crawler-user-agents.json", &crawlers)
	var ai map[string]json.RawMessage
	readShared(b, "robots.json", &ai)
	var m regexpMatcher
	for _, c := range crawlers {
		m = append(m, regexp.MustCompile(c.Pattern))
	}
	for name := range ai {
		m = append(m, regexp.MustCompile(regexp.QuoteMeta(name)))
	}
	return m
}

func (m regexpMatcher) match(ua string) int {
	for i, re := range m {
		if re.MatchString(ua) {
			return i
		}
	}
	return -1
}

// BenchmarkClassify measures classification on a realistic mix, cached and
// uncached, against a regexp-per-bot matcher over the same lists.
func BenchmarkClassify(b *testing.B) {
	mix := benchMix(b)
	b.Run("cached", func(b *testing.B) {
		c := newTestClassifier(b)
		for _, ua := range mix {
			c.Classify(ua)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.Classify(mix[i%len(mix)])
			i++
		}
	})
	b.Run("uncached", func(b *testing.B) {
		c, err := New(Options{CacheBytes: -1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.Classify(mix[i%len(mix)])
			i++
		}
	})
	b.Run("uncached-bots-only", func(b *testing.B) {
		c, _ := New(Options{CacheBytes: -1})
		bots := mix[60:]
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.Classify(bots[i%len(bots)])
			i++
		}
	})
	b.Run("regexp-per-bot", func(b *testing.B) {
		m := newRegexpMatcher(b)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			m.match(mix[i%len(mix)])
			i++
		}
	})
}

// BenchmarkClassifyParallel measures the cached path under parallel load.
func BenchmarkClassifyParallel(b *testing.B) {
	mix := benchMix(b)
	c := newTestClassifier(b)
	for _, ua := range mix {
		c.Classify(ua)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Classify(mix[i%len(mix)])
			i++
		}
	})
}

// BenchmarkNew measures building a classifier from the embedded database.
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClassifyHostile measures the worst case: a 64 KiB User-Agent of
// words and separators, which is cut at scanLimit and never cached.
func BenchmarkClassifyHostile(b *testing.B) {
	c := newTestClassifier(b)
	ua := "Mozilla/5.0 (" + strings.Repeat("compatible; a/1; Googlebo ", 64<<10/26) + ")"
	b.ReportAllocs()
	for b.Loop() {
		c.Classify(ua)
	}
}

// BenchmarkClassifyChurn measures a stream of User-Agents never seen before
// through the cache (each is classified, then inserted), as under a flood of
// invented User-Agents.
func BenchmarkClassifyChurn(b *testing.B) {
	uas := make([]string, 200_000)
	for i := range uas {
		uas[i] = fmt.Sprintf("Mozilla/5.0 (compatible; FooBot/%d.%d; +https://example.com/bot)", i/1000, i%1000)
	}
	c := newTestClassifier(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.Classify(uas[i%len(uas)])
		i++
	}
}

// BenchmarkClassifyCorpus measures uncached classification over every
// string of the committed corpus (testdata/corpus), browsers and bots in
// the proportions the corpus has.
func BenchmarkClassifyCorpus(b *testing.B) {
	entries := loadCorpus(b)
	c, err := New(Options{CacheBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.Classify(entries[i%len(entries)].ua)
		i++
	}
}

// BenchmarkVerifyRangesList: a claim checked against a list of 400
// prefixes (about the size of Google's user-triggered fetchers' lists), from
// the last prefix and from outside: by the list's sorted intervals (a
// binary search), and by the alternative, a scan of the prefixes. Both are
// lock-free and allocation-free. list-bytes is what the list in force holds: its prefixes and intervals.
func BenchmarkVerifyRangesList(b *testing.B) {
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf("10.%d.%d.0/24", i/250, i%250))
	}
	l, err := ParseRangeList([]byte(strings.Join(lines, "\n")))
	if err != nil {
		b.Fatal(err)
	}
	held := NewRanges(l)
	listBytes := float64(uintptr(cap(l.Prefixes))*unsafe.Sizeof(netip.Prefix{}) + uintptr(cap(l.spans))*unsafe.Sizeof(span{}))
	c, _ := New(Options{})
	gpt := c.Classify("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot")
	v := NewVerifier(VerifierOptions{Lists: map[string][]*Ranges{"chatgpt-user": {held}}})
	for _, tc := range []struct {
		name string
		ip   netip.Addr
		want Verdict
	}{{"last", netip.MustParseAddr("10.1.149.7"), Verified}, {"outside", netip.MustParseAddr("192.0.2.1"), Impostor}} {
		b.Run("intervals-"+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if v.Verify(context.Background(), tc.ip, gpt) != tc.want {
					b.Fatal("wrong verdict")
				}
			}
			b.ReportMetric(listBytes, "list-bytes")
		})
		b.Run("scan-"+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				found := false
				for _, p := range l.Prefixes {
					if p.Contains(tc.ip) {
						found = true
						break
					}
				}
				if found != (tc.want == Verified) {
					b.Fatal("wrong verdict")
				}
			}
		})
	}
}
