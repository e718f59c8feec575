package caddymodule

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/enforce/redisstore/redistest"
)

// TestRedisStoreHandler: handlers with "store redis" keep their state in a
// real Redis: a trap hit through one blocks the client on another (a second
// instance: another pooled store and cache on the same keys), the admin
// functions list and lift blocks fleet-wide, a reload keeps the pooled
// store, and with Redis killed decisions go on from the in-process state,
// counted, until Redis is back.
func TestRedisStoreHandler(t *testing.T) {
	srv := redistest.Start(t)
	const zone = "fleet-test"
	handler := func(timeout string) *Handler {
		h, err := unmarshal(t, "robots_guard {\n trap /trap/\n verify off\n zone "+zone+"\n store redis "+srv.URL+" {\n  timeout "+timeout+"\n }\n}")
		if err != nil {
			t.Fatal(err)
		}
		provisionHandler(t, h)
		return h
	}
	a, b := handler("2s"), handler("3s") // two stores, as two instances have
	if a.fleet == nil || b.fleet == nil || a.fleet == b.fleet {
		t.Fatalf("stores: %p %p", a.fleet, b.fleet)
	}
	if code := serve(a, "192.0.2.20", uaFirefoxState, "/trap/"); code != 403 {
		t.Fatalf("trap through a: %d", code)
	}
	if reply, _ := srv.Do("EXISTS", "robots_guard:"+zone+":{192.0.2.0/24}192.0.2.20/32"); reply != ":1" {
		t.Errorf("the client's record is not in Redis: %s", reply)
	}
	if code := serve(b, "192.0.2.20", uaFirefoxState, "/"); code != 403 {
		t.Errorf("the trapped client through b: %d", code)
	}
	if code := serve(b, "192.0.2.21", uaFirefoxState, "/"); code != 200 {
		t.Errorf("another client through b: %d", code)
	}
	zones, err := admin.Blocked(zone, time.Now())
	if err != nil || len(zones[zone]) != 1 || zones[zone][0].IP != "192.0.2.20" || zones[zone][0].Token != "" {
		t.Fatalf("blocked: %+v, %v", zones[zone], err)
	}
	// A reload provisions the new handler before cleaning up the old one:
	// it joins the same pooled store.
	a2 := handler("2s")
	if a2.fleet != a.fleet {
		t.Error("a reload made a new Redis store")
	}
	lifted, _, err := admin.Unblock(netip.MustParsePrefix("192.0.2.20/32"), zone, time.Now())
	if err != nil || lifted != 1 {
		t.Fatalf("unblock: %d, %v", lifted, err)
	}
	for name, h := range map[string]*Handler{"a": a, "b": b} {
		deadline := time.Now().Add(10 * time.Second)
		for serve(h, "192.0.2.20", uaFirefoxState, "/") != 200 {
			if time.Now().After(deadline) {
				t.Fatalf("%s still refuses the unblocked client", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// Redis killed: a bot is still decided (from the in-process state), no
	// 5xx, each decision counted; then Redis is used again.
	srv.Kill()
	const bot = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://bot.example/)"
	var codes []int
	for range 8 {
		codes = append(codes, serve(a, "192.0.2.30", bot, "/page"))
	}
	if a.fleet.Up() {
		t.Error("the store still counts as up")
	}
	throttled := 0
	for _, c := range codes {
		if c >= 500 || c != 200 && c != 429 {
			t.Fatalf("without Redis: %v", codes)
		}
		if c == 429 {
			throttled++
		}
	}
	if throttled == 0 {
		t.Errorf("without Redis the local state throttled nothing: %v", codes)
	}
	if n := metricValue(a.metrics, "store_fallbacks_total", "zone", zone); n < 8 {
		t.Errorf("store_fallbacks_total = %v, want at least 8", n)
	}
	srv.Restart()
	deadline := time.Now().Add(15 * time.Second)
	for !a.fleet.Up() {
		if time.Now().After(deadline) {
			t.Fatal("the store did not reconnect")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := serve(a, "192.0.2.30", bot, "/page"); code != 200 {
		t.Errorf("after Redis is back (an empty one): %d", code)
	}
	if reply, _ := srv.Do("EXISTS", "robots_guard:"+zone+":{192.0.2.0/24}192.0.2.30/32"); reply != ":1" {
		t.Errorf("the state is not in Redis again: %s", reply)
	}
}

// TestCaddyfileStore: the store option's forms adapt to the JSON module
// object Caddy loads.
func TestCaddyfileStore(t *testing.T) {
	for in, want := range map[string]string{
		"store redis redis://127.0.0.1:6379": `{"module":"redis","url":"redis://127.0.0.1:6379"}`,
		"store redis {\n  url redis://r:6379/1\n  key_prefix rg:\n  timeout 100ms\n  on_error deny\n }": `{"key_prefix":"rg:","module":"redis","on_error":"deny","timeout":100000000,"url":"redis://r:6379/1"}`,
		"store memory": ``,
	} {
		h, err := unmarshal(t, "robots_guard {\n "+in+"\n}")
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := strings.TrimSpace(string(h.StoreRaw)); got != want {
			t.Errorf("%q: store %s, want %s", in, got, want)
		}
	}
}
