package uaclass

import (
	"sort"
	"strings"
)

// scanLimit bounds how much of a User-Agent is read. Real User-Agents are a
// few hundred bytes; a hostile 64 KiB header costs no more than this.
const scanLimit = 4096

// phraseIndex finds database phrases in a User-Agent in one pass over its
// words: each phrase is filed under its first word, so a scan looks up every
// word of the User-Agent once, whatever the number of phrases, and compares
// only the few phrases that start with that word.
type phraseIndex struct {
	bots    []Bot
	phrases []phrase
	byWord  map[string][]int32 // first word, lower-cased -> phrases, longest first
	numbers bool               // some first word is all digits ("008/")
}

type phrase struct {
	text     string // lower-cased, without the anchor
	pre      int    // bytes before the first word
	anchored bool   // must start the User-Agent
	ends     bool   // must end the User-Agent
	marker   bool   // a URL or mail fragment: matches at any word
	bot      int32
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z'
}

// allDigits reports whether w is all ASCII digits.
func allDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// firstWord returns the first run of ASCII letters and digits in s.
func firstWord(s string) string {
	i := 0
	for i < len(s) && !isAlnum(s[i]) {
		i++
	}
	j := i
	for j < len(s) && isAlnum(s[j]) {
		j++
	}
	return s[i:j]
}

// isMarker reports whether a phrase is a URL or mail fragment or starts
// with punctuation ("yandex.com/bots", "collection@infegy.com",
// "(dbot)"), rather than a product name ("Googlebot", "curl/", "Yahoo!
// Slurp").
func isMarker(text string) bool {
	if text == "" || !isAlnum(text[0]) {
		return true
	}
	body := strings.TrimSuffix(text, "/")
	if strings.ContainsAny(body, "@/:();+#=") {
		return true
	}
	// A domain name: "uptimebot.org", "www.uptime.com", "ggpht.com
	// GoogleImageProxy".
	for k := 0; k < len(body); k++ {
		if body[k] == '.' && domainLabel(body, k) {
			return true
		}
	}
	return false
}

func newPhraseIndex(bots []Bot) *phraseIndex {
	ix := &phraseIndex{bots: bots, byWord: map[string][]int32{}}
	for bi := range bots {
		for _, m := range bots[bi].Match {
			p := phrase{bot: int32(bi)}
			if strings.HasPrefix(m, "^") {
				p.anchored = true
				m = m[1:]
			}
			if len(m) > 1 && strings.HasSuffix(m, "$") {
				p.ends = true
				m = m[:len(m)-1]
			}
			p.text = strings.ToLower(m)
			w := firstWord(p.text)
			p.pre = strings.Index(p.text, w)
			p.marker = isMarker(p.text)
			ix.phrases = append(ix.phrases, p)
			ix.byWord[w] = append(ix.byWord[w], int32(len(ix.phrases)-1))
			ix.numbers = ix.numbers || allDigits(w)
		}
	}
	for w, list := range ix.byWord {
		sort.SliceStable(list, func(a, b int) bool {
			return len(ix.phrases[list[a]].text) > len(ix.phrases[list[b]].text)
		})
		ix.byWord[w] = list
	}
	return ix
}

// A phrase matches only where the User-Agent names a product, never inside
// a build ID, a device model or another product's comment:
//
//   - at the start of the User-Agent (its own leading product);
//   - at the start of a product outside any comment ("... Safari/537.36
//     DareBoost");
//   - at the start of an entry of a comment ("(compatible; Googlebot/2.1;
//     ...)", "(X11; Linux x86_64; Catchpoint)") when the phrase is the
//     whole entry, or is followed by a version ("/2.1", " 1.0", glued
//     "0.5.0"), a hyphenated extension ("AdsBot-Google-Mobile"), or a URL
//     ("GTmetrix https://...");
//   - at the start of the first entry after "compatible;", the product a
//     compatible comment names, or of an entry of a comment after the
//     first, whatever words follow ("compatible; Let's Encrypt validation
//     server", "(ThousandEyes Agent)");
//   - as a domain name's label ("www.deadlinkchecker.com");
//   - as the tail of a hyphenated name at such a place ("zoho-scrapy"),
//     which gives the entry's class but not its tokens.
//
// Marker phrases (URL and mail fragments such as "yandex.com/bots" or
// "collection@infegy.com", or phrases that start with punctuation) match
// wherever they occur as whole words.

