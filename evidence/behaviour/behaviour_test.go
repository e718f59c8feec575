package behaviour

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Navigations as the browsers send them (examples/e2e's suites recorded
// each): a typed address or automation's navigate, a click on a link of
// the site, a script's location.href, a reload, a restored tab.
var (
	typed    = Request{Dest: "document", Mode: "navigate", Site: "none", User: "?1", Gestures: true}
	clicked  = Request{Dest: "document", Mode: "navigate", Site: "same-origin", User: "?1", Gestures: true}
	scripted = Request{Dest: "document", Mode: "navigate", Site: "same-origin", Gestures: true}
	image    = Request{Dest: "image", Mode: "no-cors", Site: "same-origin", Gestures: true}
)

func with(r Request, f func(*Request)) Request { f(&r); return r }

func TestSelfStarted(t *testing.T) {
	for _, c := range []struct {
		name     string
		r        Request
		nav, own bool
	}{
		{"typed address, bookmark, automation's navigate", typed, true, true},
		{"a click on the site", clicked, true, false},
		{"a script's location.href (Chromium, Firefox)", scripted, true, true},
		{"a script's location.href from a browser that sends no Sec-Fetch-User (Safari)", with(scripted, func(r *Request) { r.Gestures = false }), true, false},
		{"typed in Safari (no Sec-Fetch-User ever)", with(typed, func(r *Request) { r.User, r.Gestures = "", false }), true, true},
		{"a restored tab (Chromium: no page, no gesture)", with(typed, func(r *Request) { r.User = "" }), true, false},
		{"a link from another site", with(clicked, func(r *Request) { r.Site = "cross-site" }), true, false},
		{"another site's script", with(scripted, func(r *Request) { r.Site = "cross-site" }), true, false},
		{"a sibling subdomain's link", with(clicked, func(r *Request) { r.Site = "same-site" }), true, false},
		{"a reload or return visit (revalidation)", with(typed, func(r *Request) { r.Conditional = true }), true, false},
		{"a prefetch by speculation rules", with(scripted, func(r *Request) { r.Purpose = true }), false, false},
		{"an omnibox prerender", with(typed, func(r *Request) { r.Purpose, r.User = true, "" }), false, false},
		{"a frame", with(typed, func(r *Request) { r.Dest = "iframe" }), false, false},
		{"an image", image, false, false},
		{"no Fetch Metadata (plain HTTP)", Request{}, false, false},
	} {
		if got := c.r.Navigation(); got != c.nav {
			t.Errorf("%s: Navigation() = %v, want %v", c.name, got, c.nav)
		}
		if got := c.r.Navigation() && c.r.selfStarted(c.r.Gestures); got != c.own {
			t.Errorf("%s: self-started = %v, want %v", c.name, got, c.own)
		}
		if c.own && !c.r.MayCount() {
			t.Errorf("%s: self-started, and MayCount false", c.name)
		}
	}
}

// start is a fixed time, and at one n milliseconds after it.
var start = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).UnixNano()

func at(ms int) int64 { return start + int64(ms)*int64(time.Millisecond) }

// nav returns r for target, disallowed or not.
func nav(r Request, target string, disallowed bool) *Request {
	r.Target, r.Disallowed = Hash(target), disallowed
	return &r
}

func TestObservePages(t *testing.T) {
	c := Default
	var s Summary
	for i := range c.Pages {
		v := s.Observe(at(i*100), nav(typed, fmt.Sprintf("/p%d", i), false), &c)
		if held := i == c.Pages-1; v.Held != held || v.Fired != held || !v.Counted {
			t.Fatalf("navigation %d: %+v, want held %v", i+1, v, held)
		}
	}
	v := s.Verdict(at(800))
	if !v.Held || v.Pages != c.Pages || v.Disallowed != 0 || v.Navs != c.Pages {
		t.Errorf("verdict %+v", v)
	}
	if r := v.Reason(c.Window); r != "8 pages opened in 10s with no page of the site behind them (0 of them disallowed), of 8 navigations" {
		t.Errorf("reason %q", r)
	}
	// An image reads the hold and changes nothing.
	before := s
	if v := s.Observe(at(900), &image, &c); !v.Held || v.Fired || v.Counted || s != before {
		t.Errorf("an image: %+v, summary changed %v", v, s != before)
	}
	// The hold lasts Hold after the last navigation that made it.
	if s.Held(at(700)+int64(c.Hold)-1) != true || s.Held(at(700)+int64(c.Hold)) {
		t.Errorf("hold until %d", s.HeldUntil)
	}
}

