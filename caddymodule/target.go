package caddymodule

import (
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/robotsguard/robotsguard/policy"
)

// requestTarget returns the target the client asked for, before any
// rewrite, as a path with an optional query, and whether it was unreadable.
func requestTarget(r *http.Request) (string, bool) {
	if or, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok {
		r = &or
	}
	uri := r.RequestURI
	if uri == "" && r.URL != nil {
		uri = r.URL.RequestURI()
	}
	switch {
	case strings.HasPrefix(uri, "/"):
		return uri, false
	case strings.Contains(uri, "://"):
		return policy.TargetOf(uri), false
	case uri == "*" && r.Method == http.MethodOptions:
		return "/", false
	}
	return "/", true
}

// targetVariants returns the other spellings of target that a backend may
// resolve to the same resource, so that a rule that refuses one of them
// refuses the request. The policy package already equates percent-encoded
// letters, hex case and dot-segments; what it must keep apart (as RFC 3986
// does) but backends do not is:
//
//   - an encoded slash: file_server decodes the path, so
//     "/private%2Freport.html" is the file "/private/report.html";
//   - empty segments: "//private/" is cleaned to "/private/";
//   - backslashes, which some backends read as slashes;
//   - ";params" in segments, which servlet containers strip
//     ("/private;jsessionid=1/report.html").
//
// Ordinary targets have none of these, and get no variants and no
// allocation.
func targetVariants(target string) []string {
	p, query, hasQuery := strings.Cut(target, "?")
	if !strings.Contains(p, "%") && !strings.Contains(p, "//") && !strings.Contains(p, ";") && !strings.Contains(p, `\`) {
		return nil
	}
	decoded, err := url.PathUnescape(p)
	if err != nil {
		decoded = p
	}
	decoded = strings.ReplaceAll(decoded, `\`, "/")
	var out []string
	add := func(v string) {
		v = cleanPath(v)
		v = (&url.URL{Path: v}).EscapedPath()
		if hasQuery {
			v += "?" + query
		}
		if v == target {
			return
		}
		for _, o := range out {
			if o == v {
				return
			}
		}
		out = append(out, v)
	}
	add(decoded)
	if strings.Contains(decoded, ";") {
		segs := strings.Split(decoded, "/")
		for i, s := range segs {
			segs[i], _, _ = strings.Cut(s, ";")
		}
		add(strings.Join(segs, "/"))
	}
	return out
}

// cleanPath is path.Clean keeping a trailing slash, as file servers resolve
// paths.
func cleanPath(p string) string {
	c := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}