// position is where a word of the User-Agent stands.
type position uint8

const (
	posNone   position = iota // inside a product, a version or a build ID
	posLead                   // the start of the User-Agent
	posTop                    // a product outside comments
	posEntry                  // the start of a comment entry
	posCompat                 // the first entry after "compatible;", or an entry of a later comment
	posSuffix                 // a word that continues a hyphenated name: "scrapy" in "zoho-scrapy"
)

// find returns the database entry that lower (a lower-cased User-Agent)
// names, with bot -1 when there is none. When several match, a bad bot wins (a
// harvester does not escape by adding a good name), then a phrase at a
// product position over a marker, then the User-Agent's own leading
// product, then the longest phrase (Googlebot-Image over Googlebot), then
// the first.
func (ix *phraseIndex) find(lower string) match {
	best := match{bot: -1}
	bestRank := 0
	depth, comments := 0, 0
	sep := byte(' ') // the last separator before the current word
	nextCompat := false
	runPos := posNone // the position of the name a hyphenated word continues
	runStart := 0     // and where that name starts
	for i := 0; i < len(lower); {
		c := lower[i]
		if !isAlnum(c) {
			switch c {
			case '(', '[':
				depth++
				if depth == 1 {
					comments++
				}
				sep = '('
				nextCompat = false
			case ')', ']':
				if depth > 0 {
					depth--
				}
				sep = ')'
			case ';', ',':
				sep = c
			case ' ', '\t', '+':
				if depth == 0 {
					sep = ' ' // in a comment, spaces keep the entry's separator
				}
			default:
				sep = c
			}
			i++
			continue
		}
		j := i + 1
		for j < len(lower) && isAlnum(lower[j]) {
			j++
		}
		pos := posNone
		switch {
		case i == 0:
			pos = posLead
		case sep == '-' || sep == '_':
			if runPos != posNone {
				pos = posSuffix
			}
		case depth == 0 && (sep == ' ' || sep == ';' || sep == ',' || sep == ')'):
			pos = posTop
		case depth > 0 && (sep == '(' || sep == ';' || sep == ','):
			pos = posEntry
			if nextCompat || comments > 1 {
				// The product of a compatible comment, or an entry of a
				// comment after the platform's: "(ThousandEyes Agent)".
				pos = posCompat
			}
			nextCompat = lower[i:j] == "compatible" && entryEnds(lower, j)
		}
		if pos != posLead && pos != posSuffix && domainLabel(lower, j) {
			pos = posTop // "www.deadlinkchecker.com", "(compatible; theoldreader.com)"
		}
		if sep != '-' && sep != '_' {
			runPos, runStart = pos, i
		}
		if !ix.numbers && allDigits(lower[i:j]) {
			// A version number names nothing; skip the lookup.
			sep = 0
			i = j
			continue
		}
		cands, ok := ix.byWord[lower[i:j]]
		if !ok {
			// A version glued to the name: "headonlyscraperv2".
			if k := trimVersion(lower[i:j]); k < j-i {
				cands = ix.byWord[lower[i:i+k]]
			}
		}
		for _, pi := range cands {
			p := &ix.phrases[pi]
			start := i - p.pre
			if start < 0 || p.anchored && start != 0 || !strings.HasPrefix(lower[start:], p.text) {
				continue
			}
			end := start + len(p.text)
			if p.ends && end != len(lower) {
				continue
			}
			if isAlnum(p.text[len(p.text)-1]) && end < len(lower) && isAlnum(lower[end]) && !versionSuffix(lower[end:]) {
				continue // the phrase would end inside a longer word
			}
			rank := 1 // a marker, or the tail of a hyphenated name
			at := -1
			switch {
			case p.marker:
			case pos == posNone:
				continue
			case pos == posSuffix:
				// The phrase must end the hyphenated name ("zoho-scrapy",
				// not "HTC_Butterfly_3"), and a name in a comment must be
				// the whole entry.
				if end < len(lower) && (lower[end] == '-' || lower[end] == '_') || runPos == posEntry && !entryRestOK(lower, end) {
					continue
				}
				at = runStart
			case pos == posEntry && !entryRestOK(lower, end):
				continue
			default:
				rank, at = 2, start
				if pos == posLead {
					rank = 3
				}
			}
			if ix.bots[p.bot].Class == Bad {
				rank += 4
			}
			if best.bot < 0 || rank > bestRank || rank == bestRank && len(p.text) > best.n {
				best, bestRank = match{bot: p.bot, at: at, n: len(p.text), suffix: pos == posSuffix && !p.marker}, rank
			}
			break // the rest of the list is shorter
		}
		sep = 0
		i = j
	}
	return best
}

