package uaclass

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/robotsguard/robotsguard/internal/readfile"
	"github.com/robotsguard/robotsguard/policy"
)

// LoadRanges reads a file of IP ranges in the "prefixes" format that Google
// and OpenAI publish for their crawlers:
//
//	{"creationTime": "...", "prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": "2001:4860:4801:10::/64"}]}
//
// It reads at most maxSize bytes of a regular file, so that a wrong path (a
// device, a FIFO, a huge file) cannot hang or exhaust the config load.
func LoadRanges(path string, maxSize int64) ([]netip.Prefix, error) {
	data, err := readfile.Bounded(path, maxSize)
	if err != nil {
		return nil, err
	}
	prefixes, err := ParseRanges(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return prefixes, nil
}

// TokenError is a range file that cannot be loaded: Token is the crawler's
// product token as the configuration names it.
type TokenError struct {
	Token string
	Err   error
}

func (e *TokenError) Error() string { return e.Token + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *TokenError) Unwrap() error { return e.Err }

// ReadRanges loads the range file of each crawler (product token -> file,
// each at most maxSize bytes; see [LoadRanges]), in the order of the
// tokens, and returns the ranges by normalised product token, as
// [VerifierOptions].Ranges wants them. Its errors are *TokenError.
func ReadRanges(files map[string]string, maxSize int64) (map[string][]netip.Prefix, error) {
	ranges := map[string][]netip.Prefix{}
	for _, tok := range slices.Sorted(maps.Keys(files)) {
		t := policy.ProductToken(tok)
		if t == "" {
			return nil, &TokenError{tok, fmt.Errorf("%q is not a product token", tok)}
		}
		prefixes, err := LoadRanges(files[tok], maxSize)
		if err != nil {
			return nil, &TokenError{tok, err}
		}
		ranges[t] = prefixes
	}
	return ranges, nil
}

// ParsePrefix reads a CIDR (masked) or a single IP (its own prefix).
func ParsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return p, fmt.Errorf("invalid IP range %q", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("invalid IP %q", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// ParseRanges parses IP ranges in the format of [LoadRanges].
func ParseRanges(data []byte) ([]netip.Prefix, error) {
	var doc struct {
		Prefixes []struct {
			IPv4 string `json:"ipv4Prefix"`
			IPv6 string `json:"ipv6Prefix"`
		} `json:"prefixes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parsing IP ranges: %w", err)
	}
	if len(doc.Prefixes) == 0 {
		return nil, fmt.Errorf("parsing IP ranges: no prefixes")
	}
	out := make([]netip.Prefix, 0, len(doc.Prefixes))
	for i, p := range doc.Prefixes {
		s := p.IPv4
		if s == "" {
			s = p.IPv6
		}
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("prefix %d: %w", i, err)
		}
		if (p.IPv4 != "") != pfx.Addr().Is4() {
			return nil, fmt.Errorf("prefix %d: %q is in the wrong family field", i, s)
		}
		out = append(out, pfx.Masked())
	}
	return out, nil
}
