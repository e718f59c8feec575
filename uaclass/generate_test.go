package uaclass

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestBotsJSONUpToDate: the embedded database is exactly what go generate
// builds from the shared lists and the curated file, so nobody edits the
// generated file by hand and the generator keeps working.
func TestBotsJSONUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	out := filepath.Join(t.TempDir(), "bots.json")
	cmd := exec.Command("go", "run", "./internal/botsgen", "-data", sharedUA, "-curated", "internal/botsgen/curated.json", "-purposes", "internal/botsgen/purposes.json", "-out", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("botsgen: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, botsJSON) {
		t.Error("bots.json is out of date: run go generate ./uaclass")
	}
}
