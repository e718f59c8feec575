package enforce

import (
	"strings"
	"testing"
	"time"
)

// TestPersonPageSpan: the refusal page says how long the block lasts in
// words that agree with the number: "1 minute", "15 minutes", "3 hours".
func TestPersonPageSpan(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for left, want := range map[time.Duration]string{
		20 * time.Second: "in about 1 minute,",
		time.Minute:      "in about 1 minute,",
		15 * time.Minute: "in about 15 minutes,",
		90 * time.Minute: "in about 90 minutes,",
		3 * time.Hour:    "in about 3 hours,",
	} {
		d := &Decision{Reason: ReasonBlockedClient, BlockReason: WhyTrap, BlockedUntil: now.Add(left)}
		if page := string(personPage(d, 403, now)); !strings.Contains(page, want) {
			t.Errorf("%v left: the page does not say %q:\n%s", left, want, page)
		}
	}
}
