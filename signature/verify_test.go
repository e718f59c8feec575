package signature

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

const testAgent = "https://agent.example"

// signer signs requests the way an agent does, with a key of its own.
type signer struct {
	pub  ed25519.PublicKey
	priv ed25519.PrivateKey
}

func newSigner(t testing.TB) signer {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer{pub, priv}
}

// sign adds Signature-Input (label=input) and Signature to r, signing the
// base this package builds; the vectors above check that builder.
func (s signer) sign(t testing.TB, r *http.Request, label, input string) {
	t.Helper()
	r.Header.Add("Signature-Input", label+"="+input)
	m := requestMessage(r)
	base, err := signatureBase(&m, memberOf(t, label+"="+input, label))
	if err != nil {
		t.Fatalf("signing: %v", err)
	}
	sig := ed25519.Sign(s.priv, base)
	r.Header.Add("Signature", fmt.Sprintf("%s=:%s:", label, b64(sig)))
}

// params are the usual signature parameters at now, valid for an hour.
func (s signer) params(now time.Time, extra string) string {
	return fmt.Sprintf(`;created=%d;expires=%d;keyid="%s";alg="ed25519";tag="web-bot-auth"%s`, now.Unix(), now.Add(time.Hour).Unix(), Thumbprint(s.pub), extra)
}