// match is where a phrase matched.
type match struct {
	bot    int32 // the database entry, or -1
	at     int   // where the phrase starts when it stands at a product position (for a suffix, where the name starts), else -1
	n      int   // the phrase's length
	suffix bool  // the phrase ends a hyphenated name ("zoho-scrapy"): not the client's family
}

// domainLabel reports whether the word that ends at j is a domain name's
// label right before its top-level domain: "deadlinkchecker" in
// "www.deadlinkchecker.com".
func domainLabel(s string, j int) bool {
	if j >= len(s) || s[j] != '.' {
		return false
	}
	k := j + 1
	for k < len(s) && 'a' <= s[k] && s[k] <= 'z' {
		k++
	}
	return k-j-1 >= 2 && (k == len(s) || !isAlnum(s[k]) && s[k] != '.')
}

// entryEnds reports whether a comment entry ends at i: only spaces before
// ';', ')' or the end.
func entryEnds(s string, i int) bool {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i == len(s) || s[i] == ';' || s[i] == ')' || s[i] == ','
}

// urlFollows reports whether s starts with a URL or a comment.
func urlFollows(s string) bool {
	return s != "" && (s[0] == '+' || s[0] == '(' || s[0] == '-') || strings.HasPrefix(s, "http") || strings.HasPrefix(s, "www.")
}

// entryRestOK reports whether what follows a phrase at the start of a
// comment entry leaves it the entry's product: the end of the entry, a
// version, a hyphenated extension of the name, or a URL.
func entryRestOK(s string, i int) bool {
	if entryEnds(s, i) {
		return true
	}
	switch s[i] {
	case '/', '-', '_':
		return true
	case ' ':
		rest := strings.TrimLeft(s[i:], " ")
		if rest == "" {
			return true
		}
		if c := rest[0]; '0' <= c && c <= '9' || c == 'v' && len(rest) > 1 && '0' <= rest[1] && rest[1] <= '9' {
			// A version, then the end of the entry: "Slurp 3.0;", not
			// the model number of "Pixel 8 Build/...".
			k := 1
			for k < len(rest) && (isAlnum(rest[k]) || rest[k] == '.' || rest[k] == '_' || rest[k] == '-') {
				k++
			}
			return entryEnds(rest, k) || urlFollows(strings.TrimLeft(rest[k:], " "))
		}
		return urlFollows(rest)
	}
	return versionSuffix(s[i:])
}

// versionSuffix reports whether s, the text right after a phrase, is a
// version glued to the name ("0.5.0" in "trendictionbot0.5.0", "V2" in
// "HeadOnlyScraperV2"): an optional 'v' and digits, not followed by a letter.
// Such a name is still the phrase's bot, not a longer word.
func versionSuffix(s string) bool {
	i := 0
	if i < len(s) && s[i] == 'v' {
		i++
	}
	j := i
	for j < len(s) && '0' <= s[j] && s[j] <= '9' {
		j++
	}
	if j == i {
		return false
	}
	return j == len(s) || !('a' <= s[j] && s[j] <= 'z')
}

// trimVersion returns the length of word without a trailing version: digits,
// optionally preceded by 'v'.
func trimVersion(word string) int {
	k := len(word)
	for k > 0 && '0' <= word[k-1] && word[k-1] <= '9' {
		k--
	}
	if k == len(word) {
		return k
	}
	if k > 0 && word[k-1] == 'v' {
		k--
	}
	return k
}
