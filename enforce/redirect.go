package enforce

import (
	"net/http"
	"strings"
)

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
