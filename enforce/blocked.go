package enforce

import (
	"fmt"
	"net/netip"
	"sort"
	"time"
)

// BlockedClient describes a client that a [MemoryStore] holds blocked, for
// operators reviewing blocks.
type BlockedClient struct {
	// Prefix is the blocked address prefix.
	Prefix netip.Prefix `json:"-"`
	// IP is Prefix as operators read it: the address for a full-length
	// prefix (IPv4 /32, IPv6 /128), CIDR notation otherwise.
	IP string `json:"ip"`
	// Site is the site whose decision made the block, where the Caddy
	// module knows it (the zone's sites share its blocks); "" otherwise.
	Site string `json:"site,omitempty"`
	// Token is the product token of the blocked client, or "" when the
	// whole address is blocked (traps, bad agents, impostors, strikes
	// across tokens).
	Token string `json:"token,omitempty"`
	// Until is when the block ends.
	Until time.Time `json:"until"`
	// Offenses counts the blocks so far, this one included; each doubles
	// the cooldown.
	Offenses int `json:"offenses"`
	// Reason is what made the block: "trap", "disallowed" (strikes for
	// disallowed paths), "rate" (strikes for ignoring Retry-After),
	// "class" (block_class), "invalid", "bad_agent", "impostor", or
	// "unknown" (a block stored before blocks carried their reason).
	Reason BlockReason `json:"reason"`
	// ReadRobots reports whether the client's address fetched /robots.txt:
	// it read the rules it broke.
	ReadRobots bool `json:"read_robots,omitempty"`
	// DryRun marks a block that dry-run mode recorded: what enforcement
	// would have done. Nobody is refused for it.
	DryRun bool `json:"dry_run,omitempty"`
	// Crawler names the crawler of a crawler's block ([Crawler.Label]:
	// "token examplebot", "fingerprint t13d…", "verified gptbot"): every
	// address of its network (Prefix, IP), or for a verified identity
	// every address (IP "(every address)"), is refused. On the block of a
	// verified crawler's own address state, it names the identity.
	Crawler string `json:"crawler,omitempty"`
}

// PrefixString returns p as [BlockedClient.IP] shows it.
func PrefixString(p netip.Prefix) string {
	if !p.IsValid() {
		return "(no address)" // a client whose address Caddy could not read
	}
	if p.IsSingleIP() {
		return p.Addr().String()
	}
	return p.String()
}

// ParseUnblock reads the address or prefix to unblock: an IP (the blocks
// of the prefix it is tracked in are lifted) or a CIDR range (the blocks of
// every tracked prefix that overlaps it). The result is a valid, masked
// prefix.
func ParseUnblock(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR range (e.g. 203.0.113.7, 2001:db8::7 or 198.51.100.0/24)", s)
	}
	ip = ip.WithZone("").Unmap() // as the handler keys clients
	return netip.PrefixFrom(ip, ip.BitLen()), nil
}

// EveryAddress is what [BlockedClient].IP shows for a verified crawler's
// block: its identity is refused at every address.
const EveryAddress = "(every address)"

// Blocked lists the clients blocked at now, by prefix, token and mode, and
// the crawlers blocked.
func (s *MemoryStore) Blocked(now time.Time) []BlockedClient {
	t := now.UnixNano()
	var out []BlockedClient
	entry := func(n *storeNode, token string, st *State) BlockedClient {
		p := n.key.prefix()
		b := BlockedClient{Prefix: p, IP: PrefixString(p), Token: token, Until: time.Unix(0, st.BlockedUntil),
			// robots.txt fetches are recorded on the address's own state.
			Offenses: int(st.Offenses), Reason: st.Why, ReadRobots: n.addr.RobotsAt != 0, DryRun: n.key.dry}
		switch {
		case n.key.kind != CrawlerNone:
			b.Token, b.ReadRobots = "", false
			b.Crawler = Crawler{Kind: n.key.kind, Name: n.tok0.token}.Label()
			if n.key.kind == CrawlerVerified {
				b.IP = EveryAddress
			}
		case n.key.id != 0 && n.ntok > 0:
			b.Crawler = Crawler{Kind: CrawlerVerified, Name: n.tok0.token}.Label()
		}
		return b
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for _, l := range [...]*storeList{&sh.blocks, &sh.clients} {
			for n := l.head; n != nil; n = n.next {
				if n.addr.Blocked(t) {
					out = append(out, entry(n, "", &n.addr))
				}
				for i := 0; i < int(n.ntok); i++ {
					if ts := n.tok(i); ts.st.Blocked(t) {
						out = append(out, entry(n, ts.token, &ts.st))
					}
				}
			}
		}
		sh.mu.Unlock()
	}
	SortBlocked(out)
	return out
}

// SortBlocked sorts blocks as [MemoryStore.Blocked] lists them: by address,
// prefix length, token, crawler, enforced before dry-run, end.
func SortBlocked(out []BlockedClient) {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
			return c < 0
		}
		if a.Prefix.Bits() != b.Prefix.Bits() {
			return a.Prefix.Bits() < b.Prefix.Bits()
		}
		if a.Token != b.Token {
			return a.Token < b.Token
		}
		if a.Crawler != b.Crawler {
			return a.Crawler < b.Crawler
		}
		if a.DryRun != b.DryRun {
			return !a.DryRun
		}
		return a.Until.Before(b.Until)
	})
}

// Unblock lifts every block of the address prefixes that overlap p (an
// address is a /32 or /128 prefix): the whole address's and each of its
// tokens', enforced or dry-run, and forgets their strikes and past
// offences, for an operator who finds a block was a mistake. It lifts the
// blocks of the crawlers of the networks that overlap p too (a client at
// an address is refused for its crawler's block), and of a verified
// crawler that p holds an address of. It returns how many blocks were in
// force.
func (s *MemoryStore) Unblock(p netip.Prefix, now time.Time) int {
	t := now.UnixNano()
	p = p.Masked()
	lifted := 0
	forgive := func(st *State) {
		if st.Blocked(t) {
			lifted++
		}
		st.BlockedUntil, st.Remember, st.Offenses, st.Why = 0, 0, 0, WhyUnknown
		st.Strikes, st.Slips, st.WindowStart = 0, 0, 0
		st.ThrottleUntil, st.StrikeFrom = 0, 0
	}
	identities := map[uint64]bool{} // verified crawlers seen in p
	for pass := range 2 {
		for i := range s.shards {
			sh := &s.shards[i]
			sh.mu.Lock()
			for _, l := range [...]*storeList{&sh.blocks, &sh.clients} {
				for n := l.head; n != nil; n = n.next {
					k := &n.key
					if pass == 0 && k.kind == CrawlerVerified || pass == 1 && (k.kind != CrawlerVerified || !identities[k.id]) {
						continue
					}
					if pass == 0 && !k.prefix().Overlaps(p) {
						continue
					}
					if k.kind == CrawlerNone && k.id != 0 {
						identities[k.id] = true
					}
					forgive(&n.addr)
					for i := 0; i < int(n.ntok); i++ {
						forgive(&n.tok(i).st)
					}
				}
			}
			sh.mu.Unlock()
		}
		if len(identities) == 0 {
			break
		}
	}
	return lifted
}
