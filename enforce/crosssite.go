package enforce

import (
	"net/http"
	"strings"
)

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
// (see [Request].CrossSite), unless the rest of its Fetch Metadata is
// what no browser sends (CrossSiteFetch).
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

// CrossSiteFetch reports whether a request is a browser's fetch on behalf
// of another site, from its header fields h (canonical keys, as net/http
// gives them) and Host: CrossSite says so, and the request's Fetch
// Metadata is what a browser sends (ForeignMetadata). A request that
// claims "cross-site" with metadata no browser sends is its client's own.
// It does not allocate.
func CrossSiteFetch(h http.Header, host string) bool {
	site := header(h, "Sec-Fetch-Site")
	if !CrossSite(site, header(h, "Referer"), host) {
		return false
	}
	return site == "" || ForeignMetadata(header(h, "Sec-Fetch-Mode"), header(h, "Sec-Fetch-Dest"), h["Sec-Fetch-User"])
}

// ForeignMetadata reports whether the Fetch Metadata that comes with a
// Sec-Fetch-Site of "cross-site" or "same-site" is what a browser sends.
// Every browser that sends Sec-Fetch-Site sends Sec-Fetch-Mode with it
// (Chromium 76, Firefox 90, Safari 16.4) and Sec-Fetch-Dest (Chromium 80
// and later: earlier ones may leave it out). What Chromium 156 and Firefox
// ESR 153 send when a page on another site makes them fetch a URL, as
// e2e TestTrapBrowsers records it: an image, a script, a fetch (no-cors,
// image/script/empty), an iframe (navigate, iframe), a link the visitor
// clicks and its reload, a popup its click opens (navigate, document,
// Sec-Fetch-User ?1, or none in Firefox's reload), a script redirect, a
// meta refresh, a form the page submits, and the same popup navigated
// again by the page (navigate, document, no Sec-Fetch-User). So a mode
// must be one of the Fetch standard's, navigate only with a destination a
// navigation has (no subresource's), "document" only with navigate, and
// Sec-Fetch-User only "?1" and only with navigate. Destinations are not
// otherwise judged: new ones come with new features.
func ForeignMetadata(mode, dest string, user []string) bool {
	switch mode {
	case "navigate":
		switch dest {
		case "image", "script", "style", "font", "audio", "video", "track", "empty", "worker", "sharedworker", "serviceworker",
			"manifest", "report", "json", "xslt", "audioworklet", "paintworklet", "webidentity":
			return false
		}
	case "no-cors", "cors", "same-origin", "websocket":
		if dest == "document" || len(user) > 0 {
			return false
		}
	default:
		return false // none, or none a browser sends
	}
	return len(user) == 0 || len(user) == 1 && user[0] == "?1"
}
