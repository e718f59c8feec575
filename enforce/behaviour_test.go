package enforce

import (
	"fmt"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/uaclass"
)

const behaviourRobots = "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\nDisallow: /search\nDisallow: /account\n"

// chromiumTLS is what the fingerprint table says of Chromium's handshake.
var chromiumTLS = evidence.TLS{Known: true, Browser: true, Family: "chromium"}

// Chromium's requests as it sends them: a navigation a crawler's navigate
// starts (a typed address), a click on the site, an image of the page.
var (
	typedNav = http.Header{"User-Agent": {chromeUA}, "Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"navigate"},
		"Sec-Fetch-Dest": {"document"}, "Sec-Fetch-User": {"?1"}, "Sec-Ch-Ua": {`"Chromium";v="156", "Google Chrome";v="156"`},
		"Sec-Ch-Ua-Mobile": {"?0"}, "Sec-Ch-Ua-Platform": {`"Windows"`}}
	clickNav = with(typedNav, "Sec-Fetch-Site", "same-origin")
	imageReq = http.Header{"User-Agent": {chromeUA}, "Sec-Fetch-Site": {"same-origin"}, "Sec-Fetch-Mode": {"no-cors"}, "Sec-Fetch-Dest": {"image"},
		"Sec-Ch-Ua": typedNav["Sec-Ch-Ua"], "Sec-Ch-Ua-Mobile": {"?0"}, "Sec-Ch-Ua-Platform": {`"Windows"`}}
)

func with(h http.Header, kv ...string) http.Header {
	out := h.Clone()
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = []string{kv[i+1]}
	}
	return out
}

// browse judges and decides one request of a Chromium claim from ip, as
// the handler does.
func browse(t *testing.T, e *Engine, ip, target string, h http.Header) (*Request, Decision) {
	t.Helper()
	r := readReq(t, e, ip, "example.com", target, "GET", h, chromiumTLS, evidence.Secure, chromiumJA4)
	return r, e.Decide(r, compile(behaviourRobots))
}

// chromiumJA4 is Chromium 156's JA4 over TCP.
const chromiumJA4 = "t13d1516h2_8daaf6152771_d8a2da3f94cd"

