package enforce

import (
	"net/netip"
	"sort"
	"time"
)

// BlockedClient describes a client that a [MemoryStore] holds blocked, for
// operators reviewing blocks.
type BlockedClient struct {
	// IP is the client's address.
	IP netip.Addr `json:"ip"`
	// Token is the product token of the blocked client, or "" when the
	// whole IP is blocked (traps, bad agents, impostors).
	Token string `json:"token,omitempty"`
	// Until is when the block ends.
	Until time.Time `json:"until"`
	// Offenses counts the blocks so far, this one included; each doubles
	// the cooldown.
	Offenses int `json:"offenses"`
	// ReadRobots reports whether the client's IP fetched /robots.txt:
	// it read the rules it broke.
	ReadRobots bool `json:"read_robots,omitempty"`
}

// Blocked lists the clients blocked at now, by IP and token.
func (s *MemoryStore) Blocked(now time.Time) []BlockedClient {
	t := now.UnixNano()
	var out []BlockedClient
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for n := sh.head; n != nil; n = n.next {
			if n.st.BlockedUntil <= t {
				continue
			}
			c := BlockedClient{IP: n.key.IP, Token: n.key.Token, Until: time.Unix(0, n.st.BlockedUntil), Offenses: int(n.st.Offenses), ReadRobots: n.st.RobotsAt != 0}
			if c.Token == ipToken {
				c.Token = ""
			} else if ipn, ok := sh.m[IPKey(n.key.IP)]; ok {
				// robots.txt fetches are recorded on the IP's own state,
				// which lives in the same shard.
				c.ReadRobots = ipn.st.RobotsAt != 0
			}
			out = append(out, c)
		}
		sh.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool {
		if c := out[i].IP.Compare(out[j].IP); c != 0 {
			return c < 0
		}
		return out[i].Token < out[j].Token
	})
	return out
}

// Unblock lifts every block of ip, the whole IP's and each of its tokens',
// and forgets their strikes and past offences, for an operator who finds a
// block was a mistake. It returns how many blocks were in force.
func (s *MemoryStore) Unblock(ip netip.Addr, now time.Time) int {
	t := now.UnixNano()
	sh := s.shard(Key{IP: ip})
	sh.mu.Lock()
	defer sh.mu.Unlock()
	lifted := 0
	for n := sh.head; n != nil; n = n.next {
		if n.key.IP != ip {
			continue
		}
		if n.st.BlockedUntil > t {
			lifted++
		}
		n.st.BlockedUntil, n.st.Remember, n.st.Offenses = 0, 0, 0
		n.st.Strikes, n.st.WindowStart = 0, 0
	}
	return lifted
}
