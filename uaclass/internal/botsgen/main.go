// Command botsgen builds uaclass/bots.json, the embedded bot database, from
// the public User-Agent lists in internal/botsgen/data and the project's
// curated additions:
//
//   - crawler-user-agents.json from monperrus/crawler-user-agents (MIT):
//     patterns, tags and example strings of 1,500 crawlers and clients;
//   - robots.json from ai-robots-txt/ai.robots.txt (MIT): the robots.txt
//     tokens and operators of AI crawlers and fetchers;
//   - curated.json beside this file: the classes of the tags, phrases for the
//     patterns that are real regular expressions (an empty list drops a
//     pattern whose examples are people's browsers, such as an Android build
//     ID; "^" and "$" anchor a phrase at the start and end of the
//     User-Agent), tokens, parents and verification methods of the major
//     crawlers, user-triggered fetchers, operators' classes (health checks
//     are monitors), feed readers and renderers beyond the lists' own
//     feed-reader tag, and the bad-bot list;
//   - purposes.json beside this file: what each bot does with what it
//     fetches (train-ai, search, ai-input, user-triggered), from the
//     vendors' documentation (each entry cites its source), with
//     ai.robots.txt's "function" field, mapped one exact text at a time,
//     as an attributed fallback.
//
// Run it through go generate in the uaclass folder.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// bot is a database entry; the generator fills in and writes uaclass.Bot
// values, which read and write their class by name.
type bot = uaclass.Bot

type curated struct {
	TagClass      map[string]string   `json:"tag_class"`
	TagPriority   []string            `json:"tag_priority"`
	Phrases       map[string][]string `json:"phrases"`
	AIClass       map[string]string   `json:"ai_class"`
	TokenOnly     []string            `json:"token_only"`
	UserTriggered []string            `json:"user_triggered"`
	Bots          []bot               `json:"bots"`
}

// purposeTable is purposes.json.
type purposeTable struct {
	Vendors []struct {
		Token    string           `json:"token"`
		Purposes uaclass.Purposes `json:"purposes"`
		Source   string           `json:"source"`
		Says     string           `json:"says"`
	} `json:"vendors"`
	FunctionFallback map[string]uaclass.Purposes `json:"function_fallback"`
}

