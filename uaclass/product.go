package uaclass

import (
	"strings"

	"github.com/robotsguard/robotsguard/policy"
)

// Product tokens: a User-Agent's own names come first in Result.Tokens, as
// written (hyphenated names kept whole: "zoho-scrapy", "msnbot-media",
// "SemrushBot-SA"), then the tokens of the database entry it matched. A site
// that writes a group for the crawler's own name gets it; a site that writes
// one for its family ("msnbot", "scrapy" only when the database says so)
// gets that.

// ownNames appends to dst the product tokens the User-Agent s names for
// itself, lower is s lower-cased: its leading product and the product of
// its "compatible;" comment, each when it is a product token as written.
func ownNames(dst []string, s, lower string) []string {
	if tok := leadingProduct(lower); tok != "" {
		dst = appendToken(dst, tok)
	}
	if k := strings.Index(lower, "compatible;"); k >= 0 {
		i := k + len("compatible;")
		for i < len(s) && (s[i] == ' ' || s[i] == '+') {
			i++
		}
		if tok := policy.ProductToken(lower[i:]); tok != "" && tok != "msie" && tok != "mozilla" && entryRestOK(lower, i+len(tok)) {
			dst = appendToken(dst, tok)
		}
	}
	return dst
}

// leadingProduct returns the product token that starts s, a lower-cased
// User-Agent, when it names a product: followed by a version, a comment, a
// URL or nothing. Browsers' "Mozilla" and "Opera" are not names of robots.
func leadingProduct(s string) string {
	tok := policy.ProductToken(s)
	if tok == "" || tok == "mozilla" || tok == "opera" || !isAlnum(tok[0]) {
		return ""
	}
	rest := s[len(tok):]
	if rest == "" || rest[0] == '/' || rest[0] == ';' || rest[0] == '(' {
		return tok
	}
	if rest[0] != ' ' {
		return ""
	}
	rest = strings.TrimLeft(rest, " ")
	if rest == "" {
		return tok
	}
	c := rest[0]
	if '0' <= c && c <= '9' || c == '(' || c == '+' || c == '-' || c == 'v' && len(rest) > 1 && '0' <= rest[1] && rest[1] <= '9' ||
		strings.HasPrefix(rest, "http") || strings.HasPrefix(rest, "www.") {
		return tok
	}
	return ""
}

func appendToken(dst []string, tok string) []string {
	for _, t := range dst {
		if t == tok {
			return dst
		}
	}
	return append(dst, tok)
}

// botSuffixes are the endings of self-declared robot names.
var botSuffixes = []string{"bot", "crawler", "spider", "scraper", "fetcher", "robot"}

// isBotWord reports whether name is a robot word that declares a robot on
// its own: "MS Search 4.0 Robot", "Better Uptime Bot", "Xing Bot".
func isBotWord(name string) bool {
	switch name {
	case "bot", "robot", "crawler", "spider", "scraper":
		return true
	}
	return false
}

func hasBotSuffix(name string) bool {
	for _, suf := range botSuffixes {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

// declaredBot reports whether s declares itself a robot and returns its
// product token (lower is s lower-cased):
//
//   - a product with a version whose name ends in bot, crawler, spider,
//     scraper, fetcher or robot ("FooBot/1.0");
//   - such a name, or the word bot, robot, crawler, spider or scraper,
//     anywhere but in a browser's platform comment: after the engine
//     ("... Safari/537.36 LesnikBot", "SSL-Crawler: http://..."), in a
//     "compatible;" comment ("compatible; MS Search 4.0 Robot") or another
//     comment;
//   - an info URL such as "+http://example.com/bot".
//
// Device names in a browser's platform comment ("Android 10; CUBOT X19")
// are none of these.
func declaredBot(s, lower string) (string, bool) {
	depth, comment := 0, 0 // comment counts the comments opened so far
	platform := false      // inside the first comment, when it is no compatible comment
	for i := 0; i < len(s); {
		c := lower[i]
		switch c {
		case '(':
			depth++
			if depth == 1 {
				comment++
				rest := strings.TrimLeft(lower[i+1:], " ")
				platform = comment == 1 && !strings.HasPrefix(rest, "compatible")
			}
			i++
			continue
		case ')':
			if depth > 0 {
				depth--
			}
			if depth == 0 {
				platform = false
			}
			i++
			continue
		}
		n := tokenRun(s[i:])
		if n == 0 {
			i++
			continue
		}
		name := lower[i : i+n]
		versioned := i+n < len(s) && s[i+n] == '/'
		if !platform && isBotWord(name) {
			return "", true // a word, not a name: "MS Search 4.0 Robot"
		}
		if hasBotSuffix(trimRunVersion(name)) && (versioned || !platform) {
			return policy.ProductToken(lower[i:]), true
		}
		i += n
	}
	if strings.Contains(lower, "+http") || strings.Contains(lower, "+www.") {
		if k := strings.Index(lower, "compatible;"); k >= 0 {
			i := k + len("compatible;")
			for i < len(s) && s[i] == ' ' {
				i++
			}
			if tok := policy.ProductToken(lower[i:]); tok != "msie" {
				return tok, true
			}
		}
		if tok := policy.ProductToken(lower); tok != "mozilla" {
			return tok, true
		}
		return "", true
	}
	return "", false
}

// trimRunVersion drops a version glued to a name: "trendictionbot0.5.0"
// reads as "trendictionbot".
func trimRunVersion(name string) string {
	return name[:trimVersion(name)]
}

func tokenRun(s string) int {
	n := 0
	for n < len(s) && (isAlnum(s[n]) || s[n] == '-' || s[n] == '_') {
		n++
	}
	return n
}
