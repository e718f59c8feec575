package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestLintCommand: FILE:LINE: severity: message [code], exit status 1 on
// errors.
func TestLintCommand(t *testing.T) {
	var out bytes.Buffer
	if err := lint(&out, "robots.txt", []byte("User-agent: *\nDiasllow: /x\nAlow: /y\n")); err != nil {
		t.Errorf("warnings only: %v", err)
	}
	if got := out.String(); got != "robots.txt:2: warning: misspelled field \"Diasllow\" read as \"Disallow\" [typo]\n"+
		"robots.txt:3: warning: unknown field \"Alow\" is probably a typo of \"Allow\"; it is ignored, as the reference parser ignores it [likely-typo]\n" {
		t.Errorf("got %q", got)
	}
	out.Reset()
	err := lint(&out, "r.txt", []byte("<html><body>404</body></html>\n"))
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Errorf("error file: %v", err)
	}
	if !strings.HasPrefix(out.String(), "r.txt:1: error: content looks like an HTML") {
		t.Errorf("got %q", out.String())
	}
	out.Reset()
	if err := lint(&out, "empty.txt", nil); err != nil || !strings.Contains(out.String(), "[no-rules]") {
		t.Errorf("empty file: %q %v", out.String(), err)
	}
}

// TestLintStdin: "caddy robots lint -" reads standard input.
func TestLintStdin(t *testing.T) {
	cmd := lintCommand()
	var out strings.Builder
	cmd.SetArgs([]string{"-"})
	cmd.SetIn(strings.NewReader("User-agent: *\nDiasllow: /x\n"))
	cmd.SetOut(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "stdin:2: warning: misspelled field \"Diasllow\" read as \"Disallow\" [typo]\n" {
		t.Errorf("got %q", out.String())
	}
}
