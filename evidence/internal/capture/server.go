package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// The site's names: a.test is the site, b.test another site (cross-site
// subresources and navigations), c.test a third one that the page's CSP
// forbids. Browsers resolve all three to the capture address.
const (
	siteA = "a.test"
	siteB = "b.test"
	siteC = "c.test"
)

// Request is one request as the site received it.
type Request struct {
	// Run names the client configuration that sent it.
	Run string `json:"run"`
	// Case names what the page asked for: "navigate", "img", "css", ...
	Case string `json:"case"`
	// Origin is how the client saw the site: "secure" (HTTPS), "loopback"
	// (plain HTTP to 127.0.0.1 or localhost) or "insecure" (plain HTTP to
	// another host).
	Origin string `json:"origin"`
	Proto  string `json:"proto"`
	Method string `json:"method"`
	URL    string `json:"url"`
	// URL is the request's URL, without the port (which changes from run
	// to run). Header is the request's header as net/http gives it
	// (canonical keys; Host is in URL).
	Header http.Header `json:"header"`
}

// site is the capture site: three listeners (HTTPS, plain HTTP on the
// capture address, plain HTTP on loopback) and what they received.
type site struct {
	ip                      string
	dir                     string // the CA and key files
	caPEM                   string // path of the CA certificate
	tlsPort, httpPort, loop int
	servers                 []*http.Server

	mu  sync.Mutex
	run string
	got []Request
}

// newSite starts the site on ip (a non-loopback address) with a fresh CA.
func newSite(ip, dir string) (*site, error) {
	s := &site{ip: ip, dir: dir}
	cert, err := s.makeCerts()
	if err != nil {
		return nil, err
	}
	listen := func(addr string) (net.Listener, int, error) {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, 0, err
		}
		return l, l.Addr().(*net.TCPAddr).Port, nil
	}
	lt, tp, err := listen(net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, err
	}
	lh, hp, err := listen(net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, err
	}
	ll, lp, err := listen("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.tlsPort, s.httpPort, s.loop = tp, hp, lp
	for _, l := range []struct {
		l      net.Listener
		secure bool
	}{{lt, true}, {lh, false}, {ll, false}} {
		srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: nil}
		s.servers = append(s.servers, srv)
		if l.secure {
			srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
			go srv.ServeTLS(l.l, "", "")
		} else {
			go srv.Serve(l.l)
		}
	}
	return s, nil
}

func (s *site) close() {
	for _, srv := range s.servers {
		srv.Close()
	}
}

// makeCerts writes a CA (ca.pem) and returns a certificate it signed for
// the site's names and addresses.
func (s *site) makeCerts() (tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "robotsguard evidence capture CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: siteA},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames:    []string{siteA, siteB, siteC, "localhost"},
		IPAddresses: []net.IP{net.ParseIP(s.ip), net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	s.caPEM = filepath.Join(s.dir, "ca.pem")
	if err := os.WriteFile(s.caPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{leafDER, caDER}, PrivateKey: key}, nil
}

// start begins a run: what arrives from now on is the run's.
func (s *site) start(run string) {
	s.mu.Lock()
	s.run = run
	s.mu.Unlock()
}

// take ends a run and returns its requests.
func (s *site) take() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.got
	s.got, s.run = nil, ""
	return got
}

