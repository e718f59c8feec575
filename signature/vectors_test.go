package signature

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
)

// The RFC 9421 appendix B.1.4 test key (Ed25519). It is public: never trust
// it in production (ParseJWKS refuses it).
const (
	testKeyD = "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU"
	testKeyX = "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"
)

func testKey(t testing.TB) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	seed, err := base64.RawURLEncoding.DecodeString(testKeyD)
	if err != nil {
		t.Fatal(err)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	if got := base64.RawURLEncoding.EncodeToString(pub); got != testKeyX {
		t.Fatalf("public key %s, want %s", got, testKeyX)
	}
	return pub, priv
}

// newRequest builds a server-side request as net/http hands it to a
// handler: Host apart, header lines as sent.
func newRequest(method, target, host string, headers ...string) *http.Request {
	r := &http.Request{Method: method, RequestURI: target, Host: host, Header: http.Header{}}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

// memberOf parses one labelled Signature-Input member.
func memberOf(t testing.TB, signatureInput, label string) httpsfv.InnerList {
	t.Helper()
	d, err := httpsfv.UnmarshalDictionary([]string{signatureInput})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := d.Get(label)
	if !ok {
		t.Fatalf("no label %s in %s", label, signatureInput)
	}
	return m.(httpsfv.InnerList)
}

func sigBytes(t testing.TB, signature, label string) []byte {
	t.Helper()
	d, err := httpsfv.UnmarshalDictionary([]string{signature})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := d.Get(label)
	return m.(httpsfv.Item).Value.([]byte)
}

// TestRFC9421B26: the signature base and Ed25519 signature of RFC 9421
// appendix B.2.6 over the test request of appendix B.2, with the B.1.4 key.
func TestRFC9421B26(t *testing.T) {
	pub, priv := testKey(t)
	r := newRequest("POST", "/foo?param=Value&Pet=dog", "example.com",
		"Date", "Tue, 20 Apr 2021 02:07:55 GMT",
		"Content-Type", "application/json",
		"Content-Digest", "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:",
		"Content-Length", "18")
	const input = `sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
	const want = `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
	m := requestMessage(r)
	base, err := signatureBase(&m, memberOf(t, input, "sig-b26"))
	if err != nil {
		t.Fatal(err)
	}
	if string(base) != want {
		t.Fatalf("signature base:\n%s\nwant:\n%s", base, want)
	}
	const signature = `sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:`
	sig := sigBytes(t, signature, "sig-b26")
	if !ed25519.Verify(pub, base, sig) {
		t.Error("the RFC's signature does not verify")
	}
	if got := ed25519.Sign(priv, base); string(got) != string(sig) {
		t.Error("signing the base does not give the RFC's signature")
	}
	// Any other component values change the base.
	for _, tamper := range []func(*http.Request){
		func(r *http.Request) { r.Method = "GET" },
		func(r *http.Request) { r.RequestURI = "/fooo?param=Value&Pet=dog" },
		func(r *http.Request) { r.Host = "example.org" },
		func(r *http.Request) { r.Header.Set("Content-Length", "19") },
		func(r *http.Request) { r.Header.Add("Date", "Wed, 21 Apr 2021 02:07:55 GMT") },
	} {
		r2 := newRequest(r.Method, r.RequestURI, r.Host)
		r2.Header = r.Header.Clone()
		tamper(r2)
		m := requestMessage(r2)
		b, err := signatureBase(&m, memberOf(t, input, "sig-b26"))
		if err == nil && ed25519.Verify(pub, b, sig) {
			t.Errorf("a tampered request still verifies:\n%s", b)
		}
	}
}

// draftVector is a Web Bot Auth test vector of
// draft-ietf-webbotauth-httpsig-protocol's appendix (Ed25519, the B.1.4
// key, https://example.com/path/to/resource); the same vectors are in
// cloudflare/web-bot-auth's test_data/web_bot_auth_architecture_v2.json,
// with one more that has no Signature-Agent.
type draftVector struct {
	name           string
	signatureAgent string // "" for none
	signatureInput string
	signature      string
	base           string
	want           Outcome
}

var draftVectors = []draftVector{
	{
		name:           "dictionary Signature-Agent",
		signatureAgent: `agent2="https://signature-agent.test"`,
		signatureInput: `sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`,
		signature:      `sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:`,
		base: `"@authority": example.com
"signature-agent";key="agent2": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`,
		want: Verified,
	},
	{
		name:           "legacy string Signature-Agent",
		signatureAgent: `"https://signature-agent.test"`,
		signatureInput: `sig2=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`,
		signature:      `sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:`,
		base: `"@authority": example.com
"signature-agent": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`,
		want: Verified,
	},
	{
		name:           "no Signature-Agent (cloudflare/web-bot-auth)",
		signatureInput: `sig1=("@authority");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="zIW8+cdmA3vdYagbxojpONwa/l0EKJ/O3/wD486VvsQjO/RxPaSt6ZxvQaMcQzNnqKN/mQ6hpGiFro2L2qkz5A==";tag="web-bot-auth"`,
		signature:      `sig1=:QKN4fTdIYfh82fvoZCQiQA1weuozfCS/Led2zTMbewMMqH8PI2Wsy/5c4ao6B6D09nraNQdBNOADg8aM1MqfCg==:`,
		base: `"@authority": example.com
"@signature-params": ("@authority");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="zIW8+cdmA3vdYagbxojpONwa/l0EKJ/O3/wD486VvsQjO/RxPaSt6ZxvQaMcQzNnqKN/mQ6hpGiFro2L2qkz5A==";tag="web-bot-auth"`,
		want: Unverified, // the key cannot be attributed to an agent
	},
	{
		name:           "RSASSA-PSS (not supported)",
		signatureAgent: `agent2="https://signature-agent.test"`,
		signatureInput: `sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="oD0HwocPBSfpNy5W3bpJeyFGY_IQ_YpqxSjQ3Yd-CLA";alg="rsa-pss-sha512";expires=4889289600;nonce="wcfPQPh7SzkvrIVvhD00vNk9PkxJNY2NVbYl2PVBB4zmUoluSwE7W6bPtF60QA3k8g06FU7PPCD+J58YofY1zg==";tag="web-bot-auth"`,
		signature:      `sig2=:gHzpLNeHaHIO19NaJH9YMW5dcVSi2s0wOMBr6p18vcofS106sfC4KBIS0/szPlBBd1vIcyQ88B6CTEWIhRAiVrb9zfX0mx1aG12CSGWcYkSirHeyTxhbuJvXd27ed6skWoy4PjXItq38936ivUQjfdIwXh1aX6HxkAC3vRnEdSNfntkLWeEuIQ5BLIOBGE39fSwg27Qjq6OVWYas/9/aFUr3HA34MXWYdp+//cvlEKDp3kRoLOw9ro0AOr6srHrTeEtxon2afcws1aZVSlPdd2fZSEIGmw9HAHLDCEkFTERu1gH2k/zIEqgy7CAYXI9E5slog0cLg/Vc6+f8gih33g==:`,
		base: `"@authority": example.com
"signature-agent";key="agent2": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent";key="agent2");created=1735689600;keyid="oD0HwocPBSfpNy5W3bpJeyFGY_IQ_YpqxSjQ3Yd-CLA";alg="rsa-pss-sha512";expires=4889289600;nonce="wcfPQPh7SzkvrIVvhD00vNk9PkxJNY2NVbYl2PVBB4zmUoluSwE7W6bPtF60QA3k8g06FU7PPCD+J58YofY1zg==";tag="web-bot-auth"`,
		want: Unverified,
	},
}

func (dv draftVector) request() *http.Request {
	r := newRequest("GET", "/path/to/resource", "example.com", "Signature-Input", dv.signatureInput, "Signature", dv.signature)
	r.TLS = nil
	if dv.signatureAgent != "" {
		r.Header.Set("Signature-Agent", dv.signatureAgent)
	}
	return r
}

// testKeyring pins the RFC's test key for the draft's test agent, which
// only tests may do.
func testKeyring(t testing.TB) *Keyring {
	pub, _ := testKey(t)
	k := NewKeyring(nil)
	k.pinned["https://signature-agent.test"] = map[string]*Key{Thumbprint(pub): {ID: Thumbprint(pub), Ed25519: pub}}
	return k
}

// TestDraftVectors: the draft's Ed25519 vectors give the printed signature
// bases, verify with the B.1.4 key, and, at the vectors' created time with
// a validity long enough for their expires, are Verified.
func TestDraftVectors(t *testing.T) {
	pub, _ := testKey(t)
	if got := Thumbprint(pub); got != "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U" {
		t.Errorf("thumbprint of the B.1.4 key: %s", got)
	}
	v := NewVerifier(Options{Keys: testKeyring(t), MaxValidity: 200 * 365 * 24 * time.Hour, Now: func() time.Time { return time.Unix(1735689600, 0) }})
	for _, dv := range draftVectors {
		t.Run(dv.name, func(t *testing.T) {
			r := dv.request()
			label, _, _ := strings.Cut(dv.signatureInput, "=")
			m := requestMessage(r)
			base, err := signatureBase(&m, memberOf(t, dv.signatureInput, label))
			if err != nil {
				t.Fatal(err)
			}
			if string(base) != dv.base {
				t.Errorf("signature base:\n%s\nwant:\n%s", base, dv.base)
			}
			if strings.Contains(dv.signatureInput, `alg="ed25519"`) && !ed25519.Verify(pub, base, sigBytes(t, dv.signature, label)) {
				t.Error("the vector's signature does not verify")
			}
			res := v.Verify(context.Background(), r)
			if res.Outcome != dv.want {
				t.Errorf("Verify = %v (%v), want %v", res.Outcome, res.Err, dv.want)
			}
			if res.Outcome == Verified && res.Agent != "https://signature-agent.test" {
				t.Errorf("agent %q", res.Agent)
			}
		})
	}
	// With the default 24h validity, the dictionary vector (valid for a
	// century) is refused.
	strict := NewVerifier(Options{Keys: testKeyring(t), Now: func() time.Time { return time.Unix(1735689600, 0) }})
	if res := strict.Verify(context.Background(), draftVectors[0].request()); res.Outcome != Invalid {
		t.Errorf("a signature valid for a century: %v", res.Outcome)
	}
}

// TestThumbprint: RFC 8037 appendix A.3.
func TestThumbprint(t *testing.T) {
	x, _ := base64.RawURLEncoding.DecodeString("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
	if got := Thumbprint(ed25519.PublicKey(x)); got != "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k" {
		t.Errorf("Thumbprint = %s", got)
	}
	keys, err := ParseJWKS([]byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`))
	if err != nil || keys["kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"] == nil {
		t.Errorf("ParseJWKS = %v, %v", keys, err)
	}
	for name, bad := range map[string]string{
		"the RFC test key":   `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + testKeyX + `"}]}`,
		"HMAC":               `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`,
		"kid not thumbprint": `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"mine","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`,
		"short key":          `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA"}]}`,
		"X25519":             `{"keys":[{"kty":"OKP","crv":"X25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`,
		"no keys":            `{}`,
		"not JSON":           `keys`,
	} {
		if _, err := ParseJWKS([]byte(bad)); err == nil {
			t.Errorf("%s: ParseJWKS accepted %s", name, bad)
		}
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
