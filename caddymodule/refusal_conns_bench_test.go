package caddymodule

import (
	"net/http"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// BenchmarkRefusalConns is BenchmarkRefusal's log=repeats case served as
// a flood's connections serve it: 64 goroutines (one per connection, each
// with its own stack) taking turns, so that what one request leaves in
// the caches is 63 requests old when its goroutine comes round again.
// Case none takes the same turns with a handler that only answers: the
// handoff's cost, to subtract.
func BenchmarkRefusalConns(b *testing.B) {
	const conns = 64
	h := floodHandler(b, floodRobots(b), "bench-refusal-conns", zap.InfoLevel, 10*time.Second)
	rs := floodRequests(false)
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })
	for _, tc := range []struct {
		name  string
		serve func(w *discardWriter, r *http.Request)
	}{
		{"none", func(w *discardWriter, r *http.Request) { w.WriteHeader(403) }},
		{"guard", func(w *discardWriter, r *http.Request) {
			if err := h.ServeHTTP(w, r, next); err != nil || w.code != 403 {
				b.Errorf("status %d, %v", w.code, err)
			}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			turns := make([]chan int, conns)
			for i := range turns {
				turns[i] = make(chan int, 1)
			}
			done := make(chan struct{})
			for i := range conns {
				go func() {
					r0 := rs[i%len(rs)] // the turns are taken one at a time: no two share it at once
					w := &discardWriter{h: http.Header{}}
					for left := range turns[i] {
						if left <= 0 {
							close(done)
							return
						}
						r := asCaddyServes(r0)
						clear(w.h)
						w.code = 0
						tc.serve(w, r)
						turns[(i+1)%conns] <- left - 1
					}
				}()
			}
			b.ReportAllocs()
			b.ResetTimer()
			turns[0] <- b.N + 1
			<-done
			b.StopTimer()
			for _, t := range turns {
				close(t)
			}
		})
	}
}
