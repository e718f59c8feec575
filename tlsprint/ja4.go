package tlsprint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Hello is what JA4 reads of a ClientHello. Values are as sent, GREASE
// included: JA4 drops GREASE itself.
type Hello struct {
	// QUIC reports a ClientHello carried by QUIC (HTTP/3), "q" in JA4.
	QUIC bool
	// Versions are those of the supported_versions extension or, without
	// it, the legacy version alone (or the versions up to it).
	Versions []uint16
	// Ciphers are the cipher suites in the order sent.
	Ciphers []uint16
	// Extensions are the extension types in the order sent.
	Extensions []uint16
	// ALPN are the protocols of the ALPN extension, in the order sent.
	ALPN []string
	// SignatureAlgorithms are those of the signature_algorithms extension,
	// in the order sent.
	SignatureAlgorithms []uint16
	// Groups are those of the supported_groups extension, in the order
	// sent. JA4 does not read them; the stack's family does (Classify).
	Groups []uint16
}

const (
	extServerName = 0x0000
	extALPN       = 0x0010
	extQUICParams = 0x0039
)

// isGREASE reports one of the 16 GREASE values of RFC 8701 (0x0a0a, 0x1a1a,
// ... 0xfafa).
func isGREASE(v uint16) bool { return v&0x0f0f == 0x0a0a && v>>8 == v&0xff }

// JA4 returns the fingerprint, such as
// "t13d1516h2_8daaf6152771_02713d6af862".
func (h Hello) JA4() string {
	var b [36]byte
	return string(h.appendJA4(b[:0]))
}

func (h Hello) appendJA4(dst []byte) []byte {
	dst = h.appendA(dst)
	var buf [1024]byte
	dst = append(dst, '_')
	if s := appendList(buf[:0], h.Ciphers, true, nil); len(s) == 0 {
		dst = append(dst, "000000000000"...)
	} else {
		dst = appendHash(dst, s)
	}
	dst = append(dst, '_')
	if s := h.appendC(buf[:0], true); len(s) == 0 {
		dst = append(dst, "000000000000"...)
	} else {
		dst = appendHash(dst, s)
	}
	return dst
}

// Raw returns the raw fingerprint before hashing: JA4_r, or with original
// JA4_ro (ciphers and extensions in the order sent, SNI and ALPN kept).
func (h Hello) Raw(original bool) string {
	dst := h.appendA(nil)
	dst = append(dst, '_')
	dst = appendList(dst, h.Ciphers, !original, nil)
	dst = append(dst, '_')
	dst = h.appendC(dst, !original)
	return string(dst)
}

// appendA appends part a: transport, version, SNI, counts and ALPN.
func (h Hello) appendA(dst []byte) []byte {
	if h.QUIC {
		dst = append(dst, 'q')
	} else {
		dst = append(dst, 't')
	}
	dst = append(dst, versionCode(h.Versions)...)
	if slices.Contains(h.Extensions, extServerName) {
		dst = append(dst, 'd')
	} else {
		dst = append(dst, 'i')
	}
	dst = appendCount(dst, h.Ciphers)
	dst = appendCount(dst, h.Extensions)
	return appendALPN(dst, h.ALPN)
}

// appendC appends what part c hashes: the extensions (sorted, without SNI
// and ALPN; or as sent, with them), then "_" and the signature algorithms
// as sent when there are any.
func (h Hello) appendC(dst []byte, sorted bool) []byte {
	skip := func(v uint16) bool { return sorted && (v == extServerName || v == extALPN) }
	dst = appendList(dst, h.Extensions, sorted, skip)
	n := len(dst)
	dst = append(dst, '_')
	if dst = appendList(dst, h.SignatureAlgorithms, false, nil); len(dst) == n+1 {
		dst = dst[:n]
	}
	return dst
}

