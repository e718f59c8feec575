package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/quic-go/quic-go/http3"

	"github.com/robotsguard/robotsguard/internal/browserctl"
	"github.com/robotsguard/robotsguard/internal/tlsclients"
)

// variant is a client -observe drives besides internal/tlsclients': a
// library as its caller changes it in a line (Go with Chrome's cipher
// suites, curl with Chrome's ciphers, Python as urllib3 2 sets it up),
// other releases of Go, and quic-go over QUIC. Their hellos are the test
// data of the families (Classify): what a caller can change must not move
// a hello out of its stack's family.
type variant struct {
	name, family string
	browser      bool
	// tool is the program it needs ("" for this Go).
	tool    string
	quic    bool
	version func(ctx context.Context) string
	run     func(ctx context.Context, ca *tlsclients.CA, dir, url, ua string) error
}

// chromeTLS12 are Chrome's twelve TLS 1.2 cipher suites, in its order, as
// a Go caller sets them in one line (tls.Config.CipherSuites).
var chromeTLS12 = []uint16{0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035}

// chromeTLS12OpenSSL are the same in OpenSSL's names (curl --ciphers).
const chromeTLS12OpenSSL = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:" +
	"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:AES128-GCM-SHA256:AES256-GCM-SHA384:AES128-SHA:AES256-SHA"

// pythonDefaultCiphers is the cipher string of python.org's builds of
// Python 3.10 and later (Modules/_ssl.c, PY_SSL_DEFAULT_CIPHER_STRING),
// which urllib3 2 no longer replaces: Debian builds Python with OpenSSL's
// default instead, so requests 2.34 with urllib3 2.7 elsewhere sends this.
const pythonDefaultCiphers = "@SECLEVEL=2:ECDH+AESGCM:ECDH+CHACHA20:ECDH+AES:DHE+AES:!aNULL:!eNULL:!aDSS:!SHA1:!AESCCM"

// urllib3v2 is an HTTPS GET over Python's ssl set up as urllib3 2's
// create_urllib3_context does (TLS 1.2 at least, no compression, no
// session tickets, post-handshake authentication, ALPN http/1.1) with
// python.org's default ciphers.
const urllib3v2 = `import socket, ssl, sys
from urllib.parse import urlsplit
u = urlsplit(sys.argv[1])
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.set_ciphers(sys.argv[3])
ctx.minimum_version = ssl.TLSVersion.TLSv1_2
ctx.options |= ssl.OP_NO_COMPRESSION | ssl.OP_NO_TICKET
ctx.post_handshake_auth = True
ctx.set_alpn_protocols(["http/1.1"])
ctx.load_verify_locations(sys.argv[4])
for _ in range(2):
    with socket.create_connection((u.hostname, u.port)) as raw, ctx.wrap_socket(raw, server_hostname=u.hostname) as s:
        s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\nConnection: close\r\n\r\n" % (u.netloc, sys.argv[2])).encode())
        while s.recv(65536):
            pass
`

// goProgram fetches a URL three times with another Go release's net/http
// (GOTOOLCHAIN): once as net/http sets up TLS by default, then twice with a
// session cache, so that the third resumes its session.
const goProgram = `package main

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
)

func main() {
	pool := x509.NewCertPool()
	pem, _ := os.ReadFile(os.Args[3])
	pool.AppendCertsFromPEM(pem)
	cache := tls.NewLRUClientSessionCache(4)
	for i := 0; i < 3; i++ {
		cfg := &tls.Config{RootCAs: pool}
		if i > 0 {
			cfg.ClientSessionCache = cache
		}
		tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true, DisableKeepAlives: true}
		req, _ := http.NewRequest("GET", os.Args[1], nil)
		req.Header.Set("User-Agent", os.Args[2])
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
	}
}
`

// goGet fetches url twice with this Go's net/http, its TLS as cfg sets it.
func goGet(ctx context.Context, ca *tlsclients.CA, url, ua string, set func(*tls.Config)) error {
	for range 2 {
		cfg := ca.TLSClientConfig()
		set(cfg)
		tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true, DisableKeepAlives: true}
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		req.Header.Set("User-Agent", ua)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		tr.CloseIdleConnections()
	}
	return nil
}

const python = "/usr/bin/python3"

func thisGo(context.Context) string { return "Go " + runtime.Version() }

