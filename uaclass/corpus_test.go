package uaclass

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The corpora of testdata/corpus (sources and licences in
// testdata/corpus/NOTICE.md) measure the classifier on real User-Agent
// strings. They are split by source: the "tune" sources are the ones the
// classifier's browser and bot knowledge was checked against while it was
// written; the "held-out" sources (isbot's fixtures and Crawler-Detect's
// category lists) were only measured, before and after, never tuned on.

// corpusKind is what a corpus line is known to be.
type corpusKind uint8

const (
	kindBrowser corpusKind = iota // a person's web browser or in-app webview
	kindHuman                     // a person's app that is no browser (media players, mail clients)
	kindBot                       // a crawler, fetcher, monitor, tool or library
)

type corpusEntry struct {
	ua     string
	source string
	split  string // "tune" or "held-out"
	kind   corpusKind
	class  Class // for labelled bots: the expected class; Unknown when not labelled
}

// browserLooking reports whether a line of a source that lists people's
// clients is a browser (rather than an app's HTTP stack): it carries the
// Mozilla or Opera product or a mobile browser's product.
func browserLooking(ua string) bool {
	for _, m := range []string{"Mozilla", "Opera", "UCWEB", "UCBrowser", "UC Browser", "MQQBrowser", "NetFront", "UP.Browser", "Obigo", "Dolfin", "Lynx", "Links", "ELinks", "NCSA_Mosaic", "IBrowse", "AmigaVoyager", "Amiga-AWeb", "AppleWebKit", "Profile/MIDP", "DoCoMo", "KDDI", "SoftBank", "Vodafone", "WILLCOM", "DDIPOCKET", "BlackBerry"} {
		if strings.Contains(ua, m) {
			return true
		}
	}
	return false
}

func readLines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "# ") || l == "#" {
			continue
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// yamlSections reads the "Name:\n  - ua\n" files of isbot's fixtures.
func yamlSections(t testing.TB, path string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	section := ""
	for _, l := range readLines(t, path) {
		if strings.HasPrefix(l, "  - ") {
			out[section] = append(out[section], unquoteYAML(strings.TrimPrefix(l, "  - ")))
			continue
		}
		section = unquoteYAML(strings.TrimSuffix(l, ":"))
	}
	return out
}

func unquoteYAML(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// woothee reads the targets and categories of woothee's test sets.
func woothee(t testing.TB, path string) (targets, categories []string) {
	t.Helper()
	for _, l := range readLines(t, path) {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "- target: "):
			targets = append(targets, strings.ReplaceAll(unquoteYAML(strings.TrimPrefix(l, "- target: ")), "''", "'"))
			categories = append(categories, "")
		case strings.HasPrefix(l, "category: ") && len(categories) > 0:
			categories[len(categories)-1] = strings.TrimPrefix(l, "category: ")
		}
	}
	return targets, categories
}

// isbotNotRobots are sections of isbot's crawler fixtures that are people's
// browsers or apps, or junk, rather than robots.
var isbotNotRobots = map[string]bool{
	"Alipay":       true, // the Alipay app's in-app browser
	"Naver Search": true, // the Naver app's in-app browser
	"Var":          true, // browsers behind an anonymising prefix
	"ZZZ Glitches and Errornous User Agent Strings": true,
}

// crawlerDetectClass maps Crawler-Detect's category lists to classes.
var crawlerDetectClass = map[string]Class{
	"search": Search, "ai-search": AI, "ai-training": AI, "ai-user": AI,
	"seo": SEO, "social": Social, "monitoring": Monitor, "feed": Monitor,
	"http-library": Script,
}

