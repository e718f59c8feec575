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

// TestCanonicalNeverEchoesHost: with QueryParam and no Domain, the
// canonical URL in Link and Location is a relative reference, whatever
// Host the client sends; a target that starts with "//" stays a path; with
// a Domain, the URL names the Domain's host.
func TestCanonicalNeverEchoesHost(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		path := filepath.Join(dir, "robots.txt")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	do := func(h *Handler, host, target, ua string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", target, nil)
		r.Host = host
		r.Header.Set("User-Agent", ua)
		ctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer())
		ctx = context.WithValue(ctx, caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: "192.0.2.7"})
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, r.WithContext(ctx), caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			w.WriteHeader(200)
			return nil
		})); err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		return w
	}
	const bot = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"

	h := &Handler{Robots: write("User-agent: *\nQueryParam: -sid\nDisallow: /private/\n"), Zone: "canonical-noecho", Verify: &VerifyConfig{Disabled: true}, Rates: map[string]caddy.Duration{"bot": 0}}
	provisionHandler(t, h)
	for _, tc := range []struct{ target, ua, link, location string }{
		{"/page.html?sid=1&x=2", uaFirefox, "</page.html?x=2>; rel=\"canonical\"", ""},
		{"/page.html?sid=1&x=2", bot, "</page.html?x=2>; rel=\"canonical\"", "/page.html?x=2"},
		{"//evil.example/x?sid=1", bot, "</.//evil.example/x>; rel=\"canonical\"", "/.//evil.example/x"},
		{"/a//b?sid=1", bot, "</a//b>; rel=\"canonical\"", "/a//b"},
	} {
		w := do(h, "evil.example", tc.target, tc.ua)
		if got := w.Header().Get("Link"); got != tc.link {
			t.Errorf("%s Link = %q, want %q", tc.target, got, tc.link)
		}
		if got := w.Header().Get("Location"); got != tc.location {
			t.Errorf("%s Location = %q, want %q", tc.target, got, tc.location)
		}
	}

	h2 := &Handler{Robots: write("Domain: https://www.example.com/\nUser-agent: *\nQueryParam: -sid\n"), Zone: "canonical-domain", Verify: &VerifyConfig{Disabled: true}, Rates: map[string]caddy.Duration{"bot": 0}}
	provisionHandler(t, h2)
	w := do(h2, "evil.example", "/page.html?sid=1", bot)
	if got := w.Header().Get("Location"); got != "https://www.example.com/page.html" || w.Code != http.StatusMovedPermanently {
		t.Errorf("with a Domain: %d to %q, want 301 to the Domain", w.Code, got)
	}
}
