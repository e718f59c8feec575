package enforce

import (
	"strconv"
	"strings"

	"github.com/robotsguard/robotsguard/uaclass"
)

// A crawler is paced and struck by what identifies it as well as by its
// address (issue 38): spread over 50 addresses, a crawler that ignores its
// Crawl-delay still gets CrawlerShare times one client's allowance, not 50
// times. Which key paces whom, and why (docs/how-it-decides.md, "One
// crawler, many addresses"):
//
//   - a verified crawler (its identity is evidence: forward-confirmed
//     reverse DNS, its operator's ranges, a pinned signature) by its
//     identity, across every address: nobody else can take it;
//   - a declared but unverified product token within the client's network
//     (Config.CrawlerIPv4Prefix, CrawlerIPv6Prefix): anyone can send a
//     token, so a key holds only where the sender is, and someone sending
//     another crawler's token from its own network cannot starve that
//     crawler elsewhere;
//   - an undeclared bot (no product token) or a poser by its fingerprint
//     (Fingerprint: how it speaks) within its network.
//
// Browsers have no crawler key: robots.txt and its Crawl-delay are not
// addressed to people. A poser is no browser.

// CrawlerKind says what identifies a crawler across its addresses.
type CrawlerKind uint8

// Crawler kinds.
const (
	// CrawlerNone: nothing does (a browser, or crawler keys off).
	CrawlerNone CrawlerKind = iota
	// CrawlerVerified: its verified identity, across every address.
	CrawlerVerified
	// CrawlerToken: its declared product token, within its network.
	CrawlerToken
	// CrawlerPrint: its fingerprint, within its network (an undeclared
	// bot, a poser).
	CrawlerPrint
)

// crawlerKindNames are the kinds as listings name them.
var crawlerKindNames = [...]string{CrawlerNone: "", CrawlerVerified: "verified", CrawlerToken: "token", CrawlerPrint: "fingerprint"}

// String returns "verified", "token", "fingerprint", or "" for none.
func (k CrawlerKind) String() string {
	if int(k) < len(crawlerKindNames) {
		return crawlerKindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Crawler identifies one crawler across its addresses. It is a plain
// value: making it allocates nothing.
type Crawler struct {
	// Kind says what identifies it; CrawlerNone: nothing.
	Kind CrawlerKind
	// ID is the hash of what identifies it: of its token, or its
	// fingerprint (Fingerprint).
	ID uint64
	// Name is what operators read: the token, or the fingerprint as the
	// request showed it (its JA4; "" without one).
	Name string
}

// Networked reports whether the key holds within the client's network
// (a token, a fingerprint), not across every address.
func (c Crawler) Networked() bool { return c.Kind == CrawlerToken || c.Kind == CrawlerPrint }

// Scopes reports whether the crawler's address state is kept apart from
// the other clients of its address: a verified identity's is, so that
// nobody else at the address changes it, and so that a fleet store keeps
// it with the identity's (one Redis Cluster hash slot).
func (c Crawler) Scopes() bool { return c.Kind == CrawlerVerified }

// Label returns the crawler as listings show it: "verified gptbot",
// "token examplebot", "fingerprint t13d1516h2_…" ("fingerprint (none)"
// for a client without one, over plain HTTP).
func (c Crawler) Label() string {
	if c.Kind == CrawlerNone {
		return ""
	}
	name := c.Name
	if name == "" {
		name = "(none)"
	}
	return c.Kind.String() + " " + name
}

// ParseCrawler reads a crawler as [Crawler.Label] writes it ("token
// examplebot", "fingerprint (none)"): its Kind and Name, without its ID;
// the zero Crawler for "" or a label of no known kind.
func ParseCrawler(label string) Crawler {
	kind, name, _ := strings.Cut(label, " ")
	for k := CrawlerVerified; int(k) < len(crawlerKindNames); k++ {
		if crawlerKindNames[k] == kind {
			if name == "(none)" {
				name = ""
			}
			return Crawler{Kind: k, Name: name}
		}
	}
	return Crawler{}
}

// Crawler returns what identifies the client of req across its addresses
// (see the kinds above), or the zero Crawler for a browser, or when
// CrawlerShare is off. It allocates nothing.
func (e *Engine) Crawler(req *Request) Crawler {
	if e.cfg.CrawlerShare < 0 || req.UA.Class == uaclass.Browser {
		return Crawler{}
	}
	switch tok := req.UA.Token(); {
	case tok != "" && Evidenced(req):
		return Crawler{Kind: CrawlerVerified, ID: hashString(tok), Name: tok}
	case tok != "":
		return Crawler{Kind: CrawlerToken, ID: hashString(tok), Name: tok}
	}
	return Crawler{Kind: CrawlerPrint, ID: Fingerprint(req), Name: req.JA4}
}

// Fingerprint is the one function that says how a client speaks, for the
// key of an undeclared bot or a poser: its JA4 (TLS) fingerprint. The
// framing and QUIC fingerprints are left out on purpose: a finer key only
// splits a crawler, and an HTTP/2 library's SETTINGS or a QUIC stack's
// transport parameters are one line of its caller's code to vary per
// address, where JA4 sorts what a caller can reorder. They stay evidence
// (a poser is keyed here by what it speaks, found by them). A client
// without a JA4 (plain HTTP) has the fingerprint of the empty string:
// within a network, every such client is one crawler. The User-Agent is
// not part of it: a client that rotates its User-Agent stays one crawler.
func Fingerprint(req *Request) uint64 {
	return hashString(req.JA4)
}

// hashString is a fixed 64-bit hash of s, the same on every instance of a
// fleet (its IDs name Redis keys), eight bytes at a time: a multiply and
// shift mix of each word, as wyhash and xxHash do. A collision can only
// join keys within one network (or two verified identities of the bot
// database), where anyone could send the same token or fingerprint anyway.
func hashString(s string) uint64 {
	const m = 0x9e3779b97f4a7c15
	h := uint64(len(s))*m ^ 0x27d4eb2f165667c5
	for ; len(s) >= 8; s = s[8:] {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = (h ^ w) * m
		h ^= h >> 29
	}
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * m
	}
	h ^= h >> 32
	h *= m
	return h ^ h>>29
}
