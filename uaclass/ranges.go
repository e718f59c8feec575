package uaclass

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
)

// LoadRanges reads a file of IP ranges in the "prefixes" format that Google
// and OpenAI publish for their crawlers:
//
//	{"creationTime": "...", "prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": "2001:4860:4801:10::/64"}]}
func LoadRanges(path string) ([]netip.Prefix, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading IP ranges: %w", err)
	}
	prefixes, err := ParseRanges(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return prefixes, nil
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