// labelFixes correct the labels of tune sources where the source is wrong
// about what a string is: woothee and mssola/useragent list some robots,
// headless browsers and apps among browsers.
var labelFixes = map[string]corpusKind{
	"Mozilla/5.0 (Windows; U; Windows NT 6.0; en-US; aggregator VocusBot 0.4; +http://www.vocus.com/vnhs.html)":                                      kindBot,   // a news aggregator
	"Mozilla/5.0 (compatible; livedoor-Mobile-Gateway/0.02; +http://p.m.livedoor.com/help.html)":                                                     kindBot,   // a transcoding gateway
	"Girls/2.0 (livedoor Co.,Ltd.; Peachy 2.1; iPhone; RSS Version 2.0; +http://girls.livedoor.com/)":                                                kindBot,   // an RSS service
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko, Foregenix) Chrome/91.0.4472.77 Safari/537.36":                  kindBot,   // a security scanner
	"Mozilla/5.0 (en-us) AppleWebKit/525.13 (KHTML, like Gecko; Google Web Preview) Version/3.1 Safari/525.13":                                       kindBot,   // a preview fetcher
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_6_8) AppleWebKit/534.50 (KHTML, like Gecko) Version/5.1 Instapaper/4.0 (+http://www.instapaper.com/)": kindBot,   // a read-later fetcher
	"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/602.1 (KHTML, like Gecko) splash Version/10.0 Safari/602.1":                                         kindBot,   // Splash, a headless renderer
	"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/602.1 (KHTML, like Gecko) splash Version/9.0 Safari/602.1":                                          kindBot,   // Splash, a headless renderer
	"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/92.0.4515.107 Safari/537.36":                              kindBot,   // headless Chrome
	"Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1":                                         kindBot,   // PhantomJS
	"Dalvik/1.4.0 (Linux; U; Android 2.3.4; SBM009SH Build/S0008)":                                                                                   kindHuman, // an app's HTTP stack
	"LDNReader/2.0.1 (Android)":                   kindHuman, // an app
	"Blogos/1.13 CFNetwork/548.0.4 Darwin/11.0.0": kindHuman, // an app
	"Mozilla/4.0 (compatible)":                    kindHuman, // no browser named
	"Mozilla/5.0":                                 kindHuman, // no browser named
}

// droppedPatterns are the crawler-user-agents patterns the curated file
// drops (an empty phrase list) because their examples are people's
// browsers.
func droppedPatterns(t testing.TB) map[string]bool {
	t.Helper()
	data, err := os.ReadFile("internal/botsgen/curated.json")
	if err != nil {
		t.Fatal(err)
	}
	var cur struct {
		Phrases map[string][]string `json:"phrases"`
	}
	if err := json.Unmarshal(data, &cur); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for p, list := range cur.Phrases {
		if len(list) == 0 {
			out[p] = true
		}
	}
	return out
}

