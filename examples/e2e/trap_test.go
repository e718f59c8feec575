package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/robotsguard/robotsguard/internal/tlsclients"
)

// TestTrapDisguise (issue 40 part 4): the uTLS client (Chrome's TLS hello,
// Chrome's User-Agent and navigation headers, Go's HTTP/2 framing), saying
// that its requests for the trap are another site's (Sec-Fetch-Site:
// cross-site, a foreign Referer) and asking for the trap ten times, is
// blocked on the first (its framing makes it a poser, and a poser's
// cross-site claim excuses nothing) and then cannot read /private/. Real
// browsers made to fetch the trap by another site block nobody
// (TestTrapBrowsers).
func TestTrapDisguise(t *testing.T) {
	need(t)
	ca, err := tlsclients.NewCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sites := startTLSSites(t, ca, trapSiteOptions(t, 1))
	ua, header := chromeNavigation(t)
	var h [][2]string
	for _, kv := range header {
		if kv[0] == "Sec-Fetch-Site" {
			kv[1] = "cross-site"
		}
		h = append(h, kv)
	}
	h = append(h, [2]string{"Referer", "https://news.example/cats.html"})
	base := sites.urls[0]
	var urls []string
	for range 10 {
		urls = append(urls, base+"/trap/archive.html")
	}
	urls = append(urls, base+"/private/secret.html", base+"/p0.html")
	got, err := tlsclients.UTLS.Fetch(context.Background(), ca, t.TempDir(), tlsclients.Request{URLs: urls, UA: ua, Header: h, Proto: "h2"})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range got {
		guard := a.Header.Get("X-Robots-Guard")
		switch {
		case a.Status != 403 || guard != "blocked_client" || strings.Contains(a.Body, "private plans") || strings.Contains(a.Body, "Content of page"):
			t.Errorf("%s (request %d): %d %q, %.100q; want refused, blocked_client (a trap's refusal says no more)", a.URL, i, a.Status, guard, a.Body)
		}
	}
	blocked := false
	for _, e := range sites.entries(t, 0) {
		if e.URI == "/trap/archive.html" && e.Reason == "trap" && e.BlockedUntil != nil && !e.BlockedUntil.IsZero() {
			blocked = true
			if e.Class != "poser" || !strings.Contains(e.Evidence, "framing") {
				t.Errorf("the trap's decision: class %q evidence %q, want a poser with framing", e.Class, e.Evidence)
			}
		}
	}
	if !blocked {
		t.Error("no trap decision blocked the uTLS client")
	}
	t.Logf("uTLS, cross-site claim, 10 trap requests then /private/ and a page: %s", statuses(got))
}

// statuses lists each answer's status and X-Robots-Guard.
func statuses(got []tlsclients.Response) string {
	var out []string
	for _, a := range got {
		out = append(out, fmt.Sprintf("%d %s", a.Status, a.Header.Get("X-Robots-Guard")))
	}
	return strings.Join(out, ", ")
}

// TestTrapForgedFetchMetadata (issue 40 part 4): over plain HTTP, where
// no TLS or framing evidence applies, a client with a Chrome User-Agent
// that claims its trap request is another site's with Sec-Fetch-Site
// alone (no Sec-Fetch-Mode or -Dest, which every browser that sends
// Sec-Fetch-Site sends with it) is blocked as if it had asked on its own;
// with a browser's whole Fetch Metadata for a link on another site (as
// Chromium and Firefox send it), it is refused the trap and not blocked.
func TestTrapForgedFetchMetadata(t *testing.T) {
	need(t, "curl")
	s := start(t, options{trustProxy: true})
	// A browser's whole claim: refused, not blocked.
	whole := from("198.51.100.80", []string{"Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: navigate", "Sec-Fetch-Dest: document", "Sec-Fetch-User: ?1", "Referer: https://news.example/"})
	for range 3 {
		if status, _, body := curl(t, s.front, "/private-archive/", wbaChrome, whole...); status != 403 || strings.Contains(body, "archive") {
			t.Errorf("a browser's cross-site Fetch Metadata on the trap: %d, want 403", status)
		}
	}
	if status, guard, _ := curl(t, s.front, "/about.html", wbaChrome, from("198.51.100.80", nil)...); status != 200 {
		t.Errorf("after a browser's cross-site trap requests: %d %s, want 200", status, guard)
	}
	// Sec-Fetch-Site alone: its own request, blocked.
	forged := from("198.51.100.81", []string{"Sec-Fetch-Site: cross-site", "Referer: https://news.example/"})
	if status, _, _ := curl(t, s.front, "/private-archive/", wbaChrome, forged...); status != 403 {
		t.Errorf("a forged cross-site claim on the trap: %d, want 403", status)
	}
	if status, guard, _ := curl(t, s.front, "/about.html", wbaChrome, from("198.51.100.81", nil)...); status != 403 || guard != "blocked_client" {
		t.Errorf("after a forged cross-site claim on the trap: %d %s, want 403 blocked_client", status, guard)
	}
}
