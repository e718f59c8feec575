package field

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

// TestError: the message names the path once (none for the whole
// configuration), and the cause and the path survive wrapping.
func TestError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{Errorf("rates.ai", "must not be negative, got %v", -1), "rates.ai: must not be negative, got -1"},
		{Wrap("", io.EOF), "EOF"},
		{Wrap("tarpit_max", AtLeast(1, -3)), "tarpit_max: must be at least 1, got -3"},
		{Wrap("window", AboveZero(0)), "window: must be above 0, got 0s"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
	wrapped := fmt.Errorf("robots_guard: %w", Wrap("store.url", io.ErrUnexpectedEOF))
	var fe *Error
	if !errors.As(wrapped, &fe) || fe.Path != "store.url" || !errors.Is(wrapped, io.ErrUnexpectedEOF) {
		t.Errorf("wrapped: %v", wrapped)
	}
}
