package caddymodule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/cli"
)

const cliRobots = "User-agent: *\nDisallow: /private\nAllow: /private/ok\n\nUser-agent: Googlebot\nDisallow: /nogoogle\n"

// TestRobotsCommandRegistered: "caddy robots" is registered with cli's
// help text and every subcommand of package cli.
func TestRobotsCommandRegistered(t *testing.T) {
	reg, ok := caddycmd.Commands()["robots"]
	if !ok {
		t.Fatal(`no "robots" command registered`)
	}
	if reg.Usage != cli.Usage || reg.Short != cli.Short || reg.Long != cli.Long {
		t.Errorf("registered help differs from cli's: %+v", reg)
	}
	root := &cobra.Command{Use: "robots"}
	reg.CobraFunc(root)
	var got, want []string
	for _, c := range root.Commands() {
		got = append(got, c.Name())
	}
	for _, c := range cli.Commands(&cli.Caddy{}) {
		want = append(want, c.Name())
	}
	slices.Sort(want) // cobra lists commands by name
	if len(got) < 8 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("subcommands %v, want %v", got, want)
	}
}

// robotsCommand returns a fresh `caddy robots` subcommand, as registered.
func robotsCommand(name string) *cobra.Command {
	root := &cobra.Command{Use: "robots"}
	caddycmd.Commands()["robots"].CobraFunc(root)
	for _, c := range root.Commands() {
		if c.Name() == name {
			root.RemoveCommand(c) // so that Execute runs c itself
			return c
		}
	}
	panic("no caddy robots " + name)
}

func checkCommand() *cobra.Command    { return robotsCommand("check") }
func classifyCommand() *cobra.Command { return robotsCommand("classify") }
func auditCommand() *cobra.Command    { return robotsCommand("audit") }
func blockedCommand() *cobra.Command  { return robotsCommand("blocked") }
func unblockCommand() *cobra.Command  { return robotsCommand("unblock") }

// newChecker answers `caddy robots check` with h's decision.
func newChecker(h *Handler, ip netip.Addr) (*cli.Checker, error) {
	return cli.NewChecker(siteHandler{h}, ip)
}

// checkOut runs "caddy robots check" with args and returns its output.
func checkOut(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := checkCommand()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetIn(strings.NewReader(stdin))
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String()
}

func tempFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckURLs: one line per URL with the verdict and the deciding rule;
// a bare product token and a whole User-Agent both work.
func TestCheckURLs(t *testing.T) {
	robots := tempFile(t, "robots.txt", cliRobots)
	out := checkOut(t, "", "--robots", robots, "-A", "Googlebot/2.1", "https://example.com/nogoogle/x", "https://example.com/private")
	want := "disallowed\thttps://example.com/nogoogle/x\t(group googlebot; line 6: Disallow: /nogoogle)\n" +
		"allowed\thttps://example.com/private\t(group googlebot; no rule matches)\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	out = checkOut(t, "", "--robots", robots, "-A", "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)", "http://e.com/private/ok?x=1", "http://e.com/private/a")
	want = "allowed\thttp://e.com/private/ok?x=1\t(group *; line 3: Allow: /private/ok)\n" +
		"disallowed\thttp://e.com/private/a\t(group *; line 2: Disallow: /private)\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// TestCheckAsHandler (issue 11): check answers with the handler's own
