package caddymodule

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/record"
)

// floodRobots is Wikipedia's robots.txt where the shared benchmark data
// is beside the repository, else a file of the same shape.
func floodRobots(b *testing.B) string {
	if data, err := os.ReadFile("../../shared/data/robots-bench/wikipedia-robots.txt"); err == nil {
		return writeRobots(b, string(data))
	}
	text := "User-agent: MJ12bot\nDisallow: /\n\nUser-agent: *\nAllow: /w/load.php?\nDisallow: /w/\nDisallow: /api/\n"
	for _, p := range []string{"Special:", "Spezial:", "Wikipedia:Löschkandidaten/", "Wikipedia:Vandalensperrung/", "Wikipedia:Checkuser/"} {
		text += "Disallow: /wiki/" + p + "\n"
	}
	return writeRobots(b, text)
}

// floodTargets are disallowed paths of floodRobots.
var floodTargets = []string{"/w/index.php?title=Special:Random", "/api/rest_v1/page/x", "/wiki/Special:Search", "/wiki/Spezial:Suche", "/wiki/Wikipedia:Checkuser/x"}

// BenchmarkRefusal measures the refusal path of a flood: a rogue bot
// hammering disallowed paths (strikes never block it, so every refusal is
// "disallowed" and matches a rule), through ServeHTTP as Caddy's server
// calls it, with the decision log filtered out, written for every request,
// and folded by log_repeats; and, for comparison, a refusal returned as an
// error, as for a server with handle_errors routes (without Caddy's error
// handling, which costs more). The pieces: classification, decision,
// observe (statistics and placeholders), refuse, and the decision log of a
// repeat; and the per-request setup of Caddy's server that the benchmark
// repeats (request_setup), to subtract from the whole and from observe.
func BenchmarkRefusal(b *testing.B) {
	robots := floodRobots(b)
	setup := func(b *testing.B, level zapcore.Level, repeats time.Duration) *Handler {
		return floodHandler(b, robots, "bench-refusal", level, repeats)
	}
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })
	serve := func(b *testing.B, h *Handler, rs []*http.Request) {
		w := &discardWriter{h: http.Header{}}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			r := rs[i%len(rs)]
			i++
			r = asCaddyServes(r)
			clear(w.h)
			if err := h.ServeHTTP(w, r, next); err != nil && w.code == 0 {
				if he, ok := err.(caddyhttp.HandlerError); !ok || he.StatusCode != 403 {
					b.Fatal(err)
				}
			} else if w.code != 403 {
				b.Fatalf("status %d", w.code)
			}
			w.code = 0
		}
	}
	for _, tc := range []struct {
		name        string
		level       zapcore.Level
		repeats     time.Duration
		errorRoutes bool
	}{
		{"log=filtered", zap.ErrorLevel, 10 * time.Second, false},
		{"log=every", zap.InfoLevel, 0, false},
		{"log=repeats", zap.InfoLevel, 10 * time.Second, false},
		{"log=repeats/handle_errors", zap.InfoLevel, 10 * time.Second, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			serve(b, setup(b, tc.level, tc.repeats), floodRequests(tc.errorRoutes))
		})
	}

	// What Caddy's server gives each request (a replacer, variables, a new
	// context), which the figures above and observe's include: subtract it.
	b.Run("piece=request_setup", func(b *testing.B) {
		r := floodRequests(false)[0]
		b.ReportAllocs()
		for b.Loop() {
			asCaddyServes(r)
		}
	})

	// The pieces, on one request.
	h := setup(b, zap.InfoLevel, 10*time.Second)
	r := floodRequests(false)[0]
	r = r.WithContext(context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer()))
	snap := h.source.Snapshot()
	f := h.facts(nil, r, varsOf(r))
	var rd enforce.Reading
	if err := h.reader.Read(r, &f, snap.Policy, &rd); err != nil {
		b.Fatal(err)
	}
	d := h.engine.Decide(&rd.Request, snap.Policy)
	rec := record.New(&rd, &d, h.Zone, snap.Version, snap.Body)
	b.Run("piece=classify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.classifier.Classify(floodUA)
		}
	})
	b.Run("piece=read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f := h.facts(nil, r, varsOf(r))
			var rd enforce.Reading
			_ = h.reader.Read(r, &f, snap.Policy, &rd)
		}
	})
	b.Run("piece=decide", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.engine.Decide(&rd.Request, snap.Policy)
		}
	})
	b.Run("piece=observe", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rr := asCaddyServes(r)
			h.observe(rr, varsOf(rr), &rec)
		}
	})
	b.Run("piece=refuse", func(b *testing.B) {
		w := &discardWriter{h: http.Header{}}
		b.ReportAllocs()
		for b.Loop() {
			clear(w.h)
			h.refuse(w, r, &d, snap.Policy)
		}
	})
	b.Run("piece=log_repeat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.decisions.Write(&rec)
		}
	})
}

// floodUA is the flood's rogue bot.
const floodUA = "Mozilla/5.0 (compatible; RogueBot/2.0; +http://rogue.example/bot)"

// floodHandler is a handler for the flood's refusals in zone: the rules
// of robots, verification off, strikes that never block (so every refusal
// is "disallowed" and matches a rule), no class rate, and the decision log
// written to nowhere at level, with log_repeats repeats.
func floodHandler(b *testing.B, robots, zone string, level zapcore.Level, repeats time.Duration) *Handler {
	d := caddy.Duration(repeats)
	h := &Handler{Robots: robots, Zone: zone, Verify: &VerifyConfig{Disabled: true}, Strikes: 1 << 30, Rates: map[string]caddy.Duration{"bot": 0}, LogRepeats: &d}
	loggedHandler(b, h, zap.InfoLevel)
	h.decisions.SetLogger(jsonLogger(zapcore.AddSync(io.Discard), level))
	return h
}

// floodRequests are the flood's requests, one per floodTargets, from one
// client address, as a Caddy server (with error routes, or without) hands
// them to its handlers; asCaddyServes gives each its per-request setup.
func floodRequests(errorRoutes bool) []*http.Request {
	srv := &caddyhttp.Server{}
	if errorRoutes {
		srv.Errors = &caddyhttp.HTTPErrorConfig{Routes: caddyhttp.RouteList{{}}}
	}
	var rs []*http.Request
	for _, target := range floodTargets {
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("User-Agent", floodUA)
		ctx := context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: "198.51.100.7"})
		ctx = context.WithValue(ctx, caddyhttp.ServerCtxKey, srv)
		rs = append(rs, r.WithContext(ctx))
	}
	return rs
}

// discardWriter is a ResponseWriter that keeps only the status and the
// header map.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }

// asCaddyServes gives a request what Caddy's server gives each one before
// the handlers run (prepareRequest): a new replacer with the HTTP
// placeholders' provider, and new variables (the client IP, whether it came
// through a trusted proxy, the start time).
func asCaddyServes(r *http.Request) *http.Request {
	repl := caddy.NewReplacer()
	repl.Map(func(string) (any, bool) { return nil, false })
	ctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, repl)
	ctx = context.WithValue(ctx, caddyhttp.VarsCtxKey, map[string]any{
		caddyhttp.TrustedProxyVarKey: false,
		caddyhttp.ClientIPVarKey:     "198.51.100.7",
	})
	caddyhttp.SetVar(ctx, "start_time", time.Now())
	return r.WithContext(ctx)
}
