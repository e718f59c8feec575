package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestSubcommandHelp: each "caddy robots" subcommand's --help says what it
// does, shows its output format, its exit status and examples, and the
// robots command's own help lists each subcommand.
func TestSubcommandHelp(t *testing.T) {
	root := &cobra.Command{Use: "robots"}
	root.AddCommand(Commands(&Caddy{})...)
	if len(root.Commands()) < 8 {
		t.Fatalf("%d subcommands", len(root.Commands()))
	}
	for _, c := range root.Commands() {
		for _, want := range []string{"Output:", "Exit status:"} {
			if !strings.Contains(c.Long, want) {
				t.Errorf("caddy robots %s --help has no %q", c.Name(), want)
			}
		}
		if !strings.Contains(c.Example, "caddy robots "+c.Name()) {
			t.Errorf("caddy robots %s --help has no example", c.Name())
		}
		if !strings.Contains(Long, "caddy robots "+c.Name()+" ") {
			t.Errorf("caddy robots --help does not list %s", c.Name())
		}
	}
}
