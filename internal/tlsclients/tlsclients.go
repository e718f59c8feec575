// Package tlsclients drives the real TLS clients installed on this machine
// (browsers, command-line tools, language runtimes and libraries) against
// a local HTTPS server, for the TLS fingerprint table's generator
// (tlsprint/internal/collect) and its end-to-end test (examples/e2e).
package tlsclients

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// CA is a test certificate authority and a leaf for "localhost" and
// 127.0.0.1, written to files the clients are told to trust.
type CA struct {
	Dir               string
	CAFile            string // the root, PEM
	CertFile, KeyFile string // the leaf and its key, PEM
	TrustStore        string // the root in a PKCS#12 trust store for Java ("" without keytool), password "changeit"
	SPKI              string // base64 SHA-256 of the leaf's public key, for Chromium's --ignore-certificate-errors-spki-list
	Cert              tls.Certificate
}

// NewCA writes a CA and a leaf under dir.
func NewCA(dir string) (*CA, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "robotsguard test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(47 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	spki := sha256.Sum256(mustParse(der).RawSubjectPublicKeyInfo)
	c := &CA{Dir: dir, CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem"),
		SPKI: base64.StdEncoding.EncodeToString(spki[:]),
		Cert: tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key}}
	for _, f := range []struct {
		path, typ string
		der       []byte
	}{{c.CAFile, "CERTIFICATE", caDER}, {c.CertFile, "CERTIFICATE", der}, {c.KeyFile, "PRIVATE KEY", keyDER}} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o600); err != nil {
			return nil, err
		}
	}
	// The leaf file carries the chain, as a server sends it.
	chain, _ := os.ReadFile(c.CertFile)
	ca, _ := os.ReadFile(c.CAFile)
	if err := os.WriteFile(c.CertFile, append(chain, ca...), 0o600); err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("keytool"); err == nil {
		ts := filepath.Join(dir, "truststore.p12")
		out, err := exec.Command("keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", c.CAFile, "-keystore", ts, "-storepass", "changeit", "-storetype", "PKCS12").CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("keytool: %v: %s", err, out)
		}
		c.TrustStore = ts
	}
	return c, nil
}

func mustParse(der []byte) *x509.Certificate {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return c
}

// Client is one real client.
type Client struct {
	// Name names it in the table's sources and the tests ("curl").
	Name string
	// Family and Browser are what the table must say of its stack.
	Family  string
	Browser bool
	// Tool is the program it needs ("" for Go's own client).
	Tool string
	// H3 reports that it is also run over HTTP/3 (Run's h3).
	H3 bool
	// Version returns the client's version, for the table's sources.
	Version func(ctx context.Context) string
	// Protos are the HTTP versions Fetch speaks with it ("h1", "h2"); none
	// for the browsers and gnutls-cli.
	Protos []string
	fetch  func(ctx context.Context, ca *CA, dir string, r Request) ([]Response, error)
	// run fetches url twice, each on a new connection where the client
	// allows it (so a resumed session shows too), with the User-Agent ua.
	run func(ctx context.Context, ca *CA, dir, url, ua string, h3 bool) error
}

// Available reports that the client's program is installed.
func (c *Client) Available() bool {
	if c.Tool == "" {
		return true
	}
	_, err := exec.LookPath(c.Tool)
	return err == nil
}

// Run fetches url (twice, see Client) with the User-Agent ua; with h3 over
// HTTP/3 (Chromium only). dir is a scratch directory of its own.
func (c *Client) Run(ctx context.Context, ca *CA, dir, url, ua string, h3 bool) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return c.run(ctx, ca, dir, url, ua, h3)
}

// command runs a program with the CA trusted through the environment
// variables OpenSSL, Python's requests, httpx and Node read.
func command(ctx context.Context, ca *CA, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "SSL_CERT_FILE="+ca.CAFile, "REQUESTS_CA_BUNDLE="+ca.CAFile, "NODE_EXTRA_CA_CERTS="+ca.CAFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, lastLines(string(out), 5))
	}
	return nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// version runs a program and returns the first line of its output.
func version(name string, args ...string) func(context.Context) string {
	return versionWith("", name, args...)
}

