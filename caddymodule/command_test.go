package caddymodule

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/uaclass"
)

const cliRobots = "User-agent: *\nDisallow: /private\nAllow: /private/ok\n\nUser-agent: Googlebot\nDisallow: /nogoogle\n"

// TestCheckURLs: one line per URL with the verdict and the deciding rule;
// a bare product token and a whole User-Agent both work.
func TestCheckURLs(t *testing.T) {
	var out bytes.Buffer
	if err := checkURLs(&out, []byte(cliRobots), "Googlebot/2.1", []string{"https://example.com/nogoogle/x", "https://example.com/private"}); err != nil {
		t.Fatal(err)
	}
	want := "disallowed\thttps://example.com/nogoogle/x\t(group googlebot; line 6: Disallow: /nogoogle)\n" +
		"allowed\thttps://example.com/private\t(group googlebot; no rule matches)\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	if err := checkURLs(&out, []byte(cliRobots), "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)", []string{"http://e.com/private/ok?x=1", "http://e.com/private/a"}); err != nil {
		t.Fatal(err)
	}
	want = "allowed\thttp://e.com/private/ok?x=1\t(group *; line 3: Allow: /private/ok)\n" +
		"disallowed\thttp://e.com/private/a\t(group *; line 2: Disallow: /private)\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestCheckCanonical: check shows the canonical URL when the file has
// canonicalisation fields.
func TestCheckCanonical(t *testing.T) {
	var out bytes.Buffer
	robots := "Domain: https://example.com/\nUser-agent: *\nDisallow: /private\nQueryParam: -sid\n"
	if err := checkURLs(&out, []byte(robots), "Googlebot/2.1", []string{"http://www.example.com/page?sid=1&a=2"}); err != nil {
		t.Fatal(err)
	}
	if want := "allowed\thttp://www.example.com/page?sid=1&a=2\t(group *; no rule matches; canonical https://example.com/page?a=2)\n"; out.String() != want {
		t.Errorf("got %q\nwant %q", out.String(), want)
	}
}

// TestCheckBatch: JSON Lines in, one object per line out, in order; a bad
// line gets an error object and the run goes on.
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
		line("User-agent: *\nDisallow: /x$\n", "curl/8.0", "https://e.com/xy"),
	}, "\n")
	var out bytes.Buffer
	if err := checkBatch(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`{"url":"https://e.com/nogoogle","allowed":false,"group":"googlebot","line":6,"rule":"Disallow: /nogoogle"}`,
		`{"error":"invalid JSON: invalid character 'o' in literal null (expecting 'u')"}`,
		`{"error":"want an object with \"robots\", \"ua\" and \"url\""}`,
		`{"url":"https://e.com/x","allowed":false,"group":"*","line":2,"rule":"Disallow: /x$"}`,
		`{"url":"https://e.com/xy","allowed":true,"group":"*","line":0}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(lines), out.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d: got %s\nwant %s", i+1, lines[i], want[i])
		}
	}
}

// TestLintCommand: FILE:LINE: severity: message, exit status 1 on errors.
func TestLintCommand(t *testing.T) {
	var out bytes.Buffer
	if err := lint(&out, "robots.txt", []byte("User-agent: *\nDiasllow: /x\n")); err != nil {
		t.Errorf("warnings only: %v", err)
	}
	if got := out.String(); got != "robots.txt:2: warning: misspelled field \"Diasllow\" read as \"Disallow\"\n" {
		t.Errorf("got %q", got)
	}
	out.Reset()
	err := lint(&out, "r.txt", []byte("<html><body>404</body></html>\n"))
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Errorf("error file: %v", err)
	}
	if !strings.HasPrefix(out.String(), "r.txt:1: error: content looks like an HTML") {
		t.Errorf("got %q", out.String())
	}
}

// TestClassifyCommand: one JSON object per User-Agent, from arguments or
// standard input.
func TestClassifyCommand(t *testing.T) {
	var out bytes.Buffer
	if err := classify(strings.NewReader("curl/8.5.0\n\nMozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0\n"), &out, nil); err != nil {
		t.Fatal(err)
	}
	want := `{"ua":"curl/8.5.0","class":"script","tokens":["curl"],"bot":"curl"}
{"ua":"","class":"unknown","tokens":[]}
{"ua":"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0","class":"browser","tokens":[]}
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	if err := classify(nil, &out, []string{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"}); err != nil {
		t.Fatal(err)
	}
	if want := `{"ua":"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot","class":"ai","tokens":["chatgpt-user"],"bot":"ChatGPT-User","operator":"OpenAI","verify":"ranges","user_triggered":true}` + "\n"; out.String() != want {
		t.Errorf("got %s", out.String())
	}
}

// TestMetrics: collectors register on a fresh registry, are reused by a
// second handler of the same config, and are nil-safe.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := newMetrics(reg) // a second handler in the same config
	if err != nil {
		t.Fatalf("second registration: %v", err)
	}
	d := enforce.Decision{Action: enforce.Deny, Reason: enforce.ReasonDisallowed}
	m.decision(&d, uaclass.AI)
	m2.decision(&d, uaclass.AI)
	m.decision(&enforce.Decision{}, uaclass.Browser)
	m.decision(&enforce.Decision{Action: enforce.Tarpit, Reason: enforce.ReasonBlockedClient}, uaclass.Browser)
	m.decision(&enforce.Decision{Action: enforce.Tarpit, Reason: enforce.ReasonBlockedClient}, uaclass.Script)
	m.decision(&enforce.Decision{Action: enforce.Deny, Reason: "some_new_reason"}, uaclass.AI) // not cached
	m.reload("ok")
	m.setTracked("default", 42, 3)
	if got := testutil.ToFloat64(m.decisions.WithLabelValues("deny", "disallowed", "ai")); got != 2 {
		t.Errorf("deny/disallowed/ai = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.decisions.WithLabelValues("allow", "none", "browser")); got != 1 {
		t.Errorf("allow/none/browser = %v", got)
	}
	for _, labels := range [][]string{{"tarpit", "blocked_client", "browser"}, {"tarpit", "blocked_client", "script"}, {"deny", "some_new_reason", "ai"}} {
		if got := testutil.ToFloat64(m.decisions.WithLabelValues(labels...)); got != 1 {
			t.Errorf("%v = %v, want 1", labels, got)
		}
	}
	if got := testutil.ToFloat64(m.reloads.WithLabelValues("ok")); got != 1 {
		t.Errorf("reloads ok = %v", got)
	}
	if got := testutil.ToFloat64(m.tracked.WithLabelValues("default")); got != 42 {
		t.Errorf("tracked = %v", got)
	}
	if got := testutil.ToFloat64(m.blocked.WithLabelValues("default")); got != 3 {
		t.Errorf("blocked = %v", got)
	}
	var nilMetrics *metrics // a handler that was never provisioned
	nilMetrics.decision(&d, uaclass.AI)
	nilMetrics.reload("ok")
	nilMetrics.setTracked("x", 1, 0)
}
