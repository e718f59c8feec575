package signature

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// dirServer is an agent's key directory on loopback (TLS).
type dirServer struct {
	*httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	handler  http.HandlerFunc
}

func startDirServer(t *testing.T, h http.HandlerFunc) *dirServer {
	t.Helper()
	s := &dirServer{handler: h}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if r.URL.Path != WellKnownPath {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		h := s.handler
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *dirServer) set(h http.HandlerFunc) {
	s.mu.Lock()
	s.handler = h
	s.mu.Unlock()
}

// jwksOf is a directory body with the signers' keys.
func jwksOf(signers ...signer) string {
	var keys []string
	for _, s := range signers {
		keys = append(keys, fmt.Sprintf(`{"kty":"OKP","crv":"Ed25519","kid":"%s","x":"%s","use":"sig"}`, Thumbprint(s.pub), base64.RawURLEncoding.EncodeToString(s.pub)))
	}
	return `{"keys":[` + strings.Join(keys, ",") + `]}`
}

func serveJWKS(body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", directoryMediaType)
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		if etag := w.Header().Get("ETag"); etag != "" && r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, body)
	}
}

// testDirectories fetches from the test server on loopback, which only
// tests may do.
func testDirectories(s *dirServer, opts DirectoryOptions) *Directories {
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	opts.rootCAs = pool
	opts.allowAddr = func(ip netip.Addr) bool { return ip.IsLoopback() }
	return NewDirectories(opts)
}

// TestDirectoryRefusesPrivate: a directory on a loopback address is never
// fetched, whether the agent names the address or a name that resolves to
// it (the check is on the address dialled).
func TestDirectoryRefusesPrivate(t *testing.T) {
	agent := newSigner(t)
	s := startDirServer(t, serveJWKS(jwksOf(agent)))
	d := NewDirectories(DirectoryOptions{Wait: 3 * time.Second})
	defer d.Close()
	port := s.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":")+1:]
	for _, origin := range []string{"https://127.0.0.1:" + port, "https://localhost:" + port} {
		_, err := d.Keys(context.Background(), origin)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "not a public address") {
			t.Errorf("%s: %v", origin, err)
		}
	}
	if n := s.requests.Load(); n != 0 {
		t.Errorf("the loopback directory got %d requests", n)
	}
	for ip, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700::1111": true,
		"10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false, "127.0.0.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "0.0.0.0": false, "::1": false, "fe80::1": false, "fd00::1": false, "::ffff:10.0.0.1": false,
		"64:ff9b::a00:1": false, "224.0.0.1": false,
	} {
		if got := PublicAddr(netip.MustParseAddr(ip)); got != want {
			t.Errorf("PublicAddr(%s) = %v", ip, got)
		}
	}
}

