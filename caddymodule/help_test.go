package caddymodule

import (
	"strings"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// TestSubcommandHelp: each "caddy robots" subcommand's --help says what it
// does, shows its output format, its exit status and examples, and the
// robots command's own help lists each subcommand.
func TestSubcommandHelp(t *testing.T) {
	reg, ok := caddycmd.Commands()["robots"]
	if !ok {
		t.Fatal(`no "robots" command registered`)
	}
	root := &cobra.Command{Use: "robots"}
	reg.CobraFunc(root)
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
		if !strings.Contains(reg.Long, "caddy robots "+c.Name()+" ") {
			t.Errorf("caddy robots --help does not list %s", c.Name())
		}
	}
}
