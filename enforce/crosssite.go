package enforce

import "strings"

// CrossSite reports whether a request was made by a browser on behalf of
// another site, from its Sec-Fetch-Site and Referer header fields and the
// request's Host: Sec-Fetch-Site "cross-site" or "same-site" (a sibling
// subdomain is another site too); without Sec-Fetch-Site (browsers before
// 2020-2023), a Referer whose host is not the request's. A request
// without either, or with "same-origin" or "none" (typed, bookmarked), is
// the client's own. It does not allocate.
//
// Both fields are the client's to send, so a bot can claim a cross-site
// fetch: it is then refused a trap like anyone, but not blocked for it
// (see [Request].CrossSite).
func CrossSite(secFetchSite, referer, host string) bool {
	if secFetchSite != "" {
		return secFetchSite == "cross-site" || secFetchSite == "same-site"
	}
	if referer == "" {
		return false
	}
	rest, ok := cutSchemePrefix(referer)
	if !ok {
		return false // not an http(s) URL: no other site named
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return !strings.EqualFold(rest, host)
}

// cutSchemePrefix returns u after "http://" or "https://" (in any case).
func cutSchemePrefix(u string) (string, bool) {
	for _, p := range [...]string{"https://", "http://"} {
		if len(u) >= len(p) && strings.EqualFold(u[:len(p)], p) {
			return u[len(p):], true
		}
	}
	return "", false
}
