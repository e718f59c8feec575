package enforce

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestTarpitHold: a held request ends when its client gives up or the
// config is unloaded, and no more than Max are held at once. Each case
// would hold for an hour if it failed.
func TestTarpitHold(t *testing.T) {
	unloaded := make(chan struct{})
	var counted []int
	tp := NewHolder(1, unloaded, func(delta int) { counted = append(counted, delta) })
	if tp.Max() != 1 {
		t.Fatalf("Max() = %d, want 1", tp.Max())
	}

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if !tp.Hold(gone, time.Hour) {
		t.Error("a request was not held although the tarpit was empty")
	}
	if len(tp.slots) != 0 {
		t.Fatal("a finished hold kept its place in the tarpit")
	}

	tp.slots <- struct{}{} // the tarpit is full
	if tp.Hold(context.Background(), time.Hour) {
		t.Error("a request was held beyond its max")
	}
	<-tp.slots

	close(unloaded)
	if !tp.Hold(context.Background(), time.Hour) {
		t.Error("a request was not held")
	}
	if want := "[1 -1 0 1 -1]"; fmt.Sprint(counted) != want {
		t.Errorf("counted %v, want %s", counted, want)
	}
}
