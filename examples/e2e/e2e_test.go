// Package e2e proves robotsguard end to end: the real Caddy binary of
// examples/caddy with the module, real clients (wget, curl), the demo site,
// file_server and reverse_proxy backends, abuse and bypass attempts. Each
// test starts its own Caddy on free loopback ports with the admin API off.
// The tests are skipped under -short and when wget or curl is missing
// (.ci/run installs them).
package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// caddyBin is the binary built from examples/caddy by TestMain.
var caddyBin string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "robotsguard-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	caddyBin = filepath.Join(dir, "caddy")
	build := exec.Command("go", "build", "-o", caddyBin, "../caddy")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building examples/caddy:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// need skips the test under -short, and when one of the tools is not
// installed, unless ROBOTSGUARD_E2E=required (as .ci/run sets it), which
// makes a missing tool fail the test instead.
func need(t *testing.T, tools ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing(t, "%s is not installed", tool)
		}
	}
}

// long skips a suite that takes minutes of real browsing (the behaviour
// suites: two minutes on a 2-core machine) unless ROBOTSGUARD_E2E=required
// (.ci/run sets it) or ROBOTSGUARD_E2E_LONG=1: with them the package takes
// about 11 minutes on such a machine, past go test's default timeout of
// 10, so that the README's go test ./... would fail there.
func long(t *testing.T) {
	t.Helper()
	if os.Getenv("ROBOTSGUARD_E2E") != "required" && os.Getenv("ROBOTSGUARD_E2E_LONG") == "" {
		t.Skip("minutes of real browsing: ROBOTSGUARD_E2E=required or ROBOTSGUARD_E2E_LONG=1 runs it (.ci/run does)")
	}
}

// missing skips the test for want of something it needs, or fails it
// under ROBOTSGUARD_E2E=required.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("ROBOTSGUARD_E2E") == "required" {
		t.Fatalf(format+" (ROBOTSGUARD_E2E=required)", args...)
	}
	t.Skipf(format, args...)
}

// server is one running Caddy: a front site with robots_guard, and a
// file_server backend with the demo site's files.
type server struct {
	dir       string // working directory: site/, robots_guard.log, Caddyfile
	front     string // base URL of the site behind robots_guard
	backend   string // base URL of the backend, without robots_guard
	robots    string // path of the site's robots.txt
	moduleLog string
	output    *syncBuffer // Caddy's stdout and stderr: its main log
	pid       int         // Caddy's process
}

// syncBuffer is a bytes.Buffer that Caddy's output can be written to while
// a test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type options struct {
	robots     string // robots.txt content; "" keeps the demo site's
	guard      string // extra robots_guard options
	backend    string // "reverse_proxy" (default) or "file_server"
	trustProxy bool   // trust X-Forwarded-For from loopback
	robotsPath string // where the site's robots.txt lives (a file or URL); "" for site/robots.txt
	admin      string // admin API address; "" keeps the admin API off
	proxyTo    string // reverse_proxy to this address instead of the file_server backend
	verify     string // the verify option; "" for "verify off"
	backendCfg string // directives of the file_server backend before file_server, e.g. header
	global     string // more global options, e.g. storage
	ownRobots  bool   // no robots line: the guard reads the site's own robots.txt (issue 26)
	noTrap     bool   // no trap line
}

