// Package redistest starts a real redis-server (or valkey-server) for
// tests: on a free loopback port, in a temporary folder, without
// persistence. Tests that need one skip, saying why, when the binary is not
// installed, unless ROBOTSGUARD_REQUIRE_REDIS=1 (as CI sets it), which
// turns the skip into a failure. ROBOTSGUARD_REDIS_SERVER names another
// binary (valkey-server).
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	// Addr is its address, 127.0.0.1:PORT.
	Addr string
	// URL is redis://Addr.
	URL string
	// Binary is the server binary.
	Binary string

	t     testing.TB
	dir   string
	extra []string // more arguments for the server
	mu    sync.Mutex
	cmd   *exec.Cmd
}

// Binary returns the server binary to run, or "" when none is installed.
func Binary() string {
	if b := os.Getenv("ROBOTSGUARD_REDIS_SERVER"); b != "" {
		return b
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p
	}
	return ""
}

// Need skips the test when no redis-server is installed, or fails it when
// ROBOTSGUARD_REQUIRE_REDIS=1.
func Need(t testing.TB) string {
	t.Helper()
	b := Binary()
	if b == "" {
		if os.Getenv("ROBOTSGUARD_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server is not installed, and ROBOTSGUARD_REQUIRE_REDIS=1 (apt-get install redis-server)")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server); set ROBOTSGUARD_REQUIRE_REDIS=1 to fail instead")
	}
	return b
}

// Start starts a server for the test; it is stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t)
}

func start(t testing.TB, extra ...string) *Server {
	t.Helper()
	b := Need(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &Server{Addr: addr, URL: "redis://" + addr, Binary: b, t: t, dir: t.TempDir(), extra: extra}
	s.Restart()
	t.Cleanup(s.Kill)
	return s
}

// Restart starts the server again (after Kill) on the same port, empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	_, port, _ := net.SplitHostPort(s.Addr)
	args := append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--logfile", filepath.Join(s.dir, "server.log"), "--daemonize", "no"}, s.extra...)
	cmd := exec.Command(s.Binary, args...)
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting %s: %v", s.Binary, err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(20 * time.Second)
	for {
		if reply, err := s.do("PING"); err == nil && reply == "+PONG" {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			s.t.Fatalf("%s did not answer on %s:\n%s", s.Binary, s.Addr, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill stops the server at once (SIGKILL), as a crash would.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Do sends one inline command and returns the first line of the reply
// (e.g. "+PONG", ":42", "$5"), for checks that should not go through the
// client under test.
func (s *Server) Do(args ...string) (string, error) { return s.do(args...) }

func (s *Server) do(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err
}

// Version returns the server's INFO server version line, e.g.
// "redis_version:7.0.15".
func (s *Server) Version() string {
	out, err := exec.Command(s.Binary, "--version").Output()
	if err != nil {
		return s.Binary
	}
	return strings.TrimSpace(string(out))
}

// StartCluster starts a cluster of n primaries (no replicas), its slots
// spread by redis-cli --cluster create, and returns its nodes and a
// redis+cluster:// URL. It skips (or fails, as Need) without redis-cli.
func StartCluster(t testing.TB, n int) ([]*Server, string) {
	t.Helper()
	Need(t)
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		if os.Getenv("ROBOTSGUARD_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-cli is not installed (apt-get install redis-tools)")
		}
		t.Skip("redis-cli is not installed (apt-get install redis-tools)")
	}
	var nodes []*Server
	var addrs []string
	for range n {
		s := start(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
		nodes = append(nodes, s)
		addrs = append(addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range nodes {
		for {
			out, _ := exec.Command(cli, "-h", "127.0.0.1", "-p", strings.Split(s.Addr, ":")[1], "cluster", "info").Output()
			if strings.Contains(string(out), "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the cluster is not ok on %s:\n%s", s.Addr, out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	url := "redis+cluster://" + addrs[0] + "?addr=" + strings.Join(addrs[1:], "&addr=")
	return nodes, url
}
