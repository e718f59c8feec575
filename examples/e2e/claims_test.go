package e2e

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"
)

// counts tallies a run of requests by status and X-Robots-Guard.
type counts map[string]int

func (c counts) add(status int, guard string) { c[fmt.Sprintf("%d %s", status, guard)]++ }

// TestUnverifiedClaimBounded (issue 29, item 7): a claimed Googlebot
// whose reverse-DNS check cannot finish (the namespace's resolver never
// answers: an attacker controls its own reverse zone) is judged
// "unverified" and bounded like any bot. The issue measured 40 quick
// requests all served and 30 disallowed hits never blocked; now the quick
// requests are throttled at class bot's rate and the disallowed hits
// block the client.
func TestUnverifiedClaimBounded(t *testing.T) {
	n := newNetns(t, "nameserver 127.0.0.1\noptions timeout:5 attempts:1\n")
	// A resolver that reads every query and never answers.
	sink := n.cmd("/usr/bin/python3", "-c", "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.bind(('127.0.0.1', 53))\nwhile True:\n    s.recv(4096)\n")
	if err := sink.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sink.Process.Kill(); _ = sink.Wait() })
	for _, a := range []string{"10.0.0.1/32", "66.249.66.1/32", "66.249.66.2/32"} {
		n.addAddr(t, a)
	}
	robots := writeFile(t, n.dir, "robots.txt", "User-agent: *\nDisallow: /private/\n")
	s := startIn(t, n, "http://10.0.0.1:8000", nsConfig("10.0.0.1", "8000", robots, "verify {\n\t\t\twait 50ms\n\t\t}\n\t\tlog_allowed 1", ""))
	const googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

	quick := counts{}
	for i := 0; i < 40; i++ {
		status, guard, body := s.curl(t, "66.249.66.1", "/", googlebot)
		quick.add(status, guard)
		if status == 200 && body != "page /" {
			t.Fatalf("served %q", body)
		}
	}
	disallowed := counts{}
	for i := 0; i < 30; i++ {
		status, guard, _ := s.curl(t, "66.249.66.2", "/private/x", googlebot)
		disallowed.add(status, guard)
	}
	after, guard, _ := s.curl(t, "66.249.66.2", "/", googlebot)
	t.Logf("40 quick requests: %v; 30 disallowed hits: %v; then / : %d %s", quick, disallowed, after, guard)
	if quick["200 "] > 10 {
		t.Errorf("an unverified Googlebot was served %d of 40 quick requests", quick["200 "])
	}
	if after != 403 || guard != "blocked_client" || disallowed["403 blocked_client"] == 0 {
		t.Errorf("an unverified Googlebot after 30 disallowed hits: %d %s", after, guard)
	}
	verdicts := map[string]int{}
	for _, e := range s.entries(t) {
		if v, _ := e["verification"].(string); e["class"] == "search" {
			verdicts[v]++
		}
	}
	if verdicts["unverified"] == 0 || verdicts["verified"] != 0 {
		t.Errorf("verdicts logged: %v, want unverified ones only", verdicts)
	}
}

// TestSelfSignedAgent (issue 29, item 6): an agent that hosts its own key
// directory (on a public address of the namespace, over HTTPS) and signs
// its requests, with no trusted_agent and in no bot database, is verified
// as itself only: its signature verifies (the log says so), but it gets
// no verified crawler's allowances. The issue measured 12 quick requests
// under "Crawl-delay: 2" all served and 12 disallowed hits never blocked;
// now it is throttled and blocked like any bot.
func TestSelfSignedAgent(t *testing.T) {
	n := newNetns(t, "")
	const agentIP = "93.184.215.34" // a public address, inside the namespace only
	for _, a := range []string{"10.0.0.1/32", "10.0.0.2/32", "10.0.0.3/32", agentIP + "/32"} {
		n.addAddr(t, a)
	}
	agent := newWBASigner(t, "https://"+agentIP)
	x := base64.RawURLEncoding.EncodeToString(agent.priv.Public().(ed25519.PublicKey))
	jwks := fmt.Sprintf(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"%s","x":"%s"}]}`, agent.keyID, x)
	cert, key := selfSignedIP(t, agentIP)
	certFile, keyFile := writeFile(t, n.dir, "agent.crt", cert), writeFile(t, n.dir, "agent.key", key)
	directory := fmt.Sprintf(`https://%s {
	bind %s
	tls %s %s
	header Content-Type application/http-message-signatures-directory+json
	respond /.well-known/http-message-signatures-directory `+"`%s`"+`
}`, agentIP, agentIP, certFile, keyFile, jwks)
	robots := writeFile(t, n.dir, "robots.txt", "User-agent: *\nCrawl-delay: 2\nDisallow: /private/\n")
	s := startIn(t, n, "http://10.0.0.1:8000", nsConfig("10.0.0.1", "8000", robots, "verify off\n\t\tweb_bot_auth\n\t\tlog_allowed 1", directory),
		"SSL_CERT_FILE="+certFile)
	// The directory answers, over TLS, in the namespace.
	if out, err := n.cmd("curl", "-s", "--cacert", certFile, "https://"+agentIP+"/.well-known/http-message-signatures-directory").Output(); err != nil || !strings.Contains(string(out), agent.keyID) {
		t.Fatalf("the agent's directory: %v %s", err, out)
	}
	signed := func(from, path string) (int, string) {
		status, guard, _ := s.curl(t, from, path, wbaChrome, agent.headers("10.0.0.1:8000", path, time.Now(), time.Hour)...)
		return status, guard
	}
	// The first signed request fetches the directory.
	signed("10.0.0.2", "/about.html")
	time.Sleep(time.Second)
	s.curl(t, "10.0.0.2", "/robots.txt", "x") // not signed: leaves the bucket alone
	time.Sleep(2 * time.Second)               // the Crawl-delay, from the first request

	quick := counts{}
	for i := 0; i < 12; i++ {
		quick.add(signed("10.0.0.2", "/about.html"))
	}
	disallowed := counts{}
	for i := 0; i < 12; i++ {
		disallowed.add(signed("10.0.0.3", "/private/report.html"))
	}
	after, guard := signed("10.0.0.3", "/about.html")
	t.Logf("12 quick signed requests: %v; 12 disallowed hits: %v; then /about.html: %d %s", quick, disallowed, after, guard)
	if quick["200 "] > 4 || quick["429 crawl_delay"] == 0 {
		t.Errorf("a self-signed agent under Crawl-delay: 2: %v", quick)
	}
	if after != 403 || guard != "blocked_client" {
		t.Errorf("a self-signed agent after 12 disallowed hits: %d %s", after, guard)
	}
	logged := map[string]int{}
	for _, e := range s.entries(t) {
		if e["signature"] == "verified" {
			logged[fmt.Sprintf("%v/%v", e["class"], e["verification"])]++
			if e["signature_agent"] != "https://"+agentIP {
				t.Errorf("logged agent %v", e["signature_agent"])
			}
		}
	}
	t.Logf("signed requests logged (class/verification): %v", logged)
	if logged["ai/none"] == 0 || len(logged) != 1 {
		t.Errorf("signed requests logged as %v, want class ai, verification none", logged)
	}
}

// selfSignedIP returns a self-signed certificate for an IP address and its
// key, in PEM.
func selfSignedIP(t *testing.T, ip string) (cert, key string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: ip},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP(ip)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}
