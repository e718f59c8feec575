// Command collect makes framing's table of HTTP stacks (stacks.tsv).
//
//	go run ./framing/internal/collect -observe   # drive this machine's clients, add them to testdata/observed.tsv
//	go run ./framing/internal/collect            # write ../../stacks.tsv from testdata/*.tsv
//
// -observe runs an HTTPS server on loopback (HTTP/1.1 and HTTP/2 over TCP
// through framing.Listener, HTTP/3 over QUIC on the same port) that
// records the framing fingerprint of every connection's first request,
// and drives each real client installed here over each HTTP version it
// speaks: Chromium and Firefox ESR (h1, h2, h3) loading a page with an
// image, a style sheet and a script; curl, wget, Python's urllib,
// requests, httpx (h1 and h2) and aiohttp, Scrapy, Node (h1 and h2), Java
// and Go (h1 and h2), and the uTLS client (Chrome's hello, Go's HTTP),
// each with a Chrome User-Agent, and curl, Go and uTLS also with all of
// Chrome's navigation headers. Run it in a network namespace of its own
// (unshare -n), where the browsers reach nothing else.
//
// The table is then made from what was observed (see generate.go).
// TestGenerated checks that stacks.tsv is what this makes of the
// committed inputs.
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
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/robotsguard/robotsguard/framing"
	"github.com/robotsguard/robotsguard/framing/internal/testserver"
	"github.com/robotsguard/robotsguard/internal/stacktable"
	"github.com/robotsguard/robotsguard/internal/tlsclients"
)

func main() {
	observe := flag.Bool("observe", false, "drive the clients installed here and write testdata/observed.tsv")
	only := flag.String("only", "", "observe only these clients (comma-separated)")
	dir := flag.String("dir", "framing/internal/collect", "the directory of this command (its testdata)")
	flag.Parse()
	if *observe {
		if err := observeClients(filepath.Join(*dir, "testdata", "observed.tsv"), *only); err != nil {
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
}

// seen is one connection's first request, as the server saw it.
type seen struct{ client, proto, print, path string }

// recorder is the observing server's record.
type recorder struct {
	mu    sync.Mutex
	label string
	got   []seen
	done  map[string]bool // connections (their remote addresses) recorded
}

func (r *recorder) setLabel(l string) {
	r.mu.Lock()
	r.label = l
	r.mu.Unlock()
}

// chromeUA is the desktop User-Agent the libraries send.
var chromeUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + chromiumMajor() + ".0.0.0 Safari/537.36"

// quicGoVersion is the quic-go module's version this binary was built with.
func quicGoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/quic-go/quic-go" {
				return d.Version
			}
		}
	}
	return "(unknown)"
}

func chromiumMajor() string {
	out, _ := exec.Command("chromium", "--version").Output()
	if m := regexp.MustCompile(`Chromium (\d+)\.`).FindSubmatch(out); m != nil {
		return string(m[1])
	}
	return "156"
}

// chromeHeaders are a navigation's other headers, in Chromium's order
// over HTTP/2 (as this tool observed it).
var chromeHeaders = [][2]string{
	{"sec-ch-ua", `"Chromium";v="` + chromiumMajor() + `", "Not-A.Brand";v="24"`}, {"sec-ch-ua-mobile", "?0"}, {"sec-ch-ua-platform", `"Linux"`},
	{"upgrade-insecure-requests", "1"},
	{"accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"},
	{"sec-fetch-site", "none"}, {"sec-fetch-mode", "navigate"}, {"sec-fetch-user", "?1"}, {"sec-fetch-dest", "document"},
	{"accept-encoding", "gzip, deflate, br, zstd"}, {"accept-language", "en-US,en;q=0.9"}, {"priority", "u=0, i"},
}

// page is the observing site's page: an image, a style sheet and a
// script, so that a browser opens what connections it opens for them.
const page = `<!doctype html><html><head><title>framing</title><link rel="stylesheet" href="/s.css"><script src="/s.js"></script></head>
<body><h1>framing</h1><img src="/i.svg" width="8" height="8"><img src="/j.svg" width="8" height="8"></body></html>`