func pinned(t testing.TB, agent string, signers ...signer) *Keyring {
	k := NewKeyring(nil)
	for _, s := range signers {
		if err := k.Pin(agent, map[string]*Key{Thumbprint(s.pub): {ID: Thumbprint(s.pub), Ed25519: s.pub}}); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// TestVerifyOutcomes: every check of the profile, each with a request that
// passes all the others.
func TestVerifyOutcomes(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	agent, other, stranger := newSigner(t), newSigner(t), newSigner(t)
	keys := pinned(t, testAgent, agent)
	if err := keys.Pin("https://other.example", map[string]*Key{Thumbprint(other.pub): {ID: Thumbprint(other.pub), Ed25519: other.pub}}); err != nil {
		t.Fatal(err)
	}
	const components = `("@method" "@authority" "@path" "signature-agent";key="sig1")`
	base := func() *http.Request {
		return newRequest("GET", "/docs/page.html?x=1", "www.example.com", "Signature-Agent", `sig1="`+testAgent+`"`)
	}
	signed := func(mut func(r *http.Request) string) *http.Request {
		r := base()
		input := components + agent.params(now, "")
		if mut != nil {
			if in := mut(r); in != "" {
				input = in
			}
		}
		agent.sign(t, r, "sig1", input)
		return r
	}
	for _, tc := range []struct {
		name string
		req  func() *http.Request
		want Outcome
		err  string // part of the error
	}{
		{"valid", func() *http.Request { return signed(nil) }, Verified, ""},
		{"valid, legacy Signature-Agent", func() *http.Request {
			return signed(func(r *http.Request) string {
				r.Header.Set("Signature-Agent", `"`+testAgent+`"`)
				return `("@authority" "signature-agent")` + agent.params(now, "")
			})
		}, Verified, ""},
		{"valid, @target-uri instead of @authority", func() *http.Request {
			return signed(func(*http.Request) string {
				return `("@target-uri" "signature-agent";key="sig1")` + agent.params(now, "")
			})
		}, Verified, ""},
		{"valid, agent with default port and path", func() *http.Request {
			return signed(func(r *http.Request) string {
				r.Header.Set("Signature-Agent", `sig1="HTTPS://Agent.Example:443/"`)
				return ""
			})
		}, Verified, ""},
		{"valid, created a little ahead (clock skew)", func() *http.Request {
			return signed(func(*http.Request) string { return components + agent.params(now.Add(30*time.Second), "") })
		}, Verified, ""},
		{"tampered path", func() *http.Request { r := signed(nil); r.RequestURI = "/private/page.html?x=1"; return r }, Invalid, "does not verify"},
		{"tampered method", func() *http.Request { r := signed(nil); r.Method = "POST"; return r }, Invalid, "does not verify"},
		{"tampered authority", func() *http.Request { r := signed(nil); r.Host = "evil.example"; return r }, Invalid, "does not verify"},
		{"tampered Signature-Agent: another pinned agent", func() *http.Request {
			r := signed(nil)
			r.Header.Set("Signature-Agent", `sig1="https://other.example"`)
			return r
		}, Invalid, "unknown key"},
		{"tampered signature", func() *http.Request {
			r := signed(nil)
			sig := r.Header.Get("Signature")
			r.Header.Set("Signature", sig[:10]+string(rune(sig[10]^1))+sig[11:])
			return r
		}, Invalid, ""},
		{"expired", func() *http.Request {
			return signed(func(*http.Request) string { return components + agent.params(now.Add(-2*time.Hour), "") })
		}, Invalid, "expired"},
		{"created in the future", func() *http.Request {
			return signed(func(*http.Request) string { return components + agent.params(now.Add(5*time.Minute), "") })
		}, Invalid, "future"},
		{"valid too long", func() *http.Request {
			return signed(func(*http.Request) string {
				return components + fmt.Sprintf(`;created=%d;expires=%d;keyid="%s";tag="web-bot-auth"`, now.Unix(), now.Add(25*time.Hour).Unix(), Thumbprint(agent.pub))
			})
		}, Invalid, "more than"},
		{"no expires", func() *http.Request {
			return signed(func(*http.Request) string {
				return components + fmt.Sprintf(`;created=%d;keyid="%s";tag="web-bot-auth"`, now.Unix(), Thumbprint(agent.pub))
			})
		}, Invalid, "required"},
		{"wrong key: signed by a stranger, naming the agent's key", func() *http.Request {
			r := base()
			stranger.sign(t, r, "sig1", components+agent.params(now, ""))
			return r
		}, Invalid, "does not verify"},
		{"unknown key of a pinned agent", func() *http.Request {
			r := base()
			stranger.sign(t, r, "sig1", components+stranger.params(now, ""))
			return r
		}, Invalid, "unknown key"},
		{"unknown agent", func() *http.Request {
			r := base()
			r.Header.Set("Signature-Agent", `sig1="https://unknown.example"`)
			stranger.sign(t, r, "sig1", components+stranger.params(now, ""))
			return r
		}, Unverified, "unknown agent"},
		{"wrong tag", func() *http.Request {
			return signed(func(*http.Request) string {
				return strings.Replace(components+agent.params(now, ""), "web-bot-auth", "web-bot-auth-x", 1)
			})
		}, Unverified, "tagged"},
		{"no tag", func() *http.Request {
			return signed(func(*http.Request) string {
				return strings.Replace(components+agent.params(now, ""), `;tag="web-bot-auth"`, "", 1)
			})
		}, Unverified, "tagged"},
		{"missing @authority", func() *http.Request {
			return signed(func(*http.Request) string {
				return `("@method" "@path" "signature-agent";key="sig1")` + agent.params(now, "")
			})
		}, Invalid, "@authority"},
		{"Signature-Agent not covered", func() *http.Request {
			return signed(func(*http.Request) string { return `("@method" "@authority" "@path")` + agent.params(now, "") })
		}, Invalid, "Signature-Agent"},
		{"no Signature-Agent", func() *http.Request {
			r := newRequest("GET", "/", "www.example.com")
			agent.sign(t, r, "sig1", `("@authority")`+agent.params(now, ""))
			return r
		}, Unverified, "attributed"},
		{"duplicate label in two lines", func() *http.Request {
			r := signed(nil)
			r.Header.Add("Signature-Input", "sig1="+components+stranger.params(now, ""))
			return r
		}, Invalid, "more than once"},
		{"duplicate label in one line", func() *http.Request {
			r := signed(nil)
			in := r.Header.Get("Signature-Input")
			r.Header.Set("Signature-Input", in+", "+in)
			return r
		}, Invalid, "more than once"},
		{"duplicate Signature", func() *http.Request {
			r := signed(nil)
			r.Header.Add("Signature", "sig1=:AAAA:")
			return r
		}, Invalid, "more than once"},
		{"HMAC", func() *http.Request {
			return signed(func(*http.Request) string {
				return strings.Replace(components+agent.params(now, ""), "ed25519", "hmac-sha256", 1)
			})
		}, Invalid, "shared-secret"},
		{"RSA", func() *http.Request {
			return signed(func(*http.Request) string {
				return strings.Replace(components+agent.params(now, ""), "ed25519", "rsa-pss-sha512", 1)
			})
		}, Unverified, "Ed25519 only"},
		{"http agent", func() *http.Request {
			return signed(func(r *http.Request) string {
				r.Header.Set("Signature-Agent", `sig1="http://agent.example"`)
				return ""
			})
		}, Unverified, "https"},
		{"agent with a path", func() *http.Request {
			return signed(func(r *http.Request) string {
				r.Header.Set("Signature-Agent", `sig1="https://agent.example/keys"`)
				return ""
			})
		}, Unverified, "origin"},
		{"jwks_uri discovery", func() *http.Request {
			return signed(func(r *http.Request) string {
				r.Header.Set("Signature-Agent", `sig1="https://agent.example/jwks.json";type=jwks_uri`)
				return ""
			})
		}, Unverified, "discovery type"},
		{"covered header missing", func() *http.Request {
			r := signed(func(r *http.Request) string {
				r.Header.Set("X-Intent", "crawl")
				return `("@authority" "x-intent" "signature-agent";key="sig1")` + agent.params(now, "")
			})
			r.Header.Del("X-Intent")
			return r
		}, Invalid, "not in the request"},
		{"@query-param", func() *http.Request {
			// Signed with a signature this verifier cannot check: any bytes.
			r := base()
			r.Header.Set("Signature-Input", `sig1=("@authority" "@query-param";name="x" "signature-agent";key="sig1")`+agent.params(now, ""))
			r.Header.Set("Signature", "sig1=:"+b64(make([]byte, 64))+":")
			return r
		}, Unverified, "query-param"},
		{"malformed Signature-Input", func() *http.Request {
			r := signed(nil)
			r.Header.Set("Signature-Input", `sig1=("@authority"`)
			return r
		}, Invalid, "Signature-Input"},
		{"Signature without Signature-Input", func() *http.Request {
			r := signed(nil)
			r.Header.Del("Signature-Input")
			return r
		}, Unverified, "together"},
		{"a second, invalid web-bot-auth signature", func() *http.Request {
			r := signed(nil)
			stranger.sign(t, r, "sig2", components+agent.params(now, ""))
			return r
		}, Invalid, "sig2"},
		{"a second signature with another tag is ignored", func() *http.Request {
			r := signed(nil)
			r.Header.Add("Signature-Input", `other=("@authority");created=1;keyid="x";tag="other"`)
			r.Header.Add("Signature", `other=:AAAA:`)
			return r
		}, Verified, ""},
		{"unsigned", func() *http.Request { return newRequest("GET", "/", "www.example.com") }, None, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := NewVerifier(Options{Keys: keys, Now: func() time.Time { return now }})
			res := v.Verify(context.Background(), tc.req())
			if res.Outcome != tc.want {
				t.Fatalf("Verify = %v (%v), want %v", res.Outcome, res.Err, tc.want)
			}
			if tc.err != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), tc.err)) {
				t.Errorf("error %v, want one about %q", res.Err, tc.err)
			}
			if res.Outcome == Verified && (res.Agent != testAgent || res.KeyID != Thumbprint(agent.pub)) {
				t.Errorf("verified agent %q key %q", res.Agent, res.KeyID)
			}
		})
	}
}