type crawlerEntry struct {
	Pattern     string   `json:"pattern"`
	Instances   []string `json:"instances"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
}

type aiEntry struct {
	Operator    string `json:"operator"`
	Function    string `json:"function"`
	Description string `json:"description"`
}

func main() {
	data := flag.String("data", "internal/botsgen/data", "folder with crawler-user-agents.json and robots.json")
	curatedPath := flag.String("curated", "internal/botsgen/curated.json", "curated additions")
	purposesPath := flag.String("purposes", "internal/botsgen/purposes.json", "purposes of the bots")
	out := flag.String("out", "bots.json", "output file")
	flag.Parse()

	var cur curated
	readJSON(*curatedPath, &cur)
	var crawlers []crawlerEntry
	readJSON(filepath.Join(*data, "crawler-user-agents.json"), &crawlers)
	var ai map[string]aiEntry
	readJSON(filepath.Join(*data, "robots.json"), &ai)
	var purposes purposeTable
	readJSON(*purposesPath, &purposes)
	fallback := map[string]fallbackPurpose{} // by token

	db := newDB()
	for _, c := range crawlers {
		phrases, ok := cur.Phrases[c.Pattern]
		if !ok {
			p, err := simplePhrase(c.Pattern)
			if err != nil {
				log.Fatalf("pattern %q: %v; add it to the phrases of %s", c.Pattern, err, *curatedPath)
			}
			phrases = []string{p}
		}
		class := mustClass(classOfTags(cur, c.Tags))
		for _, p := range phrases {
			db.add(bot{Token: tokenOf(p), Match: []string{p}, Class: class, Name: nameOf(p), Source: "crawler-user-agents",
				FeedReader: slices.Contains(c.Tags, "feed-reader")}, false)
		}
	}
	keys := make([]string, 0, len(ai))
	for k := range ai {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := ai[k]
		class := uaclass.AI
		if c, ok := cur.AIClass[k]; ok {
			class = mustClass(c)
		}
		phrase := k
		if slices.Contains(cur.TokenOnly, k) {
			phrase = k + "/"
		}
		db.add(bot{
			Token: tokenOf(k), Match: []string{phrase}, Class: class, Name: k,
			Operator: plainOperator(e.Operator), UserTriggered: slices.Contains(cur.UserTriggered, k),
			Source: "ai.robots.txt",
		}, true)
		if p, ok := purposes.FunctionFallback[e.Function]; ok {
			f := fallback[tokenOf(k)]
			if f.source == "" {
				f.source = fmt.Sprintf("ai.robots.txt (MIT), function of %q: %q", k, e.Function)
			}
			f.purposes |= p
			fallback[tokenOf(k)] = f
		}
	}
	for _, b := range cur.Bots {
		if b.Source == "" {
			b.Source = "robotsguard"
		}
		db.override(b)
	}
	bots := db.finish()
	applyPurposes(bots, purposes, fallback)
	for i := range bots {
		// A pattern tagged feed-reader that shares its token with a crawler
		// of another class (mail.ru's) makes no feed reader of it.
		bots[i].FeedReader = bots[i].FeedReader && bots[i].Class == uaclass.Monitor
	}

	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i, b := range bots {
		line, err := json.Marshal(b)
		if err != nil {
			log.Fatal(err)
		}
		buf.Write(line)
		if i < len(bots)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("]\n")
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("botsgen: wrote %d bots to %s\n", len(bots), *out)
}

// fallbackPurpose is what ai.robots.txt's function fields say of a token.
type fallbackPurpose struct {
	purposes uaclass.Purposes
	source   string
}

// applyPurposes sets each bot's purposes: the vendor table's entry for its
// token, else the function fallback; a user-triggered fetcher has
// PurposeUserTriggered, and a vendor entry that says user-triggered makes
// the bot one. A vendor entry for a token the database lacks is an error.
func applyPurposes(bots []bot, t purposeTable, fallback map[string]fallbackPurpose) {
	byToken := map[string]*bot{}
	for i := range bots {
		byToken[bots[i].Token] = &bots[i]
	}
	vendor := map[string]bool{}
	for _, v := range t.Vendors {
		b := byToken[v.Token]
		if b == nil || vendor[v.Token] || v.Source == "" || v.Says == "" {
			log.Fatalf("purposes: vendor entry %q: unknown or repeated token, or no source or says", v.Token)
		}
		vendor[v.Token] = true
		b.Purposes, b.PurposeSource = v.Purposes, v.Source
		if v.Purposes&uaclass.PurposeUserTriggered != 0 {
			b.UserTriggered = true
		}
	}
	for i := range bots {
		b := &bots[i]
		if f, ok := fallback[b.Token]; ok && !vendor[b.Token] {
			b.Purposes, b.PurposeSource = f.purposes, f.source
		}
		if b.UserTriggered {
			b.Purposes |= uaclass.PurposeUserTriggered
		}
	}
}

func mustClass(name string) uaclass.Class {
	c, err := uaclass.ParseClass(name)
	if err != nil {
		log.Fatal(err)
	}
	return c
}

func readJSON(path string, v any) {
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
}

// simplePhrase turns a pattern that is a plain string with escapes into a
// phrase: "Googlebot\/" is "Googlebot/". A leading '^' is kept (it anchors
// the phrase); a trailing '$' is dropped, since phrases end at a word
// boundary anyway.
func simplePhrase(pattern string) (string, error) {
	p := strings.TrimSuffix(pattern, "$")
	anchored := strings.HasPrefix(p, "^")
	p = strings.TrimPrefix(p, "^")
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p) && strings.IndexByte(`/.- !()+`, p[i+1]) >= 0:
			b.WriteByte(p[i+1])
			i++
		case strings.IndexByte(`\[](){}|*+?$^`, c) >= 0:
			return "", fmt.Errorf("regular expression syntax %q", c)
		default:
			b.WriteByte(c)
		}
	}
	s := strings.TrimLeft(b.String(), " ;")
	if s == "" || !regexp.MustCompile(`[A-Za-z0-9]`).MatchString(s) {
		return "", fmt.Errorf("no letters")
	}
	if anchored {
		s = "^" + s
	}
	return s, nil
}

// tokenOf returns the robots.txt product token a phrase names: the product
// token that starts at its first letter or digit.
func tokenOf(phrase string) string {
	i := strings.IndexFunc(phrase, func(r rune) bool {
		return r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	if i < 0 {
		return ""
	}
	return policy.ProductToken(phrase[i:])
}

func nameOf(phrase string) string {
	return strings.TrimRight(strings.TrimPrefix(phrase, "^"), "/")
}

func classOfTags(cur curated, tags []string) string {
	for _, want := range cur.TagPriority {
		if slices.Contains(tags, want) {
			return cur.TagClass[want]
		}
	}
	if len(tags) > 0 {
		if c, ok := cur.TagClass[tags[0]]; ok {
			return c
		}
	}
	return "bot"
}

var markdownLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// plainOperator strips Markdown links and filler from an operator field.
func plainOperator(s string) string {
	s = strings.TrimSpace(markdownLink.ReplaceAllString(s, "$1"))
	if strings.HasPrefix(s, "Unclear") || strings.HasPrefix(s, "Unknown") {
		return ""
	}
	return s
}

type db struct {
	byToken map[string]*bot
	order   []string
}

func newDB() *db { return &db{byToken: map[string]*bot{}} }

// add merges b into the entry with the same token. With authoritative set,
// b's class, name and operator replace the entry's.
func (d *db) add(b bot, authoritative bool) {
	if b.Token == "" {
		log.Fatalf("no token for %+v", b)
	}
	e, ok := d.entry(b)
	if !ok {
		return
	}
	e.FeedReader = e.FeedReader || b.FeedReader
	if authoritative {
		e.Class, e.Name, e.Source = b.Class, b.Name, b.Source
		if b.Operator != "" {
			e.Operator = b.Operator
		}
		e.UserTriggered = e.UserTriggered || b.UserTriggered
	}
}

// entry returns the existing entry for b's token with b's match phrases
// added, and true; or it stores b as a new entry and returns false.
func (d *db) entry(b bot) (*bot, bool) {
	e, ok := d.byToken[b.Token]
	if !ok {
		d.byToken[b.Token] = &b
		d.order = append(d.order, b.Token)
		return nil, false
	}
	for _, m := range b.Match {
		if !containsFold(e.Match, m) {
			e.Match = append(e.Match, m)
		}
	}
	return e, true
}

// override applies a curated entry: every field it sets wins, and its match
// phrases are added to the entry's.
func (d *db) override(b bot) {
	e, ok := d.entry(b)
	if !ok {
		return
	}
	if b.Class != uaclass.Unknown {
		e.Class = b.Class
	}
	if b.Name != "" {
		e.Name = b.Name
	}
	if b.Operator != "" {
		e.Operator = b.Operator
	}
	if b.Verify != "" {
		e.Verify, e.Domains = b.Verify, b.Domains
	}
	if len(b.Parents) > 0 {
		e.Parents = b.Parents
	}
	if len(b.Ranges) > 0 {
		e.Ranges, e.RangesDoc = b.Ranges, b.RangesDoc
	}
	if b.UserTriggered {
		e.UserTriggered = true
	}
	e.FeedReader = e.FeedReader || b.FeedReader
	e.Renders = e.Renders || b.Renders
	e.Source = b.Source
}

// finish gives each phrase to one entry only (the curated or last one),
// drops entries left without phrases and sorts by token.
func (d *db) finish() []bot {
	owner := map[string]string{}
	rank := func(b *bot) int {
		switch b.Source {
		case "robotsguard":
			return 2
		case "ai.robots.txt":
			return 1
		}
		return 0
	}
	for _, t := range d.order {
		b := d.byToken[t]
		for _, m := range b.Match {
			k := strings.ToLower(m)
			if prev, ok := owner[k]; !ok || rank(b) >= rank(d.byToken[prev]) {
				owner[k] = t
			}
		}
	}
	var out []bot
	for _, t := range d.order {
		b := d.byToken[t]
		var keep []string
		for _, m := range b.Match {
			if owner[strings.ToLower(m)] == t && !containsFold(keep, m) {
				keep = append(keep, m)
			}
		}
		if len(keep) == 0 {
			continue
		}
		b.Match = keep
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Token < out[j].Token })
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