// loadCorpus reads every corpus of testdata/corpus plus the project's own
// browser list and the example strings of crawler-user-agents.
func loadCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	var out []corpusEntry
	add := func(source, split string, kind corpusKind, class Class, uas ...string) {
		for _, ua := range uas {
			k := kind
			if fix, ok := labelFixes[ua]; ok && split == "tune" && class == Unknown {
				k = fix
			}
			out = append(out, corpusEntry{ua: ua, source: source, split: split, kind: k, class: class})
		}
	}
	dir := "testdata/corpus/"
	add("intoli", "tune", kindBrowser, Unknown, readLines(t, dir+"intoli-browsers.txt")...)
	add("browserstack", "tune", kindBrowser, Unknown, readLines(t, dir+"browserstack-browsers.txt")...)
	add("robotsguard", "tune", kindBrowser, Unknown, browserCorpus(t)...)
	for _, l := range readLines(t, dir+"mssola-useragent.tsv") {
		label, ua, _ := strings.Cut(l, "\t")
		switch {
		case label == "bot":
			add("mssola", "tune", kindBot, Unknown, ua)
		case browserLooking(ua):
			add("mssola", "tune", kindBrowser, Unknown, ua)
		default:
			add("mssola", "tune", kindHuman, Unknown, ua)
		}
	}
	files, _ := filepath.Glob(dir + "woothee/*.yaml")
	for _, f := range files {
		targets, cats := woothee(t, f)
		for i, ua := range targets {
			switch cats[i] {
			case "pc", "smartphone", "mobilephone", "appliance":
				add("woothee", "tune", kindBrowser, Unknown, ua)
			case "crawler", "misc":
				add("woothee", "tune", kindBot, Unknown, ua)
			}
		}
	}
	var crawlers []struct {
		Pattern   string   `json:"pattern"`
		Instances []string `json:"instances"`
	}
	readShared(t, "crawler-user-agents.json", &crawlers)
	dropped := droppedPatterns(t)
	for _, c := range crawlers {
		if !dropped[c.Pattern] {
			add("crawler-user-agents", "tune", kindBot, Unknown, c.Instances...)
		}
	}

	for name, uas := range yamlSections(t, dir+"isbot-browsers.yml") {
		if strings.HasPrefix(name, "ZZZ") {
			continue // junk, attacks and bots the fixture itself flags
		}
		for _, ua := range uas {
			if browserLooking(ua) {
				add("isbot", "held-out", kindBrowser, Unknown, ua)
			} else {
				add("isbot", "held-out", kindHuman, Unknown, ua)
			}
		}
	}
	for name, uas := range yamlSections(t, dir+"isbot-crawlers.yml") {
		if !isbotNotRobots[name] {
			add("isbot", "held-out", kindBot, Unknown, uas...)
		}
	}
	for cat, class := range crawlerDetectClass {
		add("crawler-detect", "held-out", kindBot, class, readLines(t, dir+"crawlerdetect/"+cat+".txt")...)
	}
	return out
}

// corpusFigures are the measurements of one split of the corpus.
type corpusFigures struct {
	browsers, browserOK, browserLikeOnly, browserNamedBot, browserOtherBot int
	humans, humanNamedBot                                                  int
	bots, botAsBrowser, botBrowserLimits                                   int
	labelled, classExact                                                   int
	tokenWanted, tokenFound                                                int
	misses                                                                 map[string][]string
}

func (f *corpusFigures) miss(what, ua string) {
	if f.misses == nil {
		f.misses = map[string][]string{}
	}
	f.misses[what] = append(f.misses[what], ua)
}

// namedBot reports whether r is a database entry's robot class.
func namedBot(r Result) bool {
	return r.Bot != nil && r.Class != Browser && r.Class != Script
}

// tokenInUA reports whether the result's first token is the client's own
// name as written in the User-Agent.
func tokenInUA(r Result, ua string) bool {
	tok := r.Token()
	return tok != "" && strings.Contains(strings.ToLower(ua), tok)
}

func measure(c *Classifier, entries []corpusEntry) map[string]*corpusFigures {
	figs := map[string]*corpusFigures{}
	for _, e := range entries {
		f := figs[e.split]
		if f == nil {
			f = &corpusFigures{}
			figs[e.split] = f
		}
		r := c.Classify(e.ua)
		switch e.kind {
		case kindBrowser:
			f.browsers++
			switch {
			case r.Class == Browser:
				f.browserOK++
			case namedBot(r):
				f.browserNamedBot++
				f.miss("browser called a named bot", fmt.Sprintf("%s %q  %s", r.Class, r.Tokens, e.ua))
			case r.Class == OtherBot:
				f.browserOtherBot++
				f.miss("browser called a bot", fmt.Sprintf("%q  %s", r.Tokens, e.ua))
			case browserLike(r):
				f.browserLikeOnly++
				f.miss("browser given browser limits only", fmt.Sprintf("%s  %s", r.Class, e.ua))
			default:
				f.miss("browser called "+r.Class.String(), fmt.Sprintf("%q  %s", r.Tokens, e.ua))
			}
		case kindHuman:
			f.humans++
			if namedBot(r) || r.Class == OtherBot {
				f.humanNamedBot++
				f.miss("person's app called a bot", fmt.Sprintf("%s %q  %s", r.Class, r.Tokens, e.ua))
			}
		case kindBot:
			f.bots++
			if r.Class == Browser {
				f.botAsBrowser++
				f.miss("bot called a browser", e.ua)
			} else if browserLike(r) {
				f.botBrowserLimits++
				f.miss("bot given browser limits", e.ua)
			}
			if e.class != Unknown {
				f.labelled++
				if r.Class == e.class {
					f.classExact++
				} else {
					f.miss("wrong class", fmt.Sprintf("%s, want %s  %s", r.Class, e.class, e.ua))
				}
				f.tokenWanted++
				if tokenInUA(r, e.ua) {
					f.tokenFound++
				} else {
					f.miss("token not found", fmt.Sprintf("%q  %s", r.Tokens, e.ua))
				}
			}
		}
	}
	return figs
}

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(n)/float64(d))
}