// versionWith returns the first line of a program's output that holds want.
func versionWith(want, name string, args ...string) func(context.Context) string {
	return func(ctx context.Context) string {
		out, _ := exec.CommandContext(ctx, name, args...).CombinedOutput()
		for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			if strings.Contains(line, want) {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
}

const python = "/usr/bin/python3"

func pyVersion(module string) func(context.Context) string {
	return version(python, "-c", "import sys,"+module+"; print('Python', sys.version.split()[0], '"+module+"', "+module+".__version__)")
}

// Clients are the clients of the table, in its order.
var Clients = []*Client{
	{Name: "chromium", Family: "chromium", Browser: true, Tool: "chromium", H3: true, Version: versionWith("Chromium", "chromium", "--version"),
		run: func(ctx context.Context, ca *CA, dir, url, ua string, h3 bool) error {
			if err := trustNSS(ctx, ca, filepath.Join(dir, ".pki", "nssdb")); err != nil {
				return err
			}
			args := []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "profile"),
				"--ignore-certificate-errors-spki-list=" + ca.SPKI, "--user-agent=" + ua, "--dump-dom"}
			if h3 {
				host := strings.TrimPrefix(url, "https://")
				host, _, _ = strings.Cut(host, "/")
				args = append(args, "--enable-quic", "--origin-to-force-quic-on="+host)
			}
			return command(ctx, ca, dir, "chromium", append(args, url)...)
		}},
	{Name: "firefox-esr", Family: "firefox", Browser: true, Tool: "firefox-esr", Version: version("firefox-esr", "--version"),
		run: func(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
			profile := filepath.Join(dir, "profile")
			if err := os.MkdirAll(profile, 0o700); err != nil {
				return err
			}
			if err := trustNSS(ctx, ca, profile); err != nil {
				return err
			}
			prefs := fmt.Sprintf("user_pref(\"general.useragent.override\", %q);\nuser_pref(\"browser.shell.checkDefaultBrowser\", false);\nuser_pref(\"datareporting.policy.dataSubmissionEnabled\", false);\n", ua)
			if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(prefs), 0o600); err != nil {
				return err
			}
			return command(ctx, ca, dir, "firefox-esr", "--headless", "--no-remote", "--profile", profile, "--screenshot", filepath.Join(dir, "page.png"), url)
		}},
	{Name: "curl", Family: "openssl", Tool: "curl", Protos: []string{"h1", "h2"}, fetch: curlFetch, Version: version("curl", "--version"),
		run: func(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
			return command(ctx, ca, dir, "curl", "-sS", "-o", "/dev/null", "--cacert", ca.CAFile, "-A", ua, url, "-o", "/dev/null", "-H", "Connection: close", url)
		}},
	{Name: "wget", Family: "gnutls", Tool: "wget", Protos: []string{"h1"}, fetch: wgetFetch, Version: version("wget", "--version"),
		run: func(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
			return command(ctx, ca, dir, "wget", "-q", "-O", "/dev/null", "--ca-certificate="+ca.CAFile, "-U", ua, "--no-http-keep-alive", url, url)
		}},
	{Name: "gnutls-cli", Family: "gnutls", Tool: "gnutls-cli", Version: version("gnutls-cli", "--version"),
		run: func(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
			host, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(url, "https://"), "/"))
			cmd := exec.CommandContext(ctx, "gnutls-cli", "--x509cafile="+ca.CAFile, "--port="+port, host)
			cmd.Stdin = strings.NewReader("GET / HTTP/1.0\r\nHost: " + host + "\r\nUser-Agent: " + ua + "\r\n\r\n")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("gnutls-cli: %v: %s", err, lastLines(string(out), 5))
			}
			return nil
		}},
	{Name: "python-urllib", Family: "openssl", Tool: python, Protos: []string{"h1"}, fetch: script(python, "-c", pyUrllibFetch), Version: version(python, "--version"),
		run: func(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
			return command(ctx, ca, dir, python, "-c", `import sys, urllib.request
for _ in range(2):
    urllib.request.urlopen(urllib.request.Request(sys.argv[1], headers={"User-Agent": sys.argv[2]})).read()`, url, ua)
		}},
	{Name: "python-requests", Family: "openssl", Tool: python, Protos: []string{"h1"}, fetch: script(python, "-c", pyRequestsFetch), Version: pyVersion("requests"),
		run: func(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
			return command(ctx, ca, dir, python, "-c", `import sys, requests
for _ in range(2):
    requests.get(sys.argv[1], headers={"User-Agent": sys.argv[2], "Connection": "close"}).raise_for_status()`, url, ua)
		}},
	{Name: "python-httpx", Family: "openssl", Tool: python, Protos: []string{"h1", "h2"}, fetch: script(python, "-c", pyHttpxFetch), Version: pyVersion("httpx"),
		run: func(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
			return command(ctx, ca, dir, python, "-c", `import sys, httpx
for _ in range(2):
    httpx.get(sys.argv[1], headers={"User-Agent": sys.argv[2]}).raise_for_status()`, url, ua)
		}},
	{Name: "python-aiohttp", Family: "openssl", Tool: python, Protos: []string{"h1"}, fetch: script(python, "-c", pyAiohttpFetch), Version: pyVersion("aiohttp"),
		run: func(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
			return command(ctx, ca, dir, python, "-c", `import sys, asyncio, aiohttp
async def main():
    async with aiohttp.ClientSession(headers={"User-Agent": sys.argv[2]}, connector=aiohttp.TCPConnector(force_close=True)) as s:
        for _ in range(2):
            async with s.get(sys.argv[1]) as r:
                r.raise_for_status()
asyncio.run(main())`, url, ua)
		}},
	{Name: "scrapy", Family: "openssl", Tool: "scrapy", Protos: []string{"h1"}, fetch: script(python, "-c", scrapyFetch), Version: version("scrapy", "version"),
		run: func(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
			return command(ctx, ca, dir, "scrapy", "fetch", "--nolog", "-s", "USER_AGENT="+ua, "-s", "ROBOTSTXT_OBEY=False", url)
		}},
	{Name: "node", Family: "openssl", Tool: "node", Protos: []string{"h1", "h2"}, fetch: script("node", "-e", nodeFetch), Version: version("node", "--version"),
		run: func(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
			return command(ctx, ca, dir, "node", "-e", `const https = require("https");
const agent = new https.Agent({ keepAlive: false });
const get = () => new Promise((ok, fail) => https.get(process.argv[1], { agent, headers: { "User-Agent": process.argv[2] } }, r => { r.resume(); r.on("end", ok); }).on("error", fail));
get().then(get).catch(e => { console.error(e); process.exit(1); });`, url, ua)
		}},
	{Name: "java", Family: "java", Tool: "java", Protos: []string{"h1", "h2"}, fetch: javaFetchRun, Version: version("java", "-version"),
		run: func(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
			src := filepath.Join(dir, "Fetch.java")
			if err := os.WriteFile(src, []byte(javaFetch), 0o600); err != nil {
				return err
			}
			if ca.TrustStore == "" {
				return fmt.Errorf("java: no trust store (keytool missing)")
			}
			return command(ctx, ca, dir, "java", "-Djavax.net.ssl.trustStore="+ca.TrustStore, "-Djavax.net.ssl.trustStorePassword=changeit", "-Djdk.httpclient.allowRestrictedHeaders=connection", src, url, ua)
		}},
	{Name: "go", Family: "go", Protos: []string{"h1", "h2"}, fetch: goFetch, Version: func(context.Context) string { return "Go " + goVersion() },
		run: func(ctx context.Context, ca *CA, dir, url, ua string, _ bool) error {
			pool := x509.NewCertPool()
			pem, _ := os.ReadFile(ca.CAFile)
			pool.AppendCertsFromPEM(pem)
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true, DisableKeepAlives: true}
			defer tr.CloseIdleConnections()
			for range 2 {
				req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
				req.Header.Set("User-Agent", ua)
				resp, err := (&http.Client{Transport: tr}).Do(req)
				if err != nil {
					return err
				}
				resp.Body.Close()
			}
			return nil
		}},
}

