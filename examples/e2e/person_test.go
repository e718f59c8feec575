package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRefusalPersonCanRead (issue 28): a person whose address is blocked
// (a trap hit from it) gets a short HTML page that says what happened, for
// how long, and that the site's operator can lift it, at once (no tarpit,
// even with one configured); a bot from the same address gets the usual
// empty refusal.
func TestRefusalPersonCanRead(t *testing.T) {
	need(t, "curl")
	s := start(t, options{trustProxy: true, guard: "tarpit 5s"})
	const ip = "192.0.2.66"
	if code, _ := get(t, s.front, "/private-archive/x.html", ip, "TrapBot/1.0"); code != 403 {
		t.Fatalf("trap hit: %d", code)
	}
	out, err := exec.Command("curl", "-s", "-A", firefox, "-H", "X-Forwarded-For: "+ip, "-D", "-", "-w", "\n%{time_total}", "--max-time", "10", s.front+"/about.html").Output()
	if err != nil {
		t.Fatalf("curl: %v", err)
	}
	head, body, _ := strings.Cut(string(out), "\r\n\r\n")
	t.Logf("the person's refusal:\n%s\n%s", head, body)
	if !strings.HasPrefix(head, "HTTP/1.1 403") || !strings.Contains(head, "Content-Type: text/html; charset=utf-8") {
		t.Errorf("status or Content-Type: %s", head)
	}
	for _, want := range []string{"<title>Access paused</title>", "testing robots", "The block ends in about 1", "operator can lift the block"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	if i := strings.LastIndex(body, "\n"); i >= 0 && body[i+1:] >= "1" && !strings.HasPrefix(body[i+1:], "0.") {
		t.Errorf("the person waited %ss (tarpit?)", body[i+1:])
	}
	// A bot from the address: the empty refusal.
	out, _ = exec.Command("curl", "-s", "-A", "TrapBot/1.0", "-H", "X-Forwarded-For: "+ip, "--max-time", "10", s.front+"/about.html").Output()
	if len(out) != 0 {
		t.Errorf("the bot's refusal has a body: %q", out)
	}
}
