package evidence

import (
	"net/http"
	"testing"
)

// benchRequests are the common requests: a real browser's navigation and
// subresource, a library posing as a browser, a robot that claims nothing.
func benchRequests(t testing.TB) []struct {
	name, ua string
	h        http.Header
	tls      TLS
} {
	var nav, img http.Header
	for _, fx := range loadCaptures(t) {
		if fx.Client != "chromium" {
			continue
		}
		for _, r := range fx.Requests {
			if r.Origin != "secure" {
				continue
			}
			switch r.Case {
			case "navigate":
				nav = r.Header
			case "img":
				img = r.Header
			}
		}
	}
	if nav == nil || img == nil {
		t.Fatal("no chromium navigation or image in the captures")
	}
	return []struct {
		name, ua string
		h        http.Header
		tls      TLS
	}{
		{"browser navigation", first(nav["User-Agent"]), nav, TLS{}},
		{"browser image", first(img["User-Agent"]), img, TLS{}},
		{"browser, own stack", first(nav["User-Agent"]), nav, TLS{Known: true, Browser: true, Family: "chromium"}},
		{"chrome's hello copied, no headers", chromeUA, http.Header{"Accept": {"*/*"}, "User-Agent": {chromeUA}}, TLS{Known: true, Browser: true, Family: "chromium"}},
		{"library posing", chromeUA, http.Header{"Accept": {"*/*"}, "User-Agent": {chromeUA}}, TLS{Known: true, Family: "openssl"}},
		{"robot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", http.Header{}, TLS{}},
	}
}

// TestNoAllocations: parsing a claim and judging a request allocate
// nothing, for real browsers, posers and robots alike.
func TestNoAllocations(t *testing.T) {
	for _, r := range benchRequests(t) {
		if n := testing.AllocsPerRun(100, func() {
			Judge(ParseClaim(r.ua), "GET", r.h, r.tls, Secure)
		}); n != 0 {
			t.Errorf("%s: %v allocations a request", r.name, n)
		}
	}
}

// BenchmarkJudge measures a request's claim and judgement. The claim is
// parsed once per User-Agent (uaclass caches it with the class); the
// judgement is the cost every browser request adds.
func BenchmarkJudge(b *testing.B) {
	for _, r := range benchRequests(b) {
		b.Run("parse/"+r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ParseClaim(r.ua)
			}
		})
		c := ParseClaim(r.ua)
		b.Run("judge/"+r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Judge(c, "GET", r.h, r.tls, Secure)
			}
		})
	}
}
