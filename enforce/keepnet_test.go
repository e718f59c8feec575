package enforce

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// The tests of issue 27: verified crawlers get the reference reading,
// departures never escalate, feeds reach feed readers, verified
// user-triggered fetchers (engine_test.go, TestUserTriggered), renderers'
// subresources, and the parts of class ai.

const (
	uaMiniflux = "Mozilla/5.0 (compatible; Miniflux/2.2.4; +https://miniflux.app)"
	uaHeadless = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36"
)

// TestReferenceReading: a verified Googlebot reads "/page.php?id=1" under
// "Disallow: /*.php$", as Google documents; an unverified bot is refused
// it by the query departure, without a strike; what the reference
// refuses is refused to both, with one.
func TestReferenceReading(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Strikes: 3}, clock)
	p := compile("User-agent: *\nDisallow: /*.php$\nDisallow: /private/\n")
	gb := req("66.249.66.1", uaGooglebot, "/page.php?id=1")
	gb.Verdict = uaclass.Verified
	d := e.Decide(gb, p)
	expect(t, "verified Googlebot, /page.php?id=1", d, Allow, ReasonNone)
	if d.Rule != nil || d.Departure != policy.NoDeparture {
		t.Errorf("verified: rule %v, departure %q", d.Rule, d.Departure)
	}
	gb.Target = tgt("/private%2Fx") // a spelling departure: the reference keeps %2F
	expect(t, "verified Googlebot, /private%2Fx", e.Decide(gb, p), Allow, ReasonNone)
	gb.Target = tgt("/page.php")
	expect(t, "verified Googlebot, /page.php", e.Decide(gb, p), Deny, ReasonDisallowed)

	for _, v := range []uaclass.Verdict{uaclass.NotClaimed, uaclass.Unverified} {
		r := req("192.0.2.1", uaExample, "/page.php?id=1")
		if v == uaclass.Unverified {
			r = req("192.0.2.2", uaGooglebot, "/page.php?id=1")
		}
		r.Verdict = v
		d := e.Decide(r, p)
		expect(t, "unverified "+v.String(), d, Deny, ReasonDeparture)
		if d.Departure != policy.DepartureQuery || d.Strikes != 0 || d.Rule == nil || d.Rule.Pattern != "/*.php$" {
			t.Errorf("unverified %v: departure %q, strikes %d, rule %v", v, d.Departure, d.Strikes, d.Rule)
		}
	}
	// A signature with pinned keys is evidence (Signed, Verified; one with
	// the agent's own directory keys sets neither, see signature.Identify).
	signed := req("192.0.2.3", uaGooglebot, "/page.php?id=1")
	signed.Verdict, signed.Signed = uaclass.Verified, true
	expect(t, "signed, pinned", e.Decide(signed, p), Allow, ReasonNone)
}

// TestDeparturesNeverEscalate: an unverified bot refused 20 times by the
// query departure (URLs the reference allows) has no strike and is still
// served an allowed page; a refusal the reference makes is still a strike.
// On main the 5th refusal blocked it.
func TestDeparturesNeverEscalate(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{ClassRates: map[uaclass.Class]time.Duration{}}, clock)
	p := compile("User-agent: *\nDisallow: /*.php$\nDisallow: /messages$\nDisallow: /private/\n")
	for i := 0; i < 20; i++ {
		target := "/page.php?id=" + string(rune('a'+i))
		if i%2 == 1 {
			target = "/messages?a=" + string(rune('a'+i))
		}
		d := e.Decide(req("192.0.2.1", uaExample, target), p)
		expect(t, target, d, Deny, ReasonDeparture)
		if d.Strikes != 0 || !d.BlockedUntil.IsZero() {
			t.Fatalf("%s: strikes %d, blocked until %v", target, d.Strikes, d.BlockedUntil)
		}
	}
	expect(t, "an allowed page after 20 departures", e.Decide(req("192.0.2.1", uaExample, "/index.html"), p), Allow, ReasonNone)
	d := e.Decide(req("192.0.2.1", uaExample, "/private/x"), p)
	expect(t, "the reference refuses", d, Deny, ReasonDisallowed)
	if d.Strikes != 1 {
		t.Errorf("strikes %d after a real refusal, want 1", d.Strikes)
	}
	// A blocked client is refused as blocked, departure or not.
	for i := 0; i < 5; i++ {
		e.Decide(req("192.0.2.9", uaExample, "/private/x"), p)
	}
	expect(t, "blocked, then a departure", e.Decide(req("192.0.2.9", uaExample, "/page.php?id=1"), p), Deny, ReasonBlockedClient)
}

