package caddymodule

import (
	"context"
	"testing"
	"time"
)

// TestTarpitHold: a held request ends when its client gives up or the
// config is unloaded, and no more than TarpitMax are held at once. Each case
// would hold for an hour if it failed.
func TestTarpitHold(t *testing.T) {
	unloaded := make(chan struct{})
	h := &Handler{tarpit: make(chan struct{}, 1), unloaded: unloaded}

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if !h.hold(gone, time.Hour) {
		t.Error("a request was not held although the tarpit was empty")
	}
	if len(h.tarpit) != 0 {
		t.Fatal("a finished hold kept its place in the tarpit")
	}

	h.tarpit <- struct{}{} // the tarpit is full
	if h.hold(context.Background(), time.Hour) {
		t.Error("a request was held beyond tarpit_max")
	}
	<-h.tarpit

	close(unloaded)
	if !h.hold(context.Background(), time.Hour) {
		t.Error("a request was not held")
	}
}
