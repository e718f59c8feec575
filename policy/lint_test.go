package policy

import (
	"fmt"
	"strings"
	"testing"
)

// codes returns the codes of the diagnostics at line (any line for -1).
func codes(ds []Diagnostic, line int) []Code {
	var out []Code
	for _, d := range ds {
		if line < 0 || d.Line == line {
			out = append(out, d.Code)
		}
	}
	return out
}

func hasCode(ds []Diagnostic, line int, code Code) bool {
	for _, c := range codes(ds, line) {
		if c == code {
			return true
		}
	}
	return false
}

// TestLintCodes (issue 11, lint): typos are named as such, an empty file
// says it has no rules, binary garbage is summarised, and a file cut at
// MaxSize names what it lost.
func TestLintCodes(t *testing.T) {
	ds := Parse([]byte("User-agent: *\nAlow: /public\nDisalow: /x\nDiasllow: /y\nRequest-rate: 1/5\nNoindex: /z\n")).Lint()
	for line, code := range map[int]Code{2: CodeLikelyTypo, 3: CodeTypo, 4: CodeTypo, 5: CodeUnknownField, 6: CodeUnknownField} {
		if !hasCode(ds, line, code) {
			t.Errorf("line %d: want %s, got %v", line, code, ds)
		}
	}
	for _, d := range ds {
		if d.Line == 2 && !strings.Contains(d.Message, `typo of "Allow"`) {
			t.Errorf("line 2: %q does not name Allow", d.Message)
		}
	}
	for _, empty := range []string{"", "\n\n", "# nothing\n", "User-agent: *\n"} {
		if ds := Parse([]byte(empty)).Lint(); !hasCode(ds, 1, CodeNoRules) {
			t.Errorf("%q: want no-rules, got %v", empty, ds)
		}
	}
	if hasCode(Parse([]byte("User-agent: *\nDisallow:\n")).Lint(), -1, CodeNoRules) {
		t.Error("an empty Disallow is a rule")
	}

	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(i*7919 + i/13)
	}
	ds = Parse(junk).Lint()
	if len(ds) > 3 || !hasCode(ds, -1, CodeBinary) {
		t.Errorf("binary data: %d findings, want an error and a summary: %v", len(ds), ds)
	}

	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for b.Len() < MaxSize-40 {
		fmt.Fprintf(&b, "Disallow: /a/%d\n", b.Len())
	}
	b.WriteString("Disallow: /cut/1\nDisallow: /cut/2\nUser-agent: Googlebot\nDisallow: /g\nUser-agent: Bingbot\nAllow: /b\n")
	ds = Parse([]byte(b.String())).Lint()
	found := false
	for _, d := range ds {
		if d.Code == CodeTruncated {
			found = true
			for _, want := range []string{"rules: the end of the group for \"*\"", `"Googlebot"`, `"Bingbot"`} {
				if !strings.Contains(d.Message, want) {
					t.Errorf("truncation message %q does not say %s", d.Message, want)
				}
			}
		}
	}
	if !found {
		t.Error("no truncated finding")
	}
}
