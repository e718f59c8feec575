package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The demo as the README's Quick start runs it: the README's own demo
// command (go run ./examples/caddy run --config Caddyfile.example) in a
// copy of the repository, on the demo's fixed ports (8080, 8081 and the
// admin API on 2019). When one of them is taken the tests are skipped,
// unless ROBOTSGUARD_DEMO=required (as .ci/run sets it), which makes that
// a failure.

// demoPorts are the addresses the demo listens on.
var demoPorts = []string{"127.0.0.1:8080", "127.0.0.1:8081", "127.0.0.1:2019"}

// quickStart is what the README's Quick start section says to run.
type quickStart struct {
	demo  string // the command that starts the demo
	steps []step // the walkthrough, in order
}

// step is one command of the walkthrough and the output the README shows
// for it.
type step struct {
	line int // in README.md
	cmd  string
	want []string
}

// readQuickStart reads the README's "Quick start" section: the demo
// command from its first sh block, and the walkthrough from its console
// blocks ("$ " starts a command; the lines up to the next command are its
// output).
func readQuickStart(t *testing.T, readme string) quickStart {
	t.Helper()
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var qs quickStart
	in, block := false, ""
	for n, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "## ") && in:
			return qs.checked(t)
		case strings.HasPrefix(line, "## "):
			in = line == "## Quick start"
			continue
		case !in:
			continue
		case strings.HasPrefix(line, "```"):
			if block == "" {
				block = strings.TrimPrefix(line, "```")
			} else {
				block = ""
			}
			continue
		}
		switch {
		case block == "sh" && qs.demo == "" && strings.HasPrefix(line, "go run ./examples/caddy run "):
			qs.demo = line
		case block == "console" && strings.HasPrefix(line, "$ "):
			qs.steps = append(qs.steps, step{line: n + 1, cmd: strings.TrimPrefix(line, "$ ")})
		case block == "console" && len(qs.steps) > 0:
			st := &qs.steps[len(qs.steps)-1]
			st.want = append(st.want, line)
		}
	}
	return qs.checked(t)
}

// checked fails the test unless qs has a demo command and a walkthrough.
func (qs quickStart) checked(t *testing.T) quickStart {
	t.Helper()
	if qs.demo == "" || len(qs.steps) < 10 {
		t.Fatalf("README Quick start: demo command %q and %d walkthrough commands; want both", qs.demo, len(qs.steps))
	}
	return qs
}

// normalize drops blank lines, carriage returns and trailing spaces, and
// collapses runs of spaces (tables are aligned by the widths of what they
// hold).
func normalize(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// outputMatches reports whether got matches want: a want line "..." stands
// for any lines (none included), "..." within a line for any text.
func outputMatches(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if outputMatches(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	if len(got) == 0 {
		return false
	}
	parts := strings.Split(want[0], "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	if !regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(got[0]) {
		return false
	}
	return outputMatches(want[1:], got[1:])
}

func TestOutputMatches(t *testing.T) {
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"a\nb", "a\n\nb  \r", true},
		{"a\nb", "a\nc", false},
		{"a\n...\nd", "a\nb\nc\nd", true},
		{"a\n...\nd", "a\nd", true},
		{"a\n...", "a", true},
		{"a\n...\nd", "a\nb", false},
		{"Date: ...", "Date: Tue, 01 Dec 2026 06:53:23 GMT", true},
		{"x ... 1 true", "x   1m0s   1   true", true},
		{"x ... 1 true", "x 59s 2 true", false},
		{"a.c", "abc", false},
		{"", "a", false},
	} {
		if got := outputMatches(normalize(strings.Split(c.want, "\n")), normalize(strings.Split(c.got, "\n"))); got != c.ok {
			t.Errorf("want %q, got %q: matched %v", c.want, c.got, got)
		}
	}
}