// TestFeedReaders: under "Disallow: /" a feed reader's GET is decided on
// the response: a feed is served (reason feed, no strike), an HTML page
// refused as today, strike included; a group naming the reader, a POST or
// another bot claiming nothing get no such care.
func TestFeedReaders(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Strikes: 3}, clock)
	p := compile("User-agent: *\nDisallow: /\n")
	r := req("192.0.2.1", uaMiniflux, "/feed.xml")
	d := e.Decide(r, p)
	if d.Action != Allow || !d.UnlessFeed || d.Rule == nil || d.Group != "*" {
		t.Fatalf("feed reader under Disallow: /: %+v", d)
	}
	served := e.FeedOutcome(r, d, true)
	expect(t, "a feed", served, Allow, ReasonFeed)
	if served.Strikes != 0 || served.UnlessFeed {
		t.Errorf("feed served: %+v", served)
	}
	for i := 1; i <= 3; i++ {
		r := req("192.0.2.1", uaMiniflux, "/article.html")
		d := e.Decide(r, p)
		if !d.UnlessFeed {
			t.Fatalf("page %d: %+v", i, d)
		}
		d = e.FeedOutcome(r, d, false)
		expect(t, "an HTML page", d, Deny, ReasonDisallowed)
		if d.Strikes != i {
			t.Errorf("page %d: strikes %d", i, d.Strikes)
		}
	}
	d = e.Decide(req("192.0.2.1", uaMiniflux, "/feed.xml"), p)
	expect(t, "blocked after 3 pages", d, Deny, ReasonBlockedClient)
	if d.FeedOnly() {
		t.Error("a refused decision is feed-only")
	}

	named := compile("User-agent: Miniflux\nDisallow: /\n\nUser-agent: *\nDisallow: /\n")
	expect(t, "a group names the reader", e.Decide(req("192.0.2.2", uaMiniflux, "/feed.xml"), named), Deny, ReasonDisallowed)
	post := req("192.0.2.3", uaMiniflux, "/feed.xml")
	post.Method = http.MethodPost
	expect(t, "a POST", e.Decide(post, p), Deny, ReasonDisallowed)
	head := req("192.0.2.3", uaMiniflux, "/feed.xml")
	head.Method = http.MethodHead
	if d := e.Decide(head, p); !d.UnlessFeed {
		t.Errorf("a HEAD: %+v", d)
	}
	expect(t, "curl claims nothing", e.Decide(req("192.0.2.4", "curl/8.5.0", "/feed.xml"), p), Deny, ReasonDisallowed)

	// A feed reader refused an HTML page only by a departure: no strike.
	dp := compile("User-agent: *\nDisallow: /*.php$\n")
	r = req("192.0.2.5", uaMiniflux, "/page.php?id=1")
	d = e.Decide(r, dp)
	if !d.UnlessFeed || d.Departure != policy.DepartureQuery {
		t.Fatalf("departure, feed reader: %+v", d)
	}
	d = e.FeedOutcome(r, d, false)
	expect(t, "departure, not a feed", d, Deny, ReasonDeparture)
	if d.Strikes != 0 {
		t.Errorf("departure, not a feed: strikes %d", d.Strikes)
	}
	// Throttling comes first: a reader over its rate is throttled, feed or not.
	fast := newEngine(t, Config{Burst: 1, Grace: -1}, clock)
	slow := compile("User-agent: *\nCrawl-delay: 60\nDisallow: /\n")
	fast.Decide(req("192.0.2.6", uaMiniflux, "/feed.xml"), slow)
	expect(t, "a reader over its Crawl-delay", fast.Decide(req("192.0.2.6", uaMiniflux, "/feed.xml"), slow), Throttle, ReasonCrawlDelay)
}

