package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsguard/robotsguard/policy"
)

// bypassRobots is the demo site's rules plus those of issue 10's review:
// a '$' rule, a '$' Allow that a query must not satisfy, a prefix rule.
const bypassRobots = "User-agent: *\nDisallow: /private/\nDisallow: /~sam/\nDisallow: /docs/rules.html\nDisallow: /about.html$\n" +
	"Allow: /private/press/\nDisallow: /*.pdf$\nAllow: /*.css$\nDisallow: /admin\n"

// bypassExtraFiles are added to the demo site for the rules above.
var bypassExtraFiles = map[string]string{
	"docs/report.pdf":     "%PDF-1.4 the quarterly report",
	"admin.html":          "<title>admin console</title>",
	"style.css":           "body { color: black }",
	"private/secret.html": "<title>the secret</title>",
}

// bypassResources are the disallowed resources the suite tries to reach.
var bypassResources = []string{"/private/report.html", "/private/index.html", "/~sam/notes.html", "/docs/rules.html", "/about.html", "/docs/report.pdf", "/admin.html", "/private/secret.html"}

const bypassBot = "BypassBot/1.0 (+https://example.com/bypass)"

const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"

// protocols are the HTTP versions the suite speaks to the front: curl's
// flag for each.
var protocols = map[string]string{"HTTP/1.0": "--http1.0", "HTTP/1.1": "--http1.1", "h2c": "--http2-prior-knowledge"}

