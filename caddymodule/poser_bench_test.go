package caddymodule

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// goHello returns the ClientHello that Go's own HTTP client sends (a real
// handshake with a TLS server of this test), with its connection's address
// replaced by remote, ready for handshakes.Record.
func goHello(tb testing.TB, remote string) *tls.ClientHelloInfo {
	tb.Helper()
	seen := make(chan tls.ClientHelloInfo, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{GetConfigForClient: func(info *tls.ClientHelloInfo) (*tls.Config, error) {
		select {
		case seen <- *info:
		default:
		}
		return nil, nil
	}}
	srv.StartTLS()
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	info := <-seen
	info.Conn = fakeConn{remote}
	return &info
}

// chromeHello is a ClientHello of Chrome (BoringSSL), as in BenchmarkJA4.
func chromeHello(remote string) *tls.ClientHelloInfo {
	return &tls.ClientHelloInfo{
		Conn:              fakeConn{remote},
		SupportedVersions: []uint16{0x3a3a, 0x0304, 0x0303},
		CipherSuites:      []uint16{0x4a4a, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035},
		Extensions:        []uint16{0xdada, 0x001b, 0x0000, 0x0033, 0x0010, 0x4469, 0x0017, 0x002d, 0x000d, 0x0005, 0x0023, 0x0012, 0x002b, 0xff01, 0x000b, 0x000a, 0x0015, 0xfafa},
		SupportedProtos:   []string{"h2", "http/1.1"},
		SignatureSchemes:  []tls.SignatureScheme{0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601},
	}
}

// poserCase is one request of the poser check's benchmark and allocation
// test: a handler with the check on (ja4 on, posers enforce) or off (ja4
// off, posers off), and a request over TLS with a Chrome User-Agent from
// Go's TLS stack and Go's headers (a poser), or from Chrome's stack with
// Chrome's navigation headers (a browser).
type poserCase struct {
	name    string
	checkOn bool
	browser bool
	// behaviourOff turns the behaviour evidence off with the check on
	// (BehaviourConfig), and image makes the browser's request an image of a
	// page (Sec-Fetch-Dest: image) instead of a typed navigation: a
	// navigation is added to its client's and group's summaries (the same
	// page again: never held), an image only looks its client up.
	behaviourOff, image bool
}

var poserCases = []poserCase{
	{name: "poser/check-off"},
	{name: "poser/check-on", checkOn: true},
	{name: "browser/check-off", browser: true},
	{name: "browser/check-on", checkOn: true, browser: true},
	{name: "browser/behaviour-off", checkOn: true, browser: true, behaviourOff: true},
	{name: "image/check-on", checkOn: true, browser: true, image: true},
	{name: "image/behaviour-off", checkOn: true, browser: true, behaviourOff: true, image: true},
}

// poserSetup provisions the handler of c and returns it with a request for
// path and a next handler that answers nothing. robots.txt disallows
// /private/ only, and class poser has no rate ("rate poser 0s"), so that an
// allowed request of a poser is judged, found a poser (tls,sec-fetch) and
// decided as a bot, and served.
func poserSetup(tb testing.TB, c poserCase, path string) (*Handler, *http.Request, caddyhttp.Handler, func()) {
	tb.Helper()
	robots := filepath.Join(tb.TempDir(), "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /private/\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	h := &Handler{Robots: robots, Zone: "bench-poser-" + c.name, Verify: &VerifyConfig{Disabled: true},
		Rates: map[string]caddy.Duration{"poser": 0}, JA4: "off", Posers: "off"}
	if c.checkOn {
		h.JA4, h.Posers = "on", "enforce"
	}
	if c.behaviourOff {
		h.Behaviour.Disabled = true
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	if err := h.Provision(ctx); err != nil {
		cancel()
		tb.Fatal(err)
	}
	// The decision log is on, as in production (a poser's requests are
	// logged, its repeats folded), and written to nowhere.
	h.decisions.SetLogger(zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.InfoLevel)))
	r := httptest.NewRequest("GET", "https://example.test"+path, nil)
	r.RequestURI = path // as a server reads it (origin form)
	r.Header.Set("User-Agent", uaChrome)
	ip := "192.0.2.22"
	if c.browser {
		ip = "192.0.2.21"
	}
	r.RemoteAddr = ip + ":40000"
	if c.browser {
		handshakes.Record(chromeHello(r.RemoteAddr))
		for k, v := range map[string]string{"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-User": "?1",
			"Sec-Ch-Ua": `"Chromium";v="156", "Google Chrome";v="156", "Not-A.Brand";v="99"`, "Sec-Ch-Ua-Mobile": "?0", "Sec-Ch-Ua-Platform": `"Windows"`,
			"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "Accept-Encoding": "gzip, deflate, br, zstd"} {
			r.Header.Set(k, v)
		}
		if c.image {
			r.Header.Set("Sec-Fetch-Site", "same-origin")
			r.Header.Set("Sec-Fetch-Mode", "no-cors")
			r.Header.Set("Sec-Fetch-Dest", "image")
			r.Header.Del("Sec-Fetch-User")
			r.Header.Set("Accept", "image/avif,image/webp,image/apng,image/*,*/*;q=0.8")
		}
	} else {
		handshakes.Record(goHello(tb, r.RemoteAddr))
		r.Header.Set("Accept-Encoding", "gzip")
	}
	rctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer())
	r = r.WithContext(context.WithValue(rctx, caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: ip}))
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })
	return h, r, next, func() { h.Cleanup(); cancel() }
}