func observeClients(out, only string) error {
	tmp, err := os.MkdirTemp("", "framing-collect")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ca, err := tlsclients.NewCA(tmp)
	if err != nil {
		return err
	}
	rec := &recorder{done: map[string]bool{}}
	conns := framing.NewConns(4096)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(conns, w, r)
		switch r.URL.Path {
		case "/s.css":
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, "h1 { color: rgb(1, 2, 3) }")
		case "/s.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, "document.title += '.';")
		case "/i.svg", "/j.svg":
			w.Header().Set("Content-Type", "image/svg+xml")
			fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>`)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, page)
		}
	})
	cfg := ca.TLSConfig()
	cfg.NextProtos = []string{"h2", "http/1.1"}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := testserver.New(handler)
	go srv.Serve(&framing.Listener{Listener: tls.NewListener(ln, cfg), Conns: conns})
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
	versions := map[string]string{}
	ctx := context.Background()
	want := func(name string) bool { return only == "" || slices.Contains(strings.Split(only, ","), name) }
	for _, b := range browsers {
		if !want(b.name) {
			continue
		}
		if _, err := exec.LookPath(b.tool); err != nil {
			log.Printf("%s: not installed, skipped", b.name)
			continue
		}
		versions[b.name] = b.version()
		for _, proto := range []string{"h1", "h2", "h3"} {
			rec.setLabel(b.name + "\t" + proto)
			d, _ := os.MkdirTemp(tmp, b.name)
			if err := b.run(ctx, ca, d, url, proto); err != nil {
				log.Printf("%s %s: %v", b.name, proto, err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	for _, c := range append(slices.Clone(tlsclients.Clients), tlsclients.UTLS) {
		if !want(c.Name) || len(c.Protos) == 0 {
			continue
		}
		if !c.Available() {
			log.Printf("%s: not installed, skipped", c.Name)
			continue
		}
		versions[c.Name] = c.Version(ctx)
		for _, proto := range c.Protos {
			for _, full := range []bool{false, true} {
				if full && c.Name != "curl" && c.Name != "go" && c.Name != "utls" {
					continue
				}
				r := tlsclients.Request{URLs: []string{url, url + "s.css"}, UA: chromeUA, Proto: proto}
				label := proto
				if full {
					r.Header, label = chromeHeaders, proto+" Chrome's headers"
				}
				rec.setLabel(c.Name + "\t" + label)
				d, _ := os.MkdirTemp(tmp, c.Name)
				if _, err := c.Fetch(ctx, ca, d, r); err != nil {
					log.Printf("%s %s: %v", c.Name, label, err)
				}
			}
		}
	}
	if want("quic-go") {
		// quic-go's own HTTP/3 client (the TLS table's "quic-go" stack).
		versions["quic-go"] = "quic-go " + quicGoVersion()
		rec.setLabel("quic-go\th3")
		tr := &http3.Transport{TLSClientConfig: ca.TLSClientConfig()}
		for _, u := range []string{url, url + "s.css"} {
			req, _ := http.NewRequest("GET", u, nil)
			req.Header.Set("User-Agent", chromeUA)
			if resp, err := tr.RoundTrip(req); err != nil {
				log.Printf("quic-go h3: %v", err)
			} else {
				resp.Body.Close()
			}
		}
		tr.Close()
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var b strings.Builder
	b.WriteString("# Framing fingerprints of the real clients of this machine, by go run ./framing/internal/collect -observe\n# client\tversion\tproto (and how it was run)\tfirst request\tfingerprint\n")
	now := map[string]bool{}
	dup := map[string]bool{}
	for _, s := range rec.got {
		client, how, _ := strings.Cut(s.client, "\t")
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\n", client, versions[client], how, s.path, s.print)
		if dup[line] {
			continue
		}
		dup[line] = true
		now[client+"\t"+versions[client]] = true
		b.WriteString(line)
	}
	// Keep what earlier runs saw of other versions.
	if err := stacktable.ReadFile(out, 5, func(f []string) error {
		if !now[f[0]+"\t"+f[1]] {
			b.WriteString(strings.Join(f, "\t") + "\n")
		}
		return nil
	}); err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

// record keeps the fingerprint of a connection's first request.
func (rec *recorder) record(conns *framing.Conns, w http.ResponseWriter, r *http.Request) {
	key := r.RemoteAddr
	var p *framing.Print
	proto := "h1"
	switch r.ProtoMajor {
	case 2:
		proto = "h2"
		fallthrough
	case 1:
		p = conns.Get(r.RemoteAddr)
	case 3:
		proto, key = "h3", "quic "+key
		s, ok := w.(http3.Settingser)
		if !ok {
			return
		}
		select {
		case <-s.ReceivedSettings():
		case <-time.After(2 * time.Second):
			log.Printf("%s: no HTTP/3 SETTINGS within 2 s", r.RemoteAddr)
			return
		}
		st := s.Settings()
		p = conns.H3(r.RemoteAddr, st.Other, st.EnableExtendedConnect, st.EnableDatagrams)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.done[key] {
		return
	}
	rec.done[key] = true
	text := "-"
	if p != nil {
		text = p.Text
	}
	if rec.label == "" {
		return
	}
	client, how, _ := strings.Cut(rec.label, "\t")
	if !strings.HasPrefix(how, proto) {
		log.Printf("%s %s: a request over %s", client, how, proto)
	}
	rec.got = append(rec.got, seen{client: rec.label, proto: proto, print: text, path: r.URL.Path})
}
