package signature

import (
	"sync"
	"time"
)

// NonceCache remembers the nonces of verified signatures until they expire,
// so that a replayed signature is refused. It is bounded: two generations
// of at most half the bound each; under a flood the oldest nonces are
// forgotten first. It is safe for concurrent use.
type NonceCache struct {
	mu        sync.Mutex
	cur, prev map[nonceKey]time.Time // nonce -> when its signature expires
	half      int
}

type nonceKey struct{ agent, nonce string }

// NewNonceCache returns a NonceCache of at most size nonces (default
// 100,000 when size <= 0).
func NewNonceCache(size int) *NonceCache {
	if size <= 0 {
		size = 100_000
	}
	half := max(size/2, 1)
	return &NonceCache{cur: make(map[nonceKey]time.Time), half: half}
}

// add records a nonce of agent that is valid until expires, and reports
// false when it is already recorded and not expired: a replay.
func (c *NonceCache) add(agent, nonce string, expires, now time.Time) bool {
	k := nonceKey{agent, nonce}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.cur[k]; ok && now.Before(t) {
		return false
	}
	if t, ok := c.prev[k]; ok && now.Before(t) {
		return false
	}
	if len(c.cur) >= c.half {
		c.prev, c.cur = c.cur, make(map[nonceKey]time.Time, c.half)
	}
	c.cur[k] = expires
	return true
}

// Len returns the number of nonces held.
func (c *NonceCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.prev)
}
