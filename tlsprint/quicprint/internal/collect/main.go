// Command collect records the QUIC hellos of the real HTTP/3 clients of
// this machine, for quicprint's table (quic.tsv) and its tests:
//
//	go run ./tlsprint/quicprint/internal/collect   # writes testdata/observed.tsv
//
// It runs an HTTP/3 server on loopback (quic-go, as Caddy uses it) whose
// UDP socket records every datagram, and drives each client installed
// here: Chromium with QUIC forced for the site, Firefox ESR with its
// HTTP/3 testing preferences, quic-go's own HTTP/3 client (its defaults,
// and with datagrams), and ngtcp2's example client (Debian's ngtcp2-client,
// gtlsclient); aioquic when Python can import it (Debian 12 has no
// package). Each runs three times, on new connections, so that a stack
// that shuffles its parameters shows it. Each connection's first
// Initials are read with quicprint.ReadInitials. Run it in a network
// namespace of its own (unshare -n), where the browsers reach nothing else.
//
// Rows of versions not installed now are kept: the next machine may have
// them.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/robotsguard/robotsguard/internal/browserctl"
	"github.com/robotsguard/robotsguard/internal/tlsclients"
	"github.com/robotsguard/robotsguard/tlsprint/quicprint"
)

func main() {
	out := flag.String("out", "tlsprint/quicprint/internal/collect/testdata/observed.tsv", "the file to write")
	flag.Parse()
	if err := observe(*out); err != nil {
		log.Fatal(err)
	}
}

// recorder is a server's UDP socket that records the long-header
// datagrams each client connection sends, by address and Destination
// Connection ID, in the order they come.
type recorder struct {
	net.PacketConn
	mu    sync.Mutex
	conns map[string][][]byte
	order []string
}

func (r *recorder) ReadFrom(b []byte) (int, net.Addr, error) {
	n, addr, err := r.PacketConn.ReadFrom(b)
	if n > 7 && b[0]&0x80 != 0 && int(b[5]) >= 8 && n >= 6+int(b[5]) {
		k := addr.String() + "/" + fmt.Sprintf("%x", b[6:6+int(b[5])])
		r.mu.Lock()
		if _, ok := r.conns[k]; !ok {
			r.order = append(r.order, k)
		}
		if len(r.conns[k]) < 8 {
			r.conns[k] = append(r.conns[k], append([]byte(nil), b[:n]...))
		}
		r.mu.Unlock()
	}
	return n, addr, err
}

// take returns the connections recorded since the last call.
func (r *recorder) take() [][][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][][]byte
	for _, k := range r.order {
		out = append(out, r.conns[k])
	}
	r.conns, r.order = map[string][][]byte{}, nil
	return out
}

// client is one HTTP/3 client: its name (the table's family, for a row's
// check), its version, and how it fetches a URL once.
type client struct {
	name, family string
	available    func() bool
	version      func() string
	fetch        func(ctx context.Context, ca *tlsclients.CA, dir, url string) error
}

func observe(out string) error {
	tmp, err := os.MkdirTemp("", "quicprint-collect")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ca, err := tlsclients.NewCA(tmp)
	if err != nil {
		return err
	}
	udp, err := net.ListenPacket("udp", ":0") // localhost may be ::1 first
	if err != nil {
		return err
	}
	rec := &recorder{PacketConn: udp, conns: map[string][][]byte{}}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>quicprint</title><p>hello")
	})
	srv := &http3.Server{Handler: handler, TLSConfig: http3.ConfigureTLSConfig(ca.TLSConfig())}
	go srv.Serve(rec)
	defer srv.Close()
	port := udp.LocalAddr().(*net.UDPAddr).Port
	url := fmt.Sprintf("https://localhost:%d/", port)
	ctx := context.Background()
	var rows []string
	seen := map[string]bool{}
	for _, c := range clients(port) {
		if !c.available() {
			log.Printf("%s: not installed, skipped", c.name)
			continue
		}
		v := c.version()
		seen[c.name+"\t"+v] = true
		for i := range 3 {
			dir, _ := os.MkdirTemp(tmp, c.name)
			fctx, cancel := context.WithTimeout(ctx, time.Minute)
			if err := c.fetch(fctx, ca, dir, url); err != nil {
				log.Printf("%s run %d: %v", c.name, i, err)
			}
			cancel()
			time.Sleep(100 * time.Millisecond)
			for _, dgs := range rec.take() {
				p, ps, err := quicprint.ReadInitials(dgs)
				if err != nil {
					continue // a client's later Initials, to the server's connection ID
				}
				rows = append(rows, strings.Join([]string{c.name, v, p.String, p.Stack.Family, p.JA4, quicprint.FormatParams(ps)}, "\t"))
				log.Printf("%s: %s (%s)", c.name, p.String, p.Stack.Family)
			}
		}
	}
	var b strings.Builder
	b.WriteString("# QUIC hellos of the real HTTP/3 clients of this machine, by go run ./tlsprint/quicprint/internal/collect\n")
	b.WriteString("# client\tversion\tfingerprint\tstack (quic.tsv)\tJA4\ttransport parameters (id=value, in the order sent)\n")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	if f, err := os.Open(out); err == nil { // keep other versions' rows
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if f := strings.Split(l, "\t"); !strings.HasPrefix(l, "#") && len(f) == 6 && !seen[f[0]+"\t"+f[1]] {
				b.WriteString(l + "\n")
			}
		}
		f.Close()
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