// copyRepo copies the repository (without .git and any demo log) to a new
// folder, so that the demo's log and state are the test's own.
func copyRepo(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), "robots_guard.log") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// startDemo runs the demo command in root, as a user would, and waits for
// its sites and admin API without sending robots_guard a request. It stops
// the demo (the go command and Caddy) when the test ends.
func startDemo(t *testing.T, root, command string) *syncBuffer {
	t.Helper()
	for _, addr := range demoPorts {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			if os.Getenv("ROBOTSGUARD_DEMO") == "required" {
				t.Fatalf("the demo needs %s: %v", addr, err)
			}
			t.Skipf("the demo needs %s, which is taken (%v); run in a network namespace of its own, or set ROBOTSGUARD_DEMO=required to fail instead", addr, err)
		}
		l.Close()
	}
	out := &syncBuffer{}
	cmd := exec.Command("bash", "-c", "exec "+command)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // go run and Caddy, stopped together
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		// Caddy is a child of go run: wait until it let go of the ports.
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if c, err := net.Dial("tcp", demoPorts[0]); err == nil {
				c.Close()
				continue
			}
			break
		}
		if t.Failed() {
			t.Logf("demo output:\n%s", out.String())
		}
	})
	// go run builds first: minutes on a loaded machine.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		select {
		case <-done:
			t.Fatalf("the demo exited:\n%s", out.String())
		default:
		}
		resp, err := http.Get("http://127.0.0.1:8081/robots.txt") // the backend, not robots_guard
		if err == nil {
			resp.Body.Close()
			if resp, err = http.Get("http://localhost:2019/config/"); err == nil {
				resp.Body.Close()
				var c net.Conn
				if c, err = net.Dial("tcp", demoPorts[0]); err == nil {
					c.Close()
					return out
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo did not start: %v\n%s", err, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestDemo: the README's Quick start, as a new user runs it. The demo
// starts with the README's command; each command of the README's
// walkthrough runs in order and prints what the README shows; polite
// crawlers (wget, Scrapy) of the demo get every page robots.txt allows
// them, each with its content, and no other.
func TestDemo(t *testing.T) {
	need(t, "bash", "curl")
	root := copyRepo(t)
	qs := readQuickStart(t, filepath.Join(root, "README.md"))

	t.Run("walkthrough", func(t *testing.T) {
		// The log of an earlier run (issue 39, point 8): the demo starts
		// afresh, and the walkthrough's report counts this run only.
		earlier := strings.Repeat(`{"level":"info","ts":1796000000,"logger":"http.handlers.robots_guard","msg":"request refused","client_ip":"127.0.0.1","user_agent":"GPTBot/1.2","class":"ai","tokens":["gptbot"],"method":"GET","host":"localhost:8080","uri":"/private/","action":"deny","reason":"disallowed","group":"*"}`+"\n", 4)
		if err := os.WriteFile(filepath.Join(root, "robots_guard.log"), []byte(earlier), 0o644); err != nil {
			t.Fatal(err)
		}
		startDemo(t, root, qs.demo)
		for _, st := range qs.steps {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			cmd := exec.CommandContext(ctx, "bash", "-c", st.cmd)
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			cancel()
			var got []string
			for _, l := range strings.Split(string(out), "\n") {
				if !strings.HasPrefix(l, "go: downloading ") {
					got = append(got, l)
				}
			}
			t.Logf("$ %s\n%s", st.cmd, strings.TrimRight(strings.ReplaceAll(strings.Join(got, "\n"), "\r", ""), "\n"))
			if err != nil {
				t.Fatalf("README.md:%d: %s: %v", st.line, st.cmd, err)
			}
			if !outputMatches(normalize(st.want), normalize(got)) {
				t.Fatalf("README.md:%d: %s\nREADME shows:\n%s\ngot:\n%s", st.line, st.cmd, strings.Join(st.want, "\n"), out)
			}
		}
	})

	t.Run("wget", func(t *testing.T) {
		need(t, "wget")
		startDemo(t, root, qs.demo)
		dir := t.TempDir()
		// wget keeps robots.txt (robots=on is its default) but not its
		// Crawl-delay: --wait keeps it.
		c := exec.Command("wget", "--recursive", "--level=5", "--wait=1", "--no-verbose", "--tries=1", "--timeout=10", "-P", dir, "http://localhost:8080/")
		log, err := c.CombinedOutput()
		t.Logf("wget --recursive --wait=1:\n%s", log)
		if err != nil {
			t.Errorf("wget: %v", err)
		}
		got := map[string]string{} // path -> title
		err = filepath.WalkDir(filepath.Join(dir, "localhost:8080"), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(filepath.Join(dir, "localhost:8080"), p)
			path := "/" + filepath.ToSlash(strings.TrimSuffix(rel, "index.html"))
			if path == "/robots.txt" {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			want := sitePage(t, root, path)
			if !bytes.Equal(data, want) {
				t.Errorf("%s: wget saved %d bytes:\n%s\nthe site's file has %d:\n%s", path, len(data), data, len(want), want)
			}
			got[path] = title(data)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// wget takes the first rule that matches, in the file's order,
		// not the longest (RFC 9309): "Disallow: /private/" keeps it
		// from the press release that "Allow: /private/press/" opens.
		checkPolitePages(t, "wget", got, root, "/private/press/release.html")
		checkNothingLogged(t, root, "wget")
	})

	t.Run("scrapy", func(t *testing.T) {
		need(t, "scrapy")
		startDemo(t, root, qs.demo)
		res := runDemoSpider(t, "http://localhost:8080/", "DOWNLOAD_DELAY=1")
		got := map[string]string{}
		for _, p := range res {
			if p.Status != 200 {
				t.Errorf("Scrapy got %d for %s", p.Status, p.URL)
			}
			path := strings.TrimPrefix(p.URL, "http://localhost:8080")
			if path == "/robots.txt" { // linked from the home page
				continue
			}
			got[path] = p.Title
			if want := heading(sitePage(t, root, path)); p.H1 == "" || p.H1 != want {
				t.Errorf("%s: Scrapy read the heading %q; the site's page has %q", path, p.H1, want)
			}
		}
		checkPolitePages(t, "Scrapy", got, root)
		checkNothingLogged(t, root, "scrapy")

		// The sitemap that the served robots.txt names lists the same
		// pages.
		sitemap, err := exec.Command("curl", "-s", "-A", "Scrapy/2.8.0 (+https://scrapy.org)", "http://localhost:8080/sitemap.xml").Output()
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, m := range locRE.FindAllSubmatch(sitemap, -1) {
			listed = append(listed, strings.TrimPrefix(string(m[1]), "http://localhost:8080"))
		}
		if !slices.Equal(listed, demoAllowed) {
			t.Errorf("the sitemap lists %v; Scrapy got %v", listed, demoAllowed)
		}
	})
}

var (
	titleRE   = regexp.MustCompile(`<title>([^<]*)</title>`)
	headingRE = regexp.MustCompile(`<h1>([^<]*)</h1>`)
	locRE     = regexp.MustCompile(`<loc>([^<]*)</loc>`)
)

// title returns an HTML page's title.
func title(page []byte) string {
	if m := titleRE.FindSubmatch(page); m != nil {
		return string(m[1])
	}
	return ""
}

// heading returns an HTML page's first h1 heading.
func heading(page []byte) string {
	if m := headingRE.FindSubmatch(page); m != nil {
		return string(m[1])
	}
	return ""
}

// sitePage returns the demo site's file for a URL path.
func sitePage(t *testing.T, root, path string) []byte {
	t.Helper()
	file := filepath.Join(root, "examples", "site", filepath.FromSlash(path))
	if strings.HasSuffix(path, "/") {
		file = filepath.Join(file, "index.html")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Errorf("%s: %v", path, err)
	}
	return data
}

// checkPolitePages checks that a polite crawl got every page robots.txt
// allows it (demoAllowed, but for those its reading of robots.txt
// forbids), each with its own title, and no other.
func checkPolitePages(t *testing.T, who string, got map[string]string, root string, forbidden ...string) {
	t.Helper()
	var allowed []string
	for _, p := range demoAllowed {
		if !slices.Contains(forbidden, p) {
			allowed = append(allowed, p)
		}
	}
	var paths []string
	for p := range got {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if isDisallowedDemo(p) {
			t.Errorf("%s got %s, which robots.txt disallows", who, p)
		}
	}
	for _, p := range allowed {
		want := title(sitePage(t, root, p))
		if got[p] != want || want == "" {
			t.Errorf("%s: %s has the title %q, want %q (the site's)", who, p, got[p], want)
		}
	}
	if len(got) != len(allowed) {
		t.Errorf("%s got %v, want %v", who, paths, allowed)
	}
	var titles []string
	for _, p := range paths {
		titles = append(titles, fmt.Sprintf("%s %q", p, got[p]))
	}
	t.Logf("%s got %d pages: %s", who, len(got), strings.Join(titles, ", "))
}

// checkNothingLogged checks that robots_guard logged no decision about the
// crawler with token: it was never refused, throttled, or forgiven.
func checkNothingLogged(t *testing.T, root, token string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "robots_guard.log"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Tokens         []string
			URI            string
			Action, Reason string
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && len(e.Tokens) > 0 && e.Tokens[0] == token {
			t.Errorf("robots_guard: %s %s %s/%s", token, e.URI, e.Action, e.Reason)
		}
	}
}

// demoSpider follows every link from the start page, as Scrapy does with
// robots.txt obeyed, and writes each page's URL, status, title and first
// heading.
const demoSpider = `
import json
import scrapy
from urllib.parse import urlsplit
from scrapy.linkextractors import LinkExtractor


class Demo(scrapy.Spider):
    name = "demo"

    def __init__(self, start=None, out=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start, self.out = start, out
        self.allowed_domains = [urlsplit(start).hostname]
        self.pages = []

    def start_requests(self):
        yield scrapy.Request(self.start)

    def parse(self, response):
        self.pages.append({"url": response.url, "status": response.status,
                           "title": response.css("title::text").get(),
                           "h1": response.css("h1::text").get()})
        for link in LinkExtractor().extract_links(response):
            yield response.follow(link.url, self.parse)

    def closed(self, reason):
        with open(self.out, "w") as f:
            json.dump(self.pages, f)
`

// spiderPage is one page the demo spider got.
type spiderPage struct {
	URL, Title, H1 string
	Status         int
}

// runDemoSpider crawls start with Scrapy, robots.txt obeyed, plus settings.
func runDemoSpider(t *testing.T, start string, settings ...string) []spiderPage {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spider.py"), []byte(demoSpider), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.json")
	args := []string{"runspider", "spider.py", "-a", "start=" + start, "-a", "out=" + out,
		"-s", "ROBOTSTXT_OBEY=True", "-s", "LOG_LEVEL=WARNING", "-s", "TELNETCONSOLE_ENABLED=False"}
	for _, s := range settings {
		args = append(args, "-s", s)
	}
	cmd := exec.Command("scrapy", args...)
	cmd.Dir = dir
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scrapy: %v\n%s", err, log)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var pages []spiderPage
	if err := json.Unmarshal(data, &pages); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return pages
}
