package policy

import (
	"strings"
	"unsafe"
)

// Character classes used by the normaliser. A byte is kept literally in the
// normal form when its class allows it; everything else is written as an
// upper-case %XX escape. A %XX escape is decoded when the octet it stands for
// may appear literally and decoding cannot change the meaning of the target.
var (
	pathLiteral  [256]bool // may appear unescaped in a normal path
	pathDecode   [256]bool // a %XX escape of this octet is decoded in a path
	queryLiteral [256]bool // may appear unescaped in a normal query
	queryDecode  [256]bool // a %XX escape of this octet is decoded in a query
	plainPath    [256]bool // pathLiteral without '.', which needs a closer look
	plainStrict  [256]bool // plainPath without '/' and ';', for isPlainTarget
)

func init() {
	const unreserved = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"
	// RFC 3986 sub-delims without '*' and '$', which are special in robots.txt
	// patterns and therefore always written %2A and %24 when literal.
	const subDelims = "!&'()+,;="
	for _, c := range []byte(unreserved + subDelims + ":@") {
		pathLiteral[c] = true
		pathDecode[c] = true
		queryLiteral[c] = true
	}
	pathLiteral['/'] = true
	queryLiteral['/'] = true
	queryLiteral['?'] = true
	for _, c := range []byte(unreserved) {
		queryDecode[c] = true
	}
	plainPath = pathLiteral
	plainPath['.'] = false
	plainStrict = plainPath
	plainStrict['/'] = false
	plainStrict[';'] = false
}

const upperHex = "0123456789ABCDEF"

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// NormalizeTarget returns the normal form of a request target: a path with
// an optional "?query", as in an HTTP request line. Patterns are normalised
// the same way when they are compiled, so that equivalent spellings of a
// resource meet the same rules:
//
//   - a %XX escape of an octet that may stand unescaped is decoded
//     ("/%7Esam/" is "/~sam/"; in the query only unreserved octets are
//     decoded, so that "%26" never becomes a parameter separator);
//   - other escapes are kept with upper-case hex ("%2f" is "%2F"), and a '%'
//     that starts no valid escape is written "%25";
//   - octets that may not stand unescaped are escaped: non-ASCII octets
//     ("/café" is "/caf%C3%A9"), controls, space, '#', and the robots.txt
//     special characters '*' and '$' (RFC 9309 section 2.2.3), so that a
//     pattern's "%2A" matches a literal '*' in the target;
//   - dot-segments are removed from the path (RFC 3986 section 5.2.4:
//     "/public/../private" is "/private");
//   - a target that does not start with '/' gets one.
//
// NormalizeTarget does not allocate when target is already in normal form.
func NormalizeTarget(target string) string {
	if isNormalTarget(target) {
		return target
	}
	return string(appendTarget(make([]byte, 0, len(target)+8), target))
}