// variants returns the variants, with a Go program of each release in
// goReleases ("go1.21.0", ...; GOTOOLCHAIN fetches it from the module
// proxy, so fetch each once before -observe runs in a network namespace:
// GOTOOLCHAIN=go1.21.0 go version).
func variants(goReleases []string) []variant {
	session := tls.NewLRUClientSessionCache(4)
	vs := []variant{
		{name: "go-chrome-ciphers", family: "go", version: thisGo, run: func(ctx context.Context, ca *tlsclients.CA, _, url, ua string) error {
			return goGet(ctx, ca, url, ua, func(c *tls.Config) { c.CipherSuites = chromeTLS12 })
		}},
		{name: "go-tls12", family: "go", version: thisGo, run: func(ctx context.Context, ca *tlsclients.CA, _, url, ua string) error {
			return goGet(ctx, ca, url, ua, func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 })
		}},
		{name: "go-x25519", family: "go", version: thisGo, run: func(ctx context.Context, ca *tlsclients.CA, _, url, ua string) error {
			return goGet(ctx, ca, url, ua, func(c *tls.Config) { c.CurvePreferences = []tls.CurveID{tls.X25519} })
		}},
		{name: "go-session", family: "go", version: thisGo, run: func(ctx context.Context, ca *tlsclients.CA, _, url, ua string) error {
			return goGet(ctx, ca, url, ua, func(c *tls.Config) { c.ClientSessionCache = session })
		}},
		{name: "quic-go", family: "go", quic: true, version: func(context.Context) string { return "quic-go " + moduleVersion("github.com/quic-go/quic-go") },
			run: func(ctx context.Context, ca *tlsclients.CA, _, url, ua string) error {
				cache := tls.NewLRUClientSessionCache(4)
				for range 2 { // the second resumes the first's session
					cfg := ca.TLSClientConfig()
					cfg.ClientSessionCache = cache
					tr := &http3.Transport{TLSClientConfig: cfg}
					req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
					req.Header.Set("User-Agent", ua)
					resp, err := (&http.Client{Transport: tr}).Do(req)
					if err != nil {
						tr.Close()
						return err
					}
					resp.Body.Close()
					tr.Close()
				}
				return nil
			}},
		{name: "python-urllib3-2", family: "openssl", tool: python, version: func(ctx context.Context) string {
			out, _ := exec.CommandContext(ctx, python, "-c", "import sys, ssl; print('Python', sys.version.split()[0], ssl.OPENSSL_VERSION, 'as urllib3 2 with python.org ciphers')").Output()
			return strings.TrimSpace(string(out))
		}, run: func(ctx context.Context, ca *tlsclients.CA, dir, url, ua string) error {
			return command(ctx, dir, python, "-c", urllib3v2, url, ua, pythonDefaultCiphers, ca.CAFile)
		}},
		{name: "curl-chrome-ciphers", family: "openssl", tool: "curl", version: firstLine("curl", "--version"), run: func(ctx context.Context, ca *tlsclients.CA, dir, url, ua string) error {
			return command(ctx, dir, "curl", "-sS", "--cacert", ca.CAFile, "--ciphers", chromeTLS12OpenSSL, "-A", ua, "-o", "/dev/null", url, "-o", "/dev/null", "-H", "Connection: close", url)
		}},
		{name: "openssl-s_client", family: "openssl", tool: "openssl", version: firstLine("openssl", "version"), run: func(ctx context.Context, ca *tlsclients.CA, dir, url, ua string) error {
			host := strings.TrimSuffix(strings.TrimPrefix(url, "https://"), "/")
			name, _, _ := strings.Cut(host, ":")
			cmd := exec.CommandContext(ctx, "openssl", "s_client", "-connect", host, "-servername", name, "-CAfile", ca.CAFile, "-quiet")
			cmd.Dir = dir
			cmd.Stdin = strings.NewReader("GET / HTTP/1.0\r\nHost: " + host + "\r\nUser-Agent: " + ua + "\r\n\r\n")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("openssl s_client: %v: %s", err, out)
			}
			return nil
		}},
		{name: "node-h2", family: "openssl", tool: "node", version: firstLine("node", "--version"), run: func(ctx context.Context, ca *tlsclients.CA, dir, url, ua string) error {
			return command(ctx, dir, "node", "-e", `const http2 = require("http2"), fs = require("fs");
const ca = fs.readFileSync(process.argv[3]);
const get = () => new Promise((ok, fail) => {
  const s = http2.connect(process.argv[1], { ca });
  s.on("error", fail);
  const r = s.request({ ":path": "/", "user-agent": process.argv[2] });
  r.on("data", () => {}); r.on("end", () => { s.close(); ok(); }); r.on("error", fail); r.end();
});
get().then(get).catch(e => { console.error(e); process.exit(1); });`, url, ua, ca.CAFile)
		}},
		{name: "node-chrome-ciphers", family: "openssl", tool: "node", version: firstLine("node", "--version"), run: func(ctx context.Context, ca *tlsclients.CA, dir, url, ua string) error {
			return command(ctx, dir, "node", "-e", `const https = require("https"), fs = require("fs");
const agent = new https.Agent({ keepAlive: false, ca: fs.readFileSync(process.argv[4]), ciphers: "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:" + process.argv[3] });
const get = () => new Promise((ok, fail) => https.get(process.argv[1], { agent, headers: { "User-Agent": process.argv[2] } }, r => { r.resume(); r.on("end", ok); }).on("error", fail));
get().then(get).catch(e => { console.error(e); process.exit(1); });`, url, ua, chromeTLS12OpenSSL, ca.CAFile)
		}},
	}
	// The browsers over HTTP/1.1 only and, Firefox, over HTTP/3 (its
	// testing preferences map the site to h3 from the first request), each
	// loading the page twice: the server closes every TCP connection after
	// its request, so the second hello resumes the first's session.
	vs = append(vs,
		variant{name: "chromium-h1", family: "chromium", browser: true, tool: "chromium", version: firstLine("chromium", "--version"),
			run: func(ctx context.Context, ca *tlsclients.CA, dir, url, ua string) error {
				if err := tlsclients.TrustNSS(ctx, ca.CAFile, filepath.Join(dir, ".pki", "nssdb")); err != nil {
					return err
				}
				return command(ctx, dir, "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir="+filepath.Join(dir, "profile"),
					"--ignore-certificate-errors-spki-list="+ca.SPKI, "--user-agent="+ua, "--disable-http2", "--dump-dom", url)
			}},
		firefoxVariant("firefox-esr-h1", map[string]any{"network.http.http2.enabled": false, "network.http.http3.enable": false}),
		firefoxVariant("firefox-esr-h3", nil),
	)
	for _, rel := range goReleases {
		vs = append(vs, variant{name: "go", family: "go", tool: "go", version: func(context.Context) string { return "Go " + rel },
			run: func(ctx context.Context, ca *tlsclients.CA, dir, url, ua string) error {
				// A module whose go line is the release's, so that its
				// GODEBUG defaults are that release's (outside a module
				// they are Go 1.20's).
				minor := strings.Join(strings.SplitN(strings.TrimPrefix(rel, "go"), ".", 3)[:2], ".")
				for name, text := range map[string]string{"main.go": goProgram, "go.mod": "module probe\n\ngo " + minor + "\n"} {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
						return err
					}
				}
				cmd := exec.CommandContext(ctx, "go", "run", ".", url, ua, ca.CAFile)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+rel, "GOFLAGS=", "GOCACHE="+filepath.Join(os.TempDir(), "tlsprint-collect-gocache"))
				if out, err := cmd.CombinedOutput(); err != nil {
					return fmt.Errorf("%s: %v: %s", rel, err, out)
				}
				return nil
			}})
	}
	return vs
}