// TestDirectoryCache: one fetch in flight per directory, HTTP freshness,
// revalidation with ETag, a failed refresh keeps the keys and is retried
// only after Retry-After (at most 5 minutes), a refresh without the key
// removes it.
func TestDirectoryCache(t *testing.T) {
	agent, next := newSigner(t), newSigner(t)
	s := startDirServer(t, serveJWKS(jwksOf(agent), "Cache-Control", "max-age=3600", "ETag", `"v1"`))
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	d := testDirectories(s, DirectoryOptions{Wait: 5 * time.Second, Now: clock})
	defer d.Close()
	keys := NewKeyring(d)
	origin := s.URL
	id := Thumbprint(agent.pub)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := keys.Key(context.Background(), origin, id); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := s.requests.Load(); n != 1 {
		t.Errorf("20 concurrent lookups made %d fetches", n)
	}
	advance(59 * time.Minute)
	if _, err := keys.Key(context.Background(), origin, id); err != nil || s.requests.Load() != 1 {
		t.Errorf("fresh keys: %v, %d fetches", err, s.requests.Load())
	}
	// Stale: the keys serve at once while the directory is revalidated.
	advance(2 * time.Minute)
	if _, err := keys.Key(context.Background(), origin, id); err != nil {
		t.Error(err)
	}
	waitFor(t, func() bool { return s.requests.Load() == 2 && d.idle() })
	// A failing directory: the keys stay; the next try waits for
	// Retry-After, capped at 5 minutes.
	s.set(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	advance(2 * time.Hour)
	if _, err := keys.Key(context.Background(), origin, id); err != nil {
		t.Error(err)
	}
	waitFor(t, func() bool { return s.requests.Load() == 3 && d.idle() })
	if _, err := keys.Key(context.Background(), origin, id); err != nil {
		t.Errorf("after a failed refresh: %v", err)
	}
	advance(4 * time.Minute)
	keys.Key(context.Background(), origin, id)
	if n := s.requests.Load(); n != 3 {
		t.Errorf("retried after 4 minutes: %d fetches", n)
	}
	// The directory is back, with a new key only: the old one is gone.
	s.set(serveJWKS(jwksOf(next), "Cache-Control", "max-age=60"))
	advance(2 * time.Minute)
	keys.Key(context.Background(), origin, id)
	waitFor(t, func() bool { return s.requests.Load() == 4 && d.idle() })
	if _, err := keys.Key(context.Background(), origin, id); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("a removed key: %v", err)
	}
	if _, err := keys.Key(context.Background(), origin, Thumbprint(next.pub)); err != nil {
		t.Errorf("the new key: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (d *Directories) idle() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inflight == 0
}

// TestDirectoryRefusals: redirects, errors, wrong media types, oversized
// and slow directories are failures, remembered for FailureTTL.
func TestDirectoryRefusals(t *testing.T) {
	agent := newSigner(t)
	big := `{"keys":[], "pad": "` + strings.Repeat("x", 4096) + `"}`
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		}, "status 302"},
		{"not found", http.NotFound, "status 404"},
		{"HTML", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, jwksOf(agent))
		}, "content type"},
		{"too large", serveJWKS(big), "larger than"},
		{"not a key set", serveJWKS(`{"keys": 1}`), "JWKS"},
		{"slow", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
				// The client gave up: answer nothing (a return would
				// write an empty 200, which a loaded machine under the
				// race detector has let the client read first).
				panic(http.ErrAbortHandler)
			}
		}, "timeout|deadline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startDirServer(t, tc.h)
			d := testDirectories(s, DirectoryOptions{Wait: 5 * time.Second, Timeout: 300 * time.Millisecond, MaxBytes: 1024})
			defer d.Close()
			_, err := d.Keys(context.Background(), s.URL)
			if !errors.Is(err, ErrUnavailable) || !containsAny(err.Error(), strings.Split(tc.want, "|")) {
				t.Fatalf("Keys = %v, want an error about %q", err, tc.want)
			}
			n := s.requests.Load()
			if _, err := d.Keys(context.Background(), s.URL); !errors.Is(err, ErrUnavailable) {
				t.Errorf("second lookup: %v", err)
			}
			if s.requests.Load() != n {
				t.Error("a failure was fetched again at once")
			}
		})
	}
}

// TestVerifyFetchedDirectory: a signature by a key the agent's directory
// publishes verifies on the first request (within Wait); the keyid alone
// never selects another agent's key.
func TestVerifyFetchedDirectory(t *testing.T) {
	agent := newSigner(t)
	s := startDirServer(t, serveJWKS(jwksOf(agent)))
	d := testDirectories(s, DirectoryOptions{Wait: 5 * time.Second})
	defer d.Close()
	now := time.Now()
	v := NewVerifier(Options{Keys: NewKeyring(d)})
	r := newRequest("GET", "/", "www.example.com", "Signature-Agent", `sig1="`+s.URL+`"`)
	agent.sign(t, r, "sig1", `("@authority" "signature-agent";key="sig1")`+agent.params(now, ""))
	if res := v.Verify(context.Background(), r); res.Outcome != Verified || res.Agent != s.URL {
		t.Fatalf("Verify = %v %q (%v)", res.Outcome, res.Agent, res.Err)
	}
	// The same key claimed for an agent whose directory does not publish
	// it: that directory is unreachable here, so unverified, never
	// verified through the first agent's key.
	r2 := newRequest("GET", "/", "www.example.com", "Signature-Agent", `sig1="https://other.example"`)
	agent.sign(t, r2, "sig1", `("@authority" "signature-agent";key="sig1")`+agent.params(now, ""))
	if res := v.Verify(context.Background(), r2); res.Outcome == Verified {
		t.Errorf("a key of %s verified a request of https://other.example", s.URL)
	}
}

// TestDirectoryNewRate: requests naming ever new agents start at most
// NewPerMinute fetches a minute.
func TestDirectoryNewRate(t *testing.T) {
	agent := newSigner(t)
	s := startDirServer(t, serveJWKS(jwksOf(agent)))
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	d := testDirectories(s, DirectoryOptions{Wait: time.Millisecond, NewPerMinute: 5, Now: clock})
	defer d.Close()
	refused := 0
	for i := 0; i < 20; i++ {
		_, err := d.Keys(context.Background(), fmt.Sprintf("https://a%d.example", i))
		if err != nil && strings.Contains(err.Error(), "new key directories a minute") {
			refused++
		}
	}
	if refused != 15 {
		t.Errorf("%d of 20 new directories refused, want 15", refused)
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	if _, err := d.Keys(context.Background(), "https://b.example"); err != nil && strings.Contains(err.Error(), "a minute") {
		t.Errorf("a minute later: %v", err)
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