// normalizeTargetInto is NormalizeTarget writing into buf. The result aliases
// buf when it fits, so buf must not be modified while the result is in use.
func normalizeTargetInto(buf []byte, target string) string {
	if isNormalTarget(target) {
		return target
	}
	b := appendTarget(buf[:0], target)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// isNormalTarget reports whether NormalizeTarget would return s unchanged.
func isNormalTarget(s string) bool {
	return scanTarget(s, &plainPath)
}

// isPlainTarget reports whether s is in normal form and no backend reads it
// as another path: no empty segment ("//"), no ';' and no escaped '/', ”
// or ';'. [ParseTarget] returns such a target as it is, without variants.
func isPlainTarget(s string) bool {
	return scanTarget(s, &plainStrict)
}

// scanTarget reports whether s is in normal form. plain is the table of
// path octets that need no closer look: plainPath, or plainStrict, which
// also sends '/' and ';' to the closer look and refuses what isPlainTarget
// refuses.
func scanTarget(s string, plain *[256]bool) bool {
	if s == "" || s[0] != '/' {
		return false
	}
	strict := plain == &plainStrict
	i := 1
path:
	for ; i < len(s); i++ {
		c := s[i]
		if plain[c] {
			continue // the common case: one table lookup per byte
		}
		switch c {
		case '?':
			break path
		case '/':
			if s[i-1] == '/' {
				return false
			}
			continue
		case ';':
			return false // only plainStrict sends ';' here
		case '%':
			v, ok := upperEscape(s, i)
			if !ok || pathDecode[v] || strict && (v == '/' || v == '\\' || v == ';') {
				return false
			}
			i += 2
			continue
		case '.':
		default:
			return false
		}
		if s[i-1] == '/' {
			j := i + 1
			if j < len(s) && s[j] == '.' {
				j++
			}
			if j == len(s) || s[j] == '/' || s[j] == '?' {
				return false // a dot-segment
			}
		}
	}
	for i++; i < len(s); i++ {
		c := s[i]
		if queryLiteral[c] {
			continue
		}
		v, ok := upperEscape(s, i)
		if c != '%' || !ok || queryDecode[v] {
			return false
		}
		i += 2
	}
	return true
}

// upperEscape reads the escape "%XX" at s[i] with upper-case hex digits, as
// the normal form writes it.
func upperEscape(s string, i int) (byte, bool) {
	if i+2 >= len(s) {
		return 0, false
	}
	hi, lo := s[i+1], s[i+2]
	if !isUpperHex(hi) || !isUpperHex(lo) {
		return 0, false
	}
	h, _ := unhex(hi)
	l, _ := unhex(lo)
	return h<<4 | l, true
}

func isUpperHex(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'F'
}

// appendTarget appends the normal form of target to dst.
func appendTarget(dst []byte, target string) []byte {
	start := len(dst)
	if target == "" || target[0] != '/' {
		dst = append(dst, '/')
	}
	dst = appendEscaped(dst, target, false)
	end := len(dst)
	q := indexByteFrom(dst, start, '?')
	if q < 0 {
		q = end
	}
	cleaned := removeDotSegments(dst[start:q])
	n := start + len(cleaned)
	n += copy(dst[n:], dst[q:end])
	return dst[:n]
}

func indexByteFrom(b []byte, from int, c byte) int {
	for i := from; i < len(b); i++ {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// normalizePattern returns the normal form of an Allow or Disallow value.
// It is NormalizeTarget for patterns: '*' stays a wildcard and a final '$'
// stays an anchor, while a '$' elsewhere is literal and written %24.
// Dot-segments are removed only from the literal part before the first
// wildcard or '?', and only where they are followed by '/', because a
// pattern is a prefix: "/a/.." also matches "/a/..b".
func normalizePattern(p string) string {
	b := appendEscaped(make([]byte, 0, len(p)+8), p, true)
	if len(b) > 0 && b[0] == '/' {
		cut := len(b)
		for i, c := range b {
			if c == '*' || c == '?' {
				cut = i
				break
			}
		}
		slash := strings.LastIndexByte(string(b[:cut]), '/')
		cleaned := removeDotSegments(b[:slash+1])
		n := len(cleaned)
		n += copy(b[n:], b[slash+1:])
		b = b[:n]
	}
	return string(b)
}

// appendEscaped appends s to dst with the escaping rules of NormalizeTarget.
// When pattern is set, '*' and a final '$' are kept as special characters.
func appendEscaped(dst []byte, s string, pattern bool) []byte {
	inQuery := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			hi, ok1 := byte(0), false
			lo, ok2 := byte(0), false
			if i+2 < len(s) {
				hi, ok1 = unhex(s[i+1])
				lo, ok2 = unhex(s[i+2])
			}
			if !ok1 || !ok2 {
				dst = append(dst, "%25"...)
				continue
			}
			v := hi<<4 | lo
			if inQuery && queryDecode[v] || !inQuery && pathDecode[v] {
				dst = append(dst, v)
			} else {
				dst = append(dst, '%', upperHex[hi], upperHex[lo])
			}
			i += 2
		case c == '?' && !inQuery:
			inQuery = true
			dst = append(dst, c)
		case pattern && c == '*':
			dst = append(dst, c)
		case pattern && c == '$' && i == len(s)-1:
			dst = append(dst, c)
		case inQuery && queryLiteral[c] || !inQuery && pathLiteral[c]:
			dst = append(dst, c)
		default:
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&0xF])
		}
	}
	return dst
}

// removeDotSegments removes "." and ".." segments from the path p, which
// starts with '/', as RFC 3986 section 5.2.4 does. It works in place and
// returns the shortened slice; the result is never longer than p.
func removeDotSegments(p []byte) []byte {
	out := p[:0]
	for i := 0; i < len(p); {
		j := i + 1
		for j < len(p) && p[j] != '/' {
			j++
		}
		seg := p[i+1 : j]
		switch {
		case len(seg) == 1 && seg[0] == '.':
			if j == len(p) {
				out = append(out, '/')
			}
		case len(seg) == 2 && seg[0] == '.' && seg[1] == '.':
			k := strings.LastIndexByte(string(out), '/')
			if k < 0 {
				k = 0
			}
			out = out[:k]
			if j == len(p) {
				out = append(out, '/')
			}
		default:
			out = append(out, p[i:j]...)
		}
		i = j
	}
	if len(out) == 0 && len(p) > 0 {
		out = append(out, '/')
	}
	return out
}

// TargetOf returns the path, parameters and query of a URL, without scheme,
// authority and fragment, as the reference parser's GetPathParamsQuery does:
// "https://example.com/a/b?c#d" gives "/a/b?c". The result always starts with
// '/'; a URL without a path gives "/". The result is not normalised.
func TargetOf(rawURL string) string {
	u := rawURL
	start := 0
	if strings.HasPrefix(u, "//") {
		start = 2
	}
	early := indexAny(u, start, "/?;")
	proto := strings.Index(u[start:], "://")
	if proto >= 0 {
		proto += start
	}
	if proto < 0 || early >= 0 && early < proto {
		proto = start
	} else {
		proto += 3
	}
	pathStart := indexAny(u, proto, "/?;")
	if pathStart < 0 {
		return "/"
	}
	hash := strings.IndexByte(u[start:], '#')
	if hash >= 0 {
		hash += start
		if hash < pathStart {
			return "/"
		}
	} else {
		hash = len(u)
	}
	if u[pathStart] != '/' {
		return "/" + u[pathStart:hash]
	}
	return u[pathStart:hash]
}

func indexAny(s string, from int, chars string) int {
	if from > len(s) {
		return -1
	}
	i := strings.IndexAny(s[from:], chars)
	if i < 0 {
		return -1
	}
	return i + from
}