// startBypass starts Caddy with the bypass rules in front of backend.
func startBypass(t *testing.T, backend, guard string) *server {
	t.Helper()
	s := start(t, options{robots: bypassRobots, backend: backend, guard: "rate bot 0s\n\t\tstrikes 1000000\n\t\t" + guard})
	for name, content := range bypassExtraFiles {
		if err := os.WriteFile(filepath.Join(s.dir, "site", filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// fetch makes one request with curl over proto and returns the status, the
// X-Robots-Guard header and the body. target is sent as it is: a path is
// appended to base; any other form ("http://...", "/#x") goes into the
// request line with --request-target.
func fetch(t *testing.T, proto, base, target, ua string, extra ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	body, head := filepath.Join(dir, "body"), filepath.Join(dir, "head")
	args := []string{"-s", "--path-as-is", protocols[proto], "-A", ua, "-o", body, "-D", head, "-w", "%{http_code}", "--max-time", "10"}
	args = append(args, extra...)
	if strings.HasPrefix(target, "/") && !strings.Contains(target, "#") {
		args = append(args, base+target)
	} else {
		args = append(args, "--request-target", target, base+"/")
	}
	out, err := exec.Command("curl", args...).Output()
	var ee *exec.ExitError
	if proto == "h2c" && errors.As(err, &ee) && ee.ExitCode() == 92 {
		// Go's HTTP/2 server resets the stream of a :path that is not a
		// path (absolute form, '#'): nothing is served.
		return 0, "", ""
	}
	if err != nil {
		t.Fatalf("curl %s %s: %v", proto, target, err)
	}
	var code int
	fmt.Sscanf(string(out), "%d", &code)
	h, _ := os.ReadFile(head)
	guard := ""
	for _, l := range strings.Split(string(h), "\r\n") {
		if k, v, ok := strings.Cut(l, ": "); ok && strings.EqualFold(k, "X-Robots-Guard") {
			guard = v
		}
	}
	b, _ := os.ReadFile(body)
	return code, guard, string(b)
}

// TestBypassSpellings: for every disallowed resource, the spellings a
// rogue bot would try; wherever the backend serves the resource under a
// spelling, the bot is refused, behind file_server and reverse_proxy, over
// HTTP/1.0, HTTP/1.1 and h2c. (This is the suite that lived in e2e_test.go,
// with issue 10's resources and spellings added.)
func TestBypassSpellings(t *testing.T) {
	need(t, "curl")
	for _, backend := range []string{"file_server", "reverse_proxy"} {
		t.Run(backend, func(t *testing.T) {
			s := startBypass(t, backend, "")
			checked, servable := 0, 0
			for _, r := range bypassResources {
				_, _, want := fetch(t, "HTTP/1.1", s.backend, r, "x")
				if want == "" || strings.Contains(want, "404") {
					t.Fatalf("the backend does not serve %s", r)
				}
				for _, v := range variants(r) {
					checked++
					code, _, body := fetch(t, "HTTP/1.1", s.backend, v, "x")
					if code != 200 || body != want {
						continue // the backend does not serve the resource under this spelling
					}
					servable++
					for proto := range protocols {
						fcode, guard, fbody := fetch(t, proto, s.front, v, bypassBot)
						if fcode == 200 && fbody == want {
							t.Errorf("bypass over %s: %s served %s (disallowed) to a bot", proto, v, r)
						} else if fcode != 0 && (fcode != 403 || guard != "disallowed" && guard != "departure") {
							t.Errorf("%s %s: %d %q, want 403 disallowed (or departure: the reference reading allows the spelling)", proto, v, fcode, guard)
						}
					}
				}
			}
			t.Logf("%s: %d spellings tried, %d served by the backend, all refused to the bot over %d protocols", backend, checked, servable, len(protocols))
			if servable < 100 {
				t.Errorf("only %d spellings are served by the backend; the suite tests too little", servable)
			}
		})
	}
}

// variants returns the spellings of path a rogue bot would try.
func variants(path string) []string {
	enc := func(s string, i int, upper bool) string { // percent-encode byte i
		f := "%%%02x"
		if upper {
			f = "%%%02X"
		}
		return s[:i] + fmt.Sprintf(f, s[i]) + s[i+1:]
	}
	lastSlash := strings.LastIndex(path, "/")
	out := []string{
		path,
		enc(path, 1, false),
		enc(path, 1, true),
		strings.ReplaceAll(path, "/", "//"),
		"/." + path,
		"/x/.." + path,
		"/%2e" + path,
		"/%2E%2E" + path,
		path + ";x=1",
		path[:lastSlash] + ";jsessionid=1" + path[lastSlash:],
		path[:lastSlash] + "%2F" + path[lastSlash+1:],
		path[:lastSlash] + "%2f" + path[lastSlash+1:],
		path[:lastSlash] + `\` + path[lastSlash+1:],
		"/%C0%AF" + path[1:],
		path[:lastSlash] + "%C0%AF" + path[lastSlash+1:],
		path + "?",
		path + "?a=1",
		path + "?" + strings.Repeat("x", 100),
		path + "#frag",
		strings.ToUpper(path[:2]) + path[2:],
		// Issue 10, item 2: dot segments after the name, which file_server
		// cleans away (a final "/." loses its slash).
		path + "/.",
		path + "/./.",
		path + "/x/..",
		path + "/%2e",
		path + "/.?x=1",
		// Items 3 and 4: a query after a '$' rule, a query that ends like an
		// allowed resource.
		path + "?x=1",
		path + "?.css",
		path + "?x.css",
		// Item 1 in absolute form: the backend's path is the whole target.
		"http://127.0.0.1" + path,
	}
	// Drop spellings that are not a path (a resource at the root has no
	// directory to put ;params in).
	kept := out[:0]
	for _, v := range out {
		if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "http://") {
			kept = append(kept, v)
		}
	}
	out = kept
	// Mixed-case hex on letters whose code has a hex letter (n is %6e).
	if i := strings.IndexAny(path[1:], "jklmnoz"); i >= 0 {
		out = append(out, enc(path, i+1, false), enc(path, i+1, true))
	}
	if strings.HasPrefix(path, "/~") {
		out = append(out, "/%7e"+path[2:], "/%7E"+path[2:])
	}
	return out
}

// TestBypassFragment (issue 10, item 1): a request target with '#' is
// answered 400 before any decision, for every client, over HTTP/1.0 and
// 1.1 and in absolute form with or without a Host header (over h2c, Go's
// server already resets such a stream); it never reaches the backend, a
// trap, or, with serve_robots off, the app behind robots.txt.
func TestBypassFragment(t *testing.T) {
	need(t, "curl")
	for _, backend := range []string{"file_server", "reverse_proxy"} {
		t.Run(backend, func(t *testing.T) {
			s := startBypass(t, backend, "serve_robots off")
			host := strings.TrimPrefix(s.front, "http://")
			targets := []string{
				"http://" + host + "/#/../private/secret.html",
				"/#/../private/secret.html",
				"/robots.txt#/../private/secret.html",
				"http://" + host + "/robots.txt#/../anything",
				"/private-archive/#x",
				"/#/../private-archive/",
				"/about.html?x#/../../private/secret.html",
			}
			for _, target := range targets {
				for proto := range protocols {
					for _, ua := range []string{bypassBot, firefox} {
						code, _, body := fetch(t, proto, s.front, target, ua)
						if code != 400 && code != 0 || strings.Contains(body, "secret") {
							t.Errorf("%s %s as %.20s: %d %q, want 400", proto, target, ua, code, body)
						}
					}
				}
				// POST, and HTTP/1.0 without a Host header.
				if code, _, _ := fetch(t, "HTTP/1.1", s.front, target, bypassBot, "-X", "POST", "-d", "x=1"); code != 400 {
					t.Errorf("POST %s: %d, want 400", target, code)
				}
				if code := rawRequest(t, host, "GET "+target+" HTTP/1.0\r\nUser-Agent: "+bypassBot+"\r\n\r\n"); code != 400 {
					t.Errorf("HTTP/1.0 without Host, %s: %d, want 400", target, code)
				}
			}
			// The trap was never reached: the browser is not blocked.
			if code, _, _ := fetch(t, "HTTP/1.1", s.front, "/about.html", firefox); code != 200 {
				t.Errorf("after the '#' attempts at the trap: %d, want 200", code)
			}
			// With serve_robots off, a blocked client reaches neither the app
			// nor robots.txt through a '#'.
			if code, _, _ := fetch(t, "HTTP/1.1", s.front, "/private-archive/", "Trapped/1.0"); code != 403 {
				t.Fatalf("trap: %d", code)
			}
			if code, _, _ := fetch(t, "HTTP/1.1", s.front, "/robots.txt#/../about.html", "Trapped/1.0"); code != 400 {
				t.Errorf("blocked client through robots.txt#: %d, want 400", code)
			}
			if code, _, body := fetch(t, "HTTP/1.1", s.front, "/robots.txt", firefox); code != 200 || !strings.Contains(body, "Disallow: /private/") {
				t.Errorf("robots.txt from the backend: %d %q", code, body)
			}
		})
	}
}

// rawRequest writes a request as it is and returns the response status.
func rawRequest(t *testing.T, host, request string) int {
	t.Helper()
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, request)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%q: %v", request, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestBypassNamed (issue 10, items 2 to 4): the spellings of the review,
// one by one, with both backends.
func TestBypassNamed(t *testing.T) {
	need(t, "curl")
	for _, backend := range []string{"file_server", "reverse_proxy"} {
		t.Run(backend, func(t *testing.T) {
			s := startBypass(t, backend, "")
			for _, target := range []string{
				"/docs/report.pdf/.", "/docs/report.pdf/./.", // item 2
				"/docs/report.pdf?x=1",               // item 3 (Allow: /*.css$ and others match too)
				"/admin.html?.css",                   // item 4
				"http://127.0.0.1/docs/report.pdf/.", // absolute form
				"http://127.0.0.1/admin.html?.css",
			} {
				for proto := range protocols {
					code, guard, body := fetch(t, proto, s.front, target, bypassBot)
					if code != 0 && (code != 403 || guard != "disallowed" && guard != "departure") || strings.Contains(body, "report") || strings.Contains(body, "admin console") {
						t.Errorf("%s %s: %d %q, want 403 disallowed or departure", proto, target, code, guard)
					}
				}
			}
		})
	}
}

// TestPoliteNormalSpellings: a polite crawler that reads robots.txt as the
// reference parser does is never refused for the exact, normal spelling of
// an allowed URL: every file of the site (and the directory of each index
// page) that Match allows is served to a bot, over every protocol.
func TestPoliteNormalSpellings(t *testing.T) {
	need(t, "curl")
	p := policy.Compile(policy.Parse([]byte(bypassRobots)))
	s := startBypass(t, "file_server", "")
	var urls []string
	root := filepath.Join(s.dir, "site")
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		u := "/" + filepath.ToSlash(rel)
		urls = append(urls, u)
		if strings.HasSuffix(u, "/index.html") {
			urls = append(urls, strings.TrimSuffix(u, "index.html"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	allowed := 0
	for _, u := range urls {
		target, err := policy.ParseTarget(u)
		if err != nil || target.Normal != u || !p.Match([]string{"bypassbot"}, u).Allowed || strings.HasPrefix(u, "/private-archive/") {
			continue // not a normal spelling, disallowed, or the trap
		}
		allowed++
		for proto := range protocols {
			if code, guard, _ := fetch(t, proto, s.front, u, bypassBot); code == 403 || guard != "" {
				t.Errorf("polite crawler refused over %s for %s: %d %q", proto, u, code, guard)
			}
		}
	}
	t.Logf("%d allowed URLs of %d, none refused", allowed, len(urls))
	if allowed < 8 {
		t.Errorf("only %d allowed URLs checked", allowed)
	}
}
