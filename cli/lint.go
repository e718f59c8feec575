package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/policy"
)

func lintCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "lint FILE|-",
		Short: "Reports problems in a robots.txt file (- reads standard input)",
		Long: `
Reports problems in a robots.txt file, as robotsguard's parser reads it:
errors (content that is no robots.txt at all, such as an HTML page or
binary data; the handler never lets such a file replace the rules in
force), warnings (input guessed at or ignored, such as a likely typo of a
field, a rule before any User-agent line, groups that mainstream parsers
read differently, a rule that cannot have the effect its author meant) and
information. FILE "-" reads standard input.

Output: one line per finding, "FILE:LINE: severity: message [code]"
("stdin" for -); nothing when the file is clean.

Exit status: 0 when there is no error (warnings and information
included); 1 when there are errors, or the file cannot be read.`,
		Example: `  caddy robots lint /srv/www/robots.txt
  curl -s https://example.com/robots.txt | caddy robots lint -`,
		Args: cobra.ExactArgs(1),
	}
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		name := args[0]
		var data []byte
		var err error
		if name == "-" {
			name = "stdin"
			data, err = io.ReadAll(cmd.InOrStdin())
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			return err
		}
		return lint(cmd.OutOrStdout(), name, data)
	})
	return c
}

func lint(w io.Writer, name string, data []byte) error {
	errs := 0
	for _, d := range policy.Parse(data).Lint() {
		fmt.Fprintf(w, "%s:%d: %s: %s [%s]\n", name, d.Line, d.Severity, d.Message, d.Code)
		if d.Severity == policy.Error {
			errs++
		}
	}
	if errs > 0 {
		return exitError{1}
	}
	return nil
}