func TestObserveDisallowed(t *testing.T) {
	c := Default
	var s Summary
	for i := range c.Disallowed {
		v := s.Observe(at(i*300), nav(typed, fmt.Sprintf("/private/%d", i), true), &c)
		if held := i == c.Disallowed-1; v.Held != held {
			t.Fatalf("disallowed navigation %d: %+v, want held %v", i+1, v, held)
		}
	}
	if v := s.Verdict(at(2000)); v.Pages != 4 || v.Disallowed != 4 {
		t.Errorf("verdict %+v", v)
	}
}

// TestObserveNeverAPerson: what a person's browser does never holds it.
func TestObserveNeverAPerson(t *testing.T) {
	c := Default
	for _, p := range []struct {
		name string
		do   func(s *Summary) Verdict
	}{
		{"the same disallowed page typed 100 times, 10 a second (an office all opening the link shared in a meeting)", func(s *Summary) (v Verdict) {
			for i := range 100 {
				v = s.Observe(at(i*100), nav(typed, "/account/", true), &c)
			}
			return v
		}},
		{"200 clicks on distinct pages, 20 a second, disallowed ones among them", func(s *Summary) (v Verdict) {
			for i := range 200 {
				v = s.Observe(at(i*50), nav(clicked, fmt.Sprintf("/search?q=%d", i), true), &c)
			}
			return v
		}},
		{"3 disallowed pages and 4 others typed in a second, then clicks", func(s *Summary) (v Verdict) {
			for i := range 7 {
				v = s.Observe(at(i*100), nav(typed, fmt.Sprintf("/p%d", i), i < 3), &c)
			}
			for i := range 50 {
				v = s.Observe(at(1000+i*200), nav(clicked, fmt.Sprintf("/a%d", i), i%2 == 0), &c)
			}
			return v
		}},
		{"7 distinct pages typed every 10 s, for an hour", func(s *Summary) (v Verdict) {
			for i := range 360 * 7 {
				v = s.Observe(at(i/7*10_000+i%7*100), nav(typed, fmt.Sprintf("/p%d", i), i%7 < 3), &c)
			}
			return v
		}},
		{"returns with a warm cache: 50 distinct pages revalidated", func(s *Summary) (v Verdict) {
			for i := range 50 {
				v = s.Observe(at(i*100), nav(with(typed, func(r *Request) { r.Conditional = true }), fmt.Sprintf("/p%d", i), true), &c)
			}
			return v
		}},
		{"a restored session of 30 tabs (Chromium: no page, no gesture)", func(s *Summary) (v Verdict) {
			v = s.Observe(at(0), nav(clicked, "/", false), &c) // a gesture seen before
			for i := range 30 {
				v = s.Observe(at(10+i*20), nav(with(typed, func(r *Request) { r.User = "" }), fmt.Sprintf("/p%d", i), true), &c)
			}
			return v
		}},
		{"Safari clicking 100 distinct disallowed pages (no Sec-Fetch-User, ever)", func(s *Summary) (v Verdict) {
			safari := with(clicked, func(r *Request) { r.User, r.Gestures = "", false })
			for i := range 100 {
				v = s.Observe(at(i*100), nav(safari, fmt.Sprintf("/account/%d", i), true), &c)
			}
			return v
		}},
		{"a site's speculation rules prefetching 40 links", func(s *Summary) (v Verdict) {
			for i := range 40 {
				v = s.Observe(at(i*5), nav(with(scripted, func(r *Request) { r.Purpose = true }), fmt.Sprintf("/p%d", i), true), &c)
			}
			return v
		}},
		{"mixed: 8 distinct typed pages among 4 clicks (share below 3 in 4)", func(s *Summary) (v Verdict) {
			for i := range 4 {
				s.Observe(at(i*10), nav(clicked, fmt.Sprintf("/c%d", i), false), &c)
			}
			for i := range 8 {
				v = s.Observe(at(100+i*100), nav(typed, fmt.Sprintf("/p%d", i), false), &c)
			}
			return v
		}},
	} {
		var s Summary
		if v := p.do(&s); v.Held || s.HeldUntil != 0 {
			t.Errorf("%s: held (%+v)", p.name, v)
		}
	}
}

