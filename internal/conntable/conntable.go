// Package conntable is the one fixed table of per-connection facts: the
// TLS handshake's fingerprint (tlsprint.Conns) and the HTTP framing's
// (framing.Conns), each kept by the connection's client address and port
// for the requests that come over it. It uses the standard library only.
package conntable

import "sync/atomic"

// Table remembers a value per key (a connection). It is a fixed table: a
// flood of connections replaces older entries and never grows it, and an
// entry that is gone (replaced, or forgotten when its connection closed)
// reads as absent, which its callers take as no fact, never evidence.
// Reads take no lock and allocate nothing; Put allocates one entry.
type Table[K comparable, V any] struct {
	slots []atomic.Pointer[entry[K, V]]
	mask  uint64 // buckets - 1
	hash  func(K) uint64
	seq   atomic.Uint64
}

// entry is one key's value.
type entry[K comparable, V any] struct {
	key K
	seq uint64 // order of recording: the oldest of a bucket is replaced
	val V
}

// Ways is the number of slots of a bucket: an entry is replaced only when
// the 4 slots of its bucket are taken.
const Ways = 4

// New returns a table of at least n slots (rounded up to a power of two,
// at least Ways). hash must be keyed with a secret of the process (a
// maphash seed), so that a client cannot aim its connections at
// another's bucket.
func New[K comparable, V any](n int, hash func(K) uint64) *Table[K, V] {
	buckets := 1
	for buckets*Ways < n {
		buckets <<= 1
	}
	return &Table[K, V]{slots: make([]atomic.Pointer[entry[K, V]], buckets*Ways), mask: uint64(buckets - 1), hash: hash}
}

// Put keeps v for k, replacing what k had, else an empty slot of its
// bucket, else the oldest entry there.
func (t *Table[K, V]) Put(k K, v V) {
	e := &entry[K, V]{key: k, seq: t.seq.Add(1), val: v}
	b := t.bucket(k)
	victim := &b[0]
	for i := range b {
		if old := b[i].Load(); old == nil || old.key == k {
			victim = &b[i]
			if old != nil {
				break // its own entry first
			}
		} else if v := victim.Load(); v != nil && old.seq < v.seq {
			victim = &b[i]
		}
	}
	victim.Store(e)
}

// Get returns the value kept for k, and whether there is one.
func (t *Table[K, V]) Get(k K) (v V, ok bool) {
	b := t.bucket(k)
	for i := range b {
		if e := b[i].Load(); e != nil && e.key == k {
			return e.val, true
		}
	}
	return v, false
}

// Forget drops k's entry (its connection closed).
func (t *Table[K, V]) Forget(k K) {
	b := t.bucket(k)
	for i := range b {
		if e := b[i].Load(); e != nil && e.key == k {
			b[i].CompareAndSwap(e, nil)
		}
	}
}

// Len returns the number of entries.
func (t *Table[K, V]) Len() int {
	n := 0
	for i := range t.slots {
		if t.slots[i].Load() != nil {
			n++
		}
	}
	return n
}

// Slots returns the table's size.
func (t *Table[K, V]) Slots() int { return len(t.slots) }

// bucket returns the slots k may take.
func (t *Table[K, V]) bucket(k K) []atomic.Pointer[entry[K, V]] {
	i := (t.hash(k) & t.mask) * Ways
	return t.slots[i : i+Ways : i+Ways]
}
