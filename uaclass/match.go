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
}

type phrase struct {
	text     string // lower-cased, without the anchor
	pre      int    // bytes before the first word
	anchored bool   // must start the User-Agent
	bot      int32
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z'
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

func newPhraseIndex(bots []Bot) *phraseIndex {
	ix := &phraseIndex{bots: bots, byWord: map[string][]int32{}}
	for bi := range bots {
		for _, m := range bots[bi].Match {
			p := phrase{bot: int32(bi)}
			if strings.HasPrefix(m, "^") {
				p.anchored = true
				m = m[1:]
			}
			p.text = strings.ToLower(m)
			w := firstWord(p.text)
			p.pre = strings.Index(p.text, w)
			ix.phrases = append(ix.phrases, p)
			ix.byWord[w] = append(ix.byWord[w], int32(len(ix.phrases)-1))
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

// find returns the bot that lower (a lower-cased User-Agent) names, or -1.
// When several match, a bad bot wins (a harvester does not escape by adding
// a good name), then the longest phrase (Googlebot-Image over Googlebot),
// then the first.
func (ix *phraseIndex) find(lower string) int32 {
	best, bestLen := int32(-1), 0
	bestBad := false
	for i := 0; i < len(lower); {
		if !isAlnum(lower[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(lower) && isAlnum(lower[j]) {
			j++
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
			if isAlnum(p.text[len(p.text)-1]) && end < len(lower) && isAlnum(lower[end]) && !versionSuffix(lower[end:]) {
				continue // the phrase would end inside a longer word
			}
			bad := ix.bots[p.bot].Class == Bad
			if best < 0 || bad && !bestBad || bad == bestBad && len(p.text) > bestLen {
				best, bestLen, bestBad = p.bot, len(p.text), bad
			}
			break // the rest of the list is shorter
		}
		i = j
	}
	return best
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
