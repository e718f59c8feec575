package enforce

import (
	"net/http"
	"strings"

	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/uaclass"
)

// CanonicalMode checks the canonical option (how [Canonicalize] applies
// the robots.txt's canonical URLs): "redirect" (or "", its default),
// "header" or "off", and returns it with the default applied. Its errors
// are *FieldError, named canonical.
func CanonicalMode(mode string) (string, error) {
	switch mode {
	case "":
		return "redirect", nil
	case "redirect", "header", "off":
		return mode, nil
	}
	return mode, field.Errorf("canonical", "unknown mode %q (want redirect, header or off)", mode)
}

// Canonicalize applies the canonical URL of a request the engine lets
// through (Reading.Canonical, none without one): every response names it
// in a Link header, and a GET or HEAD for another URL (NonCanonical) is
// redirected to it ([Redirect]) with redirect set (canonical "redirect"),
// a browser's only with humans (canonical_redirect_humans), a feed
// reader's never (its response decides, [FeedGate]). It reports whether
// it answered the request.
func Canonicalize(w http.ResponseWriter, r *http.Request, rd *Reading, d *Decision, redirect, humans bool) bool {
	if rd.Canonical == "" {
		return false
	}
	w.Header().Set("Link", "<"+rd.Canonical+">; rel=\"canonical\"")
	getOrHead := r.Method == http.MethodGet || r.Method == http.MethodHead
	if rd.NonCanonical && redirect && (rd.Request.UA.Class != uaclass.Browser || humans) && getOrHead && !d.FeedOnly() {
		Redirect(w, r, rd.Canonical)
		return true
	}
	return false
}

// Redirect answers with a 301 to ref, the canonical URL of a request
// (Reading.Canonical), which is sent as it is: unlike http.Redirect, it
// does not clean the path, so the canonical URL is the one the Link header
// names. It is sent to bots only (unless canonical_redirect_humans), so it
// is private to the client.
func Redirect(w http.ResponseWriter, r *http.Request, ref string) {
	w.Header().Set("Location", ref)
	Private(w.Header()) // people may be served the page itself
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	w.WriteHeader(http.StatusMovedPermanently)
	if r.Method == http.MethodGet {
		_, _ = w.Write([]byte("<a href=\"" + htmlEscaper.Replace(ref) + "\">Moved Permanently</a>.\n"))
	}
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
