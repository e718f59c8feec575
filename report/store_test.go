package report

import (
	"errors"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/robotsguard/robotsguard/enforce/redisstore"
)

type storeCounts struct {
	up        map[string]bool
	fallbacks map[string]int
}

func (c *storeCounts) SetStoreUp(zone string, up bool) { c.up[zone] = up }
func (c *storeCounts) StoreFallback(zone string)       { c.fallbacks[zone]++ }

// TestStoreHooks: a Redis store's outage is counted and logged once at
// WARN with how requests are decided meanwhile, its return at INFO, each
// request decided without it is counted, and the fleet memory's reports
// are logged at their level with their counts, each line naming the zone.
func TestStoreHooks(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	m := &storeCounts{up: map[string]bool{}, fallbacks: map[string]int{}}
	h := StoreHooks(zap.New(core), m, "shop", "deny")

	h.Down(errors.New("dial tcp: refused"))
	if up, ok := m.up["shop"]; !ok || up {
		t.Errorf("after Down, store up = %v (set %v), want false", up, ok)
	}
	h.Fallback()
	h.Fallback()
	if m.fallbacks["shop"] != 2 {
		t.Errorf("fallbacks = %d, want 2", m.fallbacks["shop"])
	}
	h.Up()
	if !m.up["shop"] {
		t.Error("after Up, the store still counts as down")
	}
	h.Memory(redisstore.Report{Warn: true, Msg: "Redis lost its state", Counts: []redisstore.Count{{Name: "blocks_written", N: 7}}})
	h.Memory(redisstore.Report{Msg: "decisions written back"})

	got := logs.AllUntimed()
	if len(got) != 4 {
		t.Fatalf("%d log lines, want 4: %v", len(got), got)
	}
	want := []struct {
		level  zapcore.Level
		msg    string
		fields map[string]any
	}{
		{zapcore.WarnLevel, "the Redis store cannot be reached; deciding without it until it answers again", map[string]any{"zone": "shop", "on_error": "deny", "error": "dial tcp: refused"}},
		{zapcore.InfoLevel, "the Redis store answers again", map[string]any{"zone": "shop"}},
		{zapcore.WarnLevel, "Redis lost its state", map[string]any{"zone": "shop", "blocks_written": int64(7)}},
		{zapcore.InfoLevel, "decisions written back", map[string]any{"zone": "shop"}},
	}
	for i, w := range want {
		e := got[i]
		if e.Level != w.level || e.Message != w.msg {
			t.Errorf("line %d: %v %q, want %v %q", i, e.Level, e.Message, w.level, w.msg)
		}
		fields := e.ContextMap()
		for k, v := range w.fields {
			if fields[k] != v {
				t.Errorf("line %d: %s = %#v, want %#v", i, k, fields[k], v)
			}
		}
	}
}
