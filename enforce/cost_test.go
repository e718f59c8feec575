package enforce

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/policy"
)

// costlyPolicy is a file that costs much to match (issue 29, item 8):
// 2,401 rules like "Disallow: /*abc*bcd*cde*def*zz$", each of which
// backtracks through a long target that almost fits and never matches.
var costlyPolicy = func() *policy.Policy {
	words := []string{"abc", "bcd", "cde", "def", "efg", "fga", "gab"}
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /private/\n")
	for i := range len(words) * len(words) * len(words) * len(words) {
		w := func(n int) string { return words[i/n%len(words)] }
		fmt.Fprintf(&b, "Disallow: /*%s*%s*%s*%s*zz$\n", w(1), w(7), w(49), w(343))
	}
	return compile(b.String())
}()

// costlyTarget is a 16 KB target made of near-misses of costlyPolicy's
// rules.
var costlyTarget = "/" + strings.Repeat("abcdefg", 16384/7) + "z"

// countingStore counts the operations a decision makes.
type countingStore struct {
	Store
	ops, peeks int
}

func (s *countingStore) Apply(k Key, now time.Time, op Op) Outcome {
	s.ops++
	if op.Peek {
		s.peeks++
	}
	return s.Store.Apply(k, now, op)
}

// TestBlockedLongTargetOneOp (issue 29, item 5): a blocked client's request
// with a long target is refused as blocked on one store operation, a peek
// made before any rule is matched; an ordinary request is one operation
// and no peek; a long target of a client that is not blocked costs the
// peek and its own operation.
func TestBlockedLongTargetOneOp(t *testing.T) {
	clock := newClock()
	s := &countingStore{Store: NewMemoryStore(100, 0, time.Hour)}
	e, err := New(Config{Now: clock.Now, Traps: []string{"/trap/"}}, s)
	if err != nil {
		t.Fatal(err)
	}
	p := compile("User-agent: *\nDisallow: /private/\nDisallow: /trap/\n")
	count := func(what string, r *Request, wantOps, wantPeeks int, reason Reason) {
		t.Helper()
		s.ops, s.peeks = 0, 0
		d := e.Decide(r, p)
		if d.Reason != reason || s.ops != wantOps || s.peeks != wantPeeks {
			t.Errorf("%s: reason %q, %d store operations (%d peeks), want %q, %d (%d)", what, d.Reason, s.ops, s.peeks, reason, wantOps, wantPeeks)
		}
	}
	long := "/articles/" + strings.Repeat("x", 2*matchFirstBytes)
	count("ordinary request", req("192.0.2.1", uaExample, "/articles/x"), 1, 0, ReasonNone)
	count("long target, not blocked", req("192.0.2.1", uaExample, long), 2, 1, ReasonNone)
	count("trap", req("192.0.2.2", uaExample, "/trap/x"), 1, 0, ReasonTrap)
	count("blocked, short target", req("192.0.2.2", uaExample, "/articles/x"), 1, 0, ReasonBlockedClient)
	count("blocked, long target", req("192.0.2.2", uaExample, long), 1, 1, ReasonBlockedClient)
	count("blocked, long target in the trap", req("192.0.2.2", uaExample, "/trap/"+long), 1, 1, ReasonTrap)
}

// BenchmarkDecideCostly measures a decision for a blocked client on
// costlyTarget under costlyPolicy: it is refused whatever the rules say,
// so matching them is wasted.
func BenchmarkDecideCostly(b *testing.B) {
	var ns atomic.Int64
	ns.Store(time.Unix(1_800_000_000, 0).UnixNano())
	clock := func() time.Time { return time.Unix(0, ns.Add(int64(time.Microsecond))) }
	e, err := New(Config{Now: clock, Traps: []string{"/trap/"}}, NewMemoryStore(1000, 0, time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	trap := compile("User-agent: *\nDisallow: /trap/\n")
	blocked := req("192.0.2.1", uaExample, "/trap/x")
	e.Decide(blocked, trap)
	blocked.Target = tgt(costlyTarget)
	b.Run("blocked", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if d := e.Decide(blocked, costlyPolicy); d.Reason != ReasonBlockedClient {
				b.Fatal(d.Reason)
			}
		}
	})
}
