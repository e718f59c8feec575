package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The end-to-end tests of issue 38, part 1: a crawler is paced by what
// identifies it across its addresses, not per address.

const (
	crawlerRobots = "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n"
	crawlerBot    = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://bot.example/)"
	crawlerOther  = "Mozilla/5.0 (compatible; OtherBot/2.0; +https://other.example/)"
	// crawlSpan is how long each crawler sends, 100 requests a second.
	crawlSpan = 2 * time.Second
)

// sender makes requests as one client: from a loopback address of its own,
// or from 127.0.0.1 (the trusted proxy) naming forwarded in
// X-Forwarded-For.
type sender struct {
	client    *http.Client
	forwarded string
}

// boundTo returns a sender bound to the local address ip.
func boundTo(ip string) sender {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return sender{client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 2}}}
}

// via returns a sender through the trusted proxy (127.0.0.1) for the
// client address ip.
func via(ip string) sender {
	s := boundTo("127.0.0.1")
	s.forwarded = ip
	return s
}

// fetch makes one request and returns its status and X-Robots-Guard; a
// 200 must carry the page.
func (s sender) fetch(t *testing.T, url, ua string) (int, string) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("User-Agent", ua)
	if s.forwarded != "" {
		req.Header.Set("X-Forwarded-For", s.forwarded)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Errorf("%s: %v", url, err)
		return 0, ""
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == 200 && !strings.Contains(string(body), "<h1>About</h1>") {
		t.Errorf("a 200 without the page: %q", body)
	}
	return resp.StatusCode, resp.Header.Get("X-Robots-Guard")
}

// crawlFor sends requests from the senders in turn, one every 10 ms, for
// span, and returns how many were served and the reasons of the others.
func crawlFor(t *testing.T, url, ua string, senders []sender, span time.Duration) (int, map[string]int) {
	served, reasons := 0, map[string]int{}
	for i, end := 0, time.Now().Add(span); time.Now().Before(end); i++ {
		code, reason := senders[i%len(senders)].fetch(t, url, ua)
		if code == 200 {
			served++
		} else {
			reasons[fmt.Sprint(code, " ", reason)]++
		}
		time.Sleep(10 * time.Millisecond)
	}
	return served, reasons
}

// sendersOf returns n senders: from format with i from first on, or through
// the proxy.
func sendersOf(format string, first, n int, proxied bool) []sender {
	var out []sender
	for i := range n {
		ip := fmt.Sprintf(format, first+i)
		if proxied {
			out = append(out, via(ip))
		} else {
			out = append(out, boundTo(ip))
		}
	}
	return out
}