func TestObserveWindow(t *testing.T) {
	c := Default
	var s Summary
	// 7 distinct pages, then 7 more after the window: never 8 in 10 s.
	for i := range 7 {
		s.Observe(at(i*100), nav(typed, fmt.Sprintf("/p%d", i), false), &c)
	}
	for i := range 7 {
		if v := s.Observe(at(10_700+i*100), nav(typed, fmt.Sprintf("/q%d", i), false), &c); v.Held {
			t.Fatalf("held at %d: %+v", i, v)
		}
	}
	// One more within 10 s of the second seven: 8.
	if v := s.Observe(at(11_500), nav(typed, "/r", false), &c); !v.Held {
		t.Errorf("not held: %+v", v)
	}
	// A sliding window: 3 disallowed early, the 4th 9.9 s after the first.
	s = Summary{}
	for i, ms := range []int{0, 5000, 9000, 9900} {
		v := s.Observe(at(ms), nav(typed, fmt.Sprintf("/private/%d", i), true), &c)
		if held := i == 3; v.Held != held {
			t.Errorf("disallowed %d at %d ms: %+v", i, ms, v)
		}
	}
	s = Summary{}
	for i, ms := range []int{0, 5000, 9000, 10_000} {
		if v := s.Observe(at(ms), nav(typed, fmt.Sprintf("/private/%d", i), true), &c); v.Held {
			t.Errorf("disallowed %d at %d ms: held", i, ms)
		}
	}
}

// TestObserveGesturesLearned: without a known TLS stack, a summary learns
// that the browser sends Sec-Fetch-User from its first ?1, and then counts
// a script's navigations.
func TestObserveGesturesLearned(t *testing.T) {
	c := Default
	script := with(scripted, func(r *Request) { r.Gestures = false })
	var s Summary
	for i := range 20 {
		if v := s.Observe(at(i*100), nav(script, fmt.Sprintf("/p%d", i), false), &c); v.Held {
			t.Fatalf("held before any ?1: %+v", v)
		}
	}
	s = Summary{}
	s.Observe(at(0), nav(with(typed, func(r *Request) { r.Gestures = false }), "/", false), &c)
	held := false
	for i := range 20 {
		if v := s.Observe(at(100+i*100), nav(script, fmt.Sprintf("/p%d", i), false), &c); v.Held {
			held = true
			if i != c.Pages-2 {
				t.Errorf("held at script navigation %d, want %d", i+1, c.Pages-1)
			}
			break
		}
	}
	if !held {
		t.Error("a script's navigations after a ?1: not held")
	}
}

// TestObserveFullRing: more distinct targets than Slots keep the counts
// right (20 ms apart: no burst).
func TestObserveFullRing(t *testing.T) {
	c := Config{Window: time.Minute, Pages: Slots, Disallowed: Slots, Hold: time.Minute}
	var s Summary
	for i := range 100 {
		v := s.Observe(at(20*i), nav(typed, fmt.Sprintf("/p%d", i), i%2 == 0), &c)
		if i >= Slots-1 != v.Held {
			t.Fatalf("navigation %d: %+v", i, v)
		}
		if v.Held && (v.Pages != Slots || v.Disallowed != Slots/2) {
			t.Fatalf("navigation %d: %+v, want %d pages, %d disallowed", i, v, Slots, Slots/2)
		}
	}
}

