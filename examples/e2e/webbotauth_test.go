package e2e

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wbaSigner is an agent that signs its requests (Web Bot Auth: HTTP
// Message Signatures, RFC 9421), written here from the RFC and the draft,
// independently of package signature.
type wbaSigner struct {
	agent string
	priv  ed25519.PrivateKey
	keyID string // JWK SHA-256 thumbprint (RFC 7638, RFC 8037)
}

func newWBASigner(t *testing.T, agent string) wbaSigner {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`))
	return wbaSigner{agent: agent, priv: priv, keyID: base64.RawURLEncoding.EncodeToString(sum[:])}
}

// jwks writes the signer's public key as a JWKS file.
func (s wbaSigner) jwks(t *testing.T) string {
	t.Helper()
	x := base64.RawURLEncoding.EncodeToString(s.priv.Public().(ed25519.PublicKey))
	path := filepath.Join(t.TempDir(), "agent.jwks")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":%q,"x":%q}]}`, s.keyID, x)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// headers signs GET authority path, as ChatGPT's agent does: @method,
// @authority, @path and the Signature-Agent member, with a nonce.
func (s wbaSigner) headers(authority, path string, created time.Time, validity time.Duration) []string {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	params := fmt.Sprintf(`("@method" "@authority" "@path" "signature-agent";key="sig1");created=%d;expires=%d;keyid="%s";alg="ed25519";nonce="%s";tag="web-bot-auth"`,
		created.Unix(), created.Add(validity).Unix(), s.keyID, base64.StdEncoding.EncodeToString(nonce))
	base := strings.Join([]string{
		`"@method": GET`,
		`"@authority": ` + authority,
		`"@path": ` + path,
		`"signature-agent";key="sig1": "` + s.agent + `"`,
		`"@signature-params": ` + params,
	}, "\n")
	sig := ed25519.Sign(s.priv, []byte(base))
	return []string{
		`Signature-Agent: sig1="` + s.agent + `"`,
		"Signature-Input: sig1=" + params,
		"Signature: sig1=:" + base64.StdEncoding.EncodeToString(sig) + ":",
	}
}

const wbaChrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

// TestWebBotAuth: against the real binary, an agent whose key is pinned
// with trusted_agent is served and never throttled (Crawl-delay: 1, twenty
// requests at once) while robots.txt still applies to it; a tampered path,
// an expired signature and an unknown key are refused as impostors; an
// unknown agent and unsigned requests behave as before; the decision log
// says which.
func TestWebBotAuth(t *testing.T) {
	need(t, "curl")
	agent := newWBASigner(t, "https://agent.example")
	stranger := newWBASigner(t, "https://agent.example") // a key the agent does not publish
	unknown := newWBASigner(t, "https://unknown.example")
	s := start(t, options{trustProxy: true, guard: fmt.Sprintf("web_bot_auth {\n\t\t\ttrusted_agent %s %s\n\t\t\tfetch_directories off\n\t\t\tnonce_cache 1000\n\t\t}", agent.agent, agent.jwks(t))})
	authority := strings.TrimPrefix(s.front, "http://")
	now := time.Now()

	// Twenty signed requests at once, Crawl-delay 1: all served.
	pages := map[string]string{"/": "robotsguard demo", "/about.html": "About", "/docs/": "Documentation", "/docs/rules.html": "Rules", "/docs/getting-started.html": "Getting started"}
	served := 0
	for i := 0; i < 4; i++ {
		for path, title := range pages {
			status, guard, body := curl(t, s.front, path, wbaChrome, from("198.51.100.1", agent.headers(authority, path, now, time.Hour))...)
			if status != 200 || !strings.Contains(body, "<title>"+title+"</title>") {
				t.Fatalf("signed agent, %s: status %d (%s), body %.80q", path, status, guard, body)
			}
			served++
		}
	}
	t.Logf("signed agent: %d requests at once, all served", served)
	// robots.txt applies to it.
	if status, guard, _ := curl(t, s.front, "/private/report.html", wbaChrome, from("198.51.100.1", agent.headers(authority, "/private/report.html", now, time.Hour))...); status != 403 || guard != "disallowed" {
		t.Errorf("signed agent on a disallowed path: %d %s", status, guard)
	}
	// Forged claims, each from its own address: refused as impostors, with
	// a strike.
	forger := 10
	for name, h := range map[string][]string{
		"tampered path":       agent.headers(authority, "/about.html", now, time.Hour), // sent for /private/report.html
		"expired signature":   agent.headers(authority, "/private/report.html", now.Add(-2*time.Hour), time.Hour),
		"signed in 5 minutes": agent.headers(authority, "/private/report.html", now.Add(5*time.Minute), time.Hour),
		"unknown key":         stranger.headers(authority, "/private/report.html", now, time.Hour),
	} {
		forger++
		status, guard, body := curl(t, s.front, "/private/report.html", wbaChrome, from(fmt.Sprintf("198.51.100.%d", forger), h)...)
		if status != 403 || guard != "impostor" || strings.Contains(body, "Quarterly report") {
			t.Errorf("%s: %d %s", name, status, guard)
		}
	}
	// A replayed signature (same nonce) is refused too.
	replay := agent.headers(authority, "/about.html", now, time.Hour)
	if status, _, _ := curl(t, s.front, "/about.html", wbaChrome, from("198.51.100.20", replay)...); status != 200 {
		t.Errorf("first use of a signature: %d", status)
	}
	if status, guard, _ := curl(t, s.front, "/about.html", wbaChrome, from("198.51.100.21", replay)...); status != 403 || guard != "impostor" {
		t.Errorf("replayed signature: %d %s", status, guard)
	}
	// An agent whose keys are unknown (directories not fetched) and unsigned
	// requests: as before. A browser is served everywhere...
	for name, h := range map[string][]string{"unknown agent": unknown.headers(authority, "/private/report.html", now, time.Hour), "unsigned": nil} {
		status, _, body := curl(t, s.front, "/private/report.html", wbaChrome, from("198.51.100.30", h)...)
		if status != 200 || !strings.Contains(body, "Quarterly report") {
			t.Errorf("%s browser: %d", name, status)
		}
	}
	// ...and an unsigned bot meets Crawl-delay.
	throttled := false
	for i := 0; i < 8 && !throttled; i++ {
		status, _, _ := curl(t, s.front, "/about.html", "ExampleBot/1.0", from("198.51.100.40", nil)...)
		throttled = status == 429
	}
	if !throttled {
		t.Error("an unsigned bot was never throttled")
	}

	// The decision log names the outcome.
	time.Sleep(200 * time.Millisecond)
	counts := map[string]int{}
	for _, e := range s.moduleEntries(t) {
		sig, _ := e["signature"].(string)
		counts[sig]++
		if sig == "invalid" && (e["reason"] != "impostor" || e["strikes"] != 1.0 || e["signature_error"] == nil || e["signature_agent"] != "https://agent.example") {
			t.Errorf("invalid signature logged as %v", e)
		}
		if sig == "verified" && (e["class"] != "ai" || e["verification"] != "verified" || e["action"] != "allow" && e["reason"] != "disallowed") {
			t.Errorf("verified agent logged as %v", e)
		}
	}
	t.Logf("decision log by signature outcome: %v", counts)
	if counts["invalid"] != 5 || counts["verified"] == 0 {
		t.Errorf("log entries by signature outcome: %v, want 5 invalid and the verified agent's", counts)
	}
}

// from adds X-Forwarded-For (trusted from loopback) to curl headers.
func from(ip string, headers []string) []string {
	return append([]string{"X-Forwarded-For: " + ip}, headers...)
}
