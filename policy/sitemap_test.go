package policy

import "testing"

// TestCheckSitemap: an absolute http(s) URL without white space passes.
func TestCheckSitemap(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://example.com/sitemap.xml": true,
		"http://example.com/s.xml":        true,
		"/sitemap.xml":                    false,
		"ftp://example.com/s.xml":         false,
		"https://example.com/a b.xml":     false,
		"https://example.com/s.xml\x7f":   false,
	} {
		if err := CheckSitemap(u); (err == nil) != ok {
			t.Errorf("CheckSitemap(%q) = %v, want ok=%v", u, err, ok)
		}
	}
}
