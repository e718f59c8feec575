package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
)

// refuse answers a refused request (enforce.Refusals makes the status, the
// headers and the texts, once). With a body (deny or throttle <status>
// <body>) it writes the body. Without one, it returns an error for the
// server's handle_errors routes to shape ({err.message} says why), or,
// where the server has no such routes, writes the empty response that
// Caddy would write for the error, without the error machinery (an error
// ID, a stack trace, and a request logger built even when no log is
// written), which costs a flood of refusals more than the rest of the
// handler.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, d *enforce.Decision, p *policy.Policy) error {
	rf := h.refusals.Refuse(w.Header(), d, p)
	if rf.Body != nil {
		w.WriteHeader(rf.Status)
		_, err := w.Write(rf.Body)
		return err
	}
	if !h.errorRoutes(r) {
		w.WriteHeader(rf.Status)
		return nil
	}
	return caddyhttp.Error(rf.Status, rf.Err())
}

// errorRoutes reports whether the request's server has handle_errors
// routes, or may have: outside a Caddy server (a test calling ServeHTTP)
// the refusal is returned as an error, as it always was. The server a
// handler was provisioned in answers for all its requests (Provision
// notes it: a request then looks nothing up).
func (h *Handler) errorRoutes(r *http.Request) bool {
	srv := h.server
	if srv == nil {
		srv, _ = r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	}
	return srv == nil || srv.Errors != nil && len(srv.Errors.Routes) > 0
}
