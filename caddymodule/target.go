package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// requestURI returns the request target as the client sent it, before any
// rewrite: policy.ParseTarget reads it as the backend will.
func requestURI(r *http.Request) string {
	if or, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok {
		r = &or
	}
	if r.RequestURI == "" && r.URL != nil {
		return r.URL.RequestURI()
	}
	return r.RequestURI
}
