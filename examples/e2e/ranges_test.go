package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/uaclass"
)

// The end-to-end tests of issue 30: a crawler's published IP ranges read
// from a URL, refreshed, and kept when the URL fails.

// rangesServer is the publisher of a ranges list on loopback: a real HTTP
// server whose answer a test switches (a list, garbage, 50 MB, a 503), and
// that can go down and come back on the same address.
type rangesServer struct {
	addr string
	mu   sync.Mutex
	body string
	code int
	srv  *http.Server
	gets atomic.Int64
	n304 atomic.Int64 // 304 answers
	// sizes of the answers sent, for the report
	sent []int
}

func newRangesServer(t *testing.T) *rangesServer {
	t.Helper()
	r := &rangesServer{code: 200}
	r.up(t, "127.0.0.1:0")
	t.Cleanup(r.down)
	return r
}

func (r *rangesServer) up(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r.addr = l.Addr().String()
	r.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.gets.Add(1)
		r.mu.Lock()
		body, code := r.body, r.code
		r.sent = append(r.sent, len(body))
		r.mu.Unlock()
		etag := fmt.Sprintf(`"%d-%d"`, len(body), code)
		if code == 200 && req.Header.Get("If-None-Match") == etag {
			r.n304.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	})}
	go func() { _ = r.srv.Serve(l) }()
}

func (r *rangesServer) down() { _ = r.srv.Close() }

func (r *rangesServer) serve(code int, body string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.code, r.body = code, body
}

func (r *rangesServer) url() string { return "http://" + r.addr + "/chatgpt-user.json" }

// rangesList is a list in OpenAI's format.
func rangesList(prefixes ...string) string {
	var entries []string
	for _, p := range prefixes {
		entries = append(entries, fmt.Sprintf(`{"ipv4Prefix": %q}`, p))
	}
	return `{"creationTime": "2026-11-30T10:00:00.000000", "prefixes": [` + strings.Join(entries, ", ") + `]}`
}

// claim asks for /about.html as ChatGPT-User from the address from
// (X-Forwarded-For, believed from loopback) and returns the status and the
// X-Robots-Guard header: under "Disallow: /", a verified ChatGPT-User (a
// user-triggered fetcher) is served, an impostor refused as one, an
// unverified claim refused as disallowed.
func claim(t *testing.T, s *server, from string) (int, string) {
	t.Helper()
	r := curlDo(t, s.front+"/about.html", uaChatGPTUser, "-H", "X-Forwarded-For: "+from)
	if r.status == 200 && !strings.Contains(r.body, "<h1>About</h1>") {
		t.Errorf("from %s: 200 without the page: %q", from, r.body)
	}
	return r.status, r.header.Get("X-Robots-Guard")
}

// addrs hands out a new address of a /24 for each claim, so that no
// address collects strikes from the claims before.
type addrs struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *addrs) next(net24 string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == nil {
		a.n = map[string]int{}
	}
	a.n[net24]++
	return fmt.Sprintf("%s.%d", net24, a.n[net24])
}

func startRanges(t *testing.T, url, storage, admin string) *server {
	t.Helper()
	return start(t, options{robots: "User-agent: *\nDisallow: /\n", trustProxy: true, admin: admin,
		global:  "storage file_system " + storage,
		verify:  "verify {\n\t\t\tranges chatgpt-user " + url + "\n\t\t\tranges_refresh 1s\n\t\t}",
		backend: "file_server"})
}

