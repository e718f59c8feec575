package uaclass

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadRangesBounds: a directory, a missing file and a file above the
// bound are refused before they are read, with the path in the message.
func TestLoadRangesBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"prefixes": [{"ipv4Prefix": "10.0.0.0/8"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{dir, dir + " is not a regular file"},
		{filepath.Join(dir, "none.json"), filepath.Join(dir, "none.json") + ": no such file or directory"},
		{big, big + " is larger than 4 bytes"},
	} {
		if _, err := LoadRanges(tc.path, 4); err == nil || err.Error() != tc.want {
			t.Errorf("LoadRanges(%q) = %v, want %q", tc.path, err, tc.want)
		}
	}
	if _, err := LoadRanges(big, 1<<10); err != nil {
		t.Errorf("LoadRanges(%q): %v", big, err)
	}
}

// TestParsePrefix: a CIDR is masked, a single IP is its own prefix.
func TestParsePrefix(t *testing.T) {
	for in, want := range map[string]string{
		"10.1.2.3/8":  "10.0.0.0/8",
		"10.1.2.3":    "10.1.2.3/32",
		"2001:db8::1": "2001:db8::1/128",
		"10.0.0.0/33": "invalid IP range \"10.0.0.0/33\"",
		"nope":        "invalid IP \"nope\"",
	} {
		p, err := ParsePrefix(in)
		got := p.String()
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("ParsePrefix(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestReadRanges: files are read by normalised product token; a bad token
// or file names the token as given.
func TestReadRanges(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "gptbot.json")
	if err := os.WriteFile(file, []byte(`{"prefixes": [{"ipv4Prefix": "20.171.206.0/24"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ranges, err := ReadRanges(map[string]string{"GPTBot": file}, 1<<20)
	if err != nil || len(ranges["gptbot"]) != 1 {
		t.Fatalf("ReadRanges = %v, %v", ranges, err)
	}
	for _, tc := range []struct {
		files       map[string]string
		token, want string
	}{
		{map[string]string{"/bad": file}, "/bad", `"/bad" is not a product token`},
		{map[string]string{"gptbot": dir}, "gptbot", "is not a regular file"},
	} {
		_, err := ReadRanges(tc.files, 1<<20)
		var te *TokenError
		if !errors.As(err, &te) || te.Token != tc.token || !strings.Contains(te.Err.Error(), tc.want) {
			t.Errorf("ReadRanges(%v) = %v, want %s: ...%s...", tc.files, err, tc.token, tc.want)
		}
	}
}
