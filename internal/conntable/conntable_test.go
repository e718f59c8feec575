package conntable

import (
	"hash/maphash"
	"strconv"
	"sync"
	"testing"
)

func newTable(n int) *Table[string, int] {
	seed := maphash.MakeSeed()
	return New[string, int](n, func(k string) uint64 { return maphash.String(seed, k) })
}

// TestTable: a value is found by its key, replaced by the key's next Put,
// and gone once forgotten; the table is rounded up to a power of two.
func TestTable(t *testing.T) {
	tb := newTable(5)
	if tb.Slots() != 8 {
		t.Errorf("Slots() = %d, want 8", tb.Slots())
	}
	tb.Put("a", 1)
	tb.Put("a", 2)
	if v, ok := tb.Get("a"); !ok || v != 2 || tb.Len() != 1 {
		t.Errorf("Get(a) = %d, %v with %d entries, want 2, true with 1", v, ok, tb.Len())
	}
	if _, ok := tb.Get("b"); ok {
		t.Error("Get(b) found a value never put")
	}
	tb.Forget("a")
	if _, ok := tb.Get("a"); ok || tb.Len() != 0 {
		t.Errorf("after Forget(a): found %v, %d entries", ok, tb.Len())
	}
}

// TestFlood: a flood of keys never grows the table, and a bucket's oldest
// entry is the one replaced: the newest keys are all found.
func TestFlood(t *testing.T) {
	tb := New[int, int](4, func(k int) uint64 { return 0 }) // one bucket
	for i := range 100 {
		tb.Put(i, i)
	}
	if tb.Len() != Ways || tb.Slots() != Ways {
		t.Fatalf("%d entries in %d slots, want %d", tb.Len(), tb.Slots(), Ways)
	}
	for i := 100 - Ways; i < 100; i++ {
		if v, ok := tb.Get(i); !ok || v != i {
			t.Errorf("Get(%d) = %d, %v: the newest are kept", i, v, ok)
		}
	}
	big := newTable(1024)
	for i := range 100_000 {
		big.Put(strconv.Itoa(i), i)
	}
	if big.Len() > big.Slots() || big.Slots() != 1024 {
		t.Errorf("%d entries in %d slots", big.Len(), big.Slots())
	}
}

func TestGetAllocs(t *testing.T) {
	tb := newTable(64)
	tb.Put("198.51.100.7:443", 1)
	if n := testing.AllocsPerRun(100, func() { tb.Get("198.51.100.7:443") }); n != 0 {
		t.Errorf("Get: %v allocations", n)
	}
}

// TestConcurrent, for the race detector: Put, Get and Forget at once.
func TestConcurrent(t *testing.T) {
	tb := newTable(16)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				k := strconv.Itoa((g*7 + i) % 50)
				tb.Put(k, i)
				tb.Get(k)
				if i%3 == 0 {
					tb.Forget(k)
				}
			}
		})
	}
	wg.Wait()
	if tb.Len() > tb.Slots() {
		t.Errorf("%d entries in %d slots", tb.Len(), tb.Slots())
	}
}