// firefoxVariant is Firefox ESR with prefs (nil: HTTP/3, as the site's
// Alt-Svc would give it) loading the page twice.
func firefoxVariant(name string, prefs map[string]any) variant {
	return variant{name: name, family: "firefox", browser: true, tool: "firefox-esr", version: firstLine("firefox-esr", "--version"),
		run: func(ctx context.Context, ca *tlsclients.CA, dir, url, ua string) error {
			p := map[string]any{"general.useragent.override": ua}
			if prefs == nil {
				_, port, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(url, "https://"), "/"), ":")
				p["network.http.http3.enable"] = true
				p["network.http.http3.alt-svc-mapping-for-testing"] = "localhost;h3=:" + port
				p["network.http.http3.force-use-alt-svc-mapping-for-testing"] = true
				p["network.http.http3.disable_when_third_party_roots_found"] = false
			}
			for k, v := range prefs {
				p[k] = v
			}
			b, err := browserctl.StartFirefox(dir, ca.CAFile, p)
			if err != nil {
				return err
			}
			defer b.Close()
			for range 2 {
				if err := b.Load(url); err != nil {
					return err
				}
			}
			return nil
		}}
}

// command runs a program in dir.
func command(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, out)
	}
	return nil
}

// firstLine returns a program's first line of output.
func firstLine(name string, args ...string) func(context.Context) string {
	return func(ctx context.Context) string {
		out, _ := exec.CommandContext(ctx, name, args...).CombinedOutput()
		l, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return strings.TrimSpace(l)
	}
}

// moduleVersion returns the version of a module this program is built
// with.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				return m.Version
			}
		}
	}
	return "(unknown)"
}
