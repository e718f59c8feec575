package enforce

import (
	"strings"
	"time"

	"github.com/robotsguard/robotsguard/uaclass"
)

// A client that renders the pages it loads (uaclass.Result.Renders: an
// honest headless browser, a verified search engine's renderer) fetches a
// page's images, style sheets, scripts and fonts right after the page, as a
// browser does: paced by the page's Crawl-delay, a renderer would lose most
// of them (issue 27: headless Chromium got 3 of a page's 10 images under
// "Crawl-delay: 1"). Its page navigations stay paced as any bot's; its
// subresources get a browser's rate (BrowserLikeInterval and
// BrowserLikeBurst, AddressShare times that for the address) in a bucket of
// their own, so that loading a page's images never delays its next page.
// robots.txt applies to every request all the same, and a block of the
// client applies to its subresources too.

// subresourceSuffix marks the state of a renderer's subresources: its own
// product token with a suffix no product token has.
const subresourceSuffix = "+subresources"

// renderedSubresource reports whether req is a subresource of a page that
// a renderer loads: the client renders (for a bot with a verification
// method, once its identity is evidence; an honest headless browser on its
// claim, which buys a bounded rate), and the request is for a subresource
// (see [Subresource]).
func renderedSubresource(req *Request) bool {
	ua := &req.UA
	return ua.Renders() && (ua.Bot.Verify == uaclass.VerifyNone || Evidenced(req)) && Subresource(req.Dest, req.Accept, req.Target.Normal)
}

// subresourceKey returns the store key of the subresources of the client
// with key k, after checking that the client itself is not blocked (a
// second store operation, for renderers' subresources only). It returns
// false with the outcome of the check when the client or its address is
// blocked.
func (e *Engine) subresourceKey(k Key, now time.Time) (Key, Outcome, bool) {
	out := e.store.Apply(k, now, Op{Peek: true, CheckAddr: true, CheckCrawler: true})
	if out.Blocked {
		return k, out, false
	}
	k.Token += subresourceSuffix
	return k, out, true
}

// Subresource reports whether a request is for a subresource of a page (an
// image, a style sheet, a script, a font, media, or a fetch by the page's
// scripts) rather than for a page, by its Sec-Fetch-Dest value dest, else
// its Accept header, else the type the path's extension names. A path
// whose extension names a page (.html, .php, ...) is a page whatever the
// headers say, and an unknown Sec-Fetch-Dest is a page: the headers are the
// client's claims, and a wrong one can only slow it down.
func Subresource(dest, accept, target string) bool {
	ext := extension(target)
	if pageTypes[ext] {
		return false
	}
	if dest != "" {
		return subresourceDests[strings.ToLower(dest)]
	}
	if accept != "" {
		first, _, _ := strings.Cut(accept, ",")
		first, _, _ = strings.Cut(first, ";")
		first = strings.ToLower(strings.TrimSpace(first))
		switch {
		case first == "text/html" || first == "application/xhtml+xml":
			return false
		case first == "text/css" || strings.HasPrefix(first, "image/") || strings.HasPrefix(first, "font/") ||
			strings.HasPrefix(first, "audio/") || strings.HasPrefix(first, "video/"):
			return true
		}
	}
	return assetTypes[ext]
}

// extension returns the lower-cased extension of the last segment of the
// target's path, without the dot, or "".
func extension(target string) string {
	path, _, _ := strings.Cut(target, "?")
	seg := path[strings.LastIndexByte(path, '/')+1:]
	dot := strings.LastIndexByte(seg, '.')
	if dot < 0 || len(seg)-dot > 8 {
		return ""
	}
	return strings.ToLower(seg[dot+1:])
}

// subresourceDests are the Sec-Fetch-Dest values of subresources (Fetch
// standard); "document", "iframe", "frame", "embed", "object" and the
// others are navigations or unknown.
var subresourceDests = map[string]bool{
	"image": true, "style": true, "script": true, "font": true, "audio": true, "video": true, "track": true,
	"manifest": true, "worker": true, "sharedworker": true, "serviceworker": true, "audioworklet": true,
	"paintworklet": true, "xslt": true, "json": true, "empty": true,
}

// assetTypes are the extensions of static subresources.
var assetTypes = map[string]bool{
	"png": true, "jpg": true, "jpeg": true, "gif": true, "webp": true, "avif": true, "svg": true, "ico": true, "bmp": true, "apng": true,
	"css": true, "js": true, "mjs": true, "woff": true, "woff2": true, "ttf": true, "otf": true, "eot": true,
	"mp3": true, "mp4": true, "webm": true, "ogg": true, "oga": true, "ogv": true, "wav": true, "m4a": true, "vtt": true, "wasm": true,
}

// pageTypes are the extensions of pages.
var pageTypes = map[string]bool{
	"html": true, "htm": true, "xhtml": true, "shtml": true, "php": true, "asp": true, "aspx": true, "jsp": true, "cgi": true, "pl": true,
}
