package upstream

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// origin is a scheme and an authority with its port made explicit
// ("http://example.com:80"), lower-cased.
type origin string

func originOf(u *url.URL) origin { return origin(authority(u.Scheme, u.Host)) }

// authority returns "scheme://host:port" with the scheme's default port
// made explicit and the host lower-cased, so that equal origins compare
// equal.
func authority(scheme, hostport string) string {
	scheme = strings.ToLower(scheme)
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// redirectTarget decides where a redirect to u leads. A redirect is
// followed only within the configured origin: the same scheme, and the
// configured host and port, or the Host header the fetch sends (an
// application that names itself by the site's name, "https://example.com"
// behind "http://127.0.0.1:3000"), which is fetched from the configured
// address. Anything else is refused: the fetch must not be led to another
// host (an internal service, a metadata endpoint) by a redirect, and the
// site's own robots.txt is not served by another host.
func (f *Fetcher) redirectTarget(u *url.URL) (*url.URL, error) {
	if u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%w: to %q, not an absolute http(s) URL", ErrRedirect, u.Redacted())
	}
	to := authority(u.Scheme, u.Host)
	if origin(to) != f.origin && to != f.alias {
		return nil, fmt.Errorf("%w: to %s, which leaves %s (only redirects within the configured scheme and host, or to the Host header's name, are followed)",
			ErrRedirect, u.Redacted(), f.url.Scheme+"://"+f.url.Host)
	}
	next := *u
	next.Scheme, next.Host, next.User = f.url.Scheme, f.url.Host, f.url.User
	next.Fragment, next.RawFragment = "", ""
	return &next, nil
}
