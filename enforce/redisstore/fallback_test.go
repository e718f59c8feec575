package redisstore

import (
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
)

// TestFallback: with Redis killed, each on_error mode answers as it says,
// the hooks report the outage once and every answer without Redis, and
// the store goes back to Redis by itself when it is back (with its state:
// Redis kept nothing here, as it was restarted empty).
func TestFallback(t *testing.T) {
	rate := enforce.Op{Interval: time.Second, Burst: 1, CheckAddr: true, Blockable: true, Strikes: 5, AddrStrikes: 10,
		Window: time.Minute, Cooldown: time.Hour, MaxCooldown: time.Hour}
	k := enforce.Key{Prefix: netip.MustParsePrefix("192.0.2.1/32"), Token: "bot"}
	for _, mode := range []OnError{Local, Allow, Deny} {
		t.Run(mode.String(), func(t *testing.T) {
			local := enforce.NewMemoryStore(0, 0, 0)
			s, srv := newTestStore(t, Options{OnError: mode, Local: local, Timeout: 500 * time.Millisecond, Retry: 20 * time.Millisecond})
			var fallbacks, downs, ups atomic.Int32
			var downErr atomic.Value
			s.SetHooks(Hooks{Fallback: func() { fallbacks.Add(1) }, Down: func(err error) { downs.Add(1); downErr.Store(err) }, Up: func() { ups.Add(1) }})
			now := time.Now()
			if out := s.Apply(k, now, rate); !out.Took || s.RoundTrips() != 1 {
				t.Fatalf("with Redis: %+v, %d round trips", out, s.RoundTrips())
			}
			srv.Kill()
			var outs []enforce.Outcome
			for i := range 3 {
				outs = append(outs, s.Apply(k, now.Add(time.Duration(i+1)*time.Millisecond), rate))
			}
			if s.Up() || downs.Load() != 1 || fallbacks.Load() != 3 {
				t.Fatalf("after the kill: up %v, %d downs, %d fallbacks", s.Up(), downs.Load(), fallbacks.Load())
			}
			t.Logf("the outage as reported: %v", downErr.Load())
			if err, _ := downErr.Load().(error); err == nil {
				t.Error("Down reported no error")
			}
			switch mode {
			case Local:
				// The local store has its own bucket (burst 1): the first
				// request takes it, the next ones are over the rate.
				if !outs[0].Took || outs[1].Took || outs[2].Took || local.Len() != 1 {
					t.Errorf("local: %+v; local store %d", outs, local.Len())
				}
			case Allow:
				for _, o := range outs {
					if !o.Took || o.Throttled || o.Blocked {
						t.Errorf("allow: %+v", o)
					}
				}
			case Deny:
				for _, o := range outs {
					if o.Took || !o.Throttled || o.RetryAfter != time.Second {
						t.Errorf("deny: %+v", o)
					}
				}
				if o := s.Apply(k, now, enforce.Op{Peek: true}); o.Blocked || o.Throttled {
					t.Errorf("deny refused a peek (a person): %+v", o)
				}
			}
			srv.Restart()
			waitFor(t, "the store reconnects", s.Up)
			before := s.RoundTrips()
			if out := s.Apply(k, now.Add(time.Minute), rate); !out.Took || s.RoundTrips() != before+1 {
				t.Errorf("after Redis is back: %+v, %d round trips", out, s.RoundTrips()-before)
			}
			if ups.Load() != 1 {
				t.Errorf("Up reported %d times", ups.Load())
			}
		})
	}
}

// TestBlockHoldsThroughOutage: a block the instance knows of stays
// enforced while Redis cannot be reached, past the cache's re-check
// interval, though the in-process store never saw it.
func TestBlockHoldsThroughOutage(t *testing.T) {
	local := enforce.NewMemoryStore(0, 0, 0)
	s, srv := newTestStore(t, Options{Local: local, Timeout: 500 * time.Millisecond, Retry: time.Hour})
	now := time.Now()
	k := enforce.Key{Prefix: netip.MustParsePrefix("192.0.2.77/32"), Token: "bot"}
	if out := s.Apply(enforce.AddrKey(k), now, enforce.Op{Block: true, Cooldown: time.Hour, MaxCooldown: time.Hour}); !out.NewlyBlocked {
		t.Fatalf("trap: %+v", out)
	}
	peek := enforce.Op{Peek: true, CheckAddr: true}
	s.Apply(k, now, peek) // the token's state, for the cache
	srv.Kill()
	s.Apply(enforce.Key{Prefix: netip.MustParsePrefix("192.0.2.78/32")}, now, enforce.Op{MarkRobots: true}) // finds Redis down
	if s.Up() {
		t.Fatal("the store did not notice the outage")
	}
	later := now.Add(time.Minute) // well past the re-check interval
	if out := s.Apply(k, later, peek); !out.Blocked || !out.AddrBlocked {
		t.Errorf("during the outage the block was lifted: %+v", out)
	}
	if out := local.Apply(k, later, peek); out.Blocked {
		t.Errorf("the in-process store had the block: %+v", out)
	}
}
