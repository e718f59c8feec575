package caddymodule

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// TestWebBotAuthCaddyfile: the web_bot_auth block lands in the JSON fields
// it documents (its bad values are rows of TestConfigErrors).
func TestWebBotAuthCaddyfile(t *testing.T) {
	a, b := newTestAgentKey(t), newTestAgentKey(t)
	h, err := unmarshal(t, `robots_guard {
		web_bot_auth {
			trusted_agent https://Agent.Example:443/ `+a.jwks+`
			trusted_agent https://other.example:8443 `+b.jwks+`
			fetch_directories off
			max_validity 1h
			clock_skew 30s
			nonce_cache 5000
		}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(h.WebBotAuth)
	want := `{"trusted_agents":{"https://Agent.Example:443/":"` + a.jwks + `","https://other.example:8443":"` + b.jwks + `"},"fetch_directories":false,"max_validity":3600000000000,"clock_skew":30000000000,"nonce_cache":5000}`
	if string(got) != want {
		t.Errorf("JSON:\n%s\nwant:\n%s", got, want)
	}
	if h, err := unmarshal(t, "robots_guard {\n\tweb_bot_auth\n}"); err != nil || h.WebBotAuth == nil || h.WebBotAuth.FetchDirectories != nil {
		t.Errorf("bare web_bot_auth: %+v, %v", h.WebBotAuth, err)
	}
}

// testAgentKey is an agent's key pair and JWKS file for the tests.
type testAgentKey struct {
	priv  ed25519.PrivateKey
	keyID string
	jwks  string // file path
}

func newTestAgentKey(t testing.TB) testAgentKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	x := base64.RawURLEncoding.EncodeToString(pub)
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	k := testAgentKey{priv: priv, keyID: base64.RawURLEncoding.EncodeToString(sum[:]), jwks: filepath.Join(t.TempDir(), "agent.jwks")}
	doc := fmt.Sprintf(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"%s","kid":"%s"}]}`, x, k.keyID)
	if err := os.WriteFile(k.jwks, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return k
}

// sign returns the headers of a Web Bot Auth signature over method,
// authority, path and the Signature-Agent member, built here by hand (not
// with package signature) from RFC 9421 section 2.5.
func (k testAgentKey) sign(agent, method, authority, path string, created time.Time, validity time.Duration) []string {
	params := fmt.Sprintf(`("@method" "@authority" "@path" "signature-agent";key="sig1");created=%d;expires=%d;keyid="%s";alg="ed25519";tag="web-bot-auth"`,
		created.Unix(), created.Add(validity).Unix(), k.keyID)
	base := fmt.Sprintf("\"@method\": %s\n\"@authority\": %s\n\"@path\": %s\n\"signature-agent\";key=\"sig1\": \"%s\"\n\"@signature-params\": %s",
		method, authority, path, agent, params)
	sig := ed25519.Sign(k.priv, []byte(base))
	return []string{
		"Signature-Agent", `sig1="` + agent + `"`,
		"Signature-Input", "sig1=" + params,
		"Signature", "sig1=:" + base64.StdEncoding.EncodeToString(sig) + ":",
	}
}

// TestIntegrationWebBotAuth: through a real Caddy, a signed agent pinned
// with trusted_agent is served and never throttled (Crawl-delay: 5), meets
// robots.txt on disallowed paths, and a tampered or expired signature is
// refused as an impostor; the outcomes are counted.
func TestIntegrationWebBotAuth(t *testing.T) {
	s := newSite(t, siteRobots)
	key := newTestAgentKey(t)
	const agent = "https://agent.example"
	tester := caddytest.NewTester(t)
	tester.InitServer(s.config("", "verify off\n\t\tweb_bot_auth {\n\t\t\ttrusted_agent "+agent+" "+key.jwks+"\n\t\t\tfetch_directories off\n\t\t}"), "caddyfile")
	before := adminMetrics(t) // the counters are the process's: they outlive configs
	const chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	now := time.Now()
	for i := 0; i < 10; i++ {
		path := fmt.Sprintf("/page%d.html", i)
		resp, body := get(t, tester, "GET", path, chrome, key.sign(agent, "GET", "localhost:9080", path, now, time.Hour)...)
		expectStatus(t, "signed agent "+path, resp, body, 200)
		if body != "backend:"+path {
			t.Errorf("signed agent got %q", body)
		}
	}
	resp, body := get(t, tester, "GET", "/private/report.html", chrome, key.sign(agent, "GET", "localhost:9080", "/private/report.html", now, time.Hour)...)
	expectStatus(t, "signed agent on a disallowed path", resp, body, 403)
	if got := resp.Header.Get("X-Robots-Guard"); got != "disallowed" {
		t.Errorf("X-Robots-Guard = %q", got)
	}
	tampered := key.sign(agent, "GET", "localhost:9080", "/about.html", now, time.Hour)
	resp, body = get(t, tester, "GET", "/private/report.html", chrome, tampered...)
	expectStatus(t, "tampered path", resp, body, 403)
	if got := resp.Header.Get("X-Robots-Guard"); got != "impostor" {
		t.Errorf("tampered: X-Robots-Guard = %q", got)
	}
	resp, body = get(t, tester, "GET", "/old.html", chrome, key.sign(agent, "GET", "localhost:9080", "/old.html", now.Add(-3*time.Hour), time.Hour)...)
	expectStatus(t, "expired signature", resp, body, 403)
	// Unsigned, the same browser is served as before.
	resp, body = get(t, tester, "GET", "/private/report.html", chrome)
	expectStatus(t, "unsigned browser", resp, body, 200)
	checkCounted(t, before, adminMetrics(t), map[string]float64{
		`caddy_robots_guard_signatures_total{outcome="verified"}`: 11,
		`caddy_robots_guard_signatures_total{outcome="invalid"}`:  2,
	})
}

// BenchmarkServeHTTPWebBotAuth: the handler's cost per request with
// web_bot_auth on, for an unsigned browser (the same work as without it)
// and for a signed agent pinned with trusted_agent (Ed25519 verification
// per request), beside the same browser with web_bot_auth off.
func BenchmarkServeHTTPWebBotAuth(b *testing.B) {
	dir := b.TempDir()
	robots := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /private/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	key := newTestAgentKey(b)
	const agent = "https://agent.example"
	const chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	for _, tc := range []struct {
		name   string
		wba    bool
		signed bool
	}{{"unsigned, web_bot_auth off", false, false}, {"unsigned, web_bot_auth on", true, false}, {"signed", true, true}} {
		b.Run(tc.name, func(b *testing.B) {
			h := &Handler{Robots: robots, Zone: "bench-wba", Verify: &VerifyConfig{Disabled: true}, Rates: map[string]caddy.Duration{"ai": 0}}
			if tc.wba {
				off := false
				h.WebBotAuth = &WebBotAuthConfig{TrustedAgents: map[string]string{agent: key.jwks}, FetchDirectories: &off}
			}
			ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
			defer cancel()
			if err := h.Provision(ctx); err != nil {
				b.Fatal(err)
			}
			defer h.Cleanup()
			r := httptest.NewRequest("GET", "/articles/42", nil)
			r.Header.Set("User-Agent", chrome)
			if tc.signed {
				hs := key.sign(agent, "GET", r.Host, "/articles/42", time.Now(), time.Hour)
				for i := 0; i < len(hs); i += 2 {
					r.Header.Set(hs[i], hs[i+1])
				}
			}
			rctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer())
			r = r.WithContext(context.WithValue(rctx, caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: "192.0.2.1"}))
			var served int
			next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { served++; return nil })
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				if err := h.ServeHTTP(w, r, next); err != nil {
					b.Fatal(err)
				}
			}
			if served == 0 {
				b.Fatal("nothing served")
			}
		})
	}
}
