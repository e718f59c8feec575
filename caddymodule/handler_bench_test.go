package caddymodule

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// BenchmarkServeHTTP measures the handler's whole cost per request, for a
// browser and for a bot on an allowed path, from the client IP to the call
// of the next handler.
func BenchmarkServeHTTP(b *testing.B) {
	dir := b.TempDir()
	plain := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(plain, []byte("User-agent: *\nDisallow: /private/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	// With AI usage preferences that let ClaudeBot (train-ai) read
	// /articles/: the preference check runs and serves it.
	usage := filepath.Join(dir, "usage.txt")
	if err := os.WriteFile(usage, []byte("User-agent: *\nDisallow: /private/\nContent-Usage: train-ai=n\nContent-Usage: /articles/ train-ai=y\nContent-Signal: search=yes\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	const claudeBot = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
	for _, tc := range []struct{ name, ua, robots string }{
		{"browser", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", plain},
		{"bot", claudeBot, plain},
		{"bot-usage", claudeBot, usage},
	} {
		robots := tc.robots
		b.Run(tc.name, func(b *testing.B) {
			h := &Handler{Robots: robots, Zone: "bench-" + tc.name, Verify: &VerifyConfig{Disabled: true}, Rates: map[string]caddy.Duration{"ai": 0}}
			ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
			defer cancel()
			if err := h.Provision(ctx); err != nil {
				b.Fatal(err)
			}
			defer h.Cleanup()
			r := httptest.NewRequest("GET", "/articles/42?page=2", nil)
			r.Header.Set("User-Agent", tc.ua)
			rctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer())
			r = r.WithContext(context.WithValue(rctx, caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: "192.0.2.1"}))
			next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				if err := h.ServeHTTP(w, r, next); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
