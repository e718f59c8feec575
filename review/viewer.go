package review

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
)

// Viewer serves the review page to a browser from a loopback port and
// passes the page's requests on to Caddy's admin endpoint. Caddy's admin
// API refuses a browser's own navigation (it carries Sec-Fetch-Mode but no
// Origin), so "caddy robots review" puts this in between: the page and the
// data still come from the admin endpoint, and an unblock still passes its
// origin check, while the viewer checks its own callers (a loopback Host,
// and for POST a same-origin request).
type Viewer struct {
	// Admin sends one request to the admin API (a path under
	// /robots_guard/) and returns its answer; an error for a refusal.
	Admin func(method, uri string, body io.Reader) (*http.Response, error)
}

// ServeHTTP serves GET /, /stats, /robots and /blocked, and POST /unblock.
func (v *Viewer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r.Host) {
		viewerError(w, http.StatusForbidden, "host not allowed: "+r.Host)
		return
	}
	var uri string
	switch r.URL.Path {
	case "/":
		uri = "/robots_guard/"
	case "/stats", "/robots", "/blocked":
		uri = "/robots_guard" + r.URL.Path
		if r.URL.RawQuery != "" {
			uri += "?" + r.URL.RawQuery
		}
	case "/unblock":
		uri = "/robots_guard/unblock"
	default:
		viewerError(w, http.StatusNotFound, "not found")
		return
	}
	want := http.MethodGet
	if uri == "/robots_guard/unblock" {
		want = http.MethodPost
		if !sameOrigin(r) {
			viewerError(w, http.StatusForbidden, "cross-origin request refused")
			return
		}
	}
	if r.Method != want {
		w.Header().Set("Allow", want)
		viewerError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	var body io.Reader
	if want == http.MethodPost {
		body = http.MaxBytesReader(w, r.Body, 4096)
	}
	resp, err := v.Admin(want, uri, body)
	if err != nil {
		viewerError(w, http.StatusBadGateway, err.Error())
		return
	}
	defer resp.Body.Close()
	for _, h := range []string{"Content-Type", "Content-Security-Policy", "X-Content-Type-Options", "Cache-Control"} {
		if val := resp.Header.Get(h); val != "" {
			w.Header().Set(h, val)
		}
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// loopbackHost reports whether a Host header names this machine by a
// loopback address or localhost: anything else may be a DNS rebinding.
func loopbackHost(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether a state-changing request comes from the
// viewer's own page: browsers send Sec-Fetch-Site and Origin with a POST.
func sameOrigin(r *http.Request) bool {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return false
	}
	origin := r.Header.Get("Origin")
	return origin == "" && r.Header.Get("Sec-Fetch-Site") == "" || origin == "http://"+r.Host
}

func viewerError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
