package enforce

import (
	"net/netip"
	"time"
)

// Key identifies a client in the store: the client's address prefix (its IP
// masked to [Config.IPv4Prefix] or [Config.IPv6Prefix] bits), the most
// specific robots.txt product token of its User-Agent, and the mode that
// wrote the state. The address's own state, shared by all its tokens, has
// the key [AddrKey] returns.
type Key struct {
	// Prefix is the client's address prefix, masked.
	Prefix netip.Prefix
	// Token is the product token, or the address marker of [AddrKey].
	Token string
	// DryRun marks state written in dry-run mode: what enforcement would
	// have recorded. An enforcing engine never reads it.
	DryRun bool
}

// addrToken marks an address's own state; it cannot be a product token.
const addrToken = "\x00addr"

// AddrKey returns the key of the address's own state for k: its block
// (traps, bad agents, impostors, strikes across tokens), its robots.txt
// fetches, and the rate of all its tokens together.
func AddrKey(k Key) Key { return Key{Prefix: k.Prefix, Token: addrToken, DryRun: k.DryRun} }

// IsAddr reports whether k is an address's own key.
func (k Key) IsAddr() bool { return k.Token == addrToken }

// Store keeps per-client state. Implementations must apply each Op
// atomically with respect to other Ops on the same address prefix (an Op on
// a client key with CheckAddr also reads and changes the address's state),
// bound their memory, and be safe for concurrent use. They apply Ops with
// [Apply], the one definition of how state changes.
type Store interface {
	// Apply applies op to the state of key (and, with op.CheckAddr, of its
	// address) at time now and returns the outcome. For a Peek of an
	// unknown key it returns a zero Outcome and creates nothing.
	Apply(key Key, now time.Time, op Op) Outcome
	// Len returns the number of states tracked.
	Len() int
}
