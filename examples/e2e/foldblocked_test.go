package e2e

import (
	"fmt"
	"testing"
)

// TestBlockedRotatingTokenFolded (issue 29, item 9): a trapped address
// that rotates its product token on every request is one group of
// log_repeats once blocked: 1,000 refused requests write 2 lines (the trap
// hit and the first blocked request), not 1,001; the repeats are counted
// in the summary that follows.
func TestBlockedRotatingTokenFolded(t *testing.T) {
	s := start(t, options{trustProxy: true, guard: "log_repeats 1m"})
	const ip = "192.0.2.55"
	if code, _ := get(t, s.front, "/private-archive/x.html", ip, "RotBot/1.0"); code != 403 {
		t.Fatalf("trap hit: %d", code)
	}
	refused := 0
	for i := range 1000 {
		if code, reason := get(t, s.front, "/index.html", ip, fmt.Sprintf("RotBot%d/1.0 (+https://bot.example/)", i)); code == 403 && reason == "blocked_client" {
			refused++
		}
	}
	lines := 0
	for _, e := range s.moduleEntries(t) {
		if e["client_ip"] == ip {
			lines++
		}
	}
	t.Logf("1 trap hit and 1,000 requests with rotating tokens, %d refused as blocked: %d log lines", refused, lines)
	if refused != 1000 {
		t.Errorf("%d of 1000 refused", refused)
	}
	if lines > 3 {
		t.Errorf("%d log lines for a blocked address, want at most 3", lines)
	}
}
