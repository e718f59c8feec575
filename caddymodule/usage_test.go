package caddymodule

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsguard/robotsguard/policy"
)

const (
	uaGPTBotFull    = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	uaOAISearchFull = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot"
)

// usageServe runs one request through h with a backend that may send its
// own Content-Usage header, and returns the response and the handler's
// error.
func usageServe(t *testing.T, h *Handler, ua, target, backendUsage string) (*httptest.ResponseRecorder, error) {
	t.Helper()
	r := httptest.NewRequest("GET", target, nil)
	r.Header.Set("User-Agent", ua)
	ctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer())
	ctx = context.WithValue(ctx, caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: "192.0.2.7"})
	w := httptest.NewRecorder()
	err := h.ServeHTTP(w, r.WithContext(ctx), caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		for _, v := range strings.Split(backendUsage, "|") {
			if v != "" {
				w.Header().Add("Content-Usage", v)
			}
		}
		_, err := w.Write([]byte("content"))
		return err
	}))
	return w, err
}

// TestUsageRefusalHeaders: a content_usage refusal says why and names the
// robots.txt line, like a Disallow.
func TestUsageRefusalHeaders(t *testing.T) {
	robots := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nAllow: /\nContent-Signal: search=yes, ai-train=no\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &Handler{Robots: robots, Zone: "usage-refusal", Verify: &VerifyConfig{Disabled: true}}
	provisionHandler(t, h)
	w, err := usageServe(t, h, uaGPTBotFull, "/article", "")
	var he caddyhttp.HandlerError
	if !errors.As(err, &he) || he.StatusCode != http.StatusForbidden {
		t.Fatalf("GPTBot: %v", err)
	}
	if w.Header().Get("X-Robots-Guard") != "content_usage" || w.Header().Get("X-Robots-Guard-Rule") != "robots.txt line 3: Content-Signal: search=yes, ai-train=no" {
		t.Errorf("headers %v", w.Header())
	}
	if !strings.Contains(he.Err.Error(), "by robots.txt line 3: Content-Signal: search=yes, ai-train=no") {
		t.Errorf("error %v", he.Err)
	}
	if w, err := usageServe(t, h, uaOAISearchFull, "/article", ""); err != nil || w.Body.String() != "content" {
		t.Errorf("OAI-SearchBot: %v %q", err, w.Body.String())
	}
}

// TestContentUsageHeader: content_usage_header adds the header to the
// resources it matches, combined ("n" wins) where rules overlap, and
// merges with the backend's header: the backend's lines stay, a category
// it states more permissively gets a last line that overrides it, and one
// it refuses stays refused.
func TestContentUsageHeader(t *testing.T) {
	h := &Handler{Zone: "usage-header", Verify: &VerifyConfig{Disabled: true}, ContentUsageHeaders: []policy.UsageHeader{
		{Pattern: "/", Preferences: "search=y"},
		{Pattern: "/blog/", Preferences: "train-ai=n"},
		{Pattern: "/*.pdf$", Preferences: "train-ai=y, search=n"},
	}}
	provisionHandler(t, h)
	for _, tc := range []struct {
		target, backend string
		want            []string
		prefs           string // what a client reads, as draft-ietf-aipref-vocab parses the header
	}{
		{"/x", "", []string{"search=y"}, "search=y"},
		{"/blog/a", "", []string{"train-ai=n, search=y"}, "train-ai=n, search=y"},
		{"/blog/a.pdf", "", []string{"train-ai=n, search=n"}, "train-ai=n, search=n"},
		{"/blog/a", "train-ai=n, search=y", []string{"train-ai=n, search=y"}, "train-ai=n, search=y"},
		{"/blog/a", "train-ai=y;x=1, foo=bar", []string{"train-ai=y;x=1, foo=bar", "train-ai=n, search=y"}, "train-ai=n, search=y"},
		{"/x", "search=n", []string{"search=n"}, "search=n"},
		{"/x", "train-ai=y|search=?1", []string{"train-ai=y", "search=?1", "search=y"}, "train-ai=y, search=y"},
		{"/x", "Train-AI=no", []string{"search=y"}, "search=y"},
	} {
		w, err := usageServe(t, h, uaFirefox, tc.target, tc.backend)
		if err != nil {
			t.Fatal(err)
		}
		got := w.Header().Values("Content-Usage")
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s with backend %q: %q, want %q", tc.target, tc.backend, got, tc.want)
		}
		if st := policy.ParseStatement(policy.KeyContentUsage, strings.Join(got, ", ")); st.Prefs.String() != tc.prefs || st.Syntax {
			t.Errorf("%s with backend %q: a client reads %s, want %s", tc.target, tc.backend, st.Prefs, tc.prefs)
		}
		if w.Body.String() != "content" {
			t.Errorf("%s: body %q", tc.target, w.Body.String())
		}
	}
	// A bot gets the header too: it states the content's preferences.
	if w, _ := usageServe(t, h, uaOAISearchFull, "/blog/a", ""); w.Header().Get("Content-Usage") != "train-ai=n, search=y" {
		t.Errorf("bot: %q", w.Header().Get("Content-Usage"))
	}
}
