package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// netns is a network namespace of a test's own (unshare -n): a loopback of
// its own, where the test adds the addresses its clients and servers
// need (a NAT64 address, a public address for a key directory) without
// touching the machine's network, and, with a resolv.conf, a mount
// namespace where /etc/resolv.conf is that file. The real binary and curl
// run inside it through nsenter. It needs root and util-linux.
type netns struct {
	pid    int
	mounts bool
	dir    string
}

// newNetns starts a namespace with loopback up; a non-empty resolv is the
// resolv.conf of the processes started in it, and hosts, when given, their
// /etc/hosts.
func newNetns(t *testing.T, resolv string, hosts ...string) *netns {
	t.Helper()
	need(t, "curl", "unshare", "nsenter", "ip")
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	n := &netns{dir: t.TempDir(), mounts: resolv != "" || len(hosts) > 0}
	ready := filepath.Join(n.dir, "ready")
	script := "ip link set lo up && "
	args := []string{"-n"}
	if n.mounts {
		conf := filepath.Join(n.dir, "resolv.conf")
		if err := os.WriteFile(conf, []byte(resolv), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-m", "--propagation", "private")
		if resolv != "" {
			script += "mount --bind " + conf + " /etc/resolv.conf && "
		}
		if len(hosts) > 0 {
			file := filepath.Join(n.dir, "hosts")
			if err := os.WriteFile(file, []byte(strings.Join(hosts, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			script += "mount --bind " + file + " /etc/hosts && "
		}
	}
	script += "touch " + ready + " && exec sleep 3600"
	holder := exec.Command("unshare", append(args, "sh", "-c", script)...)
	var out bytes.Buffer
	holder.Stdout, holder.Stderr = &out, &out
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the namespace did not come up: %s", out.String())
		}
	}
	n.pid = holder.Process.Pid
	return n
}

// cmd returns a command that runs inside the namespace.
func (n *netns) cmd(name string, args ...string) *exec.Cmd {
	ns := []string{"-t", strconv.Itoa(n.pid), "-n"}
	if n.mounts {
		ns = append(ns, "-m")
	}
	return exec.Command("nsenter", append(append(ns, "--", name), args...)...)
}

// addAddr adds an address (with its prefix length) to the namespace's
// loopback.
func (n *netns) addAddr(t *testing.T, cidr string) {
	t.Helper()
	args := []string{"addr", "add", cidr, "dev", "lo"}
	if strings.Contains(cidr, ":") {
		args = []string{"-6", "addr", "add", cidr, "dev", "lo", "nodad"}
	}
	if out, err := n.cmd("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %v: %v: %s", args, err, out)
	}
}

// nsServer is the real binary running in a namespace.
type nsServer struct {
	ns        *netns
	base      string // http://address:port of the site
	moduleLog string
	output    *syncBuffer
}

// startIn runs the binary in n with the Caddyfile cfg, in which LOG stands
// for the module log's path, and waits until base answers /robots.txt.
// env is added to the binary's environment.
func startIn(t *testing.T, n *netns, base, cfg string, env ...string) *nsServer {
	t.Helper()
	s := &nsServer{ns: n, base: base, moduleLog: filepath.Join(n.dir, "robots_guard.log"), output: &syncBuffer{}}
	path := filepath.Join(n.dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(cfg, "LOG", s.moduleLog)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := n.cmd(caddyBin, "run", "--config", path, "--adapter", "caddyfile")
	cmd.Dir, cmd.Stdout, cmd.Stderr = n.dir, s.output, s.output
	cmd.Env = append(os.Environ(), env...)
	startProcess(t, cmd, "caddy", s.output, 5*time.Second)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if out, err := n.cmd("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", base+"/robots.txt").Output(); err == nil && string(out) == "200" {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("caddy did not start in the namespace:\n%s", s.output.String())
		}
	}
}

// curl makes one request from the address from (curl --interface) inside
// the namespace and returns the status, the X-Robots-Guard header and the
// body.
func (s *nsServer) curl(t *testing.T, from, path, ua string, headers ...string) (int, string, string) {
	t.Helper()
	args := []string{"-s", "--path-as-is", "--interface", from, "-A", ua, "-D", "-", "-o", "-", "--max-time", "10"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	out, err := s.ns.cmd("curl", append(args, s.base+path)...).Output()
	if err != nil {
		t.Fatalf("curl %s from %s: %v", path, from, err)
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

// entries reads the module's JSON log.
func (s *nsServer) entries(t *testing.T) []map[string]any {
	t.Helper()
	return (&server{moduleLog: s.moduleLog}).moduleEntries(t)
}

// nsConfig is the Caddyfile of a site at addr:port in a namespace, with
// robots_guard's robots.txt at robots (written by the test), a trap and
// the options guard, answering "page <path>".
func nsConfig(addr, port, robots, guard, extra string) string {
	host := addr
	if strings.Contains(addr, ":") {
		host = "[" + addr + "]"
	}
	return fmt.Sprintf(`{
	admin off
	auto_https off
	log robots_guard {
		output file LOG
		format json
		include http.handlers.robots_guard
	}
}
http://%s:%s {
	bind %s
	robots_guard {
		robots %s
		trap /trap/
		log_repeats 0
		%s
	}
	respond "page {http.request.uri.path}"
}
%s
`, host, port, addr, robots, guard, extra)
}

// writeFile writes a file in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNAT64Client (issue 29, item 11): with the real binary listening on
// IPv6, clients connect from two addresses of the NAT64 well-known prefix
// (64:ff9b::192.0.2.1 and ::192.0.2.2, one /64): they are two IPv4
// clients. The first walks into the trap and is blocked; the second, in
// the same /64, is served. (Before, the block was the /64's: every IPv4
// client of the translator.)
func TestNAT64Client(t *testing.T) {
	n := newNetns(t, "")
	for _, a := range []string{"fd00::1/128", "64:ff9b::c000:201/128", "64:ff9b::c000:202/128"} {
		n.addAddr(t, a)
	}
	robots := writeFile(t, n.dir, "robots.txt", "User-agent: *\nDisallow: /private/\n")
	s := startIn(t, n, "http://[fd00::1]:8000", nsConfig("fd00::1", "8000", robots, "verify off", ""))
	const first, second = "64:ff9b::c000:201", "64:ff9b::c000:202"
	if status, guard, _ := s.curl(t, first, "/trap/x", wbaChrome); status != 403 || guard != "blocked_client" {
		t.Errorf("trap: %d %s", status, guard)
	}
	if status, guard, _ := s.curl(t, first, "/", wbaChrome); status != 403 || guard != "blocked_client" {
		t.Errorf("the trapped client: %d %s", status, guard)
	}
	if status, guard, body := s.curl(t, second, "/", wbaChrome); status != 200 || body != "page /" {
		t.Errorf("another IPv4 client behind the translator: %d %s %q", status, guard, body)
	}
	time.Sleep(200 * time.Millisecond)
	found := false
	for _, e := range s.entries(t) {
		if e["reason"] == "trap" {
			found = true
			t.Logf("trap decision: client_ip %v", e["client_ip"])
		}
	}
	if !found {
		t.Error("no trap decision logged")
	}
}
