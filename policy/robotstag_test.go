package policy

import (
	"net/http"
	"testing"
)

// FuzzRobotsTag: any X-Robots-Tag values are read without panicking, and
// merging directives into them never drops a value the backend sent.
func FuzzRobotsTag(f *testing.F) {
	f.Add("noindex, nofollow", "googlebot: noimageindex")
	f.Add("unavailable_after: 25 Jun 2010 15:00:00 PST", "max-snippet:-1")
	f.Fuzz(func(t *testing.T, a, b string) {
		h := http.Header{}
		h.Add("X-Robots-Tag", a)
		h.Add("X-Robots-Tag", b)
		before := append([]string{}, h.Values("X-Robots-Tag")...)
		MergeRobotsTag(h, map[string][]string{"": {"noindex"}, "googlebot": {"nosnippet"}})
		after := h.Values("X-Robots-Tag")
		if len(after) < len(before) {
			t.Fatalf("merge dropped values: %q -> %q", before, after)
		}
		for i := range before {
			if after[i] != before[i] {
				t.Fatalf("merge changed the backend's value %q to %q", before[i], after[i])
			}
		}
	})
}