// TestPoserCheckAllocs: the poser check (ja4 on, posers enforce) adds no
// allocation to a request, a poser's (judged, decisive, decided as a bot
// and served) or a real browser's (judged, no evidence), against the same
// handler with the check off; and the check does what it is measured
// doing: the poser's stack is known as Go's, its request for a disallowed
// path is refused with its evidence named, the browser's is served.
func TestPoserCheckAllocs(t *testing.T) {
	allocs := map[string]float64{}
	for _, c := range poserCases {
		h, r, next, done := poserSetup(t, c, "/articles/42")
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, r, next); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.checkOn {
			ja4, s := handshakes.Get(r.RemoteAddr, false)
			if want := map[bool]string{false: "go", true: "chromium"}[c.browser]; s.Family != want || s.Browser != c.browser {
				t.Fatalf("%s: the table knows the handshake %s as %+v, want %s", c.name, ja4, s, want)
			}
			pr := r.Clone(r.Context())
			pr.URL.Path, pr.RequestURI = "/private/x", "/private/x"
			pw := httptest.NewRecorder()
			err := h.ServeHTTP(pw, pr, next)
			switch ev := pw.Header().Get("X-Robots-Guard-Evidence"); {
			case c.browser && (err != nil || ev != ""):
				t.Errorf("%s: a browser's disallowed path: %v, evidence %q, want it served", c.name, err, ev)
			case !c.browser && (err == nil || ev != "tls,sec-fetch" || pw.Header().Get("X-Robots-Guard") != "disallowed"):
				t.Errorf("%s: a poser's disallowed path: %v, X-Robots-Guard %q, evidence %q, want refused with tls,sec-fetch", c.name, err, pw.Header().Get("X-Robots-Guard"), ev)
			}
		}
		allocs[c.name] = testing.AllocsPerRun(1000, func() {
			if err := h.ServeHTTP(w, r, next); err != nil {
				t.Fatal(err)
			}
		})
		done()
	}
	for _, who := range []string{"poser", "browser"} {
		on, off := allocs[who+"/check-on"], allocs[who+"/check-off"]
		t.Logf("%s: %v allocations per request with the check on, %v off", who, on, off)
		if on > off {
			t.Errorf("%s: %v allocations per request with the check on, %v off: the check adds %v", who, on, off, on-off)
		}
	}
	for _, who := range []string{"browser", "image"} {
		on, off := allocs[who+"/check-on"], allocs[who+"/behaviour-off"]
		t.Logf("%s: %v allocations per request with the behaviour evidence on, %v off", who, on, off)
		if on > off {
			t.Errorf("%s: %v allocations per request with the behaviour evidence on, %v off: it adds %v", who, on, off, on-off)
		}
	}
}

// cpuTime returns the CPU time the process has used (user and system, in
// nanoseconds): on a machine shared with other work, CPU time per request
// is disturbed less than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkServeHTTPPoser measures ServeHTTP for a request with a Chrome
// User-Agent over TLS, with the poser check on (ja4 on, posers enforce)
// and off (ja4 off, posers off): from Go's TLS stack with Go's headers, a
// poser with the check on (judged, decisive, decided as a bot, served:
// the check's most expensive path), and from Chrome's stack with its
// headers, a browser (judged, no evidence). Beside ns/op it reports the
// process's CPU time per request (cpu-ns/op).
func BenchmarkServeHTTPPoser(b *testing.B) {
	for _, c := range poserCases {
		b.Run(c.name, func(b *testing.B) {
			h, r, next, done := poserSetup(b, c, "/articles/42")
			defer done()
			w := httptest.NewRecorder()
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if err := h.ServeHTTP(w, r, next); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