// javaFetch is Java's own HTTP client (java.net.http, HTTP/2 with ALPN).
const javaFetch = `import java.net.URI;
import java.net.http.*;
public class Fetch {
    public static void main(String[] a) throws Exception {
        for (int i = 0; i < 2; i++) {
            HttpClient c = HttpClient.newHttpClient();
            HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create(a[0])).header("User-Agent", a[1]).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() >= 400) System.exit(1);
        }
    }
}
`

// trustNSS makes an NSS database that trusts the CA (see TrustNSS).
func trustNSS(ctx context.Context, ca *CA, db string) error { return TrustNSS(ctx, ca.CAFile, db) }

// TrustNSS makes an NSS database (Chromium's ~/.pki/nssdb, a Firefox
// profile) that trusts the CA of caFile (PEM) for TLS servers, with
// libnss3-tools' certutil.
func TrustNSS(ctx context.Context, caFile, db string) error {
	if err := os.MkdirAll(db, 0o700); err != nil {
		return err
	}
	for _, args := range [][]string{{"-N", "--empty-password", "-d", "sql:" + db}, {"-A", "-n", "robotsguard-test", "-t", "C,,", "-i", caFile, "-d", "sql:" + db}} {
		if out, err := exec.CommandContext(ctx, "certutil", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("certutil %s: %v: %s", args[0], err, out)
		}
	}
	return nil
}

// TLSConfig returns a server configuration with the leaf.
func (c *CA) TLSConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{c.Cert}}
}

// TLSClientConfig returns a client configuration that trusts the CA.
func (c *CA) TLSClientConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(mustParse(c.Cert.Certificate[1]))
	return &tls.Config{RootCAs: pool}
}