// TestCrawlerAcrossAddresses (issue 38): crawlers that ignore "Crawl-delay:
// 1", 100 requests a second for 2 s, all at once against the real binary:
// from one loopback address; over 50 addresses of a /24 (127.0.2.0/24); a
// verified GPTBot (by a ranges file) over 50 /24s; and through a trusted
// proxy's X-Forwarded-For over 50 addresses of a /24 and over 50 /64s of
// an IPv6 /48. Each spread crawler gets at most 3 times what the one
// address gets, and is refused as crawler_rate, the log naming its key; a
// second crawler in another network and one of another token in the same
// /24, at their Crawl-delay, and a browser in the /24 are served every
// time.
func TestCrawlerAcrossAddresses(t *testing.T) {
	need(t)
	ranges := filepath.Join(t.TempDir(), "gptbot.json")
	if err := os.WriteFile(ranges, []byte(`{"prefixes": [{"ipv4Prefix": "127.0.128.0/17"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, options{robots: crawlerRobots, trustProxy: true, guard: "log_repeats 0",
		verify: "verify {\n\t\t\tranges gptbot " + ranges + "\n\t\t}"})
	url := s.front + "/about.html"
	gptbot := "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	type result struct {
		served  int
		reasons map[string]int
	}
	runs := []struct {
		name    string
		ua      string
		senders []sender
		spread  bool // paced as one crawler over its addresses
		polite  bool // one request a second: always served
	}{
		{"one address", crawlerBot, []sender{boundTo("127.0.1.1")}, false, false},
		{"50 addresses of 127.0.2.0/24", crawlerBot, sendersOf("127.0.2.%d", 1, 50, false), true, false},
		{"verified GPTBot, 50 /24s", gptbot, sendersOf("127.0.%d.1", 128, 50, false), true, false},
		{"forwarded, 50 addresses of 198.51.100.0/24", crawlerBot, sendersOf("198.51.100.%d", 1, 50, true), true, false},
		{"forwarded, 50 /64s of 2001:db8:1::/48", crawlerBot, sendersOf("2001:db8:1:%x::1", 1, 50, true), true, false},
		{"ExampleBot in another network", crawlerBot, []sender{boundTo("127.0.3.1")}, false, true},
		{"OtherBot in 127.0.2.0/24", crawlerOther, []sender{boundTo("127.0.2.100")}, false, true},
		{"a browser in 127.0.2.0/24", fleetBrowser, []sender{boundTo("127.0.2.200")}, false, false},
	}
	results := make([]result, len(runs))
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.polite {
				served, reasons := 0, map[string]int{}
				for range 3 {
					code, reason := r.senders[0].fetch(t, url, r.ua)
					if code == 200 {
						served++
					} else {
						reasons[fmt.Sprint(code, " ", reason)]++
					}
					time.Sleep(time.Second)
				}
				results[i] = result{served, reasons}
				return
			}
			served, reasons := crawlFor(t, url, r.ua, r.senders, crawlSpan)
			results[i] = result{served, reasons}
		}()
	}
	wg.Wait()
	one := results[0].served
	t.Logf("one address: %d served in %v, refused %v", one, crawlSpan, results[0].reasons)
	if one < 4 || one > 8 {
		t.Fatalf("one address got %d, want about 6 (burst 3, one a second, a slip)", one)
	}
	for i, r := range runs[1:] {
		res := results[i+1]
		t.Logf("%s: %d served, refused %v", r.name, res.served, res.reasons)
		switch {
		case r.polite && res.served != 3:
			t.Errorf("%s: %d of 3 served, at its Crawl-delay", r.name, res.served)
		case r.ua == fleetBrowser && len(res.reasons) > 0:
			t.Errorf("%s was refused: %v", r.name, res.reasons)
		case r.spread && res.served > 3*one+2:
			t.Errorf("%s: %d served, more than 3 times one address's %d", r.name, res.served, one)
		case r.spread && (res.served < one || res.reasons["429 crawler_rate"] == 0):
			t.Errorf("%s: %d served, refused %v", r.name, res.served, res.reasons)
		}
	}
	// The log names each crawler's key.
	time.Sleep(200 * time.Millisecond)
	crawlers := map[string]int{}
	for _, e := range s.moduleEntries(t) {
		if e["reason"] == "crawler_rate" {
			crawlers[fmt.Sprint(e["crawler"])]++
		}
	}
	t.Logf("crawler_rate decisions by crawler: %v", crawlers)
	if crawlers["verified gptbot"] == 0 || crawlers["token examplebot"] == 0 {
		t.Errorf("the log does not name the crawlers' keys: %v", crawlers)
	}
}

// TestCrawlerIPv6Namespace (issue 38): the same with real IPv6 clients, in
// a network namespace: a crawler from 50 /64s of one /48 (curl
// --interface), against the same crawler from one address of another /48.
func TestCrawlerIPv6Namespace(t *testing.T) {
	n := newNetns(t, "")
	n.addAddr(t, "fd00::1/128")
	n.addAddr(t, "2001:db8:2::1/128")
	for i := range 50 {
		n.addAddr(t, fmt.Sprintf("2001:db8:1:%x::1/128", i+1))
	}
	robots := writeFile(t, n.dir, "robots.txt", crawlerRobots)
	s := startIn(t, n, "http://[fd00::1]:8000", nsConfig("fd00::1", "8000", robots, "verify off", ""))
	// crawl sends from each address, at once, one curl each (curl's
	// --rate paces its requests over crawlSpan), and counts the pages
	// served and the refusals.
	crawl := func(addrs []string, each int) (served int, codes map[string]int) {
		codes = map[string]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, a := range addrs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rate := fmt.Sprintf("%d/m", each*int(time.Minute/crawlSpan))
				args := []string{"-s", "--interface", a, "-A", crawlerBot, "-w", "%{http_code}\\n", "--max-time", "10", "--rate", rate}
				for range each {
					args = append(args, "-o", "/dev/null", s.base+"/page")
				}
				out, err := n.cmd("curl", args...).Output()
				if err != nil {
					t.Errorf("curl from %s: %v", a, err)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, code := range strings.Fields(string(out)) {
					if code == "200" {
						served++
					} else {
						codes[code]++
					}
				}
			}()
		}
		wg.Wait()
		return served, codes
	}
	var addrs []string
	for i := range 50 {
		addrs = append(addrs, fmt.Sprintf("2001:db8:1:%x::1", i+1))
	}
	var one, spread int
	var oneRefused, spreadRefused map[string]int
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); one, oneRefused = crawl([]string{"2001:db8:2::1"}, 200) }()
	go func() { defer wg.Done(); spread, spreadRefused = crawl(addrs, 4) }()
	wg.Wait()
	t.Logf("IPv6: one address %d served (refused %v); 50 /64s of a /48 %d served (refused %v)", one, oneRefused, spread, spreadRefused)
	if one < 4 || one > 8 || oneRefused["429"] == 0 {
		t.Fatalf("one address: %d served, refused %v", one, oneRefused)
	}
	if spread > 3*one+2 || spread < one || spreadRefused["429"] == 0 {
		t.Errorf("50 /64s of a /48: %d served, want at most 3 times one address's %d", spread, one)
	}
	if status, _, body := s.curl(t, "2001:db8:1:7::1", "/page", fleetBrowser); status != 200 || body != "page /page" {
		t.Errorf("a browser in the /48: %d %q", status, body)
	}
}
