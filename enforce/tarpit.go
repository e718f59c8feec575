package enforce

import (
	"context"
	"time"
)

// Holder is the tarpit: it holds the requests of Tarpit decisions before
// they are refused, at most a set number at once. It is safe for concurrent
// use.
type Holder struct {
	slots    chan struct{} // a semaphore of the requests held
	unloaded <-chan struct{}
	count    func(delta int)
}

// NewHolder returns a tarpit that holds at most max requests at once, and
// none once unloaded is closed (the configuration is unloaded). count (nil:
// none) records a request entering (+1) or leaving (-1) the tarpit, or (0)
// one refused at once because the tarpit was full.
func NewHolder(max int, unloaded <-chan struct{}, count func(delta int)) *Holder {
	if count == nil {
		count = func(int) {}
	}
	return &Holder{slots: make(chan struct{}, max), unloaded: unloaded, count: count}
}

// Max returns how many requests the tarpit holds at most.
func (t *Holder) Max() int {
	if t == nil {
		return 0
	}
	return cap(t.slots)
}

// Hold keeps a request for d, or until its client gives up (ctx is done)
// or the tarpit is unloaded. With as many requests held as the tarpit
// holds, it returns at once. It reports whether it held the request. A
// nil Holder holds nothing.
func (t *Holder) Hold(ctx context.Context, d time.Duration) bool {
	if t == nil {
		return false
	}
	select {
	case t.slots <- struct{}{}:
	default:
		t.count(0)
		return false
	}
	t.count(+1)
	defer func() {
		t.count(-1)
		<-t.slots
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	case <-t.unloaded:
	}
	return true
}
