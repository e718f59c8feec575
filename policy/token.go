package policy

// isTokenChar reports whether c may appear in a product token: ASCII letters,
// digits, '_' and '-'.
func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// tokenLen returns the length of the leading product token of s.
func tokenLen(s string) int {
	i := 0
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	return i
}

// ProductToken returns the robots.txt product token of s: its leading run of
// ASCII letters, digits, '_' and '-', lower-cased. "Googlebot/2.1" gives
// "googlebot", "MJ12bot" gives "mj12bot" and "Mediapartners-Google*" gives
// "mediapartners-google". It returns "" when s does not start with such a
// character.
//
// The reference parser accepts only letters, '_' and '-', which would turn
// "MJ12bot" into "mj"; robotsguard includes digits so that a site that names
// MJ12bot really names it.
func ProductToken(s string) string {
	n := tokenLen(s)
	for i := 0; i < n; i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s[:n])
			for j := i; j < n; j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s[:n]
}

// appendToken appends the product token of s to dst without allocating when
// dst has room.
func appendToken(dst []byte, s string) []byte {
	n := tokenLen(s)
	for i := 0; i < n; i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// isNormalToken reports whether s is already a lower-case product token.
func isNormalToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isTokenChar(c) || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return s != ""
}
