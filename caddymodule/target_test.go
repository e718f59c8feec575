package caddymodule

import (
	"slices"
	"testing"
)

// TestTargetVariants pins the spellings a backend may resolve to the same
// resource.
func TestTargetVariants(t *testing.T) {
	for target, want := range map[string][]string{
		"/private/report.html":              nil,
		"/%70rivate/":                       {"/private/"},
		"/private%2Freport.html":            {"/private/report.html"},
		"/private%2freport.html?x=1":        {"/private/report.html?x=1"},
		"//private//report.html":            {"/private/report.html"},
		`/private\report.html`:              {"/private/report.html"},
		"/private;jsessionid=1/report.html": {"/private;jsessionid=1/report.html", "/private/report.html"},
		"/a/..%2Fprivate/x":                 {"/private/x"},
		"/docs/%3Fnot-a-query":              {"/docs/%3Fnot-a-query"},
		"/a%20b//c/":                        {"/a%20b/c/"},
		"/%zz//x":                           {"/%25zz/x"},
	} {
		got := targetVariants(target)
		if want != nil && want[0] == target {
			want = want[1:]
		}
		if !slices.Equal(got, want) {
			t.Errorf("targetVariants(%q) = %q, want %q", target, got, want)
		}
	}
}
