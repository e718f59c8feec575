package caddymodule

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/fileserver"

	"github.com/robotsguard/robotsguard/cli"
	"github.com/robotsguard/robotsguard/policy"
)

// bypassRobots is the site of issue 10's adversarial review.
const bypassRobots = "User-agent: *\nDisallow: /private/\nDisallow: /*.pdf$\nAllow: /*.css$\nDisallow: /admin\nDisallow: /~sam/\n"

// bypassFiles are the site's files; each file's content is its path, so a
// response names the file it served.
var bypassFiles = []string{
	"/index.html", "/about.html", "/admin.html", "/admin/panel.html", "/style.css", "/docs/report.pdf",
	"/docs/index.html", "/docs/guide.html", "/private/secret.html", "/private/index.html",
	"/private-archive/index.html", "/public/a.css", "/~sam/notes.html", "/robots.txt",
}

// fileServerBench is Caddy's real file_server module over the site's files,
// with the handler's decision beside it.
type fileServerBench struct {
	fs     *fileserver.FileServer
	ck     *cli.Checker
	p      *policy.Policy
	ctx    context.Context
	cancel func()
}

func newFileServerBench(t testing.TB) *fileServerBench {
	dir := t.TempDir()
	for _, f := range bypassFiles {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		content := f
		if f == "/robots.txt" {
			content = bypassRobots
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	fs := &fileserver.FileServer{Root: dir}
	if err := fs.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	h := &Handler{Traps: []string{"/private-archive/"}}
	ck, err := newChecker(h, netip.MustParseAddr("192.0.2.1"))
	if err != nil {
		t.Fatal(err)
	}
	b := &fileServerBench{fs: fs, ck: ck, p: ck.Policy([]byte(bypassRobots)), ctx: ctx, cancel: cancel}
	t.Cleanup(cancel)
	return b
}

// serve reads raw as Go's HTTP server reads a request line and lets
// file_server answer it; it returns the file served, or "".
func (b *fileServerBench) serve(raw string) string {
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + raw + " HTTP/1.1\r\nHost: example.com\r\n\r\n")))
	if err != nil {
		return "" // Go's server answers 400
	}
	repl := caddy.NewReplacer()
	ctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, repl)
	ctx = context.WithValue(ctx, caddyhttp.OriginalRequestCtxKey, *r.Clone(ctx))
	r = r.WithContext(ctx)
	w := httptest.NewRecorder()
	if err := b.fs.ServeHTTP(w, r, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })); err != nil || w.Code != http.StatusOK {
		return ""
	}
	return w.Body.String()
}

// disallowed reports whether robots.txt, as a polite crawler reads it
// (Policy.Match), disallows every URL under which the file is published.
func (b *fileServerBench) disallowed(file string) bool {
	urls := []string{file}
	if strings.HasSuffix(file, "/index.html") {
		urls = append(urls, strings.TrimSuffix(file, "index.html"))
	}
	for _, u := range urls {
		if b.p.Match([]string{"bypassbot"}, u).Allowed {
			return false
		}
	}
	return true
}

// guardRefuses reports whether the handler refuses raw to a bot.
func (b *fileServerBench) guardRefuses(raw string) bool {
	r, err := b.ck.Check([]byte(bypassRobots), "BypassBot/1.0", "http://example.com"+raw)
	if err != nil {
		return true // 400 before any decision
	}
	return !r.Allowed
}

// bypassSeeds are spellings a rogue bot tries.
var bypassSeeds = []string{
	"/private/secret.html", "/%70rivate/secret.html", "/private%2Fsecret.html", "//private//secret.html",
	"/./private/secret.html", "/x/../private/secret.html", "/private;x=1/secret.html", `/private\secret.html`,
	"/docs/report.pdf", "/docs/report.pdf/.", "/docs/report.pdf/./.", "/docs/report.pdf?x=1", "/docs/report.pdf/x/..",
	"/admin.html", "/admin.html?.css", "/admin%2Ehtml", "/%61dmin.html", "/~sam/notes.html", "/%7Esam/notes.html",
	"/private/", "/private", "/private/.", "/docs/", "/style.css", "/public/a.css?v=1", "/about.html",
	"/private-archive/", "/robots.txt", "/robots.txt?x", "/robots.txt/../private/secret.html",
}

// FuzzFileServerBypass (issue 10): for any request target, whenever Caddy's
// real file_server would serve a file that robots.txt disallows for the bot,
// the handler refuses; and a polite crawler's exact, normal spelling of an
// allowed URL without a query is never refused.
func FuzzFileServerBypass(f *testing.F) {
	for _, s := range bypassSeeds {
		f.Add(s)
	}
	b := newFileServerBench(f)
	f.Fuzz(func(t *testing.T, raw string) {
		if raw == "" || strings.ContainsAny(raw, " \r\n\t") {
			return // not one request-target
		}
		served := b.serve(raw)
		refused := b.guardRefuses(raw)
		if served != "" && b.disallowed(served) && !refused {
			t.Fatalf("bypass: %q serves %s, which robots.txt disallows, and the guard lets the bot through", raw, served)
		}
		target, err := policy.ParseTarget(raw)
		if err == nil && target.Normal == raw && target.Variants == nil && !strings.Contains(raw, "?") &&
			b.p.Match([]string{"bypassbot"}, raw).Allowed && refused && !strings.HasPrefix(raw, "/private-archive/") {
			t.Fatalf("polite: %q is allowed by robots.txt, spelled normally, and refused", raw)
		}
	})
}

// TestFileServerBypassSeeds: the seeds of the fuzzer include real
// bypasses, so the fuzzer's property is not vacuous.
func TestFileServerBypassSeeds(t *testing.T) {
	b := newFileServerBench(t)
	served, disallowed := 0, 0
	for _, s := range bypassSeeds {
		if file := b.serve(s); file != "" {
			served++
			if b.disallowed(file) {
				disallowed++
			}
		}
	}
	t.Logf("%d seeds, %d served by file_server, %d of them disallowed files", len(bypassSeeds), served, disallowed)
	if disallowed < 10 {
		t.Errorf("only %d seeds reach a disallowed file", disallowed)
	}
}