// waitN waits until n requests for url have arrived in the current run, or
// d has passed.
func (s *site) waitN(rawURL string, n int, d time.Duration) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	want := u.Scheme + "://" + u.Hostname() + u.RequestURI()
	deadline := time.Now().Add(d)
	for {
		s.mu.Lock()
		k := 0
		for _, r := range s.got {
			if r.URL == want {
				k++
			}
		}
		s.mu.Unlock()
		if k >= n {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// origins returns the base URLs of the three origins the site serves, as a
// browser sees them.
func (s *site) origin(kind string, host string) string {
	switch kind {
	case "secure":
		return fmt.Sprintf("https://%s:%d", host, s.tlsPort)
	case "insecure":
		return fmt.Sprintf("http://%s:%d", host, s.httpPort)
	}
	return fmt.Sprintf("http://%s:%d", host, s.loop)
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(r.Host)
	if host == "" {
		host = r.Host
	}
	kind := "insecure"
	switch {
	case r.TLS != nil:
		kind = "secure"
	case host == "127.0.0.1" || host == "localhost" || host == "[::1]":
		kind = "loopback"
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	rec := Request{
		Case: caseOf(r.URL.Path), Origin: kind, Proto: r.Proto, Method: r.Method,
		URL: scheme + "://" + host + r.URL.RequestURI(), Header: r.Header.Clone(),
	}
	s.mu.Lock()
	if s.run != "" {
		rec.Run = s.run
		s.got = append(s.got, rec)
	}
	s.mu.Unlock()
	s.serve(w, r, kind, host)
}

// cases names the requests by their path.
var cases = map[string]string{
	"/page.html": "navigate", "/next.html": "navigate link", "/form": "navigate form post", "/redirect": "navigate redirect",
	"/redirected.html": "navigate after redirect", "/from-b.html": "navigate cross-site", "/xs-nav.html": "navigate",
	"/favicon.png": "favicon", "/favicon.ico": "favicon", "/style.css": "css",
	"/font.woff2": "font", "/bg.png": "css image", "/script.js": "script", "/img.png": "img", "/xs-img.png": "img cross-site",
	"/preload.png": "preload", "/prefetch.html": "link prefetch", "/frame.html": "iframe", "/xs-frame.html": "iframe cross-site",
	"/media.wav": "media", "/file.bin": "download", "/api/get": "fetch", "/api/head": "fetch HEAD", "/api/post": "fetch POST",
	"/api/cors": "fetch cross-site with preflight", "/api/xhr": "xhr", "/api/beacon": "beacon", "/worker.js": "worker script",
	"/from-worker": "fetch from worker", "/sw.js": "service worker script", "/via-sw": "fetch through service worker",
	"/ws": "websocket", "/csp-report": "csp report-uri", "/reports": "reporting api", "/spec-prefetch.html": "speculation prefetch",
	"/spec-prerender.html": "speculation prerender", "/blocked.png": "img blocked by csp", "/done": "fetch", "/lib/page": "navigate",
}

func caseOf(path string) string {
	if c, ok := cases[path]; ok {
		return c
	}
	return "other"
}

// serve answers a request with the page or resource it asks for.
func (s *site) serve(w http.ResponseWriter, r *http.Request, kind, host string) {
	self := s.origin(kind, host)
	other := s.origin(kind, siteB)
	if kind == "loopback" {
		other = s.origin(kind, "localhost")
		if host == "localhost" {
			other = s.origin(kind, "127.0.0.1")
		}
	}
	blocked := s.origin(kind, siteC)
	ws := "ws" + strings.TrimPrefix(self, "http")
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	switch r.URL.Path {
	case "/page.html", "/xs-nav.html", "/from-b.html", "/redirected.html", "/next.html", "/form":
		h.Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/page.html":
			h.Set("Content-Security-Policy", "img-src 'self' "+other+" data:; report-uri /csp-report")
			fmt.Fprint(w, strings.NewReplacer("OTHER", other, "BLOCKED", blocked, "WSURL", ws).Replace(pageHTML))
		case "/next.html":
			h.Set("Reporting-Endpoints", `main="`+self+`/reports"`)
			h.Set("Content-Security-Policy", "img-src 'self'; report-to main")
			fmt.Fprint(w, strings.NewReplacer("BLOCKED", blocked).Replace(nextHTML))
		case "/xs-nav.html":
			main := siteA
			if kind == "loopback" {
				main = "127.0.0.1"
			}
			fmt.Fprintf(w, `<!doctype html><title>b</title><a id="go" href="%s/from-b.html">to a</a>`, s.origin(kind, main))
		default:
			fmt.Fprint(w, `<!doctype html><title>x</title><p>ok</p>`)
		}
	case "/redirect":
		http.Redirect(w, r, "/redirected.html", http.StatusFound)
	case "/style.css":
		h.Set("Content-Type", "text/css")
		fmt.Fprint(w, `@font-face{font-family:capfont;src:url(/font.woff2) format("woff2")} body{background:url(/bg.png)} p{font-family:capfont}`)
	case "/script.js":
		h.Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `window.scriptLoaded = true;`)
	case "/worker.js":
		h.Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `fetch("/from-worker").finally(() => postMessage("done"));`)
	case "/sw.js":
		h.Set("Content-Type", "text/javascript")
		fmt.Fprint(w, swJS)
	case "/frame.html", "/xs-frame.html", "/prefetch.html", "/spec-prefetch.html", "/spec-prerender.html":
		h.Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>f</title><p>frame</p>`)
	case "/favicon.png", "/favicon.ico", "/img.png", "/xs-img.png", "/bg.png", "/preload.png", "/blocked.png":
		h.Set("Content-Type", "image/png")
		w.Write(tinyPNG)
	case "/font.woff2":
		h.Set("Content-Type", "font/woff2")
		w.Write([]byte("wOF2"))
	case "/media.wav":
		h.Set("Content-Type", "audio/wav")
		w.Write(tinyWAV)
	case "/file.bin":
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", `attachment; filename="file.bin"`)
		w.Write([]byte("download"))
	case "/api/cors":
		h.Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
		h.Set("Access-Control-Allow-Methods", "PUT")
		h.Set("Access-Control-Allow-Headers", "X-Custom")
		fmt.Fprint(w, "{}")
	case "/ws":
		http.Error(w, "no websocket here", http.StatusBadRequest)
	default:
		h.Set("Content-Type", "application/json")
		fmt.Fprint(w, "{}")
	}
}

// The page of the navigation: every kind of subresource, then fetches of
// every mode, a worker, a WebSocket, a service worker, and a CSP violation.
const pageHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>capture</title>
<link rel="icon" href="/favicon.png">
<link rel="stylesheet" href="/style.css">
<link rel="preload" href="/preload.png" as="image">
<link rel="prefetch" href="/prefetch.html">
<script src="/script.js"></script>
</head><body>
<p>text in the capture font</p>
<img src="/img.png" alt=""><img src="OTHER/xs-img.png" alt=""><img src="BLOCKED/blocked.png" alt="">
<iframe src="/frame.html"></iframe><iframe src="OTHER/xs-frame.html"></iframe>
<audio src="/media.wav" preload="auto"></audio>
<a id="next" href="/next.html">next</a>
<script>
const settle = (p, ms) => Promise.race([p.catch(() => {}), new Promise(r => setTimeout(r, ms))]);
(async () => {
  await settle(fetch("/api/get"), 3000);
  await settle(fetch("/api/head", {method: "HEAD"}), 3000);
  await settle(fetch("/api/post", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"}), 3000);
  await settle(fetch("OTHER/api/cors", {method: "PUT", headers: {"X-Custom": "1"}}), 3000);
  await settle(new Promise(r => { const x = new XMLHttpRequest(); x.open("GET", "/api/xhr"); x.onloadend = r; x.send(); }), 3000);
  navigator.sendBeacon("/api/beacon", "beacon");
  await settle(new Promise(r => { const w = new Worker("/worker.js"); w.onmessage = r; w.onerror = r; }), 3000);
  await settle(new Promise(r => { try { const s = new WebSocket("WSURL/ws"); s.onerror = r; s.onclose = r; s.onopen = r; } catch (e) { r(); } }), 3000);
  if (window.isSecureContext && navigator.serviceWorker) {
    await settle((async () => {
      await navigator.serviceWorker.register("/sw.js");
      await navigator.serviceWorker.ready;
      if (!navigator.serviceWorker.controller) {
        await new Promise(r => navigator.serviceWorker.addEventListener("controllerchange", r));
      }
      await fetch("/via-sw");
    })(), 5000);
  }
  await new Promise(r => setTimeout(r, 1000));
  fetch("/done?page");
})();
</script>
</body></html>`

// The page a link leads to: speculation rules, a download, a form and a
// CSP violation reported through the Reporting API.
const nextHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>next</title>
<script type="speculationrules">{"prefetch":[{"source":"list","urls":["/spec-prefetch.html"]}],"prerender":[{"source":"list","urls":["/spec-prerender.html"]}]}</script>
</head><body>
<a id="dl" href="/file.bin" download>download</a>
<form id="form" method="post" action="/form"><input name="a" value="b"><button id="submit">go</button></form>
<img src="BLOCKED/blocked.png" alt="">
<script>setTimeout(() => fetch("/done?next"), 1500);</script>
</body></html>`

const swJS = `self.addEventListener("install", e => self.skipWaiting());
self.addEventListener("activate", e => e.waitUntil(self.clients.claim()));
self.addEventListener("fetch", e => { if (new URL(e.request.url).pathname === "/via-sw") e.respondWith(fetch(e.request)); });`

var tinyPNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
	0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
	0x42, 0x60, 0x82,
}

// tinyWAV is a WAV file of 8 silent samples.
var tinyWAV = func() []byte {
	b := []byte("RIFF\x2c\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x40\x1f\x00\x00\x01\x00\x08\x00data\x08\x00\x00\x00")
	return append(b, 128, 128, 128, 128, 128, 128, 128, 128)
}()

// sortRequests orders a run's requests by URL and method, so that the
// fixture does not depend on the order the client chose.
func sortRequests(rs []Request) {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Run != rs[j].Run {
			return rs[i].Run < rs[j].Run
		}
		if rs[i].Origin != rs[j].Origin {
			return rs[i].Origin < rs[j].Origin
		}
		return false
	})
}