func versionCode(vs []uint16) string {
	var max uint16
	for _, v := range vs {
		if !isGREASE(v) && v > max {
			max = v
		}
	}
	switch max {
	case 0x0304:
		return "13"
	case 0x0303:
		return "12"
	case 0x0302:
		return "11"
	case 0x0301:
		return "10"
	case 0x0300:
		return "s3"
	case 0x0002:
		return "s2"
	case 0xfeff:
		return "d1"
	case 0xfefd:
		return "d2"
	case 0xfefc:
		return "d3"
	}
	return "00"
}

func appendCount(dst []byte, vs []uint16) []byte {
	n := 0
	for _, v := range vs {
		if !isGREASE(v) {
			n++
		}
	}
	n = min(n, 99)
	return append(dst, byte('0'+n/10), byte('0'+n%10))
}

// appendALPN appends the first and last characters of the first ALPN
// value, or of its hex form when either is not an ASCII letter or digit;
// "00" without one.
func appendALPN(dst []byte, alpn []string) []byte {
	if len(alpn) == 0 || alpn[0] == "" {
		return append(dst, "00"...)
	}
	p := alpn[0]
	f, l := p[0], p[len(p)-1]
	if alnum(f) && alnum(l) {
		return append(dst, f, l)
	}
	const digits = "0123456789abcdef"
	return append(dst, digits[f>>4], digits[l&0xf])
}

func alnum(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}

// appendList appends the values that are not GREASE (nor skipped) as
// 4-digit lower-case hex, comma-separated, sorted or as sent.
func appendList(dst []byte, vs []uint16, sorted bool, skip func(uint16) bool) []byte {
	var small [128]uint16
	kept := small[:0]
	for _, v := range vs {
		if !isGREASE(v) && (skip == nil || !skip(v)) {
			kept = append(kept, v)
		}
	}
	if sorted {
		slices.Sort(kept)
	}
	for i, v := range kept {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, hexDigit(v>>12), hexDigit(v>>8), hexDigit(v>>4), hexDigit(v))
	}
	return dst
}

func hexDigit(v uint16) byte { return "0123456789abcdef"[v&0xf] }

// appendHash appends the first 12 hex digits of s's SHA-256.
func appendHash(dst, s []byte) []byte {
	sum := sha256.Sum256(s)
	return hex.AppendEncode(dst, sum[:6])
}

// ParseRaw reads a JA4_ro (Raw(true)) back into a Hello: its lists, the
// transport and version, and for ALPN a value of the two characters JA4
// keeps. The JA4 of the result is that of the hello the JA4_ro was made of.
func ParseRaw(ro string) (Hello, error) {
	p := strings.Split(ro, "_")
	if len(p) < 3 || len(p) > 4 || len(p[0]) != 10 {
		return Hello{}, fmt.Errorf("JA4_ro %q: want a_ciphers_extensions[_signature algorithms]", ro)
	}
	a := p[0]
	h := Hello{QUIC: a[0] == 'q'}
	v, ok := map[string]uint16{"13": 0x0304, "12": 0x0303, "11": 0x0302, "10": 0x0301, "s3": 0x0300, "s2": 0x0002, "d1": 0xfeff, "d2": 0xfefd, "d3": 0xfefc, "00": 0}[a[1:3]]
	if !ok {
		return Hello{}, fmt.Errorf("JA4_ro %q: unknown version %q", ro, a[1:3])
	}
	h.Versions = []uint16{v}
	if alpn := a[8:10]; alpn != "00" {
		h.ALPN = []string{alpn}
	}
	lists := make([][]uint16, 3)
	for i, s := range p[1:] {
		for x := range strings.SplitSeq(s, ",") {
			if x == "" {
				continue
			}
			n, err := strconv.ParseUint(x, 16, 16)
			if err != nil || len(x) != 4 {
				return Hello{}, fmt.Errorf("JA4_ro %q: %q is not a 4-digit hex value", ro, x)
			}
			lists[i] = append(lists[i], uint16(n))
		}
	}
	h.Ciphers, h.Extensions, h.SignatureAlgorithms = lists[0], lists[1], lists[2]
	if got := h.Raw(true); got != ro {
		return Hello{}, fmt.Errorf("JA4_ro %q does not read back (as %q)", ro, got)
	}
	return h, nil
}
