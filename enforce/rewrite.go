package enforce

import "net/http"

// RewriteHeaders are the request headers with which some applications
// and frameworks take the path to serve from the header instead of the
// request line: IIS's URL Rewrite module and the frameworks that read it
// (Symfony, Zend, Laminas, Yii, older Drupal), nginx setups that pass
// X-Original-URI, and the proxies' X-Forwarded-Path, X-Forwarded-Uri and
// X-Override-URL. The engine judges the request line's target, so a
// client that sends one of them could be served what robots.txt disallows
// it: [DropRewriteHeaders] removes them before the request goes on. The
// names are in canonical form.
var RewriteHeaders = []string{
	"X-Original-Url", "X-Rewrite-Url", "X-Original-Uri", "X-Forwarded-Path",
	"X-Forwarded-Uri", "X-Override-Url", "X-Http-Destinationurl", "X-Proxy-Url",
}

// DropRewriteHeaders removes [RewriteHeaders] from a request's headers,
// whoever sent it: a person's browser never sends them, and a proxy in
// front that means them sets them after this server, not before. It
// allocates nothing.
func DropRewriteHeaders(h http.Header) {
	for _, k := range RewriteHeaders {
		delete(h, k)
	}
}