// TestVerifyNonce: with a nonce cache, a verified signature's nonce is
// refused when it comes again within its validity.
func TestVerifyNonce(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	agent := newSigner(t)
	clock := now
	v := NewVerifier(Options{Keys: pinned(t, testAgent, agent), Nonces: NewNonceCache(4), Now: func() time.Time { return clock }})
	req := func(nonce string) *http.Request {
		r := newRequest("GET", "/", "www.example.com", "Signature-Agent", `sig1="`+testAgent+`"`)
		agent.sign(t, r, "sig1", `("@authority" "signature-agent";key="sig1")`+agent.params(now, `;nonce="`+nonce+`"`))
		return r
	}
	if res := v.Verify(context.Background(), req("n1")); res.Outcome != Verified {
		t.Fatalf("first use: %v %v", res.Outcome, res.Err)
	}
	if res := v.Verify(context.Background(), req("n1")); res.Outcome != Invalid || !strings.Contains(res.Err.Error(), "replayed") {
		t.Errorf("replay: %v %v", res.Outcome, res.Err)
	}
	if res := v.Verify(context.Background(), req("n2")); res.Outcome != Verified {
		t.Errorf("another nonce: %v %v", res.Outcome, res.Err)
	}
	// Bounded: many nonces keep the cache within its size.
	for i := 0; i < 20; i++ {
		v.Verify(context.Background(), req(fmt.Sprint("m", i)))
	}
	if n := v.opts.Nonces.Len(); n > 4 {
		t.Errorf("nonce cache holds %d, max 4", n)
	}
	// After the signature expires, its nonce is forgotten (and the
	// signature is refused as expired anyway).
	clock = now.Add(2 * time.Hour)
	if res := v.Verify(context.Background(), req("n2")); res.Outcome != Invalid || !strings.Contains(res.Err.Error(), "expired") {
		t.Errorf("expired: %v %v", res.Outcome, res.Err)
	}
}

