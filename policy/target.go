package policy

import (
	"errors"
	"net/url"
	"path"
	"strings"
)

// Target is a request target read for enforcement: the target in normal
// form and the other spellings of it under which a backend may serve the
// same resource. [Policy.MatchTarget] refuses the request when a rule
// refuses any of them.
type Target struct {
	// Normal is the target the backend receives (the escaped path and the
	// raw query of Go's HTTP server, which Caddy's file_server and
	// reverse_proxy use), in the normal form of [NormalizeTarget].
	Normal string
	// Variants are other readings of the same request, each in normal form
	// and different from Normal and from each other: the path as Caddy's
	// file_server cleans it (decoded "%2F", no empty or dot segments, a
	// final "/." dropped), with backslashes read as slashes, with ";params"
	// stripped from its segments, and the raw target's own spelling. They
	// are nil for ordinary targets.
	Variants []string
}

// Errors of [ParseTarget].
var (
	// ErrFragment reports a request target with a '#'. Clients never send
	// the fragment of a URL, and servers read the '#' as part of the path
	// (where "/#/../private" is "/private") or of the query, so such a
	// target can only be meant to confuse: the caller should answer 400.
	ErrFragment = errors.New("request target contains '#'")
	// ErrInvalidTarget reports a request target that is neither a path
	// ("/a?b"), an absolute URL ("http://host/a?b") nor "*".
	ErrInvalidTarget = errors.New("invalid request target")
)

// ParseTarget reads a request target as it stands in the request line
// (http.Request.RequestURI): origin form ("/a/b?c"), absolute form
// ("http://host/a/b?c") or "*". It returns the target the backend receives,
// in normal form, and the other spellings to check (see [Target]).
//
// It does not allocate for a target that is already in normal form and
// that no backend reads otherwise (no "//", ';', dot-segment or escaped
// '/', '\' or ';' in the path), which is nearly every request.
func ParseTarget(raw string) (Target, error) {
	if isPlainTarget(raw) {
		return Target{Normal: raw}, nil
	}
	if n, ok := escapedPlainTarget(raw); ok {
		return Target{Normal: n}, nil
	}
	return parseTarget(raw)
}

// escapedPlainTarget returns the normal form of a target that is plain
// (see isPlainTarget) but for escapes of octets that a path may hold
// literally, such as "%3A" for ':', which robots.txt files often write and
// so scrapers that read them send: decoding such an escape changes no
// backend's reading, so the normal form is the target's one spelling, and
// the full reading, with its allocations, is not needed. Escapes of '.',
// '/', '\' and ';' (which change how a backend splits or cleans the path)
// are left to the full reading. FuzzParseTarget checks that parseTarget
// agrees.
func escapedPlainTarget(raw string) (string, bool) {
	if raw == "" || raw[0] != '/' {
		return "", false
	}
	decodes := false
	i := 1
path:
	for ; i < len(raw); i++ {
		c := raw[i]
		switch {
		case plainStrict[c]:
		case c == '?':
			break path
		case c == '/':
			if raw[i-1] == '/' {
				return "", false
			}
		case c == '%':
			v, ok := upperEscape(raw, i)
			if !ok || v == '.' || v == '/' || v == '\\' || v == ';' {
				return "", false
			}
			decodes = decodes || pathDecode[v]
			i += 2
		case c == '.':
			if raw[i-1] == '/' {
				j := i + 1
				if j < len(raw) && raw[j] == '.' {
					j++
				}
				if j == len(raw) || raw[j] == '/' || raw[j] == '?' {
					return "", false // a dot-segment
				}
			}
		default:
			return "", false
		}
	}
	for i++; i < len(raw); i++ {
		if c := raw[i]; !queryLiteral[c] && (c != '%' || !isEscape(raw, i)) {
			return "", false
		}
	}
	if !decodes {
		return "", false
	}
	n := NormalizeTarget(raw)
	return n, isPlainTarget(n)
}

// isEscape reports whether s[i:] starts with a %XX escape (either case).
func isEscape(s string, i int) bool {
	if i+2 >= len(s) {
		return false
	}
	_, ok1 := unhex(s[i+1])
	_, ok2 := unhex(s[i+2])
	return ok1 && ok2
}

// parseTarget is ParseTarget without the fast path.
func parseTarget(raw string) (Target, error) {
	if strings.IndexByte(raw, '#') >= 0 {
		return Target{}, ErrFragment
	}
	if raw == "" {
		return Target{}, ErrInvalidTarget
	}
	// What Go's HTTP server hands every handler, file_server and
	// reverse_proxy included.
	u, err := url.ParseRequestURI(raw)
	if err != nil || u.Opaque != "" {
		return Target{}, ErrInvalidTarget
	}
	query := ""
	if u.ForceQuery || u.RawQuery != "" {
		query = "?" + u.RawQuery
	}
	escaped := u.EscapedPath()
	if escaped == "" {
		escaped = "/"
	}
	t := Target{Normal: NormalizeTarget(escaped + query)}
	if strings.HasPrefix(raw, "/") {
		t.AddVariant(raw) // as the client spelled it, if Go re-escaped it
	}
	// The path as a file server resolves it: decoded (so "%2F" is a
	// slash) and cleaned; and with backslashes as slashes (Windows, IIS).
	t.addPath(u.Path, query)
	decoded := u.Path
	if strings.Contains(decoded, `\`) {
		decoded = strings.ReplaceAll(decoded, `\`, "/")
		t.addPath(decoded, query)
	}
	if strings.Contains(decoded, ";") {
		// Servlet containers strip ";jsessionid=..." from each segment.
		segs := strings.Split(decoded, "/")
		for i, s := range segs {
			segs[i], _, _ = strings.Cut(s, ";")
		}
		t.addPath(strings.Join(segs, "/"), query)
	}
	return t, nil
}

// addPath adds the decoded path p, cleaned as a file server cleans it, with
// the query.
func (t *Target) addPath(p, query string) {
	c := path.Clean("/" + p)
	// Caddy's file_server keeps a final slash only where the request had
	// one: "/report.pdf/." is the file "/report.pdf".
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	t.AddVariant((&url.URL{Path: c}).EscapedPath() + query)
}

// AddVariant adds another spelling of the target to check, for example the
// canonical URL by the robots.txt's QueryParam fields. It normalises the
// spelling and ignores one the target already has.
func (t *Target) AddVariant(spelling string) {
	v := NormalizeTarget(spelling)
	if v == t.Normal {
		return
	}
	for _, o := range t.Variants {
		if o == v {
			return
		}
	}
	t.Variants = append(t.Variants, v)
}

// spelling returns the i-th spelling of t: Normal, then the variants.
func (t *Target) spelling(i int) string {
	if i == 0 {
		return t.Normal
	}
	return t.Variants[i-1]
}

// spellings returns how many spellings t has.
func (t *Target) spellings() int {
	return 1 + len(t.Variants)
}
