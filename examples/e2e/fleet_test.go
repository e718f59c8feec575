package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsguard/robotsguard/enforce/redisstore/redistest"
)

// fleetBot ignores Crawl-delay: its class rate does not apply, the robots.txt's
// Crawl-delay: 1 does.
const fleetBot = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://bot.example/)"

const fleetBrowser = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"

// fleet is three instances of the real binary on one Redis, behind a fourth
// Caddy that balances round robin.
type fleet struct {
	redis     *redistest.Server
	instances []*server
	admins    []string // their admin API addresses
	lb        string   // base URL of the load balancer
	lbOutput  *syncBuffer
}

// startFleet starts Redis, three instances with "store redis" (trusting the
// balancer on loopback for the client address) and the balancer.
func startFleet(t *testing.T, guard string) *fleet {
	t.Helper()
	f := &fleet{redis: redistest.Start(t)}
	robots := "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n"
	var upstreams []string
	for range 3 {
		admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		s := start(t, options{robots: robots, trustProxy: true, admin: admin,
			// The instances are sites of different ports on one machine:
			// they share their state by naming one zone (the default zone
			// is the site's name, its port here).
			guard: "grace 0\n\t\tzone default\n\t\tstore redis " + f.redis.URL + " {\n\t\t\ttimeout 1s\n\t\t}\n\t\t" + guard})
		f.instances = append(f.instances, s)
		f.admins = append(f.admins, admin)
		upstreams = append(upstreams, strings.TrimPrefix(s.front, "http://"))
	}
	port := freePort(t)
	f.lb = fmt.Sprintf("http://127.0.0.1:%d", port)
	// The balancer trusts loopback too, so that a test client can name its
	// address in X-Forwarded-For; the instances read it from there.
	cfg := fmt.Sprintf(`{
	admin off
	auto_https off
	servers {
		trusted_proxies static 127.0.0.1/32
	}
}
:%d {
	bind 127.0.0.1
	reverse_proxy %s {
		lb_policy round_robin
	}
}
`, port, strings.Join(upstreams, " "))
	dir := t.TempDir()
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(caddyBin, "run", "--config", path, "--adapter", "caddyfile")
	f.lbOutput = &syncBuffer{}
	cmd.Stdout, cmd.Stderr = f.lbOutput, f.lbOutput
	startProcess(t, cmd, "load balancer", f.lbOutput, 5*time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if resp, err := http.Get(f.lb + "/robots.txt"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return f
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the load balancer did not start:\n%s", f.lbOutput.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// get makes one request as client ip with ua, and returns the status and
// the X-Robots-Guard header.
func get(t *testing.T, base, path, ip, ua string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("X-Forwarded-For", ip)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Robots-Guard")
}

// TestFleet: three instances behind a round-robin balancer share one Redis:
// a bot that ignores Crawl-delay gets its first 429 within burst + 1
// requests overall, not per instance; a trap hit through one instance
// blocks the client on the two others at its next request; "caddy robots
// unblock" on one lifts it everywhere.
func TestFleet(t *testing.T) {
	need(t)
	f := startFleet(t, "")

	// burst 3, grace 0: requests 1-3 take the bucket, the 4th is over the
	// rate. Each instance alone would see only every third request and
	// refuse none of the first 9.
	const burst = 3
	first := 0
	var codes []int
	for i := 1; i <= 3*burst+3; i++ {
		code, _ := get(t, f.lb, "/about.html", "203.0.113.10", fleetBot)
		codes = append(codes, code)
		if code == 429 && first == 0 {
			first = i
		}
	}
	t.Logf("a bot ignoring Crawl-delay: 1 through the balancer: %v", codes)
	if first == 0 || first > burst+1 {
		t.Errorf("first 429 at request %d, want within burst + 1 = %d", first, burst+1)
	}
	for i, c := range codes {
		if i < burst && c != 200 {
			t.Errorf("request %d within the burst: %d", i+1, c)
		}
	}

	// The trap through instance A blocks the client on B and C.
	a, b, c := f.instances[0], f.instances[1], f.instances[2]
	const trapped = "203.0.113.20"
	if code, _ := get(t, a.front, "/private-archive/", trapped, fleetBrowser); code != 403 {
		t.Fatalf("trap through A: %d", code)
	}
	for name, s := range map[string]*server{"B": b, "C": c} {
		if code, reason := get(t, s.front, "/", trapped, fleetBrowser); code != 403 || reason != "blocked_client" {
			t.Errorf("the trapped client's next request through %s: %d %q", name, code, reason)
		}
	}
	if code, _ := get(t, b.front, "/", "203.0.113.21", fleetBrowser); code != 200 {
		t.Errorf("another client through B: %d", code)
	}
	// B lists the block it did not make.
	out, err := exec.Command(caddyBin, "robots", "blocked", "--address", f.admins[1]).CombinedOutput()
	if err != nil || !regexp.MustCompile(`203\.0\.113\.20 +\(whole IP\)`).Match(out) {
		t.Errorf("caddy robots blocked on B: %v\n%s", err, out)
	}
	// Unblock on A lifts it everywhere.
	out, err = exec.Command(caddyBin, "robots", "unblock", trapped, "--address", f.admins[0]).CombinedOutput()
	if err != nil {
		t.Fatalf("caddy robots unblock on A: %v\n%s", err, out)
	}
	t.Logf("unblock on A: %s", strings.TrimSpace(string(out)))
	for name, s := range map[string]*server{"A": a, "B": b, "C": c} {
		start := time.Now()
		for {
			code, _ := get(t, s.front, "/", trapped, fleetBrowser)
			if code == 200 {
				t.Logf("%s serves the unblocked client %v after the unblock", name, time.Since(start).Round(time.Millisecond))
				break
			}
			if time.Since(start) > 10*time.Second {
				t.Fatalf("%s still refuses the unblocked client: %d", name, code)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for i := range 3 {
		if code, _ := get(t, f.lb, "/", trapped, fleetBrowser); code != 200 {
			t.Errorf("request %d through the balancer after the unblock: %d", i+1, code)
		}
	}
}

// wrkStatus is a wrk script that sends a bot's requests from 16 addresses
// and counts the answers by status class.
const wrkStatus = `
local n = 0
request = function()
	n = n + 1
	return wrk.format("GET", "/about.html", {["User-Agent"] = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://bot.example/)", ["X-Forwarded-For"] = "198.51.100." .. (n % 16)})
end
local threads = {}
setup = function(thread) table.insert(threads, thread) end
init = function() ok, throttled, refused, failed = 0, 0, 0, 0 end
response = function(status)
	if status >= 500 then failed = failed + 1
	elseif status == 429 then throttled = throttled + 1
	elseif status >= 400 then refused = refused + 1
	else ok = ok + 1 end
end
done = function()
	local t = {ok = 0, throttled = 0, refused = 0, failed = 0}
	for _, th in ipairs(threads) do
		for k in pairs(t) do t[k] = t[k] + th:get(k) end
	end
	io.write(string.format("statuses: ok=%d throttled=%d refused=%d failed=%d\n", t.ok, t.throttled, t.refused, t.failed))
end
`

// wrkCounts runs wrk with wrkStatus and returns its counts.
func wrkCounts(t *testing.T, url string, conns int, d time.Duration) map[string]int {
	t.Helper()
	script := filepath.Join(t.TempDir(), "status.lua")
	if err := os.WriteFile(script, []byte(wrkStatus), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("wrk", "-t2", fmt.Sprintf("-c%d", conns), "-d"+d.String(), "-s", script, url).CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`statuses: ok=(\d+) throttled=(\d+) refused=(\d+) failed=(\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("wrk printed no counts:\n%s", out)
	}
	counts := map[string]int{}
	for i, k := range []string{"ok", "throttled", "refused", "failed"} {
		counts[k], _ = strconv.Atoi(m[i+1])
	}
	if e := regexp.MustCompile(`Socket errors: .*`).FindString(string(out)); e != "" {
		t.Logf("wrk: %s", e)
	}
	return counts
}

// TestFleetRedisKilled: Redis killed under load (wrk through the balancer):
// no 5xx, the instances go on deciding from their own state (the bots are
// still throttled), say so once in their logs, and share state again once
// Redis is back.
func TestFleetRedisKilled(t *testing.T) {
	need(t, "wrk")
	f := startFleet(t, "")
	done := make(chan map[string]int)
	go func() { done <- wrkCounts(t, f.lb+"/about.html", 16, 8*time.Second) }()
	time.Sleep(2 * time.Second)
	f.redis.Kill()
	t.Log("Redis killed")
	time.Sleep(3 * time.Second)
	f.redis.Restart()
	t.Log("Redis restarted (empty)")
	counts := <-done
	t.Logf("under load, Redis killed for 3 of 8 s: %v", counts)
	if counts["failed"] != 0 {
		t.Errorf("%d requests failed with 5xx", counts["failed"])
	}
	if counts["throttled"] == 0 || counts["ok"] == 0 {
		t.Errorf("the bots were not decided as usual: %v", counts)
	}
	for i, s := range f.instances {
		out := s.output.String()
		if !strings.Contains(out, "the Redis store cannot be reached") || !strings.Contains(out, "the Redis store answers again") {
			t.Errorf("instance %d's log does not report the outage and the return:\n%s", i, out)
		}
		if n := strings.Count(out, "the Redis store cannot be reached"); n > 3 {
			t.Errorf("instance %d reported the outage %d times", i, n)
		}
		metrics := adminGet(t, f.admins[i], "/metrics")
		m := regexp.MustCompile(`caddy_robots_guard_store_fallbacks_total\{zone="default"\} (\d+)`).FindStringSubmatch(metrics)
		if m == nil || m[1] == "0" {
			t.Errorf("instance %d counted no fallback: %v", i, m)
		} else {
			t.Logf("instance %d decided %s requests without Redis", i, m[1])
		}
		if !strings.Contains(metrics, `caddy_robots_guard_store_up{zone="default"} 1`) {
			t.Errorf("instance %d: store_up is not 1 after the return", i)
		}
	}
	// Shared state again: a trap through A blocks the client on B.
	const trapped = "203.0.113.30"
	if code, _ := get(t, f.instances[0].front, "/private-archive/", trapped, fleetBrowser); code != 403 {
		t.Fatalf("trap through A: %d", code)
	}
	if code, _ := get(t, f.instances[1].front, "/", trapped, fleetBrowser); code != 403 {
		t.Errorf("after Redis came back, B does not see A's block: %d", code)
	}
	c := redis.NewClient(&redis.Options{Addr: f.redis.Addr})
	defer c.Close()
	if n, err := c.Exists(context.Background(), "robots_guard:default:{203.0.113.0/24}"+trapped+"/32").Result(); err != nil || n != 1 {
		t.Errorf("the block is not in the restarted Redis: %d, %v", n, err)
	}
}

// adminGet returns the body of a GET on an admin API.
func adminGet(t *testing.T, admin, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+admin+path, nil)
	req.Host = admin
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// TestFleetLatency measures what the Redis store adds under load: wrk with
// 64 connections through one instance on Redis and one on the in-process
// store, interleaved in the same run (two rounds each), for a browser (one
// read of the address's state a request), a bot over its rate (one Op a
// request) and a blocked client (answered from the cache); it logs the p99
// latencies and the round trips to Redis per request (the scripts' calls:
// Redis counts the commands a script runs as commands too). It asserts no
// timing (the machine is shared), only the round trips.
func TestFleetLatency(t *testing.T) {
	need(t, "wrk")
	srv := redistest.Start(t)
	onRedis := start(t, options{guard: "store redis " + srv.URL, trustProxy: true})
	inProcess := start(t, options{trustProxy: true})
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	d := 3 * time.Second
	if testing.Short() {
		d = time.Second
	}
	client := 0
	for _, kind := range []string{"browser", "bot", "blocked"} {
		ua := map[string]string{"browser": fleetBrowser, "bot": fleetBot, "blocked": fleetBrowser}[kind]
		p99 := map[string][]time.Duration{}
		for round := range 2 {
			for _, v := range []struct {
				name string
				s    *server
			}{{"redis", onRedis}, {"memory", inProcess}} {
				client++
				ip := fmt.Sprintf("198.51.100.%d", client)
				if kind == "blocked" {
					if code, _ := get(t, v.s.front, "/private-archive/", ip, fleetBrowser); code != 403 {
						t.Fatalf("trap: %d", code)
					}
				}
				before := roundTrips(t, c)
				lat, reqs := wrkLatency(t, v.s.front+"/about.html", ua, ip, d)
				p99[v.name] = append(p99[v.name], lat)
				if v.name == "memory" {
					t.Logf("%s, round %d, memory: p99 %v, %d requests", kind, round+1, lat, reqs)
					continue
				}
				perRequest := float64(roundTrips(t, c)-before) / float64(reqs)
				t.Logf("%s, round %d, redis: p99 %v, %d requests, %.4f round trips per request", kind, round+1, lat, reqs, perRequest)
				// A bot that keeps hammering through its 429s may earn a
				// block within the run: its requests from then on cost none.
				low := map[string]float64{"browser": 0.9, "bot": 0.3, "blocked": 0}[kind]
				high := map[string]float64{"browser": 1.1, "bot": 1.1, "blocked": 0.01}[kind]
				if perRequest < low || perRequest > high {
					t.Errorf("%s: %.4f round trips per request", kind, perRequest)
				}
			}
		}
		added := (p99["redis"][0] + p99["redis"][1] - p99["memory"][0] - p99["memory"][1]) / 2
		t.Logf("%s: p99 with Redis %v, in process %v: %v added (shared, loaded machine)", kind, p99["redis"], p99["memory"], added)
	}
}

// roundTrips returns the scripts' calls Redis has served.
func roundTrips(t *testing.T, c *redis.Client) int64 {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for _, m := range regexp.MustCompile(`cmdstat_(?:evalsha|eval):calls=(\d+)`).FindAllStringSubmatch(info, -1) {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		n += v
	}
	return n
}

// wrkLatency runs wrk with 64 connections as one client and returns the
// p99 latency and the requests made.
func wrkLatency(t *testing.T, url, ua, ip string, d time.Duration) (time.Duration, int) {
	t.Helper()
	out, err := exec.Command("wrk", "-t2", "-c64", "-d"+d.String(), "--latency", "-H", "User-Agent: "+ua, "-H", "X-Forwarded-For: "+ip, url).CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^\s+99%\s+([0-9.]+)(us|ms|s)\s*$`).FindStringSubmatch(string(out))
	r := regexp.MustCompile(`(\d+) requests in`).FindStringSubmatch(string(out))
	if m == nil || r == nil {
		t.Fatalf("wrk printed no p99 or request count:\n%s", out)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[m[2]]
	n, _ := strconv.Atoi(r[1])
	return time.Duration(v * float64(unit)), n
}