// decision, so "Disallow: /messages$" refuses "/messages?a=b" in both, and
// spellings a backend serves alike are refused alike: by a departure from
// the reference reading (issue 27), which check names.
func TestCheckAsHandler(t *testing.T) {
	robots := tempFile(t, "robots.txt", "User-agent: *\nDisallow: /messages$\nDisallow: /private/\n")
	out := checkOut(t, "", "--robots", robots, "-A", "ExampleBot/1.0",
		"https://e.com/messages?a=b", "https://e.com/private%2Fx", "https://e.com/messages/x", "https://e.com/x#frag")
	dep := "departure: the reference reading allows it; refused to a client that is not verified, without a strike; "
	want := "disallowed\thttps://e.com/messages?a=b\t(" + dep + "group *; line 2: Disallow: /messages$)\n" +
		"disallowed\thttps://e.com/private%2Fx\t(" + dep + "group *; line 3: Disallow: /private/)\n" +
		"allowed\thttps://e.com/messages/x\t(group *; no rule matches)\n" +
		"allowed\thttps://e.com/x#frag\t(group *; no rule matches)\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	h := &Handler{}
	ck, err := newChecker(h, netip.MustParseAddr("192.0.2.1"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ck.Check([]byte("User-agent: *\nDisallow: /messages$\n"), "ExampleBot/1.0", "https://e.com/messages?a=b")
	if err != nil || r.Allowed || r.Reason != "departure" {
		t.Errorf("check: %+v %v", r, err)
	}
}

// TestCheckReadings (issue 11): where the readings of the groups differ,
// check shows both.
func TestCheckReadings(t *testing.T) {
	robots := tempFile(t, "robots.txt", "User-agent: baidu\ncrawl-delay: 1\n\nUser-agent: *\nDisallow: /*/*/pulse\n")
	out := checkOut(t, "", "--robots", robots, "-A", "baidu", "https://github.com/foo/bar/pulse")
	want := "allowed\thttps://github.com/foo/bar/pulse\t(group baidu; no rule matches; the readings of the groups differ: Google's disallows by line 5: Disallow: /*/*/pulse, protego/temoto's allows; refused only when both disallow)\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// TestCheckUsage: check shows the AI usage preference that applies, the
// lines that decide it and the client's purposes; a refusal names its
// line; --config's content_usage log serves and says so.
func TestCheckUsage(t *testing.T) {
	robots := tempFile(t, "robots.txt", "User-agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\nContent-Signal: search=yes\n")
	const gptbot = "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	out := checkOut(t, "", "--robots", robots, "-A", gptbot, "https://e.com/test", "https://e.com/ai-ok/test", "https://e.com/never/test")
	want := "refused\thttps://e.com/test\t(content_usage: the site's AI usage preferences refuse its purpose; group *; line 4: Content-Usage: train-ai=n; AI usage train-ai=n, search=y by line 4: Content-Usage: train-ai=n and line 6: Content-Signal: search=yes; its purposes train-ai: train-ai refused)\n" +
		"allowed\thttps://e.com/ai-ok/test\t(group *; line 2: Allow: /; AI usage train-ai=y, search=y by line 5: Content-Usage: /ai-ok/ train-ai=y and line 6: Content-Signal: search=yes; its purposes train-ai: none refused)\n" +
		"disallowed\thttps://e.com/never/test\t(group *; line 3: Disallow: /never/)\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	out = checkOut(t, "", "--robots", robots, "-A", "ExampleBot/1.0", "https://e.com/test")
	want = "allowed\thttps://e.com/test\t(group *; line 2: Allow: /; AI usage train-ai=n, search=y by line 4: Content-Usage: train-ai=n and line 6: Content-Signal: search=yes; purpose unknown: judged by Allow/Disallow only)\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	// JSON, with the site's content_usage log.
	h := &Handler{ContentUsage: "log"}
	ck, err := newChecker(h, netip.MustParseAddr("192.0.2.1"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := os.ReadFile(robots)
	r, err := ck.Check(body, gptbot, "https://e.com/x")
	if err != nil || !r.Allowed || r.Reason != "content_usage" || r.Line != 4 || r.Usage == nil || r.Usage.Refused != "train-ai" || fmt.Sprint(r.Usage.Purposes) != "[train-ai]" {
		t.Errorf("log mode: %+v %+v %v", r, r.Usage, err)
	}
}

const siteConfig = `{
	admin off
}
shop.example.com {
	robots_guard {
		robots %s
		block_class ai
		trap /private-archive/
		allow_ip 203.0.113.0/24
		bot partnercrawler ai PartnerCrawler
	}
	respond "shop"
}
blog.example.com {
	robots_guard {
		robots %s
	}
	respond "blog"
}
`

// TestCheckConfig (issue 11): with --config and --site, check and classify
// use the site's robots_guard settings.
func TestCheckConfig(t *testing.T) {
	robots := tempFile(t, "robots.txt", "User-agent: *\nDisallow: /private/\n")
	cfg := tempFile(t, "Caddyfile", fmt.Sprintf(siteConfig, robots, robots))
	out := checkOut(t, "", "--config", cfg, "--site", "shop.example.com", "-A", "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)", "https://shop.example.com/")
	if want := "refused\thttps://shop.example.com/\t(blocked_class: block_class shuts out its class, and the served robots.txt disallows the path for it; each request is a strike; group gptbot; added to the served robots.txt: Disallow: /)\n"; out != want {
		t.Errorf("blocked class: %q", out)
	}
	out = checkOut(t, "", "--config", cfg, "--site", "shop.example.com", "-A", "ExampleBot/1.0", "https://shop.example.com/private-archive/x", "https://shop.example.com/about")
	if want := "refused\thttps://shop.example.com/private-archive/x\t(trap: the served robots.txt disallows it to every client; a request for it blocks the client's whole address (a browser's fetch for another site, such as an image embedded elsewhere, is refused without a block); group *; added to the served robots.txt: Disallow: /private-archive/)\nallowed\thttps://shop.example.com/about\t(group *; no rule matches)\n"; out != want {
		t.Errorf("trap: got %q, want %q", out, want)
	}
	// A browser is told that robots.txt does not bind people where that is
	// why it is served, never beside a refusal (issue 28: "refused … (a
	// browser: robots.txt does not bind people)").
	const chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	out = checkOut(t, "", "--config", cfg, "--site", "shop.example.com", "-A", chrome, "https://shop.example.com/private-archive/x", "https://shop.example.com/private/x")
	if want := "refused\thttps://shop.example.com/private-archive/x\t(trap: the served robots.txt disallows it to every client; a request for it blocks the client's whole address (a browser's fetch for another site, such as an image embedded elsewhere, is refused without a block); group *; added to the served robots.txt: Disallow: /private-archive/)\nallowed\thttps://shop.example.com/private/x\t(a browser: robots.txt does not bind people; only a trap or a block refuses one)\n"; out != want {
		t.Errorf("browser: got %q, want %q", out, want)
	}
	out = checkOut(t, "", "--config", cfg, "--site", "shop.example.com", "--ip", "203.0.113.9", "-A", "ExampleBot/1.0", "https://shop.example.com/private/x")
	if want := "allowed\thttps://shop.example.com/private/x\t(allowlisted: allow_ip or allow_token lets it through)\n"; out != want {
		t.Errorf("allow_ip: %q", out)
	}
	out = checkOut(t, "", "--config", cfg, "--site", "shop.example.com", "-A", "PartnerCrawler/2.0", "https://shop.example.com/")
	if !strings.HasPrefix(out, "refused") {
		t.Errorf("bot entry of the site (class ai, blocked): %q", out)
	}
	// The other site has none of it.
	out = checkOut(t, "", "--config", cfg, "--site", "blog.example.com", "-A", "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)", "https://blog.example.com/", "https://blog.example.com/private-archive/x")
	if want := "allowed\thttps://blog.example.com/\t(group *; no rule matches)\nallowed\thttps://blog.example.com/private-archive/x\t(group *; no rule matches)\n"; out != want {
		t.Errorf("blog: got %q, want %q", out, want)
	}
	// Two sites and no --site: an error that names them.
	cmd := checkCommand()
	cmd.SetArgs([]string{"--config", cfg, "-A", "x", "https://e.com/"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "shop.example.com") || !strings.Contains(err.Error(), "--site") {
		t.Errorf("no --site: %v", err)
	}
	// classify with the site's bot entries.
	cl := classifyCommand()
	var buf bytes.Buffer
	cl.SetArgs([]string{"--config", cfg, "--site", "shop.example.com", "PartnerCrawler/2.0"})
	cl.SetOut(&buf)
	if err := cl.Execute(); err != nil {
		t.Fatal(err)
	}
	if want := `{"ua":"PartnerCrawler/2.0","class":"ai","tokens":["partnercrawler"],"bot":"partnercrawler","blocked_class":true}` + "\n"; buf.String() != want {
		t.Errorf("classify: got %s want %s", buf.String(), want)
	}
}

// TestCheckBatch: JSON Lines in, one object per line out, in order; a bad
// or over-long line gets an error object and the run goes on.
func TestCheckBatch(t *testing.T) {
	line := func(robots, ua, url string) string {
		b, _ := json.Marshal(map[string]string{"robots": robots, "ua": ua, "url": url})
		return string(b)
	}
	in := strings.Join([]string{
		line(cliRobots, "Googlebot/2.1", "https://e.com/nogoogle"),
		"not json",
		`{"robots": "User-agent: *\nDisallow: /"}`,
		line("User-agent: *\nDisallow: /x$\n", "curl/8.0", "https://e.com/x"),
		line("User-agent: *\nDisallow: "+strings.Repeat("/y", 1<<20)+"\n", "curl/8.0", "https://e.com/x"), // over the 1 MB bound of a batch line
		line("User-agent: *\nDisallow: /x$\n", "curl/8.0", "https://e.com/xy"),
		line("User-agent: *\nDisallow: /x$\n", "curl/8.0", "https://e.com/x?q=1"),
	}, "\r\n")
	out := checkOut(t, in, "--batch")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		`{"url":"https://e.com/nogoogle","allowed":false,"reason":"disallowed","class":"search","group":"googlebot","line":6,"rule":"Disallow: /nogoogle"}`,
		`{"error":"invalid JSON: invalid character 'o' in literal null (expecting 'u')"}`,
		`{"error":"want an object with \"robots\", \"ua\" and \"url\""}`,
		`{"url":"https://e.com/x","allowed":false,"reason":"disallowed","class":"script","group":"*","line":2,"rule":"Disallow: /x$"}`,
		`{"error":"line longer than 1048576 bytes"}`,
		`{"url":"https://e.com/xy","allowed":true,"class":"script","group":"*","line":0}`,
		`{"url":"https://e.com/x?q=1","allowed":false,"reason":"departure","class":"script","group":"*","line":2,"rule":"Disallow: /x$"}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(lines), out)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d: got %s\nwant %s", i+1, lines[i], want[i])
		}
	}
}
