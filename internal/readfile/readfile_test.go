package readfile

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBounded: a regular file within the bound is read whole; a directory,
// a file over the bound and a missing file are refused with errors that
// name the path once.
func TestBounded(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := Bounded(small, 5); err != nil || string(data) != "12345" {
		t.Errorf("small file: %q %v", data, err)
	}
	if data, err := Bounded(small, math.MaxInt64); err != nil || string(data) != "12345" {
		t.Errorf("no bound: %q %v", data, err)
	}
	for _, tc := range []struct {
		path string
		max  int64
		want string
	}{
		{small, 4, small + " is larger than 4 bytes"},
		{dir, 10, dir + " is not a regular file"},
		{filepath.Join(dir, "missing"), 10, filepath.Join(dir, "missing") + ": no such file or directory"},
	} {
		_, err := Bounded(tc.path, tc.max)
		if err == nil || err.Error() != tc.want || strings.Count(err.Error(), tc.path) != 1 {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
}
