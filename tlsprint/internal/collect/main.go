// Command collect makes tlsprint's table of TLS stacks (stacks.tsv).
//
//	go run ./tlsprint/internal/collect -observe   # drive this machine's clients, add them to testdata/observed.tsv
//	go run ./tlsprint/internal/collect            # write ../../stacks.tsv from testdata/*.tsv
//
// -observe runs an HTTPS server on loopback (HTTP/1.1 and HTTP/2 over TCP,
// HTTP/3 over QUIC on the same port) that records every ClientHello, and
// drives each real client installed here (internal/tlsclients: Chromium,
// Firefox ESR, curl, wget, gnutls-cli, Python's urllib, requests, httpx and
// aiohttp, Scrapy, Node, Java, Go), each twice on new connections so that
// resumed sessions show too. Run it in a network namespace of its own
// (unshare -n), where the browsers reach nothing else.
//
// The table is then made from what was observed and from public data for
// what cannot run here, each kept in testdata with its source:
// curl-impersonate.tsv (the ClientHellos of Chrome, Edge, Firefox and
// Safari in lwthiker/curl-impersonate's tests/signatures, converted by
// curlimpersonate.py) and foxio.tsv (rows of FoxIO's ja4plus-mapping.csv).
// Every row keeps its sources; a browser engine also gets a row for each
// cipher set (more than 3 ciphers) that only it sends, so that its next
// release is still known. TestGenerated checks that stacks.tsv is what
// this makes of the committed inputs.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/robotsguard/robotsguard/internal/stacktable"
	"github.com/robotsguard/robotsguard/internal/tlsclients"
	"github.com/robotsguard/robotsguard/tlsprint"
)

func main() {
	observe := flag.Bool("observe", false, "drive the clients installed here and write testdata/observed.tsv")
	goReleases := flag.String("go", "", "with -observe, other Go releases to drive too, comma-separated (go1.21.0,go1.24.0: GOTOOLCHAIN fetches each)")
	dir := flag.String("dir", "tlsprint/internal/collect", "the directory of this command (its testdata)")
	flag.Parse()
	if *observe {
		var rels []string
		if *goReleases != "" {
			rels = strings.Split(*goReleases, ",")
		}
		if err := observeClients(filepath.Join(*dir, "testdata", "observed.tsv"), rels); err != nil {
			log.Fatal(err)
		}
	}
	table, err := generate(filepath.Join(*dir, "testdata"))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*dir, "..", "..", "stacks.tsv"), []byte(table), 0o644); err != nil {
		log.Fatal(err)
	}
	families, err := generateFamilies(filepath.Join(*dir, "testdata"))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*dir, "..", "..", "families.tsv"), []byte(families), 0o644); err != nil {
		log.Fatal(err)
	}
}

// hello is one recorded ClientHello: its JA4, JA4_ro and the whole hello
// (tlsprint.Hello's text, GREASE values included).
type hello struct{ client, transport, ja4, raw, full string }

// observeClients drives every available client, and the variants, and
// writes what each sent.
func observeClients(out string, goReleases []string) error {
	tmp, err := os.MkdirTemp("", "tlsprint-collect")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ca, err := tlsclients.NewCA(tmp)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var label string
	var seen []hello
	cfg := ca.TLSConfig()
	cfg.NextProtos = []string{"h2", "http/1.1"}
	cfg.GetConfigForClient = func(info *tls.ClientHelloInfo) (*tls.Config, error) {
		h := tlsprint.FromClientHello(info)
		t := "tcp"
		if h.QUIC {
			t = "quic"
		}
		mu.Lock()
		seen = append(seen, hello{label, t, h.JA4(), h.Raw(true), h.String()})
		mu.Unlock()
		return nil, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>tlsprint</title><p>hello")
	})
	srv := &http.Server{Handler: handler, TLSConfig: cfg}
	srv.SetKeepAlivesEnabled(false) // a new connection, and hello, for each request: resumed sessions show
	go srv.ServeTLS(ln, "", "")
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	udp, err := net.ListenPacket("udp", fmt.Sprintf(":%d", port)) // localhost may be ::1 first
	if err != nil {
		return err
	}
	h3 := &http3.Server{Handler: handler, TLSConfig: http3.ConfigureTLSConfig(cfg)}
	go h3.Serve(udp)
	defer h3.Close()
	url := fmt.Sprintf("https://localhost:%d/", port)
	versions := map[string]string{} // client -> version, of this run
	ctx := context.Background()
	setLabel := func(name, version string) {
		mu.Lock()
		label = name + "\t" + version
		mu.Unlock()
	}
	for _, c := range tlsclients.Clients {
		if !c.Available() {
			log.Printf("%s: not installed, skipped", c.Name)
			continue
		}
		v := c.Version(ctx)
		versions[c.Name+"\t"+v] = v
		for _, q := range []bool{false, true} {
			if q && !c.H3 {
				continue
			}
			setLabel(c.Name, v)
			d, _ := os.MkdirTemp(tmp, c.Name)
			if err := c.Run(ctx, ca, d, url, "tlsprint-collect/1.0", q); err != nil {
				log.Printf("%s (h3 %v): %v", c.Name, q, err)
			}
		}
	}
	for _, c := range variants(goReleases) {
		if _, err := exec.LookPath(c.tool); c.tool != "" && err != nil {
			log.Printf("%s: %s not installed, skipped", c.name, c.tool)
			continue
		}
		v := c.version(ctx)
		versions[c.name+"\t"+v] = v
		setLabel(c.name, v)
		d, _ := os.MkdirTemp(tmp, c.name)
		rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		if err := c.run(rctx, ca, d, url, "tlsprint-collect/1.0"); err != nil {
			log.Printf("%s %s: %v", c.name, v, err)
		}
		cancel()
	}
	var b strings.Builder
	b.WriteString("# ClientHellos of the real clients of this machine, by go run ./tlsprint/internal/collect -observe\n" +
		"# client\tversion\ttransport\tJA4\tJA4_ro\thello (tlsprint.Hello's text, GREASE kept; - where an older run kept none)\n")
	done := map[hello]bool{}
	for _, h := range seen {
		if h.client == "" || done[h] {
			continue
		}
		done[h] = true
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", h.client, h.transport, h.ja4, h.raw, h.full)
	}
	// Keep what earlier runs saw of other versions (another machine's
	// Chromium, an older curl): the next machine may have either.
	if err := stacktable.ReadFile(out, 6, func(f []string) error {
		if _, now := versions[f[0]+"\t"+f[1]]; !now {
			b.WriteString(strings.Join(f, "\t") + "\n")
		}
		return nil
	}); err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}
