package e2e

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// startProcess starts cmd (its output already pointed at out) and stops it
// when the test ends: an interrupt, then a kill if it has not exited within
// grace. A failed test's log gets what it printed, headed by name ("caddy",
// "prometheus").
func startProcess(t *testing.T, cmd *exec.Cmd, name string, out interface{ String() string }, grace time.Duration) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(grace):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, out.String())
		}
	})
}
