package caddymodule

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// BenchmarkRefusalConns is BenchmarkRefusal's log=repeats case served as
// a flood's connections serve it: 64 goroutines (one per connection, each
// with its own stack) taking turns, so that what one request leaves in
// the caches is 63 requests old when its goroutine comes round again.
// Case none takes the same turns with a handler that only answers: the
// handoff's cost, to subtract.
func BenchmarkRefusalConns(b *testing.B) {
	const conns = 64
	robots := floodRobots(b)
	const ua = "Mozilla/5.0 (compatible; RogueBot/2.0; +http://rogue.example/bot)"
	d := caddy.Duration(10 * time.Second)
	h := &Handler{Robots: robots, Zone: "bench-refusal-conns", Verify: &VerifyConfig{Disabled: true}, Strikes: 1 << 30, Rates: map[string]caddy.Duration{"bot": 0}, LogRepeats: &d}
	loggedHandler(b, h, zap.InfoLevel)
	h.decisions.SetLogger(jsonLogger(zapcore.AddSync(io.Discard), zap.InfoLevel))
	srv := &caddyhttp.Server{}
	request := func(i int) *http.Request {
		r := httptest.NewRequest("GET", floodTargets[i%len(floodTargets)], nil)
		r.Header.Set("User-Agent", ua)
		ctx := context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: "198.51.100.7"})
		ctx = context.WithValue(ctx, caddyhttp.ServerCtxKey, srv)
		return r.WithContext(ctx)
	}
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
					r0 := request(i)
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
