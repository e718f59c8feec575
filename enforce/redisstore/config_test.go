package redisstore

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/internal/field"
)

// TestConfigCheck: defaults are filled in, each bad value names its field,
// and the URL's password never shows in a message.
func TestConfigCheck(t *testing.T) {
	s, err := Config{URL: "redis://127.0.0.1:6379", OnError: "deny"}.Check()
	if err != nil || s.Timeout != DefaultTimeout || s.OnError != Deny || s.URL != "redis://127.0.0.1:6379" {
		t.Fatalf("Check = %+v, %v", s, err)
	}
	if a, b := s.Key("z", time.Hour), s.Key("z", time.Hour); a != b || a == s.Key("y", time.Hour) || a == s.Key("z", time.Minute) {
		t.Errorf("Key does not tell zones and TTLs apart: %q", a)
	}
	for _, tc := range []struct {
		c            Config
		field, words string
	}{
		{Config{URL: "redis://x:6379", OnError: "maybe"}, "on_error", `want local, allow or deny, got "maybe"`},
		{Config{URL: "redis://x:6379", KeyPrefix: "a{b}"}, "key_prefix", `"a{b}" has a brace`},
		{Config{URL: "http://user:secret@x:6379"}, "url", `unknown scheme "http"`},
	} {
		_, err := tc.c.Check()
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Path != tc.field || !strings.Contains(fe.Err.Error(), tc.words) {
			t.Errorf("Check(%+v) = %v, want %s: ...%s...", tc.c, err, tc.field, tc.words)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Check(%+v) echoes the password: %v", tc.c, err)
		}
	}
}
