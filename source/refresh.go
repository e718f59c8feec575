package source

import (
	"context"
	"time"
)

// refreshEvery runs fetch now, and then again after the wait each run
// returns (the refresh interval, or sooner after a failure), until ctx
// ends. It closes first after the first run, answered or not, so that
// nothing waiting for it waits for ctx too. The robots.txt of a URL
// (Source) and a crawler's published ranges (RangeFeed) refresh so.
func refreshEvery(ctx context.Context, first chan<- struct{}, fetch func(context.Context) time.Duration) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		wait := fetch(ctx)
		if first != nil {
			close(first)
			first = nil
		}
		if ctx.Err() != nil {
			return
		}
		t.Reset(wait)
	}
}
