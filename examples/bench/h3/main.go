// Command h3 measures what the QUIC wrapper costs HTTP/3: one Caddy (the
// binary built from examples/caddy) with two fronts on loopback, the same
// robots_guard but for "quic on" (the directive adds the robots_guard_quic
// packet conn wrapper to its server, which reads every datagram and makes
// quic-go read one datagram at a time) and "quic off" (no wrapper: quic-go
// reads batches and sends with segmentation offload), each on a port and a
// server of its own. quic-go's HTTP/3 client loads each in turn, rounds
// alternating which goes first, and the ratio on/off is taken within each
// round; the medians are printed. Both fronts serve a small page to a
// Firefox User-Agent with its navigation headers, posers off, so that
// only reading the QUIC fingerprint differs.
//
//	go build -o /tmp/caddy ./examples/caddy
//	unshare -n sh -c 'ip link set lo up; go run ./examples/bench/h3 -caddy /tmp/caddy'
//
// With -cpu, Caddy runs on that core only (taskset) and GOMAXPROCS=1.
// With -same, both fronts are "quic off": the noise floor of the run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/robotsguard/robotsguard/internal/tlsclients"
)

func main() {
	caddy := flag.String("caddy", "", "the Caddy binary built from examples/caddy")
	duration := flag.Duration("duration", 5*time.Second, "how long each front is loaded per round")
	rounds := flag.Int("rounds", 5, "rounds")
	conns := flag.Int("conns", 8, "QUIC connections")
	streams := flag.Int("streams", 4, "concurrent requests per connection")
	cpu := flag.String("cpu", "", "pin Caddy to this core (taskset -c)")
	same := flag.Bool("same", false, "both fronts quic off: the noise floor")
	flag.Parse()
	if *caddy == "" {
		log.Fatal("-caddy: the binary to run")
	}
	dir, err := os.MkdirTemp("", "h3bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ca, err := tlsclients.NewCA(dir)
	if err != nil {
		log.Fatal(err)
	}
	robots := filepath.Join(dir, "robots.txt")
	os.WriteFile(robots, []byte("User-agent: *\nAllow: /\n"), 0o644)
	ports := [2]int{freePort(), freePort()}
	var sites strings.Builder
	modes := []string{"on", "off"}
	if *same {
		modes[0] = "off"
	}
	for i, mode := range modes {
		fmt.Fprintf(&sites, `https://localhost:%d {
	bind 127.0.0.1 [::1]
	tls %s %s
	header >X-QUIC "[{http.robots_guard.quic}]"
	robots_guard {
		robots %s
		zone %s
		verify off
		posers off
		quic %s
	}
	respond "<!doctype html><title>h3</title><p>hello" 200
}
`, ports[i], ca.CertFile, ca.KeyFile, robots, fmt.Sprint("front", i), mode)
	}
	// No global servers block: Caddy would replace the wrapper that the
	// directive adds with the block's own packet_conn_wrappers.
	cfg := fmt.Sprintf("{\n\tadmin off\n\tauto_https off\n}\n%s", sites.String())
	path := filepath.Join(dir, "Caddyfile")
	os.WriteFile(path, []byte(cfg), 0o644)
	args := []string{*caddy, "run", "--config", path, "--adapter", "caddyfile"}
	if *cpu != "" {
		args = append([]string{"taskset", "-c", *cpu}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = os.Environ()
	if *cpu != "" {
		cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	wants := []string{"[q1_g.5.6.7.4.8.9.1.3.b.e.f]", "[]"}
	if *same {
		wants[0] = "[]"
	}
	for i, want := range wants {
		got := ""
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if got, err = check(ca, ports[i]); err == nil {
				break
			}
		}
		if got != want {
			log.Fatalf("front %d: X-QUIC %q, want %q (%v)\n%s", i, got, want, err, out.String())
		}
	}
	var ratios, on, off []float64
	for r := range *rounds {
		var rate [2]float64
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			rate[i] = load(ca, ports[i], *conns, *streams, *duration)
		}
		on, off, ratios = append(on, rate[0]), append(off, rate[1]), append(ratios, rate[0]/rate[1])
		fmt.Printf("round %d: quic on %.0f req/s, quic off %.0f req/s, %.1f%%\n", r+1, rate[0], rate[1], 100*rate[0]/rate[1])
	}
	fmt.Printf("median: quic on %.0f req/s, quic off %.0f req/s, ratio %.1f%% (%d rounds of %v, %d connections × %d streams)\n",
		median(on), median(off), 100*median(ratios), *rounds, *duration, *conns, *streams)
}

// ua and header are a Firefox navigation's.
const ua = "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0"

var header = [][2]string{{"Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, {"Accept-Language", "en-US,en;q=0.5"},
	{"Sec-Fetch-Dest", "document"}, {"Sec-Fetch-Mode", "navigate"}, {"Sec-Fetch-Site", "none"}, {"Sec-Fetch-User", "?1"}}

func request(ctx context.Context, port int) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("https://localhost:%d/", port), nil)
	req.Header.Set("User-Agent", ua)
	for _, h := range header {
		req.Header.Set(h[0], h[1])
	}
	return req
}

// check fetches the page once over HTTP/3 and returns its X-QUIC header.
func check(ca *tlsclients.CA, port int) (string, error) {
	rt := &http3.Transport{TLSClientConfig: ca.TLSClientConfig()}
	defer rt.Close()
	resp, err := (&http.Client{Transport: rt, Timeout: 2 * time.Second}).Do(request(context.Background(), port))
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp.Header.Get("X-QUIC"), nil
}

// load requests the page over conns connections with streams requests
// at a time on each, for d, and returns the answers (all 200) per second.
func load(ca *tlsclients.CA, port, conns, streams int, d time.Duration) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var done, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		rt := &http3.Transport{TLSClientConfig: ca.TLSClientConfig()}
		c := &http.Client{Transport: rt}
		for range streams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					resp, err := c.Do(request(ctx, port))
					if err != nil {
						if ctx.Err() == nil {
							failed.Add(1)
						}
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == 200 {
						done.Add(1)
					} else {
						failed.Add(1)
					}
				}
			}()
		}
		defer rt.Close()
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		log.Printf("port %d: %d requests failed or were refused", port, n)
	}
	return float64(done.Load()) / time.Since(start).Seconds()
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
