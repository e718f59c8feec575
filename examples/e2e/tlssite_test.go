package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/internal/tlsclients"
	rgreport "github.com/robotsguard/robotsguard/report"
)

// tlsSites is the real binary serving HTTPS sites (h1, h2, h3) on
// 127.0.0.1 and ::1, their certificate from a test CA, every decision
// logged, each connection's framing read. The one servers block lists
// both wrappers, the listener wrapper robots_guard (the framing) and the
// packet conn wrapper robots_guard_quic, as an operator with a servers
// block must: Caddy replaces the wrappers robots_guard adds with the
// block's listener_wrappers and packet_conn_wrappers, and applies only
// the first servers block that matches a server.
type tlsSites struct {
	// urls are the sites' base URLs (https://localhost:port, no slash).
	urls []string
	// decisions is the decision log, one for all sites: an entry's zone
	// ("site0", "site1", ...) names its site.
	decisions string
	// access are the sites' access logs (Caddy's, JSON: status, proto).
	access []string
	// out is what Caddy printed (its own log).
	out *syncBuffer
}

// tlsSiteOptions say what startTLSSites serves.
type tlsSiteOptions struct {
	n      int    // how many sites, each on a port and in a zone of its own; 0 for 1
	robots string // robots.txt; "" for "User-agent: *\nAllow: /\n"
	root   string // a directory file_server serves; "" for one small page at every path
	guard  string // more robots_guard options
}

// startTLSSites starts the sites. Each site's robots_guard has a zone of
// its own, so that its clients are strangers to the other sites' (their
// rates, strikes and blocks apart), as clients on other addresses are.
func startTLSSites(t *testing.T, ca *tlsclients.CA, o tlsSiteOptions) *tlsSites {
	t.Helper()
	dir := t.TempDir()
	if o.n == 0 {
		o.n = 1
	}
	if o.robots == "" {
		o.robots = "User-agent: *\nAllow: /\n"
	}
	robots := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robots, []byte(o.robots), 0o644); err != nil {
		t.Fatal(err)
	}
	handler := `respond "<!doctype html><title>ja4</title><p>hello" 200`
	if o.root != "" {
		handler = "root * " + o.root + "\n\tfile_server"
	}
	s := &tlsSites{decisions: filepath.Join(dir, "robots_guard.log")}
	var sites strings.Builder
	for i := range o.n {
		port := freePort(t)
		s.urls = append(s.urls, fmt.Sprintf("https://localhost:%d", port))
		s.access = append(s.access, filepath.Join(dir, fmt.Sprintf("access%d.log", i)))
		fmt.Fprintf(&sites, `https://localhost:%d {
	bind 127.0.0.1 [::1]
	tls %s %s
	log {
		output file %s
		format json
	}
	robots_guard {
		robots %s
		zone site%d
		verify off
		log_allowed 1
		log_repeats 0
		%s
	}
	%s
}
`, port, ca.CertFile, ca.KeyFile, s.access[i], robots, i, o.guard, handler)
	}
	cfg := fmt.Sprintf(`{
	admin off
	auto_https off
	grace_period 1s
	servers {
		protocols h1 h2 h3
		listener_wrappers {
			robots_guard
		}
		packet_conn_wrappers {
			robots_guard_quic
		}
	}
	log robots_guard {
		output file %s
		format json
		include http.handlers.robots_guard
	}
}
%s`, s.decisions, sites.String())
	cfgPath := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	cmd := exec.Command(caddyBin, "run", "--config", cfgPath, "--adapter", "caddyfile")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, out
	startProcess(t, cmd, "caddy", out, 5*time.Second)
	s.out = out
	// Ready when every site serves its robots.txt (which counts against no
	// rate).
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: ca.TLSClientConfig()}, Timeout: 2 * time.Second}
	for _, u := range s.urls {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			resp, err := client.Get(u + "/robots.txt")
			if err == nil {
				resp.Body.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("caddy did not start: %v\n%s", err, out.String())
			}
		}
	}
	return s
}

// startTLS runs one site that answers a small page at every path, under
// robots.txt "Allow: /"; it returns the site's URL and the decision log's
// path.
func startTLS(t *testing.T, ca *tlsclients.CA, guard string) (string, string) {
	t.Helper()
	s := startTLSSites(t, ca, tlsSiteOptions{guard: guard})
	return s.urls[0] + "/", s.decisions
}

// entries returns the decisions logged for site i.
func (s *tlsSites) entries(t *testing.T, i int) []rgreport.Entry {
	t.Helper()
	var out []rgreport.Entry
	for _, line := range readLines(t, s.decisions) {
		var e rgreport.Entry
		if json.Unmarshal([]byte(line), &e) == nil && e.Action != "" && e.Zone == fmt.Sprintf("site%d", i) {
			out = append(out, e)
		}
	}
	return out
}

// accessEntry is a line of Caddy's access log.
type accessEntry struct {
	Request struct {
		Proto   string              `json:"proto"`
		URI     string              `json:"uri"`
		Headers map[string][]string `json:"headers"`
	} `json:"request"`
	Status int `json:"status"`
}

// served returns site i's access log: every answer it sent.
func (s *tlsSites) served(t *testing.T, i int) []accessEntry {
	t.Helper()
	var out []accessEntry
	for _, line := range readLines(t, s.access[i]) {
		var e accessEntry
		if json.Unmarshal([]byte(line), &e) == nil && e.Status != 0 {
			out = append(out, e)
		}
	}
	return out
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(string(data), "\n")
}