// TestBehaviourCrawler: a real browser's crawler, as the e2e suite
// recorded it (every page loaded with the browser's navigate: a typed
// address, ?1), breadth first: its 4th distinct disallowed page (or its
// 8th page) makes it a poser with evidence "behaviour", refused the
// disallowed paths with the rule and throttled under Crawl-delay; a click
// and an image from its address and browser build are still a browser's. Posers "log" serves it and logs the evidence; behaviour
// "off" and posers "off" never hold it; dry run decides as enforce would
// and enforces nothing.
func TestBehaviourCrawler(t *testing.T) {
	pages := []string{"/", "/articles/", "/about.html", "/account/", "/articles/a01.html", "/search?q=tag1", "/articles/a02.html",
		"/search?q=tag2", "/articles/a03.html", "/search?q=tag3", "/articles/a04.html", "/search?q=tag4", "/articles/a05.html"}
	for _, c := range []struct {
		name string
		cfg  Config
		held bool
	}{
		{"enforce", Config{}, true},
		{"posers log", Config{Posers: PosersLog}, true},
		{"dry run", Config{DryRun: true}, true},
		{"behaviour off", Config{BehaviourOff: true}, false},
		{"posers off", Config{Posers: PosersOff}, false},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			clock := newClock()
			e := newEngine(t, c.cfg, clock)
			read, heldAt := 0, -1
			for i, p := range pages {
				r, d := browse(t, e, "192.0.2.7", p, typedNav)
				clock.Advance(120 * time.Millisecond)
				if d.Evidence&evidence.Behaviour == 0 {
					if d.Action != Allow || r.UA.Class != uaclass.Browser {
						t.Fatalf("%s before the evidence: %v %v, class %v", p, d.Action, d.Reason, r.UA.Class)
					}
					if d.BrowserDisallowed {
						read++
					}
					continue
				}
				if heldAt < 0 {
					heldAt = i
					if why := r.Evidence.Reason(); !strings.Contains(why, "behaviour: it opened 8 pages in 10s with no page of the site behind them (3 of them disallowed), among 8 navigations, as a crawler does") {
						t.Errorf("evidence reason %q", why)
					}
				}
				switch {
				case c.cfg.Posers == PosersLog:
					if d.Action != Allow || r.UA.Class != uaclass.Browser || !d.Noteworthy() {
						t.Errorf("%s, posers log: %v %v class %v noteworthy %v", p, d.Action, d.Reason, r.UA.Class, d.Noteworthy())
					}
				case strings.HasPrefix(p, "/search") || strings.HasPrefix(p, "/account"):
					if d.Action != Deny || d.Reason != ReasonDisallowed || r.UA.Class != uaclass.Poser || d.Enforced() == c.cfg.DryRun {
						t.Errorf("%s held: %v %v class %v", p, d.Action, d.Reason, r.UA.Class)
					}
					hdr := http.Header{}
					NewRefusals(RefusalOptions{DenyStatus: 403, ThrottleStatus: 429}).Refuse(hdr, &d, compile(behaviourRobots))
					if hdr.Get("X-Robots-Guard-Evidence") != "behaviour" || !strings.Contains(hdr.Get("X-Robots-Guard-Rule"), "Disallow: /") {
						t.Errorf("%s: refusal headers %v", p, hdr)
					}
				}
			}
			if c.held != (heldAt >= 0) {
				t.Fatalf("held at %d, want held %v", heldAt, c.held)
			}
			if !c.held {
				return
			}
			if heldAt != 7 || read != 2 {
				t.Errorf("held at page %d (%s) having read %d disallowed pages, want the 8th page and 2", heldAt+1, pages[heldAt], read)
			}
			if c.cfg.Posers == PosersLog {
				return
			}
			// Held: its pages are paced by Crawl-delay; a click and an image
			// from its address and build (a colleague's) are a browser's.
			throttled := 0
			for i := range 6 {
				if _, d := browse(t, e, "192.0.2.7", fmt.Sprintf("/articles/b%d.html", i), typedNav); d.Action == Throttle {
					throttled++
				}
			}
			if throttled == 0 {
				t.Error("6 typed pages at once under Crawl-delay: 1, none throttled")
			}
			for _, rq := range []struct {
				path string
				h    http.Header
			}{{"/search?q=colleague", clickNav}, {"/private/logo.png", imageReq}} {
				if r, d := browse(t, e, "192.0.2.7", rq.path, rq.h); d.Action != Allow || r.UA.Class != uaclass.Browser || d.Evidence != 0 {
					t.Errorf("%s (%s) from the held client's address and build: %v %v class %v", rq.path, rq.h.Get("Sec-Fetch-Dest"), d.Action, d.Reason, r.UA.Class)
				}
			}
			// The hold lasts 30 minutes after the last navigation that made it.
			clock.Advance(31 * time.Minute)
			if r, d := browse(t, e, "192.0.2.7", "/account/orders.html", typedNav); d.Action != Allow || r.UA.Class != uaclass.Browser {
				t.Errorf("after the hold: %v %v class %v", d.Action, d.Reason, r.UA.Class)
			}
		})
	}
}

// TestBehaviourPeople: what a person's browser does holds nobody.
func TestBehaviourPeople(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	// A fast reader: a typed start, then 200 clicks at 10 a second,
	// disallowed pages among them, each with its images.
	browse(t, e, "192.0.2.8", "/", typedNav)
	for i := range 200 {
		clock.Advance(100 * time.Millisecond)
		target := fmt.Sprintf("/articles/a%d.html", i)
		if i%3 == 0 {
			target = fmt.Sprintf("/search?q=%d", i)
		}
		for j, rq := range []struct {
			path string
			h    http.Header
		}{{target, clickNav}, {"/img/" + fmt.Sprint(i) + ".png", imageReq}} {
			if r, d := browse(t, e, "192.0.2.8", rq.path, rq.h); d.Action != Allow || r.UA.Class != uaclass.Browser || d.Evidence != 0 {
				t.Fatalf("click %d.%d %s: %v %v class %v evidence %v", i, j, rq.path, d.Action, d.Reason, r.UA.Class, d.Evidence)
			}
		}
	}
	// An office of 30 on one address, each typing the same address, then
	// clicking; and 7 distinct pages typed in 10 s.
	for i := range 30 {
		clock.Advance(50 * time.Millisecond)
		if _, d := browse(t, e, "192.0.2.9", "/account/", typedNav); d.Action != Allow {
			t.Fatalf("office %d: %v %v", i, d.Action, d.Reason)
		}
	}
	for i := range 7 {
		clock.Advance(1400 * time.Millisecond)
		if _, d := browse(t, e, "192.0.2.10", fmt.Sprintf("/account/%d", i%3), typedNav); d.Action != Allow {
			t.Fatalf("typed %d: %v %v", i, d.Action, d.Reason)
		}
	}
}