// TestRangesFromURL: with "ranges chatgpt-user <url>" and a refresh of 1s,
// the real binary fetches the list from a real HTTP server on loopback: a
// claim from an address in the list is verified and served, one outside
// is refused as an impostor; the list changes and within the refresh the
// verdicts follow; garbage, an empty list and a 50 MB answer are refused
// and the last good list is kept, as it is while the server is down; each
// failure is logged at warn with the URL and reason and counted in
// caddy_robots_guard_ranges_fetches_total.
func TestRangesFromURL(t *testing.T) {
	need(t, "curl")
	pub := newRangesServer(t)
	pub.serve(200, rangesList("198.51.100.0/24"))
	storage := t.TempDir()
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := startRanges(t, pub.url(), storage, admin)
	var a addrs
	expect := func(what, from string, wantStatus int, wantGuard string) {
		t.Helper()
		if status, guard := claim(t, s, from); status != wantStatus || guard != wantGuard {
			t.Errorf("%s, from %s: %d %q, want %d %q", what, from, status, guard, wantStatus, wantGuard)
		}
	}
	expect("in the list", a.next("198.51.100"), 200, "")
	expect("outside the list", a.next("203.0.113"), 403, "impostor")

	// The list changes: the verdicts follow within the refresh.
	pub.serve(200, rangesList("203.0.113.0/24"))
	changed := time.Now()
	var followed time.Duration
	for deadline := changed.Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if status, _ := claim(t, s, a.next("203.0.113")); status == 200 {
			followed = time.Since(changed)
			break
		}
	}
	if followed == 0 {
		t.Fatal("the changed list was not in force after 15s")
	}
	t.Logf("the verdicts followed the changed list after %v (ranges_refresh 1s)", followed.Round(10*time.Millisecond))
	expect("the new list", a.next("203.0.113"), 200, "")
	expect("the old list", a.next("198.51.100"), 403, "impostor")

	// Bad answers: each refused, the last good list kept.
	big := rangesList("10.0.0.0/8") + strings.Repeat(" ", 50<<20)
	for _, bad := range []struct {
		name string
		code int
		body string
	}{
		{"garbage", 200, "\x00\x01\x02 not a list \xff"},
		{"an HTML error page", 200, "<html><body>Bad gateway</body></html>"},
		{"an empty list", 200, `{"prefixes": []}`},
		{"50 MB", 200, big},
		{"a 503", 503, "down for maintenance"},
	} {
		before := pub.gets.Load()
		pub.serve(bad.code, bad.body)
		waitFor(t, bad.name+" fetched twice", func() bool { return pub.gets.Load() >= before+2 })
		expect("after "+bad.name, a.next("203.0.113"), 200, "")
		expect("after "+bad.name+", outside", a.next("10.1.2"), 403, "impostor")
	}
	// Down: the last good list holds.
	pub.down()
	time.Sleep(3 * time.Second)
	expect("server down", a.next("203.0.113"), 200, "")
	expect("server down, outside", a.next("198.51.100"), 403, "impostor")

	logs := s.output.String()
	for _, reason := range []string{"the answer is no list of IP ranges", "no prefixes", "the list is larger than 4194304 bytes", "HTTP 503 Service Unavailable", "connection refused"} {
		if !strings.Contains(logs, reason) {
			t.Errorf("no warning says %q", reason)
		}
	}
	if !strings.Contains(logs, `"msg":"ranges: fetch failed; keeping the last good list","url":"`+pub.url()+`"`) {
		t.Errorf("no warning with the URL:\n%s", lastLines(logs, 20))
	}
	m := scrape(t, "http://"+admin+"/metrics")
	for _, result := range []string{"ok", "refused", "unreachable"} {
		series := `caddy_robots_guard_ranges_fetches_total{result="` + result + `",url="` + pub.url() + `"}`
		if !strings.Contains(m, series) {
			t.Errorf("metrics lack %s", series)
		}
	}
	if !strings.Contains(m, `caddy_robots_guard_ranges_fetched_timestamp_seconds{url="`+pub.url()+`"}`) {
		t.Error("metrics lack the time of the last good fetch")
	}
	pub.mu.Lock()
	t.Logf("%d fetches; answers sent (bytes): %v", pub.gets.Load(), compact(pub.sent))
	pub.mu.Unlock()
	copies, _ := filepath.Glob(filepath.Join(storage, "robots_guard", "ranges", "*.json"))
	if len(copies) != 1 {
		t.Fatalf("last good copies in storage: %v", copies)
	}
	data, _ := os.ReadFile(copies[0])
	if !strings.Contains(string(data), "203.0.113.0/24") {
		t.Errorf("the stored copy is not the last good list: %.200s", data)
	}
}

