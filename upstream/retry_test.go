package upstream

import (
	"testing"
	"time"
)

// TestRetry: the wait doubles from a second, jittered down by at most a
// fifth, never beyond the refresh interval, and at least the server's
// Retry-After (within the refresh interval).
func TestRetry(t *testing.T) {
	for range 200 {
		for failures, base := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 6: 32 * time.Second} {
			d := Retry(failures, time.Minute, 0)
			if d > base || d < base*4/5 {
				t.Fatalf("Retry(%d, 1m) = %v, want %v less at most a fifth", failures, d, base)
			}
		}
		if d := Retry(7, time.Minute, 0); d > time.Minute || d < 48*time.Second {
			t.Fatalf("Retry(7, 1m) = %v", d)
		}
		if d := Retry(1000, time.Minute, 0); d > time.Minute || d < 48*time.Second {
			t.Fatalf("Retry(1000, 1m) = %v", d)
		}
		if d := Retry(1, time.Minute, 30*time.Second); d != 30*time.Second {
			t.Fatalf("Retry with Retry-After 30s = %v", d)
		}
		if d := Retry(1, time.Minute, time.Hour); d != time.Minute {
			t.Fatalf("Retry with Retry-After 1h = %v, want the refresh interval", d)
		}
		if d := Retry(3, 2*time.Second, 0); d > 2*time.Second || d <= 0 {
			t.Fatalf("Retry(3, 2s) = %v", d)
		}
	}
}

// TestParseRetryAfter: seconds and HTTP dates; nothing for bad values and
// times past; at most a day.
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"120":                           2 * time.Minute,
		" 5 ":                           5 * time.Second,
		"-5":                            0,
		"1.5":                           0,
		"99999999999999999999":          maxRetryAfter,
		"86401":                         maxRetryAfter,
		"Sun, 01 Mar 2026 12:00:30 GMT": 30 * time.Second,
		"Sun, 01 Mar 2026 11:00:00 GMT": 0,
		"Mon, 01 Mar 2027 12:00:00 GMT": maxRetryAfter,
		"soon":                          0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}
