package tlsprint

import (
	"fmt"
	"strconv"
	"strings"
)

// MarshalText writes a Hello as one line, every list as sent (GREASE
// values included, as 4-digit hex), for test data and for people:
//
//	tcp v=3a3a,0304,0303 c=4a4a,1301,… e=dada,001b,… g=8a8a,11ec,001d,… s=0403,0804,… alpn=h2,http/1.1
//
// The transport comes first ("tcp" or "quic"), then v (versions), c
// (ciphers), e (extensions), g (groups), s (signature algorithms) and alpn,
// each only when not empty. An ALPN byte that is not a printable ASCII
// character, or is one of ",%" or a space, is written %XX.
func (h Hello) MarshalText() ([]byte, error) {
	b := []byte("tcp")
	if h.QUIC {
		b = []byte("quic")
	}
	for _, l := range [...]struct {
		key string
		vs  []uint16
	}{{"v", h.Versions}, {"c", h.Ciphers}, {"e", h.Extensions}, {"g", h.Groups}, {"s", h.SignatureAlgorithms}} {
		if len(l.vs) == 0 {
			continue
		}
		b = append(b, ' ')
		b = append(b, l.key...)
		b = append(b, '=')
		for i, v := range l.vs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, hexDigit(v>>12), hexDigit(v>>8), hexDigit(v>>4), hexDigit(v))
		}
	}
	if len(h.ALPN) > 0 {
		b = append(b, " alpn="...)
		for i, p := range h.ALPN {
			if i > 0 {
				b = append(b, ',')
			}
			for j := 0; j < len(p); j++ {
				if c := p[j]; c <= ' ' || c > '~' || c == ',' || c == '%' {
					b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&0xf])
				} else {
					b = append(b, c)
				}
			}
		}
	}
	return b, nil
}

// String returns the Hello as MarshalText writes it.
func (h Hello) String() string {
	b, _ := h.MarshalText()
	return string(b)
}

// maxListLen bounds a list of a Hello's text: a ClientHello of at most
// 2^16 bytes holds fewer values.
const maxListLen = 1 << 15

// UnmarshalText reads a Hello as MarshalText writes it. It refuses a
// transport other than tcp or quic, an unknown or repeated key, and a
// value that is not 4-digit hex.
func (h *Hello) UnmarshalText(text []byte) error {
	fields := strings.Fields(string(text))
	if len(fields) == 0 || fields[0] != "tcp" && fields[0] != "quic" {
		return fmt.Errorf("hello %.40q: want tcp or quic first", text)
	}
	var out Hello
	out.QUIC = fields[0] == "quic"
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		key, val, ok := strings.Cut(f, "=")
		if !ok || val == "" || seen[key] {
			return fmt.Errorf("hello: %.40q: want key=value, each key once", f)
		}
		seen[key] = true
		if key == "alpn" {
			for p := range strings.SplitSeq(val, ",") {
				s, err := unescapeALPN(p)
				if err != nil {
					return fmt.Errorf("hello: alpn %.40q: %v", p, err)
				}
				out.ALPN = append(out.ALPN, s)
			}
			continue
		}
		var dst *[]uint16
		switch key {
		case "v":
			dst = &out.Versions
		case "c":
			dst = &out.Ciphers
		case "e":
			dst = &out.Extensions
		case "g":
			dst = &out.Groups
		case "s":
			dst = &out.SignatureAlgorithms
		default:
			return fmt.Errorf("hello: unknown key %.20q", key)
		}
		if strings.Count(val, ",") >= maxListLen {
			return fmt.Errorf("hello: %s has more than %d values", key, maxListLen)
		}
		for x := range strings.SplitSeq(val, ",") {
			n, err := strconv.ParseUint(x, 16, 16)
			if err != nil || len(x) != 4 {
				return fmt.Errorf("hello: %s: %.20q is not a 4-digit hex value", key, x)
			}
			*dst = append(*dst, uint16(n))
		}
	}
	*h = out
	return nil
}

// ParseHello reads a Hello as MarshalText writes it.
func ParseHello(s string) (Hello, error) {
	var h Hello
	err := h.UnmarshalText([]byte(s))
	return h, err
}

func unescapeALPN(p string) (string, error) {
	if !strings.Contains(p, "%") {
		return p, nil
	}
	var b []byte
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			b = append(b, p[i])
			continue
		}
		if i+3 > len(p) {
			return "", fmt.Errorf("%%XX cut short")
		}
		n, err := strconv.ParseUint(p[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("%q is not %%XX", p[i:i+3])
		}
		b = append(b, byte(n))
		i += 2
	}
	return string(b), nil
}
