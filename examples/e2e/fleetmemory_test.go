package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsguard/robotsguard/enforce/redisstore/redistest"
)

// lostState is the WARN line of an instance that found Redis without its
// state.
var lostState = regexp.MustCompile(`"level":"warn".*the Redis store lost its state.*"blocks_restored":(\d+)`)

// TestFleetMemory (issue 38, part 2): two instances of the real binary on
// one redis-server without persistence.
//
//   - With Redis stopped, a client is trapped on A; once Redis is started
//     again (empty), B refuses it within a few seconds: A wrote what it
//     decided without Redis.
//   - Redis restarted empty: both instances still refuse every client
//     blocked before (a trap hit on each, a crawler blocked in its network
//     for its strikes, the one of the outage), from Redis again, and each
//     says once, at
//     WARN, that the store lost its state and how many blocks it wrote
//     back.
//   - A crawler over 20 addresses costs one round trip a request.
func TestFleetMemory(t *testing.T) {
	need(t)
	rs := redistest.Start(t)
	// The two instances listen on ports of their own, so their sites'
	// names differ: they share their state by naming one zone (the default
	// zone is the site's name).
	guard := "zone default\n\t\tstore redis " + rs.URL + " {\n\t\t\ttimeout 300ms\n\t\t}"
	a := start(t, options{trustProxy: true, guard: guard})
	b := start(t, options{trustProxy: true, guard: guard})
	c := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer c.Close()
	ctx := context.Background()

	// One round trip a request: a crawler over 20 addresses of a /24,
	// throttled by its crawler's bucket.
	before := roundTrips(t, c)
	for i := range 100 {
		get(t, a.front, "/about.html", fmt.Sprintf("192.0.2.%d", i%20+1), crawlerBot)
	}
	if per := float64(roundTrips(t, c)-before) / 100; per < 0.95 || per > 1.05 {
		t.Errorf("%.2f round trips a request", per)
	} else {
		t.Logf("a crawler over 20 addresses: %.2f round trips a request", per)
	}

	refused := func(s *server, ip, ua string) bool {
		code, _ := get(t, s.front, "/about.html", ip, ua)
		return code == 403
	}
	trap := func(s *server, ip, ua string) {
		t.Helper()
		if code, _ := get(t, s.front, "/private-archive/x.html", ip, ua); code != 403 {
			t.Fatalf("trap of %s: %d", ip, code)
		}
	}
	trap(a, "203.0.113.1", fleetBrowser)
	trap(b, "203.0.113.2", fleetBrowser)
	// A crawler blocked in 198.51.100.0/24: ten disallowed requests from
	// ten of its addresses.
	for i := range 10 {
		if code, _ := get(t, []*server{a, b}[i%2].front, "/private/x.html", fmt.Sprintf("198.51.100.%d", i+1), crawlerBot); code != 403 {
			t.Fatalf("disallowed: %d", code)
		}
	}
	type client struct{ ip, ua string }
	blocked := []client{{"203.0.113.1", fleetBrowser}, {"203.0.113.2", fleetBrowser}, {"198.51.100.77", crawlerBot}}
	for _, cl := range blocked {
		for n, s := range map[string]*server{"A": a, "B": b} {
			if !refused(s, cl.ip, cl.ua) {
				t.Fatalf("%s is not refused on %s", cl.ip, n)
			}
		}
	}

	// Redis stopped: a trap hit on A, decided without it.
	rs.Kill()
	trap(a, "203.0.113.3", fleetBrowser)
	blocked = append(blocked, client{"203.0.113.3", fleetBrowser})
	rs.Restart()
	start := time.Now()
	for !refused(b, "203.0.113.3", fleetBrowser) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("B does not refuse the client trapped on A while Redis was down")
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("B refuses the client trapped on A without Redis %v after Redis started", time.Since(start).Round(time.Millisecond))

	// Redis restarted empty.
	waitAll := func(what string) time.Duration {
		start := time.Now()
		for _, cl := range blocked {
			for n, s := range map[string]*server{"A": a, "B": b} {
				for !refused(s, cl.ip, cl.ua) {
					if time.Since(start) > 10*time.Second {
						t.Fatalf("%s: %s is not refused on %s", what, cl.ip, n)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		}
		return time.Since(start)
	}
	waitAll("after the outage")
	marks := []int{len(a.output.String()), len(b.output.String())}
	rs.Kill()
	rs.Restart()
	restarted := time.Now()
	records := []string{"{203.0.113.0/24}203.0.113.1/32", "{203.0.113.0/24}203.0.113.2/32", "{203.0.113.0/24}203.0.113.3/32", "{198.51.100.0/24}~t*"}
	for _, want := range records {
		for len(c.Keys(ctx, "robots_guard:default:"+want).Val()) != 1 {
			if time.Since(restarted) > 10*time.Second {
				t.Fatalf("%s is not in Redis 10 s after the restart (keys %v)", want, c.Keys(ctx, "robots_guard:default:*").Val())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("the blocks are in the restarted Redis again %v after it started", time.Since(restarted).Round(time.Millisecond))
	// The instances' caches of blocks answer for 5 s: past that, only what
	// Redis holds refuses.
	time.Sleep(6*time.Second - time.Since(restarted))
	waitAll("after the restart")
	restored := 0
	for i, s := range []*server{a, b} {
		out := s.output.String()[marks[i]:]
		lines := lostState.FindAllStringSubmatch(out, -1)
		if len(lines) != 1 {
			t.Errorf("instance %d logged %d lines that the store lost its state:\n%s", i, len(lines), out)
			continue
		}
		n, _ := strconv.Atoi(lines[0][1])
		restored += n
		line := lines[0][0]
		t.Logf("instance %d: %s", i, line[strings.Index(line, "the Redis"):])
	}
	// Four blocks: two addresses, a crawler, the outage's address.
	if restored < 4 {
		t.Errorf("the instances restored %d blocks, want the 4 held", restored)
	}
}