// TestUnsignedFree: a request without signature headers costs no
// allocation.
func TestUnsignedFree(t *testing.T) {
	v := NewVerifier(Options{Keys: NewKeyring(nil)})
	r := newRequest("GET", "/", "www.example.com", "User-Agent", "curl/8.0", "Accept", "*/*")
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		if v.Verify(ctx, r).Outcome != None {
			t.Fatal("unsigned request not None")
		}
	}); n != 0 {
		t.Errorf("%v allocations per unsigned request", n)
	}
}

// TestKeyringErrors: the key source's answers map to outcomes.
func TestKeyringErrors(t *testing.T) {
	k := NewKeyring(nil)
	if err := k.Pin("http://agent.example", nil); err == nil {
		t.Error("Pin accepted an http agent")
	}
	if err := k.Pin(testAgent, nil); err == nil {
		t.Error("Pin accepted no keys")
	}
	if _, err := k.Key(context.Background(), testAgent, "x"); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("unknown agent: %v", err)
	}
}

// FuzzVerifyHeaders: any signature headers are verified or refused without
// panicking; only a signature by the pinned key is ever Verified.
func FuzzVerifyHeaders(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	agent := newSigner(f)
	r := newRequest("GET", "/a?b", "example.com", "Signature-Agent", `sig1="`+testAgent+`"`)
	agent.sign(f, r, "sig1", `("@method" "@authority" "@path" "@query" "signature-agent";key="sig1")`+agent.params(now, `;nonce="abc"`))
	f.Add(r.Header.Get("Signature-Input"), r.Header.Get("Signature"), r.Header.Get("Signature-Agent"), "/a?b")
	for _, dv := range draftVectors {
		f.Add(dv.signatureInput, dv.signature, dv.signatureAgent, "/path/to/resource")
	}
	f.Add(`sig1=("@authority" "x";sf "y";key="a" "z";bs "@request-target" "@target-uri" "@scheme");created=1;expires=2;keyid="k";tag="web-bot-auth"`, `sig1=:AAAA:`, `sig1="https://a.example"`, "*")
	f.Add(`a=(), b=("@x";req), c="s"`, `a=:=:, b=1`, `"x"`, "http://h/p")
	keys := pinned(f, testAgent, agent)
	f.Fuzz(func(t *testing.T, input, signature, agentHeader, target string) {
		r := newRequest("GET", target, "example.com", "Signature-Input", input, "Signature", signature, "Signature-Agent", agentHeader, "X", "y", "Z", "a, b")
		v := NewVerifier(Options{Keys: keys, Now: func() time.Time { return now }})
		res := v.Verify(context.Background(), r)
		if res.Outcome == Verified && (res.Agent != testAgent || res.KeyID != Thumbprint(agent.pub)) {
			t.Fatalf("verified %q %q", res.Agent, res.KeyID)
		}
		if res.Outcome != None && res.Outcome != Verified && res.Err == nil {
			t.Fatalf("%v without a reason", res.Outcome)
		}
	})
}