func clients(port int) []*client {
	installed := func(name string) func() bool {
		return func() bool { _, err := exec.LookPath(name); return err == nil }
	}
	firstLine := func(name string, args ...string) func() string {
		return func() string {
			out, _ := exec.Command(name, args...).Output()
			l, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
			return l
		}
	}
	return []*client{
		{name: "chromium", family: "chromium", available: installed("chromium"), version: firstLine("chromium", "--version"),
			fetch: func(ctx context.Context, ca *tlsclients.CA, dir, url string) error {
				if err := tlsclients.TrustNSS(ctx, ca.CAFile, filepath.Join(dir, ".pki", "nssdb")); err != nil {
					return err
				}
				cmd := exec.CommandContext(ctx, "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
					"--user-data-dir="+filepath.Join(dir, "profile"), "--ignore-certificate-errors-spki-list="+ca.SPKI, "--dump-dom",
					"--enable-quic", fmt.Sprintf("--origin-to-force-quic-on=localhost:%d", port), url)
				cmd.Env = append(os.Environ(), "HOME="+dir)
				if out, err := cmd.CombinedOutput(); err != nil {
					return fmt.Errorf("%v: %s", err, out)
				}
				return nil
			}},
		{name: "firefox-esr", family: "firefox", available: installed("firefox-esr"), version: firstLine("firefox-esr", "--version"),
			fetch: func(ctx context.Context, ca *tlsclients.CA, dir, url string) error {
				b, err := browserctl.StartFirefox(dir, ca.CAFile, map[string]any{"network.http.http3.enable": true,
					"network.http.http3.alt-svc-mapping-for-testing":           fmt.Sprintf("localhost;h3=:%d", port),
					"network.http.http3.force-use-alt-svc-mapping-for-testing": true,
					"network.http.http3.disable_when_third_party_roots_found":  false})
				if err != nil {
					return err
				}
				defer b.Close()
				return b.Load(url)
			}},
		{name: "quic-go", family: "quic-go", available: func() bool { return true }, version: quicGoVersion, fetch: quicGoFetch(nil)},
		{name: "quic-go (datagrams)", family: "quic-go", available: func() bool { return true }, version: quicGoVersion, fetch: quicGoFetch(&quic.Config{EnableDatagrams: true})},
		{name: "ngtcp2", family: "ngtcp2", available: installed("gtlsclient"), version: firstLine("dpkg-query", "-W", "-f", "ngtcp2-client ${Version}", "ngtcp2-client"),
			fetch: func(ctx context.Context, ca *tlsclients.CA, dir, url string) error {
				// gtlsclient verifies no certificate; it prints what it got.
				cmd := exec.CommandContext(ctx, "gtlsclient", "-q", "--exit-on-all-streams-close", "127.0.0.1", fmt.Sprint(port), fmt.Sprintf("https://127.0.0.1:%d/", port))
				if out, err := cmd.CombinedOutput(); err != nil {
					return fmt.Errorf("%v: %s", err, out)
				}
				return nil
			}},
		{name: "aioquic", family: "aioquic", available: func() bool { return exec.Command("/usr/bin/python3", "-c", "import aioquic").Run() == nil },
			version: firstLine("/usr/bin/python3", "-c", "import aioquic; print('aioquic', aioquic.__version__)"),
			fetch: func(ctx context.Context, ca *tlsclients.CA, dir, url string) error {
				return fmt.Errorf("aioquic: no client driven yet")
			}},
	}
}

func quicGoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/quic-go/quic-go" {
				return "quic-go " + d.Version
			}
		}
	}
	return "quic-go"
}

// quicGoFetch fetches with quic-go's HTTP/3 client, configured with conf.
func quicGoFetch(conf *quic.Config) func(ctx context.Context, ca *tlsclients.CA, dir, url string) error {
	return func(ctx context.Context, ca *tlsclients.CA, dir, url string) error {
		rt := &http3.Transport{TLSClientConfig: ca.TLSClientConfig(), QUICConfig: conf}
		defer rt.Close()
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
}
