package framing

import "strings"

// h1Families are the families H1Stack names.
var h1Families = []string{"go", "library"}

// H1Stack says which stack wrote an HTTP/1.1 request's header field names
// (as the fingerprint joins them: in the order and case sent, with ","),
// by what the stack always does whatever headers its caller sets:
//
//   - "go": Go's net/http client writes Host, then User-Agent, then
//     Content-Length, then every other field sorted by name
//     (http.Header.Write), then what its transport adds (Accept-Encoding,
//     Connection). At least 4 sorted fields are needed, so that a short
//     request is not sorted by chance; browsers write Accept-Language
//     before Accept-Encoding (Firefox) or Connection right after Host and
//     User-Agent after the client hints (Chromium).
//
//   - "library": a request whose first field is not Host. Every browser
//     writes Host first (Chromium, Firefox, Safari); Python's http.client
//     writes Accept-Encoding first, Node and Twisted (Scrapy) the caller's
//     fields, Java Content-Length.
//
// Anything else is the zero Stack. It allocates nothing.
func H1Stack(names string) Stack {
	if goOrder(names) {
		return Stack{Known: true, Family: "go"}
	}
	if first, _, _ := strings.Cut(names, ","); first != "Host" {
		return Stack{Known: true, Family: "library"}
	}
	return Stack{}
}

// goOrder reports the order of Go's net/http client.
func goOrder(names string) bool {
	name, rest, _ := strings.Cut(names, ",")
	if name != "Host" {
		return false
	}
	for _, fixed := range [...]string{"User-Agent", "Content-Length"} {
		if n, r, _ := strings.Cut(rest, ","); n == fixed {
			rest = r
		}
	}
	sorted, prev := 0, ""
	for rest != "" {
		name, rest, _ = strings.Cut(rest, ",")
		if sorted > 0 && name <= prev {
			// What the transport adds comes after the sorted fields.
			if name != "Accept-Encoding" && name != "Connection" {
				return false
			}
			for rest != "" {
				name, rest, _ = strings.Cut(rest, ",")
				if name != "Accept-Encoding" && name != "Connection" {
					return false
				}
			}
			break
		}
		sorted, prev = sorted+1, name
	}
	return sorted >= 4
}