// FuzzSignatureBase: for any covered components and request, the base is
// built or refused without panicking, and a built base has one line per
// component and ends with the @signature-params line.
func FuzzSignatureBase(f *testing.F) {
	f.Add(`("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`, "POST", "/foo?param=Value&Pet=dog", "example.com", "Date", "Tue, 20 Apr 2021 02:07:55 GMT")
	f.Add(`("@target-uri" "@scheme" "@request-target" "@query" "x";bs "signature-agent";key="a" "signature-agent";sf)`, "GET", "http://example.com:80/p?q", "EXAMPLE.com:80", "Signature-Agent", `a="https://x.example";type=directory, b=?0`)
	f.Add(`("x" "x")`, "GET", "*", "h", "X", " a ")
	f.Fuzz(func(t *testing.T, input, method, target, host, name, value string) {
		il, err := parseInnerList(input)
		if err != nil {
			return
		}
		r := newRequest(method, target, host)
		if name != "" && !strings.ContainsAny(name, ": \r\n") {
			r.Header.Add(name, value)
		}
		m := requestMessage(r)
		base, err := signatureBase(&m, il)
		if err != nil {
			return
		}
		lines := strings.Split(string(base), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, `"@signature-params": (`) {
			t.Fatalf("last line %q", last)
		}
		if n := strings.Count(string(base), "\n"); n < len(il.Items) {
			t.Fatalf("%d lines for %d components", n, len(il.Items))
		}
	})
}

// BenchmarkVerify: a signed request from a pinned agent, and an unsigned
// one.
func BenchmarkVerify(b *testing.B) {
	now := time.Unix(1_800_000_000, 0)
	agent := newSigner(b)
	r := newRequest("GET", "/docs/page.html", "www.example.com", "Signature-Agent", `sig1="`+testAgent+`"`, "User-Agent", "Mozilla/5.0")
	agent.sign(b, r, "sig1", `("@method" "@authority" "@path" "signature-agent";key="sig1")`+agent.params(now, `;nonce="0123456789abcdef0123456789abcdef"`))
	v := NewVerifier(Options{Keys: pinned(b, testAgent, agent), Now: func() time.Time { return now }})
	ctx := context.Background()
	b.Run("signed", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if res := v.Verify(ctx, r); res.Outcome != Verified {
				b.Fatal(res.Err)
			}
		}
	})
	// The Ed25519 check alone, for comparison: the rest of "signed" is
	// parsing and the signature base.
	m := requestMessage(r)
	base, err := signatureBase(&m, memberOf(b, r.Header.Get("Signature-Input"), "sig1"))
	if err != nil {
		b.Fatal(err)
	}
	sig := ed25519.Sign(agent.priv, base)
	b.Run("ed25519.Verify alone", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if !ed25519.Verify(agent.pub, base, sig) {
				b.Fatal("does not verify")
			}
		}
	})
	unsigned := newRequest("GET", "/docs/page.html", "www.example.com", "User-Agent", "Mozilla/5.0")
	b.Run("unsigned", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if v.Verify(ctx, unsigned).Outcome != None {
				b.Fatal("signed?")
			}
		}
	})
}