// TestFeedGate: the gate passes a feed by its headers, and holds anything
// else at WriteHeader: status, headers and body of the backend undone, its
// writes dropped, the headers set before the gate kept.
func TestFeedGate(t *testing.T) {
	for _, c := range []struct {
		name     string
		dry      bool
		handler  func(w http.ResponseWriter)
		feed     bool
		handlErr error
	}{
		{"rss", false, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/rss+xml; charset=utf-8")
			w.Write([]byte("<rss/>"))
		}, true, nil},
		{"atom, status written", false, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/atom+xml")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("<feed/>"))
		}, true, nil},
		{"json feed, flushed before the body", false, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/feed+json")
			w.(http.Flusher).Flush()
			w.Write([]byte("{}"))
		}, true, nil},
		{"x-rss, by ReadFrom", false, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "APPLICATION/X-RSS+XML")
			io.Copy(w, strings.NewReader("<rss/>"))
		}, true, nil},
		{"304 without a type", false, func(w http.ResponseWriter) {
			w.Header().Set("ETag", `"v1"`)
			w.WriteHeader(http.StatusNotModified)
		}, true, nil},
		{"html", false, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Set-Cookie", "session=1")
			w.Write([]byte("<html>secret</html>"))
		}, false, nil},
		{"no type", false, func(w http.ResponseWriter) { w.Write([]byte("secret")) }, false, nil},
		{"generic xml", false, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/xml")
			w.Write([]byte("<secret/>"))
		}, false, nil},
		{"html 304", false, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotModified)
		}, false, nil},
		{"early hints, then html", false, func(w http.ResponseWriter) {
			w.Header().Set("Link", "</secret.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusOK)
		}, false, nil},
		{"headers after the hold", false, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusOK)
			w.Header().Set("X-Late", "1")
		}, false, nil},
		{"nothing written, an error", false, func(w http.ResponseWriter) {}, false, errors.New("404")},
		{"dry run passes html", true, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>page</html>"))
		}, false, nil},
	} {
		rec := httptest.NewRecorder()
		rec.Header().Set("Link", "</>; rel=canonical") // set before the gate
		g := NewFeedGate(rec, c.dry)
		c.handler(g)
		feed := g.Done(c.handlErr)
		if feed != c.feed {
			t.Errorf("%s: feed %v, want %v", c.name, feed, c.feed)
		}
		if held := g.Held(); held != (!c.feed && !c.dry) {
			t.Errorf("%s: held %v", c.name, held)
		}
		if c.feed || c.dry {
			continue
		}
		if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Flushed {
			t.Errorf("%s: held, but %d %q written (flushed %v)", c.name, rec.Code, rec.Body.String(), rec.Flushed)
		}
		if h := rec.Header(); len(h) != 1 || h.Get("Link") != "</>; rel=canonical" {
			t.Errorf("%s: headers of a held response %v, want only those before the gate", c.name, h)
		}
		// Its writes are dropped, not failed: reverse_proxy would abort
		// the connection, and the refusal would not be sent.
		if n, err := g.Write([]byte("more")); n != 4 || err != nil || rec.Body.Len() != 0 {
			t.Errorf("%s: a held response's write: %d, %v", c.name, n, err)
		}
	}
	// A gate has no Unwrap: http.ResponseController cannot reach the
	// connection (Hijack) around it.
	if _, ok := any(&FeedGate{}).(interface{ Unwrap() http.ResponseWriter }); ok {
		t.Error("FeedGate has Unwrap")
	}
	if err := http.NewResponseController(NewFeedGate(httptest.NewRecorder(), false)).EnableFullDuplex(); !errors.Is(err, http.ErrNotSupported) {
		t.Errorf("ResponseController through the gate: %v", err)
	}
}

// TestRenderer: headless Chromium (honest User-Agent) loads a page and its
// 10 images under "Crawl-delay: 1": the images get a browser's rate, the
// page navigations the Crawl-delay; a disallowed image is still refused,
// and a blocked renderer's subresources too.
func TestRenderer(t *testing.T) {
	clock := newClock()
	e := newEngine(t, Config{Strikes: 3}, clock)
	p := compile("User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n")
	page := func(path string) *Request {
		r := req("192.0.2.1", uaHeadless, path)
		r.Dest, r.Accept = "document", "text/html,application/xhtml+xml"
		return r
	}
	image := func(path string) *Request {
		r := req("192.0.2.1", uaHeadless, path)
		r.Dest, r.Accept = "image", "image/avif,image/webp,*/*;q=0.8"
		return r
	}
	expect(t, "page", e.Decide(page("/gallery.html"), p), Allow, ReasonNone)
	for i := 0; i < 10; i++ {
		d := e.Decide(image("/img/"+string(rune('0'+i))+".png"), p)
		if d.Action != Allow || d.Violation {
			t.Fatalf("image %d: %+v", i, d)
		}
	}
	// Rapid navigations: the Crawl-delay's burst (3), one slip, then 429.
	var actions []Action
	for i := 0; i < 5; i++ {
		actions = append(actions, e.Decide(page("/p"+string(rune('0'+i))+".html"), p).Action)
	}
	if actions[0] != Allow || actions[1] != Allow || actions[4] != Throttle {
		t.Errorf("rapid navigations: %v, want served at first, then throttled", actions)
	}
	// The images did not use up the pages' allowance, nor the pages the
	// images': a throttled renderer still gets the current page's images.
	expect(t, "an image while pages are throttled", e.Decide(image("/img/x.png"), p), Allow, ReasonNone)
	expect(t, "a disallowed image", e.Decide(image("/private/x.png"), p), Deny, ReasonDisallowed)

	// A scraper claiming HeadlessChrome and asking only for "images": a
	// browser's rate, not unlimited (burst 60, then one per 100ms).
	clock.Advance(time.Hour)
	served := 0
	for i := 0; i < 200; i++ {
		r := image("/article/" + string(rune('a'+i%26)))
		if d := e.Decide(r, p); d.Action == Allow {
			served++
		}
	}
	if served < 60 || served > 62 {
		t.Errorf("200 claimed images at once: %d served, want the browser burst (60) and its slip", served)
	}
	// A page path is a page, whatever Sec-Fetch-Dest says.
	fake := image("/article.html")
	if renderedSubresource(fake) {
		t.Error("an .html path as an image")
	}
	// Blocked by disallowed pages: its subresources are refused too.
	for i := 0; i < 3; i++ {
		e.Decide(page("/private/p.html"), p)
	}
	clock.Advance(time.Minute)
	expect(t, "blocked renderer, an image", e.Decide(image("/img/0.png"), p), Deny, ReasonBlockedClient)

	// A claimed search renderer gets nothing before it is verified.
	gb := req("192.0.2.7", uaGooglebot, "/img/0.png")
	gb.Dest = "image"
	gb.Verdict = uaclass.Unverified
	if renderedSubresource(gb) {
		t.Error("an unverified Googlebot renders")
	}
	gb.Verdict = uaclass.Verified
	if !renderedSubresource(gb) {
		t.Error("a verified Googlebot's image")
	}
	if renderedSubresource(func() *Request { r := image("/img/0.png"); r.UA = classifier.Classify("curl/8.5.0"); return r }()) {
		t.Error("curl renders")
	}
}

