package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// agreeRobots is the site's own robots.txt of TestCheckAgreesWithHandler:
// groups by token, Allow within Disallow, a wildcard with $, a query, a
// percent-encoded path and a tilde.
const agreeRobots = `User-agent: *
Disallow: /private/
Allow: /private/press/
Disallow: /*.pdf$
Disallow: /search
Disallow: /cart?
Disallow: /a%2Fb
Disallow: /~sam/

User-agent: Googlebot
Allow: /private/
Disallow: /nogoogle

User-agent: GPTBot
Disallow: /docs/
`

// TestCheckAgreesWithHandler (issue 36): "caddy robots check --config"
// answers as the running handler decides, for the same Caddyfile: a bare
// robots_guard (no robots line) whose rules are the site's own robots.txt,
// which check reads as the handler does (the handler after it answers GET
// /robots.txt), never "no rules". Over a matrix of User-Agents (browsers,
// a Firefox User-Agent with a Gecko token no Firefox writes, declared AI
// and search crawlers, HTTP libraries, unknown bots) and paths (allowed,
// disallowed, Allow within Disallow, wildcards and $, percent-encoded
// spellings, queries, trailing slashes, dot segments, the trap), each sent
// by curl from an address of its own: check's verdict is the handler's
// status, and its reason, class, group and rule line are those the
// handler logged and named in X-Robots-Guard-Rule. Each address is its
// own client (crawler_share 0: no key across a UA's 24 addresses of one
// /24), as check judges each request alone.
func TestCheckAgreesWithHandler(t *testing.T) {
	need(t, "curl")
	s := start(t, options{robots: agreeRobots, ownRobots: true, trustProxy: true, guard: "block_class ai-training\n\t\tlog_allowed 1\n\t\tlog_repeats 0\n\t\tcrawler_share 0"})
	uas := []string{
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
		"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
		"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20250101 Firefox/133.0", // a Gecko token no Firefox writes
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
		"Mozilla/5.0 (compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
		"curl/8.5.0",
		"python-requests/2.31.0",
		"Go-http-client/1.1",
		"ExampleBot/1.0 (+https://example.com/bot)",
		"Mozilla/5.0 (compatible; UnknownCrawler/2.0)",
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) SomeApp/1.0",
	}
	paths := []string{
		"/", "/about.html", "/private/", "/private", "/private/x.html", "/private/press/release.html",
		"/PRIVATE/x.html", "/%70rivate/x.html", "/private%2Fx.html", "/private/../about.html",
		"/report.pdf", "/report.pdf?x=1", "/report.pdfx", "/search?q=1", "/cart?id=1", "/cart",
		"/a%2Fb", "/a/b", "/~sam/", "/%7Esam/", "/docs/", "/docs", "/nogoogle/x", "/private-archive/",
	}
	type query struct {
		UA  string `json:"ua"`
		URL string `json:"url"`
		ip  string
	}
	var queries []query
	for i, ua := range uas {
		for j, p := range paths {
			queries = append(queries, query{UA: ua, URL: s.front + p, ip: fmt.Sprintf("10.36.%d.%d", i+1, j+1)})
		}
	}

	// The handler: each request from an address of its own, so that no
	// rate, strike or block of one touches another.
	type answer struct {
		status int
		header map[string]string
	}
	handler := make([]answer, len(queries))
	for i, q := range queries {
		args := []string{"-s", "--path-as-is", "-A", q.UA, "-H", "X-Forwarded-For: " + q.ip, "-D", "-", "-o", "/dev/null", "--max-time", "10", q.URL}
		out, err := exec.Command("curl", args...).Output()
		if err != nil {
			t.Fatalf("curl %s: %v", q.URL, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\r\n")
		a := answer{header: map[string]string{}}
		fmt.Sscanf(lines[0], "HTTP/1.1 %d", &a.status)
		for _, l := range lines[1:] {
			if k, v, ok := strings.Cut(l, ": "); ok {
				a.header[strings.ToLower(k)] = v
			}
		}
		handler[i] = a
	}
	logged := map[string]map[string]any{}
	for _, e := range s.moduleEntries(t) {
		if ip, _ := e["client_ip"].(string); strings.HasPrefix(ip, "10.36.") {
			logged[ip] = e
		}
	}

	// check, on the same Caddyfile, with what curl sends.
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, q := range queries {
		_ = enc.Encode(q)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, caddyBin, "robots", "check", "--config", filepath.Join(s.dir, "Caddyfile"), "-H", "Accept: */*", "--batch")
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("check --batch: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "check: robots.txt: the site's own (no robots line)") || !strings.Contains(stderr.String(), "check assumes: the requests come from 192.0.2.1") {
		t.Errorf("check does not say where its rules came from and what it assumed:\n%s", stderr.String())
	}
	type result struct {
		URL     string `json:"url"`
		Allowed bool   `json:"allowed"`
		Reason  string `json:"reason"`
		Class   string `json:"class"`
		Group   string `json:"group"`
		Line    int    `json:"line"`
		Rule    string `json:"rule"`
		Error   string `json:"error"`
	}
	var results []result
	for l := range strings.SplitSeq(strings.TrimSpace(stdout.String()), "\n") {
		var r result
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("check --batch line %q: %v", l, err)
		}
		results = append(results, r)
	}
	if len(results) != len(queries) {
		t.Fatalf("check answered %d of %d queries:\n%s", len(results), len(queries), stdout.String())
	}

	refusals := 0
	for i, q := range queries {
		c, h, e := results[i], handler[i], logged[q.ip]
		where := fmt.Sprintf("%s for %q", strings.TrimPrefix(q.URL, s.front), q.UA)
		if c.Error != "" || e == nil {
			t.Errorf("%s: check error %q, logged %v", where, c.Error, e != nil)
			continue
		}
		refused := h.status == 403 || h.status == 429
		if c.Allowed == refused {
			t.Errorf("%s: check allowed %v (%s), the handler answered %d %s", where, c.Allowed, c.Reason, h.status, h.header["x-robots-guard"])
		}
		if refused {
			refusals++
		}
		if strings.Contains(q.UA, "Gecko/20250101") && c.Class != "poser" {
			t.Errorf("%s: class %s, want poser (a Gecko token no Firefox writes)", where, c.Class)
		}
		line, _ := e["rule_line"].(float64)
		rule, _ := e["rule"].(string)
		reason, _ := e["reason"].(string)
		class, _ := e["class"].(string)
		group, _ := e["group"].(string)
		if c.Reason != reason || c.Class != class || c.Group != group || c.Line != int(line) || c.Rule != rule {
			t.Errorf("%s:\n check   reason %q class %s group %q line %d %q\n handler reason %q class %s group %q line %d %q",
				where, c.Reason, c.Class, c.Group, c.Line, c.Rule, reason, class, group, int(line), rule)
		}
		if named := h.header["x-robots-guard-rule"]; refused && named != "" && named != fmt.Sprintf("robots.txt line %d: %s", c.Line, c.Rule) {
			t.Errorf("%s: the refusal names %q, check line %d: %s", where, named, c.Line, c.Rule)
		}
	}
	// The matrix holds every kind of answer.
	if refusals < 60 || refusals > len(queries)-60 {
		t.Errorf("%d refusals of %d queries: the matrix does not test both answers", refusals, len(queries))
	}
	t.Logf("%d queries (%d User-Agents x %d paths), %d refused; check and the handler agree on each", len(queries), len(uas), len(paths), refusals)
}