func (f *corpusFigures) String() string {
	return fmt.Sprintf("browsers %d: browser %d (%s), browser limits only %d, named bot %d, other bot %d; "+
		"people's apps %d: called a bot %d; bots %d: called browser %d (%s), given browser limits %d; "+
		"labelled bots %d: exact class %d (%s), own token found %d (%s)",
		f.browsers, f.browserOK, pct(f.browserOK, f.browsers), f.browserLikeOnly, f.browserNamedBot, f.browserOtherBot,
		f.humans, f.humanNamedBot, f.bots, f.botAsBrowser, pct(f.botAsBrowser, f.bots), f.botBrowserLimits,
		f.labelled, f.classExact, pct(f.classExact, f.labelled), f.tokenFound, pct(f.tokenFound, f.tokenWanted))
}

// TestCorpusFigures holds the classifier to the bar on real strings: no
// browser or person's app is ever called a bot, at least 99% of browsers
// are browsers, at most 2% of bots are browsers. It logs the figures per
// split; -v shows them, UACLASS_CORPUS_MISSES=1 lists the misses.
func TestCorpusFigures(t *testing.T) {
	entries := loadCorpus(t)
	figs := measure(newTestClassifier(t), entries)
	all := &corpusFigures{}
	for _, split := range []string{"tune", "held-out"} {
		f := figs[split]
		if f == nil {
			t.Fatalf("no %s entries", split)
		}
		t.Logf("%s: %v", split, f)
		all.browsers += f.browsers
		all.browserOK += f.browserOK
		all.browserNamedBot += f.browserNamedBot
		all.browserOtherBot += f.browserOtherBot
		all.humans += f.humans
		all.humanNamedBot += f.humanNamedBot
		all.bots += f.bots
		all.botAsBrowser += f.botAsBrowser
		if os.Getenv("UACLASS_CORPUS_MISSES") != "" {
			kinds := make([]string, 0, len(f.misses))
			for k := range f.misses {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			for _, k := range kinds {
				for _, m := range f.misses[k] {
					t.Logf("%s: %s: %s", split, k, m)
				}
			}
		}
	}
	if all.browsers < 10000 {
		t.Errorf("browser corpus has %d strings, want at least 10,000", all.browsers)
	}
	if all.browserNamedBot+all.browserOtherBot != 0 {
		t.Errorf("%d browsers called a bot, want 0", all.browserNamedBot+all.browserOtherBot)
	}
	if all.humanNamedBot != 0 {
		t.Errorf("%d people's apps called a bot, want 0", all.humanNamedBot)
	}
	if 100*all.browserOK < 99*all.browsers {
		t.Errorf("%d of %d browsers called browsers (%s), want at least 99%%", all.browserOK, all.browsers, pct(all.browserOK, all.browsers))
	}
	if 100*all.botAsBrowser > 2*all.bots {
		t.Errorf("%d of %d bots called browsers (%s), want at most 2%%", all.botAsBrowser, all.bots, pct(all.botAsBrowser, all.bots))
	}
}

// browserLike reports whether r gets a browser's limits.
func browserLike(r Result) bool { return r.BrowserLike }
