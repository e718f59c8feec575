package caddymodule

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// TestRequestURI: the target is read as the client sent it, before a
// rewrite, in origin and absolute form.
func TestRequestURI(t *testing.T) {
	r := httptest.NewRequest("GET", "http://example.com/#/../private/x", nil)
	if got := requestURI(r); got != "http://example.com/#/../private/x" {
		t.Errorf("absolute form: %q", got)
	}
	orig := httptest.NewRequest("GET", "/private/x?a=1", nil)
	rewritten := orig.Clone(context.WithValue(orig.Context(), caddyhttp.OriginalRequestCtxKey, *orig))
	rewritten.RequestURI, rewritten.URL.Path = "/public", "/public"
	if got := requestURI(rewritten); got != "/private/x?a=1" {
		t.Errorf("after a rewrite: %q", got)
	}
	if got := requestURI(&http.Request{URL: orig.URL}); got != "/private/x?a=1" {
		t.Errorf("without RequestURI: %q", got)
	}
}
