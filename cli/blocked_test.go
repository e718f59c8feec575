package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
)

// TestBlockedText: the table has OFFENSES, as the JSON has offenses, and
// no empty table when nothing is blocked.
func TestBlockedText(t *testing.T) {
	var out strings.Builder
	writeBlocked(&out, map[string][]enforce.BlockedClient{"default": {}}, time.Now())
	if out.String() != "0 blocked\n" {
		t.Errorf("nothing blocked: %q", out.String())
	}
	out.Reset()
	now := time.Now()
	writeBlocked(&out, map[string][]enforce.BlockedClient{"default": {{IP: "192.0.2.1", Until: now.Add(time.Minute), Offenses: 2}}}, now)
	if !strings.Contains(out.String(), "OFFENSES") || !strings.Contains(out.String(), "192.0.2.1  (whole IP)  1m0s") || !strings.HasSuffix(out.String(), "1 blocked\n") {
		t.Errorf("got %q", out.String())
	}
	out.Reset()
	// A dry-run handler's block (TestZoneDryRunThenEnforce's list).
	writeBlocked(&out, map[string][]enforce.BlockedClient{"dry-switch": {{IP: "192.0.2.10", Until: now.Add(time.Hour), Offenses: 1, DryRun: true}}}, now)
	if !strings.Contains(out.String(), "(dry run: not enforced)") || !strings.Contains(out.String(), "0 blocked, 1 more in dry run (not enforced)") {
		t.Errorf("caddy robots blocked:\n%s", out.String())
	}
}
