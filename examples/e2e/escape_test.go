package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestReportEscapesControls (issue 29, item 12): a bot sends request
// targets and a User-Agent with raw C1 controls (U+009B, CSI: a terminal
// that reads C1 characters starts a control sequence at it) and C0 ones
// (ESC); the module logs them as sent, and `caddy robots report` (text and
// --json) and `caddy robots blocked` show them spelt out (\u009b,
// \u001b), never raw.
func TestReportEscapesControls(t *testing.T) {
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := start(t, options{admin: admin, guard: "strikes 2"})
	addr := strings.TrimPrefix(s.front, "http://")
	for _, target := range []string{"/private/\xc2\x9b2J\xc2\x9b31m.html", "/private/\x1b[2J.html", "/private/x.html"} {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write([]byte("GET " + target + " HTTP/1.1\r\nHost: " + addr + "\r\nUser-Agent: CSIBot/1.0 \xc2\x9b\r\nConnection: close\r\n\r\n"))
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		t.Logf("%q: %s", target, strings.TrimSpace(line))
	}
	raw := func(out []byte) bool {
		return bytes.Contains(out, []byte("\xc2\x9b")) || bytes.Contains(out, []byte("\x1b"))
	}
	log := readLog(t, s)
	if !strings.Contains(log, "\u009b") && !strings.Contains(log, `\u009b`) {
		t.Fatalf("the target with U+009B was not logged:\n%s", log)
	}
	for _, args := range [][]string{{"robots", "report", s.moduleLog}, {"robots", "report", "--json", s.moduleLog}, {"robots", "blocked", "--address", admin}} {
		out, err := exec.Command(caddyBin, args...).Output()
		if err != nil {
			t.Fatalf("caddy %v: %v\n%s", args, err, out)
		}
		if raw(out) {
			t.Errorf("caddy %s writes raw controls:\n%q", strings.Join(args, " "), out)
		}
		if args[1] == "report" && !bytes.Contains(out, []byte(`\u009b2J\u009b31m`)) {
			t.Errorf("caddy %s does not show the target spelt out:\n%s", strings.Join(args, " "), out)
		}
	}
}