// TestRangesStartDown: an instance that starts while the ranges URL is
// down starts all the same: with the last good copy an earlier run left in
// Caddy's storage, its crawler is verified by it at once; without one it
// is unverified (refused as any unverified bot under Disallow: /, not as
// an impostor) and a warning says so; once the URL answers, the list is
// fetched and the crawler verified.
func TestRangesStartDown(t *testing.T) {
	need(t, "curl")
	pub := newRangesServer(t)
	pub.serve(200, rangesList("198.51.100.0/24"))
	storage := t.TempDir()
	var a addrs
	first := startRanges(t, pub.url(), storage, "")
	if status, _ := claim(t, first, a.next("198.51.100")); status != 200 {
		t.Fatalf("first run, URL up: %d", status)
	}
	addr := pub.addr
	pub.down()

	t.Run("with a copy in storage", func(t *testing.T) {
		begin := time.Now()
		s := startRanges(t, pub.url(), storage, "")
		t.Logf("started in %v with the URL down", time.Since(begin).Round(time.Millisecond))
		if status, guard := claim(t, s, a.next("198.51.100")); status != 200 {
			t.Errorf("in the cached list: %d %q, want served", status, guard)
		}
		if status, guard := claim(t, s, a.next("203.0.113")); status != 403 || guard != "impostor" {
			t.Errorf("outside the cached list: %d %q", status, guard)
		}
		if logs := s.output.String(); !strings.Contains(logs, "ranges: starting from the last good copy in storage until the list is fetched") ||
			!strings.Contains(logs, "ranges: fetch failed; keeping the last good list") {
			t.Errorf("logs:\n%s", lastLines(logs, 20))
		}
	})
	t.Run("without a copy", func(t *testing.T) {
		begin := time.Now()
		s := startRanges(t, pub.url(), t.TempDir(), "")
		t.Logf("started in %v with the URL down and no copy", time.Since(begin).Round(time.Millisecond))
		if status, guard := claim(t, s, a.next("198.51.100")); status != 403 || guard != "disallowed" {
			t.Errorf("no list: %d %q, want 403 disallowed (unverified)", status, guard)
		}
		if logs := s.output.String(); !strings.Contains(logs, "ranges: fetch failed and no list is known; its crawlers are unverified until one is fetched") ||
			!strings.Contains(logs, pub.url()) {
			t.Errorf("logs:\n%s", lastLines(logs, 20))
		}
		// The URL comes back: the list is fetched (retries back off from 1s).
		pub.up(t, addr)
		waitFor(t, "the list fetched once the URL is back", func() bool {
			status, _ := claim(t, s, a.next("198.51.100"))
			return status == 200
		})
	})
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// compact writes runs of equal sizes as size×count.
func compact(sizes []int) string {
	var b strings.Builder
	for i := 0; i < len(sizes); {
		j := i
		for j < len(sizes) && sizes[j] == sizes[i] {
			j++
		}
		fmt.Fprintf(&b, "%d×%d ", sizes[i], j-i)
		i = j
	}
	return strings.TrimSpace(b.String())
}

// selfSignedNames returns a self-signed certificate for host names and
// its key, in PEM.
func selfSignedNames(t *testing.T, names ...string) (cert, key string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: names, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}

// TestRangesPublished: "ranges published" fetches every official URL the
// bot database records, over HTTPS. In a network namespace whose
// /etc/hosts sends the publishers' names (openai.com, www.perplexity.com,
// developers.google.com, www.bing.com, search.developer.apple.com) to
// loopback, the same binary serves each URL a list of its own with a
// certificate the fetches trust (SSL_CERT_FILE): ChatGPT-User,
// Perplexity-User and FeedFetcher-Google (from either of Google's two
// user-triggered lists) are verified and served under Disallow: / from
// their own lists, and ChatGPT-User from GPTBot's list is an impostor;
// Googlebot is verified from Google's common-crawlers list without a DNS
// lookup, and outside it goes to reverse DNS (none here: unverified, not
// an impostor).
func TestRangesPublished(t *testing.T) {
	published := uaclass.PublishedRanges(uaclass.DefaultBots())
	index := map[string]int{} // URL -> its list's second octet
	hosts := map[string]bool{}
	for _, tok := range slices.Sorted(maps.Keys(published)) {
		for _, u := range published[tok] {
			if _, ok := index[u]; !ok {
				index[u] = len(index) + 1
			}
			p, err := neturl.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			hosts[p.Host] = true
		}
	}
	names := slices.Sorted(maps.Keys(hosts))
	var hostLines []string
	for _, h := range names {
		hostLines = append(hostLines, "127.0.0.1 "+h)
	}
	n := newNetns(t, "", hostLines...)
	root := filepath.Join(n.dir, "pub")
	for u, i := range index {
		p, _ := neturl.Parse(u)
		file := filepath.Join(root, p.Host, filepath.FromSlash(p.Path))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		list := fmt.Sprintf(`{"creationTime": "2026-12-01T00:00:00.000000", "prefixes": [{"ipv4Prefix": "10.%d.0.0/24"}, {"ipv6Prefix": "2001:db8:%x::/48"}]}`, i, i)
		if err := os.WriteFile(file, []byte(list), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cert, key := selfSignedNames(t, names...)
	certFile, keyFile := writeFile(t, n.dir, "cert.pem", cert), writeFile(t, n.dir, "key.pem", key)
	robots := writeFile(t, n.dir, "robots.txt", "User-agent: *\nDisallow: /\n")
	var sites []string
	for _, h := range names {
		sites = append(sites, "https://"+h)
	}
	cfg := fmt.Sprintf(`{
	admin off
	auto_https off
	storage file_system %s
	servers {
		trusted_proxies static 127.0.0.1/32
	}
	log robots_guard {
		output file LOG
		format json
		include http.handlers.robots_guard
	}
}
%s {
	bind 127.0.0.1
	tls %s %s
	root * %s/{host}
	file_server
}
http://127.0.0.1:8080 {
	bind 127.0.0.1
	robots_guard {
		robots %s
		log_repeats 0
		log_allowed 1
		verify {
			ranges published
			ranges_refresh 1s
		}
	}
	respond "page {http.request.uri.path}"
}
`, filepath.Join(n.dir, "storage"), strings.Join(sites, ", "), certFile, keyFile, root, robots)
	s := startIn(t, n, "http://127.0.0.1:8080", cfg, "SSL_CERT_FILE="+certFile)
	// The lists are fetched at start, before the publishers' listeners
	// are up, and again within a few seconds.
	waitFor(t, "every published list fetched", func() bool {
		return strings.Count(s.output.String(), `"msg":"ranges: list fetched"`) >= len(index)
	})
	for u := range index {
		if !strings.Contains(s.output.String(), `"msg":"ranges: list fetched","url":"`+u+`"`) {
			t.Errorf("%s was not fetched", u)
		}
	}
	const (
		uaGooglebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
		uaGPTBot    = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.3; +https://openai.com/gptbot"
	)
	in := func(u string, host int) string { return fmt.Sprintf("10.%d.0.%d", index[u], host) }
	g := "https://developers.google.com/static/crawling/ipranges/"
	for i, c := range []struct {
		ua, from     string
		status       int
		guard, claim string
	}{
		{uaChatGPTUser, in("https://openai.com/chatgpt-user.json", 1), 200, "", "verified"},
		{uaChatGPTUser, in("https://openai.com/gptbot.json", 2), 403, "impostor", "impostor"},
		{uaPerplexity, in("https://www.perplexity.com/perplexity-user.json", 3), 200, "", "verified"},
		{uaFeedFetcher, in(g+"user-triggered-fetchers.json", 4), 200, "", "verified"},
		{uaFeedFetcher, in(g+"user-triggered-fetchers-google.json", 5), 200, "", "verified"},
		{uaFeedFetcher, in("https://openai.com/chatgpt-user.json", 6), 403, "impostor", "impostor"},
		{uaGPTBot, in("https://openai.com/gptbot.json", 7), 403, "disallowed", "verified"},
		{uaGooglebot, in(g+"common-crawlers.json", 8), 403, "disallowed", "verified"},
		{uaGooglebot, "192.0.2.9", 403, "disallowed", "unverified"},
	} {
		status, guard, _ := s.curl(t, "127.0.0.1", fmt.Sprintf("/page-%d", i), c.ua, "X-Forwarded-For: "+c.from)
		if status != c.status || guard != c.guard {
			t.Errorf("%.40s from %s: %d %q, want %d %q", c.ua, c.from, status, guard, c.status, c.guard)
		}
		found := false
		for _, e := range s.entries(t) {
			if e["path"] == fmt.Sprintf("/page-%d", i) || e["uri"] == fmt.Sprintf("/page-%d", i) {
				found = true
				if e["verification"] != c.claim {
					t.Errorf("%.40s from %s: logged verification %v, want %s", c.ua, c.from, e["verification"], c.claim)
				}
			}
		}
		if !found && c.claim != "" {
			t.Errorf("%.40s from %s: no decision logged", c.ua, c.from)
		}
	}
}

// TestClassifyVerify: "caddy robots classify --config --verify ADDR" says
// which of the site's lists verified a claim from ADDR, where it came
// from and how old it is: ChatGPT-User from the list its URL serves now;
// GPTBot outside its file's list, an impostor, with the list checked;
// Googlebot, without lists, left to reverse DNS; curl, nothing to verify.
// With the URL down, the list is the copy the running server left in
// Caddy's storage, and the failure is said on standard error.
func TestClassifyVerify(t *testing.T) {
	need(t, "curl")
	t.Setenv("XDG_DATA_HOME", t.TempDir()) // Caddy's default storage, for the server and the command
	pub := newRangesServer(t)
	pub.serve(200, rangesList("198.51.100.0/24"))
	file := writeFile(t, t.TempDir(), "gptbot.txt", "# GPTBot, by hand\n192.0.2.0/24\n")
	s := start(t, options{robots: "User-agent: *\nDisallow: /\n", trustProxy: true, backend: "file_server",
		verify: "verify {\n\t\t\tranges chatgpt-user " + pub.url() + "\n\t\t\tranges gptbot " + file + "\n\t\t}"})
	if status, _ := claim(t, s, "198.51.100.7"); status != 200 {
		t.Fatalf("the server does not verify the claim: %d", status)
	}
	uas := []string{uaChatGPTUser, "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.3; +https://openai.com/gptbot",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "curl/8.5.0"}
	classify := func() ([]map[string]any, string) {
		t.Helper()
		cmd := exec.Command(caddyBin, append([]string{"robots", "classify", "--config", filepath.Join(s.dir, "Caddyfile"), "--verify", "198.51.100.7"}, uas...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("classify: %v\n%s", err, stderr.String())
		}
		var lines []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%v: %s", err, l)
			}
			lines = append(lines, m)
		}
		if len(lines) != len(uas) {
			t.Fatalf("%d lines for %d User-Agents:\n%s", len(lines), len(uas), out)
		}
		return lines, stderr.String()
	}
	check := func(lines []map[string]any, from string) {
		t.Helper()
		v := func(i int) map[string]any { m, _ := lines[i]["verification"].(map[string]any); return m }
		list, _ := v(0)["list"].(map[string]any)
		if v(0)["verdict"] != "verified" || list["source"] != pub.url() || list["from"] != from || list["created"] != "2026-11-30T10:00:00Z" || list["prefixes"] != 1.0 || list["age"] == "" || list["fetched"] == "" {
			t.Errorf("ChatGPT-User: %v", v(0))
		}
		lists, _ := v(1)["lists"].([]any)
		if v(1)["verdict"] != "impostor" || len(lists) != 1 || lists[0].(map[string]any)["source"] != file || lists[0].(map[string]any)["from"] != "file" || lists[0].(map[string]any)["format"] != "text" {
			t.Errorf("GPTBot: %v", v(1))
		}
		if v(2)["verdict"] != "dns" || v(3)["verdict"] != "none" {
			t.Errorf("Googlebot: %v; curl: %v", v(2), v(3))
		}
		t.Logf("ChatGPT-User: %v", list)
	}
	lines, stderr := classify()
	check(lines, "url")
	if strings.Contains(stderr, "ranges:") {
		t.Errorf("stderr: %s", stderr)
	}
	pub.down()
	lines, stderr = classify()
	check(lines, "storage")
	if !strings.Contains(stderr, pub.url()+": connection refused") {
		t.Errorf("stderr: %q", stderr)
	}
}

// TestRangesReload: a reload keeps the running feed of a ranges URL (no
// fetch at the reload, the claim verified across it); a reload that
// changes ranges_refresh starts the feed anew from the copy in storage,
// verified at once, its fetch conditional (answered 304).
func TestRangesReload(t *testing.T) {
	need(t, "curl")
	pub := newRangesServer(t)
	pub.serve(200, rangesList("198.51.100.0/24"))
	adminPort := freePort(t)
	s := start(t, options{robots: "User-agent: *\nDisallow: /\n", trustProxy: true, backend: "file_server", admin: fmt.Sprintf("localhost:%d", adminPort),
		global: "storage file_system " + t.TempDir(),
		verify: "verify {\n\t\t\tranges chatgpt-user " + pub.url() + "\n\t\t\tranges_refresh 1h\n\t\t}"})
	var a addrs
	if status, _ := claim(t, s, a.next("198.51.100")); status != 200 || pub.gets.Load() != 1 {
		t.Fatalf("before the reload: %d after %d fetches", status, pub.gets.Load())
	}
	cfgPath := filepath.Join(s.dir, "Caddyfile")
	reload := func(from, to string) {
		t.Helper()
		data, err := os.ReadFile(cfgPath)
		if err != nil || !strings.Contains(string(data), from) {
			t.Fatalf("%v: no %q in the Caddyfile", err, from)
		}
		if err := os.WriteFile(cfgPath, []byte(strings.Replace(string(data), from, to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if msg, err := exec.Command(caddyBin, "reload", "--config", cfgPath, "--address", fmt.Sprintf("localhost:%d", adminPort)).CombinedOutput(); err != nil {
			t.Fatalf("caddy reload: %v\n%s", err, msg)
		}
	}
	reload("trap /private-archive/", "trap /private-archive/ /other-trap/")
	if status, _ := claim(t, s, a.next("198.51.100")); status != 200 || pub.gets.Load() != 1 {
		t.Errorf("after a reload: %d after %d fetches, want served after 1", status, pub.gets.Load())
	}
	reload("ranges_refresh 1h", "ranges_refresh 2h")
	if status, _ := claim(t, s, a.next("198.51.100")); status != 200 {
		t.Errorf("after a reload with a new refresh: %d", status)
	}
	waitFor(t, "the new feed's fetch", func() bool { return pub.gets.Load() == 2 })
	if pub.n304.Load() != 1 {
		t.Errorf("the new feed's fetch was not conditional on the stored copy: %d answers 304", pub.n304.Load())
	}
	if !strings.Contains(s.output.String(), "ranges: starting from the last good copy in storage until the list is fetched") {
		t.Error("the new feed did not start from the stored copy")
	}
	if status, _ := claim(t, s, a.next("203.0.113")); status != 403 {
		t.Errorf("outside, after the reloads: %d", status)
	}
	t.Logf("fetches: %d over two reloads", pub.gets.Load())
}
