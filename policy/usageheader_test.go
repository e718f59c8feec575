package policy

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzMergeContentUsage: whatever the backend sends, the merged header
// states at least what the rule states ("n" wins), and never drops a
// backend's "n".
func FuzzMergeContentUsage(f *testing.F) {
	for _, s := range []string{"", "train-ai=y", "train-ai=n, search=y", "x=(1 2);a, train-ai", "Train-AI=n", "/p train-ai=n", "search=y,"} {
		f.Add(s, uint8(1), uint8(2))
	}
	f.Fuzz(func(t *testing.T, backend string, allow, deny uint8) {
		mask := UsageTrainAI | UsageSearch
		add := Prefs{Disallowed: Usage(deny) & mask}
		add.Allowed = Usage(allow) & mask &^ add.Disallowed
		if !add.Known() || strings.ContainsAny(backend, "\r\n") {
			return
		}
		h := http.Header{}
		if backend != "" {
			h.Set("Content-Usage", backend)
		}
		before := ParseStatement(KeyContentUsage, backend)
		MergeContentUsage(h, add)
		got := ParseStatement(KeyContentUsage, strings.Join(h.Values("Content-Usage"), ", "))
		if got.Syntax {
			t.Fatalf("backend %q + %v: %q does not parse", backend, add, h.Values("Content-Usage"))
		}
		want := add
		if !before.Syntax && before.Path == "" && backend != "" {
			want = before.Prefs.Combine(add)
		}
		if got.Prefs != want {
			t.Fatalf("backend %q + %v: %v, want %v", backend, add, got.Prefs, want)
		}
	})
}
