package enforce

import (
	"context"
	"time"
)

// Fleet is what the store a fleet shares (redisstore.Store) answers of
// the clients it holds, for the metrics.
type Fleet interface {
	// Up reports whether the store answers.
	Up() bool
	// Counts returns the clients it tracks and those blocked at now.
	Counts(now time.Time) (tracked, blocked int, err error)
}

// SweepEvery sweeps the store ([MemoryStore.Sweep]) at once and then every
// interval until ctx is done, and after each sweep reports the clients
// tracked and those blocked: the fleet's when there is one (fleet not
// nil) and it answers, else the store's own.
func (s *MemoryStore) SweepEvery(ctx context.Context, every time.Duration, fleet Fleet, report func(tracked, blocked int)) {
	update := func(now time.Time) {
		_, blocked := s.Sweep(now)
		tracked := s.Len()
		if fleet != nil && fleet.Up() {
			if t, b, err := fleet.Counts(now); err == nil {
				tracked, blocked = t, b
			}
		}
		report(tracked, blocked)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	update(time.Now())
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			update(now)
		}
	}
}