func freePort(t *testing.T) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		// The kernel may hand a closed port out again: a config of many
		// sites would then name one port twice ("ambiguous site
		// definition"). No port is given twice in one test binary.
		if !portsGiven[port] {
			portsGiven[port] = true
			return port
		}
	}
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// copyDir copies the demo site.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func start(t *testing.T, o options) *server {
	t.Helper()
	dir := t.TempDir()
	copyDir(t, "../site", filepath.Join(dir, "site"))
	s := &server{dir: dir, robots: filepath.Join(dir, "site", "robots.txt"), moduleLog: filepath.Join(dir, "robots_guard.log"), output: &syncBuffer{}}
	if o.robotsPath != "" {
		s.robots = o.robotsPath
	}
	if o.robots != "" {
		if err := os.WriteFile(s.robots, []byte(o.robots), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	front, back := freePort(t), freePort(t)
	for back == front { // the port freePort freed can come back at once
		back = freePort(t)
	}
	s.front, s.backend = fmt.Sprintf("http://127.0.0.1:%d", front), fmt.Sprintf("http://127.0.0.1:%d", back)
	servers := "servers {\n\t\tmax_header_size 2MB\n\t\tprotocols h1 h2 h2c\n"
	if o.trustProxy {
		servers += "\t\ttrusted_proxies static 127.0.0.1/32\n"
	}
	servers += "\t}\n\t" + o.global
	handler := fmt.Sprintf("reverse_proxy 127.0.0.1:%d", back)
	if o.backend == "file_server" {
		handler = fmt.Sprintf("root * %s\n\tfile_server", filepath.Join(dir, "site"))
	}
	if o.proxyTo != "" {
		handler = "reverse_proxy " + o.proxyTo
	}
	admin := "off"
	if o.admin != "" {
		admin = o.admin
	}
	verify := "verify off"
	if o.verify != "" {
		verify = o.verify
	}
	robotsLine, trapLine := "robots "+s.robots, "trap /private-archive/"
	if o.ownRobots {
		robotsLine = ""
	}
	if o.noTrap {
		trapLine = ""
	}
	cfg := fmt.Sprintf(`{
	admin %s
	auto_https off
	log robots_guard {
		output file %s
		format json
		include http.handlers.robots_guard
	}
	%s
}
:%d {
	bind 127.0.0.1
	robots_guard {
		%s
		%s
		%s
		%s
	}
	%s
}
:%d {
	bind 127.0.0.1
	root * %s
	%s
	file_server
}
`, admin, s.moduleLog, servers, front, robotsLine, trapLine, verify, o.guard, handler, back, filepath.Join(dir, "site"), o.backendCfg)
	cfgPath := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(caddyBin, "run", "--config", cfgPath, "--adapter", "caddyfile")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = s.output, s.output
	startProcess(t, cmd, "caddy", s.output, 5*time.Second)
	s.pid = cmd.Process.Pid
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(s.backend + "/robots.txt")
		if err == nil {
			resp.Body.Close()
			if resp, err = http.Get(s.front + "/robots.txt"); err == nil {
				resp.Body.Close()
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("caddy did not start: %v\n%s", err, s.output.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// curl makes one request with curl, path as is, and returns the status, the
// X-Robots-Guard header and the body.
func curl(t *testing.T, base, path, ua string, headers ...string) (int, string, string) {
	t.Helper()
	args := []string{"-s", "--path-as-is", "-A", ua, "-D", "-", "-o", "-", "--max-time", "10"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	out, err := exec.Command("curl", append(args, base+path)...).Output()
	if err != nil {
		t.Fatalf("curl %s: %v", path, err)
	}
	head, body, _ := bytes.Cut(out, []byte("\r\n\r\n"))
	lines := strings.Split(string(head), "\r\n")
	var status int
	fmt.Sscanf(lines[0], "HTTP/1.1 %d", &status)
	guard := ""
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ": "); ok && strings.EqualFold(k, "X-Robots-Guard") {
			guard = v
		}
	}
	return status, guard, string(body)
}

// wgetResult is what a wget crawl fetched and what it was refused.
type wgetResult struct {
	fetched map[string]bool // paths saved with 2xx
	errors  map[string]int  // path -> HTTP error status
}

var (
	wgetOK  = regexp.MustCompile(`URL:\S+?://[^/]+(/\S*) \[`)
	wgetURL = regexp.MustCompile(`^\S+?://[^/]+(/\S*):$`)
	wgetErr = regexp.MustCompile(`ERROR (\d{3}):`)
)

// wget crawls base recursively and parses its log.
func wget(t *testing.T, base, ua string, extra ...string) wgetResult {
	t.Helper()
	dir := t.TempDir()
	logFile := filepath.Join(dir, "wget.log")
	args := append([]string{"-r", "-l", "5", "-nv", "-o", logFile, "-P", filepath.Join(dir, "out"), "-U", ua, "--timeout=10", "--tries=1"}, extra...)
	_ = exec.Command("wget", append(args, base+"/")...).Run() // wget exits non-zero when a page fails
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	res := wgetResult{fetched: map[string]bool{}, errors: map[string]int{}}
	pending := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if m := wgetOK.FindStringSubmatch(line); m != nil {
			res.fetched[m[1]] = true
		} else if m := wgetURL.FindStringSubmatch(line); m != nil {
			pending = m[1]
		} else if m := wgetErr.FindStringSubmatch(line); m != nil && pending != "" {
			var code int
			fmt.Sscan(m[1], &code)
			res.errors[pending] = code
			pending = ""
		}
	}
	if len(res.fetched) == 0 {
		t.Fatalf("wget fetched nothing:\n%s", data)
	}
	return res
}

// moduleLog reads the module's JSON log entries.
func (s *server) moduleEntries(t *testing.T) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(s.moduleLog)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e map[string]any
		if json.Unmarshal(line, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// politeRobots is the demo site's robots.txt with a shorter Crawl-delay, so
// that a polite crawl takes seconds.
func politeRobots(t *testing.T) string {
	data, err := os.ReadFile("../site/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(data), "Crawl-delay: 1", "Crawl-delay: 0.2", 1)
}

// isDisallowedDemo reports whether the demo robots.txt disallows path for
// the "*" group (or it is the trap).
func isDisallowedDemo(path string) bool {
	if strings.HasPrefix(path, "/private/press/") {
		return false
	}
	return strings.HasPrefix(path, "/private/") || strings.HasPrefix(path, "/~sam/") || strings.HasPrefix(path, "/%7Esam/") || strings.HasPrefix(path, "/private-archive/")
}

// TestPoliteCrawler: wget with robots on and a bot User-Agent, pacing
// itself, is never refused and never fetches a disallowed page.
func TestPoliteCrawler(t *testing.T) {
	need(t, "wget")
	s := start(t, options{robots: politeRobots(t)})
	res := wget(t, s.front, "PoliteBot/1.0 (+https://example.com/politebot)", "--wait=0.3")
	if len(res.errors) > 0 {
		t.Errorf("polite crawler was refused: %v", res.errors)
	}
	for p := range res.fetched {
		if isDisallowedDemo(p) {
			t.Errorf("polite crawler fetched disallowed %s", p)
		}
	}
	for _, want := range []string{"/", "/about.html", "/docs/", "/docs/rules.html", "/private/press/release.html"} {
		if !res.fetched[want] && want != "/private/press/release.html" {
			t.Errorf("polite crawler did not fetch %s (fetched %v)", want, res.fetched)
		}
	}
	t.Logf("polite crawler fetched %d pages, refused none", len(res.fetched))
}

// TestRogueCrawler: wget with robots off is refused every disallowed page,
// escalated, caught by the trap, and "caddy robots report" names it with the
// right counts, once the repeats that log_repeats folds are written.
func TestRogueCrawler(t *testing.T) {
	need(t, "wget")
	s := start(t, options{robots: politeRobots(t), guard: "strikes 3\n\t\tlog_repeats 1s"})
	res := wget(t, s.front, "RogueCrawler/2.0 (+https://rogue.example/bot)", "-e", "robots=off")
	for p := range res.fetched {
		if isDisallowedDemo(p) {
			t.Errorf("rogue crawler fetched disallowed %s", p)
		}
	}
	if len(res.errors) < 3 {
		t.Fatalf("rogue crawler was refused only %d times: %v", len(res.errors), res.errors)
	}
	reasons := map[string]int{}
	for _, e := range s.moduleEntries(t) {
		if toks, _ := e["tokens"].([]any); len(toks) > 0 && toks[0] == "roguecrawler" {
			reasons[e["reason"].(string)]++
		}
	}
	if reasons["disallowed"] == 0 || reasons["blocked_client"]+reasons["trap"] == 0 {
		t.Errorf("reasons logged for the rogue crawler: %v", reasons)
	}
	// The report over the run's log names it with the right counts, once
	// the repeats folded by log_repeats are written (every second here).
	refusedByWget := len(res.errors)
	got, found := 0, false
	var out []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var err error
		if out, err = exec.Command(caddyBin, "robots", "report", "--json", s.moduleLog).Output(); err != nil {
			t.Fatal(err)
		}
		var rep struct {
			TopBots []struct {
				Key     string         `json:"key"`
				Count   int            `json:"count"`
				Actions map[string]int `json:"actions"`
			} `json:"top_bots"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatal(err)
		}
		for _, b := range rep.TopBots {
			if b.Key == "roguecrawler" {
				found, got = true, b.Actions["deny"]+b.Actions["throttle"]
			}
		}
		if got == refusedByWget {
			break
		}
	}
	if !found {
		t.Errorf("report does not name roguecrawler: %s", out)
	} else if got != refusedByWget {
		t.Errorf("report counts %d refusals for roguecrawler, wget saw %d", got, refusedByWget)
	}
	t.Logf("rogue crawler: %d pages served, %d refused, reasons %v", len(res.fetched), refusedByWget, reasons)
}

// TestBrowserScraperTrap: a scraper with a browser User-Agent that follows
// the hidden trap link is caught, and refused from then on.
func TestBrowserScraperTrap(t *testing.T) {
	need(t, "wget")
	s := start(t, options{})
	const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	res := wget(t, s.front, firefox, "-e", "robots=off")
	if res.errors["/private-archive/"] != 403 {
		t.Errorf("the trap did not refuse the scraper: %v", res.errors)
	}
	trapped := false
	for _, e := range s.moduleEntries(t) {
		if e["reason"] == "trap" && e["class"] == "browser" {
			trapped = true
		}
	}
	if !trapped {
		t.Error("no trap entry for a browser User-Agent in the log")
	}
	// A person's browser on another address is unaffected; the scraper's
	// address is blocked even on the home page.
	if code, guard, _ := curl(t, s.front, "/", firefox); code != 403 || guard != "blocked_client" {
		t.Errorf("after the trap: %d %q", code, guard)
	}
	t.Logf("browser-UA scraper: %d pages before the trap, refused %d", len(res.fetched), len(res.errors))
}

// TestCrawlerMatrix: curl with the User-Agents of the major crawlers gets
// exactly the answer its group in the demo robots.txt dictates.
func TestCrawlerMatrix(t *testing.T) {
	need(t, "curl")
	s := start(t, options{trustProxy: true, guard: "rate search 0s\n\t\trate ai 0s\n\t\trate seo 0s\n\t\trate script 0s\n\t\trate bot 0s\n\t\tstrikes 1000"})
	agents := []struct {
		name, ua string
		group    string // "*", "roguebot", "helpbot", "bad", "browser"
	}{
		{"Googlebot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "*"},
		{"Bingbot", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "*"},
		{"GPTBot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", "*"},
		{"ClaudeBot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", "*"},
		{"CCBot", "CCBot/2.0 (https://commoncrawl.org/faq/)", "*"},
		{"AhrefsBot", "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", "*"},
		{"SemrushBot", "Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", "*"},
		{"curl", "curl/8.5.0", "*"},
		{"python-requests", "python-requests/2.31.0", "*"},
		{"roguebot", "roguebot/1.0", "roguebot"},
		{"helpbot", "Mozilla/5.0 (compatible; helpbot/1.0)", "helpbot"},
		{"EmailSiphon", "EmailSiphon", "bad"},
		{"Firefox", "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", "browser"},
	}
	paths := []string{"/", "/about.html", "/private/", "/private/report.html", "/private/press/release.html", "/~sam/notes.html"}
	for i, a := range agents {
		for _, p := range paths {
			want := 200
			switch a.group {
			case "*":
				if isDisallowedDemo(p) {
					want = 403
				}
			case "roguebot", "bad":
				want = 403
			}
			code, guard, _ := curl(t, s.front, p, a.ua, fmt.Sprintf("X-Forwarded-For: 198.51.100.%d", i+1))
			if code != want {
				t.Errorf("%s %s: %d (%s), want %d", a.name, p, code, guard, want)
			}
		}
	}
}

// TestAbsoluteFormTarget: a request line with an absolute URL is read, not
// passed unchecked.
func TestAbsoluteFormTarget(t *testing.T) {
	need(t, "curl")
	s := start(t, options{guard: "rate bot 0s"})
	host := strings.TrimPrefix(s.front, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET http://%s/private/report.html HTTP/1.1\r\nHost: %s\r\nUser-Agent: AbsBot/1.0 (+https://example.com)\r\nConnection: close\r\n\r\n", host, host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("absolute-form request for a disallowed page: %d", resp.StatusCode)
	}
}

// TestHostileInput: oversized and malformed requests and robots.txt files
// have clear outcomes, never a crash, and lose nothing.
func TestHostileInput(t *testing.T) {
	need(t, "curl")
	s := start(t, options{guard: "rate bot 0s\n\t\trate unknown 0s\n\t\tstrikes 1000000"})
	const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	// A 64 KiB User-Agent: a junk client, bound by robots.txt.
	if code, _, _ := curl(t, s.front, "/private/", strings.Repeat("A", 64<<10)); code != 403 {
		t.Errorf("64 KiB User-Agent on a disallowed path: %d", code)
	}
	if code, _, _ := curl(t, s.front, "/about.html", strings.Repeat("A", 64<<10)); code != 200 {
		t.Errorf("64 KiB User-Agent on an allowed path: %d", code)
	}
	// A 64 KiB path: served or refused by the rules, never a crash.
	long := "/private/" + strings.Repeat("a", 64<<10)
	if code, _, _ := curl(t, s.front, long, "LongBot/1.0 (+https://example.com)"); code != 403 {
		t.Errorf("64 KiB disallowed path for a bot: %d", code)
	}
	// For a browser the module passes it on; the backend answers as it may
	// (a file name that long is refused by the file system).
	if code, guard, _ := curl(t, s.front, "/"+strings.Repeat("a", 64<<10), firefox); guard != "" || code < 400 || code >= 500 {
		t.Errorf("64 KiB path for a browser: %d %q, want the backend's client error", code, guard)
	}
	// Invalid UTF-8 in the User-Agent and the path.
	if code, _, _ := curl(t, s.front, "/private/\xff\xfe", "Bad\xff\xfeBot/1.0"); code != 403 {
		t.Errorf("invalid UTF-8: %d", code)
	}
	// A NUL byte in a header: the HTTP server rejects the request.
	host := strings.TrimPrefix(s.front, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /private/ HTTP/1.1\r\nHost: %s\r\nUser-Agent: Nul\x00Bot\r\nConnection: close\r\n\r\n", host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	conn.Close()
	if err != nil || resp.StatusCode != 400 {
		t.Errorf("NUL in User-Agent: %v %v", resp, err)
	}

	// A 10 MiB robots.txt: the first 500 KiB are read, with a warning, and
	// the rules there apply.
	var big strings.Builder
	big.WriteString("User-agent: *\nDisallow: /about.html\n")
	for big.Len() < 10<<20 {
		fmt.Fprintf(&big, "Disallow: /generated/%d\n", big.Len())
	}
	if err := os.WriteFile(s.robots, []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, s, "/about.html", "BigBot/1.0 (+https://example.com)", 403)
	if !s.logged(t, "larger than") {
		t.Error("no warning about the oversized robots.txt in the module log")
	}
	_, _, served := curl(t, s.front, "/robots.txt", firefox)
	if len(served) > 600<<10 || !strings.Contains(served, "Disallow: /about.html") {
		t.Errorf("served robots.txt is %d bytes", len(served))
	}
	// Random bytes: an error is logged and the last good rules stay.
	junk := make([]byte, 64<<10)
	for i := range junk {
		junk[i] = byte(i*7919 + i/13)
	}
	if err := os.WriteFile(s.robots, junk, 0o644); err != nil {
		t.Fatal(err)
	}
	// The change settles for 1 s before it is read; a loaded machine
	// takes longer.
	deadline := time.Now().Add(15 * time.Second)
	for !s.logged(t, "robots.txt is invalid") {
		if time.Now().After(deadline) {
			t.Fatal("no error logged for a binary robots.txt")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, _, _ := curl(t, s.front, "/about.html", "BigBot/1.0 (+https://example.com)"); code != 403 {
		t.Errorf("a binary robots.txt replaced the rules: %d", code)
	}
	if code, _, _ := curl(t, s.front, "/", firefox); code != 200 {
		t.Errorf("server unhealthy after hostile input: %d", code)
	}
}

func waitStatus(t *testing.T, s *server, path, ua string, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _, _ := curl(t, s.front, path, ua)
		if code == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d, want %d", path, code, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logged reports whether the module's decision log or Caddy's main log
// (where reload problems go) has an entry whose message or fields contain
// text.
func (s *server) logged(t *testing.T, text string) bool {
	t.Helper()
	data, err := os.ReadFile(s.moduleLog)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(data, []byte(text)) || strings.Contains(s.output.String(), text)
}
