package caddymodule

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReferenceExamples: each row of docs/reference.md's "Caddyfile and
// JSON side by side" table means the same in both columns (the Caddyfile
// lines, read by the Caddyfile adapter, give the Handler that the JSON
// gives), and every option of the robots_guard block has a row, but for
// the blocks that the page shows whole (verify, web_bot_auth).
func TestReferenceExamples(t *testing.T) {
	page, err := os.ReadFile("../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(page), "Caddyfile and JSON side by side\n")
	if !ok {
		t.Fatal("docs/reference.md has no \"Caddyfile and JSON side by side\" table")
	}
	covered := map[string]bool{"verify": true, "web_bot_auth": true}
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		caddyfileCell, jsonCell, ok := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
		if !ok || !strings.HasPrefix(caddyfileCell, "`") {
			continue
		}
		rows++
		var lines []string
		for _, m := range codeSpans.FindAllStringSubmatch(caddyfileCell, -1) {
			l := strings.ReplaceAll(m[1], `\|`, "|")
			lines = append(lines, l)
			covered[strings.Fields(l)[0]] = true
		}
		fromCaddyfile, err := unmarshal(t, "robots_guard {\n"+strings.Join(lines, "\n")+"\n}")
		if err != nil {
			t.Errorf("%s: %v", caddyfileCell, err)
			continue
		}
		js := "{" + strings.Trim(strings.TrimSuffix(strings.TrimSpace(jsonCell), "|"), " `") + "}"
		var fromJSON Handler
		if err := json.Unmarshal([]byte(js), &fromJSON); err != nil {
			t.Errorf("%s: JSON %s: %v", caddyfileCell, js, err)
			continue
		}
		a, _ := json.Marshal(fromCaddyfile)
		b, _ := json.Marshal(&fromJSON)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the Caddyfile gives %s, the JSON column %s", caddyfileCell, a, b)
		}
	}
	for name := range caddyfileOptions {
		if !covered[name] {
			t.Errorf("docs/reference.md's side-by-side table has no row for %s", name)
		}
	}
	if rows < 30 {
		t.Errorf("read only %d rows", rows)
	}
}

var codeSpans = regexp.MustCompile("`([^`]+)`")
