package policy

import (
	"strings"
	"testing"
)

// TestEditDistance: insertions, deletions, substitutions and swaps of
// neighbours count one each; long strings are capped.
func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"crawl", "crawl", 0},
		{"", "abc", 3},
		{"disalow", "disallow", 1},
		{"dissallow", "disallow", 1},
		{"disallwo", "disallow", 1},
		{"sitemap", "sitmeap", 1},
		{"tarpit", "trap", 3},
		{strings.Repeat("a", 65), "a", 64},
	} {
		if got := EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
