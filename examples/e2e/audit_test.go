package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestAuditURL: "caddy robots audit --url" against the real binary with
// the demo site, its trap and no allowlist: the audit reads robots.txt
// first, never requests a disallowed path or the trap, so the operator's
// address is not blocked afterwards; the hidden trap link is no finding;
// the crawl summary says what was read.
func TestAuditURL(t *testing.T) {
	need(t, "curl")
	s := start(t, options{robots: politeRobots(t)})
	const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	out, err := exec.Command(caddyBin, "robots", "audit", "--url", s.front, "--json", "--quiet").Output()
	if err != nil {
		t.Fatalf("audit: %v\n%s", err, out)
	}
	var res struct {
		Findings []struct {
			Kind, Path string
		} `json:"findings"`
		Crawl struct {
			Pages, Requests int
			Disallowed      int `json:"disallowed_links"`
			Refusals        []any
			Stopped         string
		} `json:"crawl"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var got []string
	for _, f := range res.Findings {
		got = append(got, f.Kind+" "+f.Path)
	}
	if strings.Join(got, ",") != "disallowed_linked /private/,disallowed_linked /~sam/" {
		t.Errorf("findings %q, want the two true ones (the trap is none)", got)
	}
	if len(res.Crawl.Refusals) != 0 || res.Crawl.Stopped != "" || res.Crawl.Pages < 5 || res.Crawl.Disallowed < 3 {
		t.Errorf("crawl %+v", res.Crawl)
	}
	// robots_guard saw no request for a disallowed path or the trap.
	for _, e := range s.moduleEntries(t) {
		if toks, _ := e["tokens"].([]any); len(toks) > 0 && toks[0] == "robotsguard-audit" {
			t.Errorf("robots_guard logged the audit: %v %v %v", e["uri"], e["action"], e["reason"])
		}
	}
	if code, guard, _ := curl(t, s.front, "/", firefox); code != 200 {
		t.Errorf("after the audit the operator's address gets %d %s", code, guard)
	}
	t.Logf("audit: %d pages in %d requests, %d disallowed links left alone", res.Crawl.Pages, res.Crawl.Requests, res.Crawl.Disallowed)
}
