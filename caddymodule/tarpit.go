package caddymodule

import (
	"context"
	"time"
)

// hold keeps a tarpitted request for d, or until the client gives up or the
// config is unloaded. At most TarpitMax requests are held at once; beyond
// that it returns at once. It reports whether it held the request.
func (h *Handler) hold(ctx context.Context, d time.Duration) bool {
	select {
	case h.tarpit <- struct{}{}:
	default:
		h.metrics.tarpit(0)
		return false
	}
	h.metrics.tarpit(+1)
	defer func() {
		h.metrics.tarpit(-1)
		<-h.tarpit
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-h.unloaded:
	}
	return true
}