// TestSubresource: what counts as a page's subresource.
func TestSubresource(t *testing.T) {
	for _, c := range []struct {
		dest, accept, target string
		want                 bool
	}{
		{"image", "", "/img/a.png", true},
		{"image", "", "/avatar/123", true},
		{"style", "text/css,*/*;q=0.1", "/site.css?v=2", true},
		{"script", "*/*", "/app.js", true},
		{"font", "", "/f.woff2", true},
		{"empty", "*/*", "/api/items", true},
		{"document", "text/html", "/page", false},
		{"iframe", "text/html", "/embed", false},
		{"image", "", "/page.html", false},
		{"image", "", "/index.php?id=1", false},
		{"nonsense", "", "/img/a.png", false},
		{"", "image/webp,*/*", "/img/a", true},
		{"", "text/css", "/s", true},
		{"", "text/html,*/*", "/img/a.png", false},
		{"", "*/*", "/img/a.png", true},
		{"", "", "/img/A.PNG", true},
		{"", "", "/page", false},
		{"", "", "/", false},
		{"", "", "/data.json", false},
	} {
		if got := Subresource(c.dest, c.accept, c.target); got != c.want {
			t.Errorf("Subresource(%q, %q, %q) = %v, want %v", c.dest, c.accept, c.target, got, c.want)
		}
	}
}

// TestBlockAIParts: block_class ai-training shuts out training crawlers
// and serves AI search and user-triggered fetchers; "ai" shuts out all.
func TestBlockAIParts(t *testing.T) {
	clock := newClock()
	cfg, err := Settings{BlockClasses: []string{"ai-training"}}.Check()
	if err != nil || cfg.BlockAI != uaclass.AITraining || len(cfg.BlockClasses) != 0 {
		t.Fatalf("Check: %+v, %v", cfg, err)
	}
	e := newEngine(t, cfg, clock)
	whole := newEngine(t, Config{BlockClasses: []uaclass.Class{uaclass.AI}}, clock)
	// As served: the site's file with a "Disallow: /" group for the tokens
	// each entry covers (the class block follows the served file).
	served := func(name string) *policy.Policy {
		r := policy.Parse([]byte("User-agent: *\nAllow: /\n"))
		r.AddGroup(classifier.Shutout(name).Tokens, policy.Rule{Pattern: "/"})
		return policy.Compile(r)
	}
	p, all := served("ai-training"), served("ai")
	for _, c := range []struct {
		ua            string
		training, all Reason
	}{
		{uaGPTBot, ReasonBlockedClass, ReasonBlockedClass},
		{uaCCBot, ReasonBlockedClass, ReasonBlockedClass},
		{uaOAISearch, ReasonNone, ReasonBlockedClass},
		{uaChatGPT, ReasonNone, ReasonBlockedClass},
		{uaGooglebot, ReasonNone, ReasonNone},
	} {
		if d := e.Decide(req("192.0.2.1", c.ua, "/a"), p); d.Reason != c.training {
			t.Errorf("ai-training, %s: %v/%q", c.ua, d.Action, d.Reason)
		}
		if d := whole.Decide(req("192.0.2.2", c.ua, "/a"), all); d.Reason != c.all {
			t.Errorf("ai, %s: %v/%q", c.ua, d.Action, d.Reason)
		}
	}
	if _, err := (Settings{BlockClasses: []string{"ai-everything"}}).Check(); err == nil || !strings.Contains(err.Error(), "block_classes[0]") || !strings.Contains(err.Error(), "ai-training") {
		t.Errorf("an unknown part: %v", err)
	}
}