// TestBehaviourGroup: a crawler spread over the addresses of a /24, each
// address loading 3 disallowed pages, is caught by its group: the
// network's summary holds, and then each address at half the thresholds
// (its 2nd disallowed page). Another browser build in the network (another
// fingerprint), and the same build that only clicks, are not held.
func TestBehaviourGroup(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	read := 0
	for a := 1; a <= 10; a++ {
		for p := range 3 {
			clock.Advance(50 * time.Millisecond)
			_, d := browse(t, e, fmt.Sprintf("198.51.100.%d", a), fmt.Sprintf("/private/%d/%d.html", a, p), typedNav)
			if d.Action == Allow {
				read++
			}
		}
	}
	// Alone, each address would read all 3 (30); the group holds the
	// network at its 16th, and each later address at its 2nd.
	if read > 15+1*5 {
		t.Errorf("%d disallowed pages read over 10 addresses", read)
	}
	r := readReq(t, e, "198.51.100.99", "example.com", "/private/x.html", "GET", typedNav, chromiumTLS, evidence.Secure, "t13d1517h2_8daaf6152771_b6f405a00624")
	if d := e.Decide(r, compile(behaviourRobots)); d.Action != Allow {
		t.Errorf("another fingerprint in the network: %v %v", d.Action, d.Reason)
	}
	if _, d := browse(t, e, "198.51.100.100", "/search?q=1", clickNav); d.Action != Allow {
		t.Errorf("a click in the network: %v %v", d.Action, d.Reason)
	}
	t.Logf("%d disallowed pages read over 10 addresses", read)
}

// TestBehaviourFlood: 500,000 distinct clients each starting a navigation
// (the most a flood can make a table keep) leave the summaries within
// their bound and the heap bounded, and a crawler held before the flood
// is held after it.
func TestBehaviourFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood")
	}
	clock := newClock()
	e := newEngine(t, Config{BehaviourClients: 20_000}, clock)
	for i := range 8 {
		browse(t, e, "203.0.113.1", fmt.Sprintf("/p%d", i), typedNav)
		clock.Advance(50 * time.Millisecond) // one page after another, not a burst (behaviour.BurstGap)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := compile(behaviourRobots)
	rd := Reader{Classifier: classifier, Engine: e}
	hr := &http.Request{Method: "GET", Header: typedNav, Host: "example.com"}
	f := &Facts{URI: "/x", Scheme: "https", Origin: evidence.Secure, JA4: chromiumJA4, TLS: chromiumTLS}
	var out Reading
	for i := range 500_000 {
		if i%10_000 == 0 {
			clock.Advance(time.Second)
		}
		f.ClientIP = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		if err := rd.Read(hr, f, p, &out); err != nil {
			t.Fatal(err)
		}
		e.Decide(&out.Request, p)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	clients, groups := e.behaviours.clients.Len(), e.behaviours.groups.Len()
	if clients > 20_000 || groups > 20_000 {
		t.Errorf("%d client and %d group summaries, want at most 20,000 each", clients, groups)
	}
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("500,000 clients: %d client and %d group summaries, heap %+.1f MiB (%.1f MiB in all)", clients, groups,
		float64(grew)/(1<<20), float64(after.HeapAlloc)/(1<<20))
	if grew > 64<<20 {
		t.Errorf("the heap grew by %d MiB", grew>>20)
	}
	if r, _ := browse(t, e, "203.0.113.1", "/private/a.html", typedNav); r.UA.Class != uaclass.Poser {
		t.Error("the crawler held before the flood is no longer held")
	}
}

// TestBehaviourAllocs: judging and deciding a browser's requests with the
// behaviour evidence allocates nothing, once its summary exists.
func TestBehaviourAllocs(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{}, clock)
	p := compile(behaviourRobots)
	rd := Reader{Classifier: classifier, Engine: e}
	f := &Facts{ClientIP: netip.MustParseAddr("192.0.2.20"), URI: "/b.html", Scheme: "https", Origin: evidence.Secure, JA4: chromiumJA4, TLS: chromiumTLS}
	var out Reading
	for _, h := range []http.Header{typedNav, clickNav, imageReq} {
		browse(t, e, "192.0.2.20", "/a.html", typedNav)
		hr := &http.Request{Method: "GET", Header: h, Host: "example.com"}
		if n := testing.AllocsPerRun(200, func() {
			if err := rd.Read(hr, f, p, &out); err != nil {
				t.Fatal(err)
			}
			e.Decide(&out.Request, p)
		}); n != 0 {
			t.Errorf("%s: %v allocations", h.Get("Sec-Fetch-Dest")+" "+h.Get("Sec-Fetch-Site"), n)
		}
	}
}

