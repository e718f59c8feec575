package policy

import "testing"

// TestPathSet: a set holds what any of its patterns matches, reading '$'
// patterns for the resource (a query does not dodge them), never
// /robots.txt, and nothing for an empty set or an empty pattern.
func TestPathSet(t *testing.T) {
	s := NewPathSet("/private-archive/", "/*.bak$", "/old/*/draft", "")
	for target, want := range map[string]bool{
		"/private-archive/":           true,
		"/private-archive/x.html?y=1": true,
		"/private-archive":            false,
		"/db.bak":                     true,
		"/db.bak?x=1":                 true,
		"/db.bak.txt":                 false,
		"/old/2024/draft/1":           true,
		"/old/draft":                  false,
		"/":                           false,
		"/robots.txt":                 false,
	} {
		if got := s.Contains(NormalizeTarget(target)); got != want {
			t.Errorf("Contains(%q) = %v, want %v", target, got, want)
		}
	}
	if NewPathSet().Contains("/") || NewPathSet("").Contains("/x") {
		t.Error("an empty set or pattern holds a path")
	}
	if n := testing.AllocsPerRun(100, func() { s.Contains("/db.bak?x=1") }); n != 0 {
		t.Errorf("Contains allocates %v times", n)
	}
}
