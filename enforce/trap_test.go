package enforce

import (
	"net/http"
	"testing"

	"github.com/robotsguard/robotsguard/evidence"
)

// TestCrossSiteFetch (issue 40 part 4): every request that a page on
// another site made Chromium 156 and Firefox ESR 153 send for the trap (e2e
// TestTrapBrowsers) is a fetch for another site; a claim of "cross-site"
// with Fetch Metadata no browser sends is the client's own, and so are the
// visitor's own requests.
func TestCrossSiteFetch(t *testing.T) {
	const host, other = "victim.example", "https://attacker.example/"
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Add(kv[i], kv[i+1])
		}
		return out
	}
	nav := func(user string) http.Header {
		r := h("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document", "Referer", other)
		if user != "" {
			r.Set("Sec-Fetch-User", user)
		}
		return r
	}
	for _, c := range []struct {
		name string
		h    http.Header
		want bool
	}{
		// What the browsers sent (TestTrapBrowsers).
		{"img", h("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "image", "Referer", other), true},
		{"script", h("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "script", "Referer", other), true},
		{"fetch", h("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "empty", "Referer", other), true},
		{"iframe", h("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "iframe", "Referer", other), true},
		{"a clicked link, a popup, Chromium's reload", nav("?1"), true},
		{"redirect, meta refresh, form, the popup navigated again, Firefox's reload", nav(""), true},
		{"same-site", h("Sec-Fetch-Site", "same-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "image"), true},
		{"Chromium 76-79: no Sec-Fetch-Dest", h("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-User", "?1"), true},
		{"a browser without Fetch Metadata: a foreign Referer", h("Referer", other), true},
		{"a new destination", h("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "portal"), true},
		// What no browser sends.
		{"Sec-Fetch-Site alone", h("Sec-Fetch-Site", "cross-site", "Referer", other), false},
		{"no mode", h("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Dest", "document"), false},
		{"an unknown mode", h("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "nav", "Sec-Fetch-Dest", "document"), false},
		{"document without navigate", h("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "document"), false},
		{"navigate to an image", h("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "image"), false},
		{"a user on a subresource", h("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "image", "Sec-Fetch-User", "?1"), false},
		{"a user ?0", nav("?0"), false},
		{"two users", func() http.Header { r := nav("?1"); r.Add("Sec-Fetch-User", "?1"); return r }(), false},
		// The visitor's own.
		{"typed", h("Sec-Fetch-Site", "none", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document", "Sec-Fetch-User", "?1"), false},
		{"the site's own link", h("Sec-Fetch-Site", "same-origin", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document", "Sec-Fetch-User", "?1", "Referer", "https://victim.example/links.html"), false},
		{"nothing", h(), false},
	} {
		if got := CrossSiteFetch(c.h, host); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	hdr := nav("?1")
	if n := testing.AllocsPerRun(100, func() { CrossSiteFetch(hdr, host) }); n != 0 {
		t.Errorf("CrossSiteFetch allocates %v times", n)
	}
}

// TestTrapDisguise (issue 40 part 4): the uTLS client (Chrome's TLS hello
// and headers, Go's HTTP/2 framing) that says its trap requests are
// another site's (Sec-Fetch-Site cross-site, a foreign Referer) is a poser
// from its first request, so the claim excuses nothing: its first trap
// request blocks it, and it cannot read /private/ after. A browser whose
// framing is only another engine's (a User-Agent switcher: a mismatch) is
// still excused, since another site can make such a person's browser
// fetch the trap too.
func TestTrapDisguise(t *testing.T) {
	e := newEngine(t, Config{Traps: []string{"/trap/"}}, newClock())
	p := compile(poserRobots)
	hit := func(ip, target string, f evidence.Framing) Decision {
		h := chromeNav()
		h.Set("Sec-Fetch-Site", "cross-site")
		h.Set("Referer", "https://elsewhere.example/")
		return e.Decide(readFramed(t, e, ip, target, h, f, "h2:..."), p)
	}
	d := hit("192.0.2.30", "/trap/x", goFraming)
	if d.Reason != ReasonTrap || d.BlockedUntil.IsZero() {
		t.Errorf("uTLS's first cross-site trap request: %v %v, blocked until %v; want a trap block", d.Action, d.Reason, d.BlockedUntil)
	}
	if d := hit("192.0.2.30", "/private/secret.html", goFraming); d.Action != Deny {
		t.Errorf("uTLS after the trap, /private/: %v %v, want refused", d.Action, d.Reason)
	}
	firefox := evidence.Framing{Known: true, Browser: true, Family: "firefox"}
	for range 10 {
		if d := hit("192.0.2.31", "/trap/x", firefox); d.Reason != ReasonTrap || !d.BlockedUntil.IsZero() {
			t.Fatalf("a UA switcher's induced trap request: %v %v, blocked until %v; want refused, not blocked", d.Action, d.Reason, d.BlockedUntil)
		}
	}
	if d := hit("192.0.2.31", "/p.html", firefox); d.Action != Allow {
		t.Errorf("the UA switcher's next page: %v %v", d.Action, d.Reason)
	}
}
