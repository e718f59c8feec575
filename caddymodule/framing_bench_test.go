package caddymodule

import (
	"net/http/httptest"
	"testing"

	"github.com/robotsguard/robotsguard/framing"
)

// framingCases are the requests of the framing layer's benchmark and
// allocation test: Chrome's TLS hello and navigation headers (ja4 on,
// posers enforce) over a connection whose framing the wrapper did not read
// (off) or read (on): Chrome's own HTTP/2 framing (a browser, served), or
// Go's (the uTLS client: a poser, decided as a bot and served).
var framingCases = []struct {
	name, print string
}{
	{"browser/framing-off", ""},
	{"browser/framing-on", "h2:1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p|1:0:256"},
	{"utls/framing-off", ""},
	{"utls/framing-on", "h2:2:0;4:4194304;5:16384;6:10485760|1073741824|0|a,m,p,s|0"},
}

// framingSetup is poserSetup's browser (check on) with the case's
// framing kept for its connection (until the test ends); it returns a
// function that serves the request and returns the recorder.
func framingSetup(tb testing.TB, name, print, path string) (serve func() *httptest.ResponseRecorder, done func()) {
	tb.Helper()
	h, r, next, stop := poserSetup(tb, poserCase{name: "framing-" + name, checkOn: true, browser: true}, path)
	if print != "" {
		framedConns.Put(r.RemoteAddr, framing.Builtin().Print(mustFrames(tb, print)))
	}
	tb.Cleanup(func() { framedConns.Forget(r.RemoteAddr) })
	w := httptest.NewRecorder()
	return func() *httptest.ResponseRecorder {
		h.ServeHTTP(w, r, next) // a refusal is an error (for Caddy's error routes) with the response written
		return w
	}, stop
}

// TestFramingAllocs: the framing layer adds no allocation to a request,
// a browser's (served) or the uTLS client's (a poser, decided as a bot and
// served), against the same request on a connection whose framing was not
// read; and it does what it is measured doing: the uTLS client's
// disallowed path is refused naming framing, the browser's served.
func TestFramingAllocs(t *testing.T) {
	allocs := map[string]float64{}
	for _, c := range framingCases {
		serve, done := framingSetup(t, c.name, c.print, "/articles/42")
		allocs[c.name] = testing.AllocsPerRun(1000, func() { serve() })
		done()
		serve, done = framingSetup(t, c.name, c.print, "/private/x")
		ev := serve().Header().Get("X-Robots-Guard-Evidence")
		if want := map[bool]string{true: "framing", false: ""}[c.name == "utls/framing-on"]; ev != want {
			t.Errorf("%s, a disallowed path: evidence %q, want %q", c.name, ev, want)
		}
		done()
	}
	for _, who := range []string{"browser", "utls"} {
		on, off := allocs[who+"/framing-on"], allocs[who+"/framing-off"]
		t.Logf("%s: %v allocations per request with the framing read, %v without", who, on, off)
		if on > off {
			t.Errorf("%s: the framing layer adds %v allocations per request", who, on-off)
		}
	}
}

// BenchmarkServeHTTPFraming measures ServeHTTP for Chrome's TLS hello and
// headers over a connection whose framing was not read, or read as
// Chrome's (a browser) or as Go's (the uTLS client, a poser). Beside ns/op
// it reports the process's CPU time per request (cpu-ns/op).
func BenchmarkServeHTTPFraming(b *testing.B) {
	for _, c := range framingCases {
		b.Run(c.name, func(b *testing.B) {
			serve, done := framingSetup(b, c.name, c.print, "/articles/42")
			defer done()
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				serve()
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// mustFrames returns Frames whose fingerprint is print.
func mustFrames(tb testing.TB, print string) *framing.Frames {
	tb.Helper()
	for _, f := range []*framing.Frames{
		{Proto: framing.H2, Settings: []framing.Setting{{ID: 1, Value: 65536}, {ID: 2, Value: 0}, {ID: 4, Value: 6291456}, {ID: 6, Value: 262144}},
			WindowUpdate: 15663105, Pseudo: "masp", HeadersPriority: framing.Priority{Exclusive: true, Weight: 256}},
		{Proto: framing.H2, Settings: []framing.Setting{{ID: 2, Value: 0}, {ID: 4, Value: 4194304}, {ID: 5, Value: 16384}, {ID: 6, Value: 10485760}},
			WindowUpdate: 1073741824, Pseudo: "amps"},
	} {
		if f.String() == print {
			return f
		}
	}
	tb.Fatalf("no Frames make %s", print)
	return nil
}