func TestHash(t *testing.T) {
	for _, same := range [][2]string{{"/account", "/account/"}, {"/search?q=a", "/search/?q=a"}} {
		if Hash(same[0]) != Hash(same[1]) {
			t.Errorf("%q and %q hash apart", same[0], same[1])
		}
	}
	for _, apart := range [][2]string{{"/", ""}, {"/a", "/b"}, {"/search?q=a", "/search?q=b"}, {"/a?x=/", "/a?x="}} {
		if Hash(apart[0]) == Hash(apart[1]) {
			t.Errorf("%q and %q hash alike", apart[0], apart[1])
		}
	}
}

func TestConfigGroup(t *testing.T) {
	g, m := Default.Group()
	if g.Pages != 16 || g.Disallowed != 16 || m.Pages != 4 || m.Disallowed != 2 || g.Window != Default.Window || m.Hold != Default.Hold {
		t.Errorf("group %+v, member %+v", g, m)
	}
	if err := g.Validate(); err != nil {
		t.Error(err)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := Default.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    func(*Config)
		want string
	}{
		{func(c *Config) { c.Window = 0 }, "window"},
		{func(c *Config) { c.Pages = Slots + 1 }, "pages"},
		{func(c *Config) { c.Pages = 0 }, "pages"},
		{func(c *Config) { c.Disallowed = c.Pages + 1 }, "disallowed"},
		{func(c *Config) { c.Hold = 0 }, "hold"},
	} {
		cfg := Default
		c.f(&cfg)
		if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error about %s", cfg, err, c.want)
		}
	}
}

func TestObserveAllocs(t *testing.T) {
	c := Default
	var s Summary
	i := 0
	r := typed
	if n := testing.AllocsPerRun(1000, func() {
		i++
		r.Target = uint32(i)
		s.Observe(at(i), &r, &c)
	}); n != 0 {
		t.Errorf("%v allocations per Observe", n)
	}
}

func BenchmarkObserve(b *testing.B) {
	c := Default
	for _, bc := range []struct {
		name string
		r    Request
	}{{"subresource", image}, {"click", clicked}, {"typed", typed}} {
		b.Run(bc.name, func(b *testing.B) {
			var s Summary
			r := bc.r
			for i := 0; b.Loop(); i++ {
				r.Target = uint32(i % 5)
				s.Observe(at(i), &r, &c)
			}
		})
	}
}

func FuzzObserve(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Config{Window: time.Second, Pages: 3, Disallowed: 2, Hold: time.Second}
		kinds := []Request{typed, clicked, scripted, image, with(typed, func(r *Request) { r.Conditional = true })}
		var s Summary
		now := at(0)
		for i := 0; i+1 < len(data); i += 2 {
			now += int64(data[i]) * int64(20*time.Millisecond)
			r := kinds[int(data[i+1])%len(kinds)]
			r.Target, r.Disallowed = uint32(data[i+1]>>3), data[i+1]&4 != 0
			v := s.Observe(now, &r, &c)
			pages, dis := 0, 0
			for _, e := range s.Targets {
				if e&entryUsed != 0 {
					pages++
					if e&entryDisallowed != 0 {
						dis++
					}
				}
			}
			if v.Fired && (v.Pages > pages || v.Disallowed > dis || v.Pages < c.Pages && v.Disallowed < c.Disallowed) {
				t.Fatalf("fired with %+v, summary holds %d pages, %d disallowed", v, pages, dis)
			}
			if v.Held != (s.HeldUntil > now) {
				t.Fatalf("verdict %+v, held until %d, now %d", v, s.HeldUntil, now)
			}
		}
	})
}