func TestBehaviourSettings(t *testing.T) {
	cfg, err := Settings{Behaviour: BehaviourSettings{Pages: 6}}.Check()
	if err != nil || cfg.Behaviour.Pages != 6 || cfg.Behaviour.Disallowed != 4 || cfg.Behaviour.Window != 10*time.Second {
		t.Errorf("%+v %v", cfg.Behaviour, err)
	}
	for _, c := range []struct {
		s    BehaviourSettings
		path string
	}{
		{BehaviourSettings{Pages: 17}, "behaviour.pages"},
		{BehaviourSettings{Pages: 3, Disallowed: 5}, "behaviour.disallowed"},
		{BehaviourSettings{Window: time.Millisecond}, "behaviour.window"},
		{BehaviourSettings{Hold: -time.Second}, "behaviour.hold"},
	} {
		_, err := Settings{Behaviour: c.s}.Check()
		fe, ok := err.(*FieldError)
		if !ok || fe.Path != c.path {
			t.Errorf("%+v: %v, want an error of %s", c.s, err, c.path)
		}
	}
	if cfg, err := (Settings{Behaviour: BehaviourSettings{Pages: 2}}).Check(); err != nil || cfg.Behaviour.Disallowed != 2 {
		t.Errorf("pages 2: disallowed %d, %v", cfg.Behaviour.Disallowed, err)
	}
	if cfg, err := (Settings{Behaviour: BehaviourSettings{Off: true, Pages: 99}}).Check(); err != nil || !cfg.BehaviourOff {
		t.Errorf("off: %v", err)
	}
}

// BenchmarkBehaviour: reading and deciding a browser's request with the
// behaviour evidence on and off: a typed navigation of the same page (its
// client's and group's summaries read and written: a person's costliest
// request to it), a click (looked up, nothing made) and an image (one
// header read).
//
// Beside ns/op it reports the process's CPU time per request (cpu-ns/op),
// which other work on a shared machine disturbs less.
func BenchmarkBehaviour(b *testing.B) {
	p := compile(behaviourRobots)
	for _, c := range []struct {
		name string
		h    http.Header
	}{{"typed", typedNav}, {"click", clickNav}, {"image", imageReq}} {
		for _, off := range []bool{false, true} {
			name := c.name + "/on"
			if off {
				name = c.name + "/off"
			}
			b.Run(name, func(b *testing.B) {
				e, err := New(Config{BehaviourOff: off}, NewMemoryStore(1000, 0, time.Hour))
				if err != nil {
					b.Fatal(err)
				}
				rd := Reader{Classifier: classifier, Engine: e}
				hr := &http.Request{Method: "GET", Header: c.h, Host: "example.com"}
				f := &Facts{ClientIP: netip.MustParseAddr("192.0.2.30"), URI: "/articles/a1.html", Scheme: "https", Origin: evidence.Secure, JA4: chromiumJA4, TLS: chromiumTLS}
				var out Reading
				cpu := cpuTime()
				for b.Loop() {
					if err := rd.Read(hr, f, p, &out); err != nil {
						b.Fatal(err)
					}
					e.Decide(&out.Request, p)
				}
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// cpuTime returns the CPU time the process has used (user and system, in
// nanoseconds).
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestBehaviourConcurrent: clients deciding at once share the tables
// safely (run with -race), and a crawler among them is still held.
func TestBehaviourConcurrent(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{BehaviourClients: 256}, clock)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				h := typedNav
				if i%3 == 0 {
					h = clickNav
				}
				browse(t, e, fmt.Sprintf("198.51.%d.%d", g, i%200), fmt.Sprintf("/p%d", i%11), h)
			}
		}()
	}
	held := false
	for i := range 8 {
		clock.Advance(50 * time.Millisecond) // one page after another, not a burst (behaviour.BurstGap)
		if r, _ := browse(t, e, "203.0.113.9", fmt.Sprintf("/q%d", i), typedNav); r.UA.Class == uaclass.Poser {
			held = true
		}
	}
	wg.Wait()
	if !held {
		t.Error("the crawler among them was not held")
	}
}
