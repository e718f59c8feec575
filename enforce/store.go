package enforce

import (
	"net/netip"
	"time"
)

// Key identifies a client in the store: the client's address prefix (its IP
// masked to [Config.IPv4Prefix] or [Config.IPv6Prefix] bits), the most
// specific robots.txt product token of its User-Agent, and the mode that
// wrote the state. The address's own state, shared by all its tokens, has
// the key [AddrKey] returns; the crawler's, shared by all its addresses,
// the key [CrawlerKey] returns.
type Key struct {
	// Prefix is the client's address prefix, masked.
	Prefix netip.Prefix
	// Net is the client's network: its IP masked to
	// [Config.CrawlerIPv4Prefix] or [Config.CrawlerIPv6Prefix] bits (never
	// longer than Prefix), within which a crawler's key holds. A fleet
	// store keeps the records of one network together (one Redis Cluster
	// hash slot), so that a request's records are one script's keys.
	Net netip.Prefix
	// Token is the product token, or the marker of [AddrKey] or
	// [CrawlerKey].
	Token string
	// Crawler identifies the crawler across its addresses (see
	// [Engine.Crawler]); zero for a browser. A verified identity also
	// keeps the crawler's address state apart from the other clients of
	// the address ([Crawler.Scopes]).
	Crawler Crawler
	// DryRun marks state written in dry-run mode: what enforcement would
	// have recorded. An enforcing engine never reads it.
	DryRun bool
}

// addrToken marks an address's own state; it cannot be a product token.
const addrToken = "\x00addr"

// crawlerToken marks a crawler's own state; it cannot be a product token.
const crawlerToken = "\x00crawler"

// AddrKey returns the key of the address's own state for k: its block
// (traps, bad agents, impostors, strikes across tokens), its robots.txt
// fetches, and the rate of all its tokens together.
func AddrKey(k Key) Key {
	return Key{Prefix: k.Prefix, Net: k.Net, Token: addrToken, Crawler: k.Crawler, DryRun: k.DryRun}
}

// CrawlerKey returns the key of the crawler's own state for k (k.Crawler
// must be set): its rate across its addresses, its strikes and its block.
// A store applies an Op with CheckCrawler to it along with k; the key
// itself names the record in listings and in a fleet store's write-backs.
func CrawlerKey(k Key) Key {
	c := Key{Net: k.Net, Token: crawlerToken, Crawler: k.Crawler, DryRun: k.DryRun}
	if !k.Crawler.Networked() {
		c.Net = netip.Prefix{}
	}
	return c
}

// IsAddr reports whether k is an address's own key.
func (k Key) IsAddr() bool { return k.Token == addrToken }

// IsCrawler reports whether k is a crawler's own key.
func (k Key) IsCrawler() bool { return k.Token == crawlerToken }

// Store keeps per-client state. Implementations must apply each Op
// atomically with respect to other Ops on the same address prefix and
// crawler (an Op on a client key with CheckAddr also reads and changes the
// address's state, and with CheckCrawler the crawler's), bound their
// memory, and be safe for concurrent use. They apply Ops with [Apply], the
// one definition of how state changes.
type Store interface {
	// Apply applies op to the state of key (and, with op.CheckAddr, of its
	// address; with op.CheckCrawler, of its crawler) at time now and
	// returns the outcome. For a Peek of an unknown key it returns a zero
	// Outcome and creates nothing.
	Apply(key Key, now time.Time, op Op) Outcome
	// Len returns the number of states tracked.
	Len() int
}
