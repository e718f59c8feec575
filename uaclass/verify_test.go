package uaclass

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// testDNS is a DNS server on loopback that answers from a fixed zone, counts
// PTR queries, and never answers names listed in silent (to test timeouts).
type testDNS struct {
	addr    string
	ptr     map[string]string       // reverse name -> PTR target
	addrs   map[string][]netip.Addr // name -> A and AAAA answers
	silent  map[string]bool         // names the server does not answer
	queries atomic.Int64            // PTR queries seen
	// mu guards the maps: a lookup left running by an earlier test can
	// reach this server when it reuses that test's port.
	mu sync.Mutex
}

func startTestDNS(t testing.TB) *testDNS {
	t.Helper()
	s := &testDNS{ptr: map[string]string{}, addrs: map[string][]netip.Addr{}, silent: map[string]bool{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = pc.LocalAddr().String()
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(s.serve)}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return s
}

// host adds a name with its address and, unless ptr is "", a PTR record for
// the address pointing at ptr.
func (s *testDNS) host(ip, name, ptr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := netip.MustParseAddr(ip)
	if name != "" {
		s.addrs[dns.Fqdn(name)] = append(s.addrs[dns.Fqdn(name)], a)
	}
	if ptr != "" {
		rev, _ := dns.ReverseAddr(ip)
		s.ptr[rev] = dns.Fqdn(ptr)
	}
}

func (s *testDNS) serve(w dns.ResponseWriter, req *dns.Msg) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := req.Question[0]
	if s.silent[q.Name] {
		return // let the client time out
	}
	m := new(dns.Msg)
	m.SetReply(req)
	switch q.Qtype {
	case dns.TypePTR:
		s.queries.Add(1)
		if target, ok := s.ptr[q.Name]; ok {
			m.Answer = append(m.Answer, &dns.PTR{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: 60}, Ptr: target})
		} else {
			m.Rcode = dns.RcodeNameError
		}
	case dns.TypeA, dns.TypeAAAA:
		addrs, ok := s.addrs[q.Name]
		if !ok {
			m.Rcode = dns.RcodeNameError
		}
		for _, a := range addrs {
			hdr := dns.RR_Header{Name: q.Name, Rrtype: q.Qtype, Class: dns.ClassINET, Ttl: 60}
			if a.Is4() && q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: a.AsSlice()})
			} else if a.Is6() && q.Qtype == dns.TypeAAAA {
				m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()})
			}
		}
	default:
		m.Rcode = dns.RcodeNameError
	}
	_ = w.WriteMsg(m)
}

func (s *testDNS) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.addr)
	}}
}

const googlebotUA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

// TestVerifyDNS: forward-confirmed reverse DNS against a DNS server on
// loopback: genuine (IPv4 and IPv6), spoofed PTR (forward mismatch), PTR
// outside the operator's domains, NXDOMAIN, and a server that never answers.
func TestVerifyDNS(t *testing.T) {
	srv := startTestDNS(t)
	srv.host("66.249.66.1", "crawl-66-249-66-1.googlebot.com", "crawl-66-249-66-1.googlebot.com")
	srv.host("2001:4860:4801:10::1", "crawl-2001-4860-4801-10--1.googlebot.com", "crawl-2001-4860-4801-10--1.googlebot.com")
	srv.host("5.6.7.8", "fake.googlebot.com", "")
	srv.host("1.2.3.4", "", "fake.googlebot.com") // PTR says googlebot, forward says 5.6.7.8
	srv.host("1.2.3.5", "host.evil.example", "host.evil.example")
	srv.host("1.2.3.9", "", "googlebot.com.evil.example")
	rev, _ := dns.ReverseAddr("1.2.3.7")
	srv.mu.Lock()
	srv.silent[rev] = true
	srv.mu.Unlock()

	c := newTestClassifier(t)
	gb := c.Classify(googlebotUA)
	v := NewVerifier(VerifierOptions{Resolver: srv.resolver(), Wait: 2 * time.Second, LookupTimeout: 300 * time.Millisecond})
	for _, tc := range []struct {
		name string
		ip   string
		want Verdict
	}{
		{"genuine", "66.249.66.1", Verified},
		{"genuine IPv6", "2001:4860:4801:10::1", Verified},
		{"genuine, IPv4-mapped", "::ffff:66.249.66.1", Verified},
		{"spoofed PTR", "1.2.3.4", Impostor},
		{"foreign domain", "1.2.3.5", Impostor},
		{"suffix trick", "1.2.3.9", Impostor},
		{"NXDOMAIN", "1.2.3.6", Impostor},
		{"timeout", "1.2.3.7", Unverified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := v.Verify(context.Background(), netip.MustParseAddr(tc.ip), gb); got != tc.want {
				t.Errorf("Verify(%s) = %v, want %v", tc.ip, got, tc.want)
			}
		})
	}
	// No claim, no lookup.
	before := srv.queries.Load()
	if got := v.Verify(context.Background(), netip.MustParseAddr("9.9.9.9"), c.Classify("Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")); got != NotClaimed {
		t.Errorf("browser: %v", got)
	}
	if got := v.Verify(context.Background(), netip.MustParseAddr("9.9.9.9"), c.Classify("curl/8.0")); got != NotClaimed {
		t.Errorf("curl: %v", got)
	}
	if srv.queries.Load() != before {
		t.Error("a client that claims no verifiable bot caused a DNS lookup")
	}
	// Verdicts are cached.
	before = srv.queries.Load()
	for i := 0; i < 5; i++ {
		v.Verify(context.Background(), netip.MustParseAddr("66.249.66.1"), gb)
	}
	if srv.queries.Load() != before {
		t.Errorf("cached verdict caused %d lookups", srv.queries.Load()-before)
	}
}

// TestVerifyWaitBounded: a request never waits longer than Wait, and the
// lookup's answer is cached for the next request.
func TestVerifyWaitBounded(t *testing.T) {
	srv := startTestDNS(t)
	slow := &slowResolver{Resolver: srv.resolver(), delay: 3 * time.Second}
	srv.host("66.249.66.2", "crawl-66-249-66-2.googlebot.com", "crawl-66-249-66-2.googlebot.com")
	v := NewVerifier(VerifierOptions{Resolver: slow, Wait: 50 * time.Millisecond, LookupTimeout: 10 * time.Second})
	gb := newTestClassifier(t).Classify(googlebotUA)
	ip := netip.MustParseAddr("66.249.66.2")
	start := time.Now()
	if got := v.Verify(context.Background(), ip, gb); got != Unverified {
		t.Errorf("first Verify = %v, want unverified while the lookup runs", got)
	}
	// The lookup takes 3s; the request waits about 50ms (a generous
	// bound: the machine may be loaded).
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Verify held the request for %v", d)
	}
	deadline := time.Now().Add(20 * time.Second)
	for v.Verify(context.Background(), ip, gb) != Verified {
		if time.Now().After(deadline) {
			t.Fatal("the background lookup never filled the cache")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A cancelled request context also ends the wait.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := v.Verify(ctx, netip.MustParseAddr("66.249.66.3"), gb); got != Unverified {
		t.Errorf("cancelled Verify = %v", got)
	}
}

type slowResolver struct {
	Resolver
	delay time.Duration
}

func (r *slowResolver) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	select {
	case <-time.After(r.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return r.Resolver.LookupAddr(ctx, addr)
}

// TestVerifyCoalesced: concurrent claims from one IP share one lookup.
func TestVerifyCoalesced(t *testing.T) {
	srv := startTestDNS(t)
	srv.host("66.249.66.4", "crawl-66-249-66-4.googlebot.com", "crawl-66-249-66-4.googlebot.com")
	v := NewVerifier(VerifierOptions{Resolver: &slowResolver{Resolver: srv.resolver(), delay: 100 * time.Millisecond}, Wait: 2 * time.Second})
	gb := newTestClassifier(t).Classify(googlebotUA)
	var wg sync.WaitGroup
	var verified atomic.Int64
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v.Verify(context.Background(), netip.MustParseAddr("66.249.66.4"), gb) == Verified {
				verified.Add(1)
			}
		}()
	}
	wg.Wait()
	if verified.Load() != 50 {
		t.Errorf("%d of 50 concurrent claims verified", verified.Load())
	}
	if n := srv.queries.Load(); n != 1 {
		t.Errorf("50 concurrent claims made %d PTR queries, want 1", n)
	}
}

// TestVerifyRanges: published IP range files, IPv4 and IPv6.
func TestVerifyRanges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gptbot.json")
	const doc = `{"creationTime": "2026-11-01T00:00:00", "prefixes": [{"ipv4Prefix": "20.171.206.0/24"}, {"ipv6Prefix": "2a03:2880:f000::/36"}]}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	prefixes, err := LoadRanges(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	c := newTestClassifier(t)
	gpt := c.Classify("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)")
	v := NewVerifier(VerifierOptions{Ranges: map[string][]netip.Prefix{"gptbot": prefixes}, Resolver: failResolver{t}})
	for ip, want := range map[string]Verdict{
		"20.171.206.17":        Verified,
		"::ffff:20.171.206.17": Verified,
		"20.171.207.1":         Impostor,
		"2a03:2880:f00f::1":    Verified,
		"2a03:2880:1000::1":    Impostor,
		"127.0.0.1":            Impostor,
	} {
		if got := v.Verify(context.Background(), netip.MustParseAddr(ip), gpt); got != want {
			t.Errorf("Verify(%s) = %v, want %v", ip, got, want)
		}
	}
	// A ranges bot without loaded ranges cannot be verified, but is no
	// impostor either.
	if got := NewVerifier(VerifierOptions{Resolver: failResolver{t}}).Verify(context.Background(), netip.MustParseAddr("1.1.1.1"), gpt); got != Unverified {
		t.Errorf("without ranges: %v", got)
	}
	for name, bad := range map[string]string{
		"not JSON":     "prefixes",
		"no prefixes":  `{"prefixes": []}`,
		"bad prefix":   `{"prefixes": [{"ipv4Prefix": "20.171.206.0/33"}]}`,
		"wrong family": `{"prefixes": [{"ipv4Prefix": "2a03::/32"}]}`,
	} {
		if _, err := ParseRanges([]byte(bad)); err == nil {
			t.Errorf("%s: ParseRanges accepted %s", name, bad)
		}
	}
	if _, err := LoadRanges(filepath.Join(dir, "missing.json"), 1<<20); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("LoadRanges(missing) = %v", err)
	}
}

// failResolver fails the test when any lookup is made.
type failResolver struct{ t *testing.T }

func (r failResolver) LookupAddr(context.Context, string) ([]string, error) {
	r.t.Error("unexpected PTR lookup")
	return nil, nil
}

func (r failResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.t.Error("unexpected address lookup")
	return nil, nil
}

// TestVerifyCacheBounded: the verdict cache stays within MaxEntries and
// entries expire after their TTL.
func TestVerifyCacheBounded(t *testing.T) {
	srv := startTestDNS(t)
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	v := NewVerifier(VerifierOptions{Resolver: srv.resolver(), MaxEntries: 100, TTL: time.Minute, Now: clock})
	gb := newTestClassifier(t).Classify(googlebotUA)
	for i := 0; i < 300; i++ {
		ip := netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})
		if got := v.Verify(context.Background(), ip, gb); got != Impostor {
			t.Fatalf("Verify(%s) = %v", ip, got)
		}
	}
	if n := v.verdicts.len(); n > 100 {
		t.Errorf("cache holds %d verdicts, max 100", v.verdicts.len())
	}
	q := srv.queries.Load()
	ip := netip.AddrFrom4([4]byte{10, 0, 1, 43})
	v.Verify(context.Background(), ip, gb)
	if srv.queries.Load() != q {
		t.Error("a fresh verdict was looked up again")
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	v.Verify(context.Background(), ip, gb)
	if srv.queries.Load() != q+1 {
		t.Error("an expired verdict was not looked up again")
	}
}

// FuzzParseRanges: any input is parsed or refused without panicking, and
// every range it accepts is masked and contains its own address.
func FuzzParseRanges(f *testing.F) {
	f.Add([]byte(`{"prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"}]}`))
	f.Add([]byte(`{"prefixes":[{"ipv6Prefix":"66.249.64.0/27"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		prefixes, err := ParseRanges(data)
		if err != nil {
			return
		}
		for _, p := range prefixes {
			if p != p.Masked() || !p.Contains(p.Addr()) {
				t.Fatalf("accepted %v, not a masked range", p)
			}
		}
	})
}

// stallResolver never answers PTR lookups for addresses in stall (an
// attacker's own reverse zone that answers slowly): they end only with the
// lookup's context. Other lookups go to the wrapped resolver.
type stallResolver struct {
	Resolver
	stall   []netip.Prefix
	stalled atomic.Int64
}

func (r *stallResolver) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	a := netip.MustParseAddr(addr)
	for _, p := range r.stall {
		if p.Contains(a) {
			r.stalled.Add(1)
			<-ctx.Done()
			return nil, &net.DNSError{Err: "timeout", Name: addr, IsTimeout: true}
		}
	}
	return r.Resolver.LookupAddr(ctx, addr)
}

// TestVerifyExhaustion (issue 10, item 9): claims of Googlebot from an
// attacker's networks whose reverse zones never answer take at most
// PrefixInflight lookup slots per /24 or /64, so that a real Googlebot and
// an impostor from elsewhere still get their verdicts. With one global
// bound of 256 slots, 300 stalled claims from one /24 and one /64 left the
// real crawler "unverified" and let the impostor pass (PrefixInflight 1000
// restores that behaviour and fails this test).
func TestVerifyExhaustion(t *testing.T) {
	srv := startTestDNS(t)
	srv.host("66.249.66.1", "crawl-66-249-66-1.googlebot.com", "crawl-66-249-66-1.googlebot.com")
	srv.host("2001:4860:4801:10::1", "crawl-2001-4860-4801-10--1.googlebot.com", "crawl-2001-4860-4801-10--1.googlebot.com")
	res := &stallResolver{Resolver: srv.resolver(), stall: []netip.Prefix{netip.MustParsePrefix("6.6.0.0/16"), netip.MustParsePrefix("2001:db8:bad::/48")}}
	v := NewVerifier(VerifierOptions{Resolver: res, Wait: time.Millisecond, LookupTimeout: 20 * time.Second})
	gb := newTestClassifier(t).Classify(googlebotUA)
	for i := 0; i < 300; i++ {
		v.Verify(context.Background(), netip.AddrFrom4([4]byte{6, 6, 6, byte(i)}), gb)
		v.Verify(context.Background(), netip.MustParseAddr(fmt.Sprintf("2001:db8:bad:1::%x", i+1)), gb)
	}
	inflight := v.inflightLen()
	t.Logf("600 stalled claims from one /24 and one /64 hold %d lookups", inflight)
	if inflight > 2*v.opts.PrefixInflight {
		t.Errorf("%d lookups in flight for two prefixes, want at most %d", inflight, 2*v.opts.PrefixInflight)
	}
	// The real crawler and an impostor from another network get verdicts.
	v.opts.Wait = 2 * time.Second
	for ip, want := range map[string]Verdict{
		"66.249.66.1":          Verified,
		"2001:4860:4801:10::1": Verified,
		"5.5.5.5":              Impostor, // NXDOMAIN
	} {
		if got := v.Verify(context.Background(), netip.MustParseAddr(ip), gb); got != want {
			t.Errorf("during the flood, Verify(%s) = %v, want %v", ip, got, want)
		}
	}
	// Many /24s of one attacker: the global bound still holds.
	v.opts.Wait = time.Millisecond
	for i := 0; i < 100; i++ {
		v.Verify(context.Background(), netip.AddrFrom4([4]byte{6, 6, byte(i), 1}), gb)
	}
	if n := v.inflightLen(); n > v.opts.MaxInflight {
		t.Errorf("%d lookups in flight, over the global bound %d", n, v.opts.MaxInflight)
	}
}

// TestVerifyAddressCache: a verified crawler's address is remembered apart
// from other verdicts: a flood of impostor verdicts far over MaxEntries
// does not push it out, and a claim to another bot of the same operator
// from that address needs no lookup.
func TestVerifyAddressCache(t *testing.T) {
	srv := startTestDNS(t)
	srv.host("66.249.66.1", "crawl-66-249-66-1.googlebot.com", "crawl-66-249-66-1.googlebot.com")
	v := NewVerifier(VerifierOptions{Resolver: srv.resolver(), Wait: 2 * time.Second, MaxEntries: 64})
	c := newTestClassifier(t)
	gb := c.Classify(googlebotUA)
	img := c.Classify("Googlebot-Image/1.0")
	if img.Bot == nil || img.Bot.Token != "googlebot-image" || img.Bot.Verify != VerifyDNS {
		t.Fatalf("Googlebot-Image/1.0 classified as %+v", img.Bot)
	}
	ip := netip.MustParseAddr("66.249.66.1")
	if got := v.Verify(context.Background(), ip, gb); got != Verified {
		t.Fatalf("Verify = %v", got)
	}
	for i := 0; i < 1000; i++ {
		if got := v.Verify(context.Background(), netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 1}), gb); got != Impostor {
			t.Fatalf("flood claim %d = %v", i, got)
		}
	}
	if n := v.verdicts.len(); n > 64 {
		t.Errorf("verdict cache holds %d entries, max 64", n)
	}
	before := srv.queries.Load()
	for _, r := range []Result{gb, img} {
		if got := v.Verify(context.Background(), ip, r); got != Verified {
			t.Errorf("after the flood, %s = %v", r.Bot.Token, got)
		}
	}
	if n := srv.queries.Load() - before; n != 0 {
		t.Errorf("the verified address needed %d PTR queries after the flood", n)
	}
}

// TestVerifyRevalidate: when a verified address's entry expires, the crawler
// stays verified while it is checked again; a failed lookup keeps it
// verified (for at most one more TTL), an impostor verdict ends it.
func TestVerifyRevalidate(t *testing.T) {
	srv := startTestDNS(t)
	srv.host("66.249.66.1", "crawl-66-249-66-1.googlebot.com", "crawl-66-249-66-1.googlebot.com")
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	res := &stallResolver{Resolver: srv.resolver()}
	v := NewVerifier(VerifierOptions{Resolver: res, Wait: 5 * time.Second, LookupTimeout: 3 * time.Second, TTL: time.Hour, ErrorTTL: time.Minute, Now: clock})
	gb := newTestClassifier(t).Classify(googlebotUA)
	ip := netip.MustParseAddr("66.249.66.1")
	if got := v.Verify(context.Background(), ip, gb); got != Verified {
		t.Fatalf("Verify = %v", got)
	}
	// Expired, and the reverse zone now stalls: verified at once, not after
	// the lookup.
	advance(61 * time.Minute)
	res.stall = []netip.Prefix{netip.MustParsePrefix("66.249.66.0/24")}
	start := time.Now()
	if got := v.Verify(context.Background(), ip, gb); got != Verified {
		t.Errorf("expired entry during the re-check: %v", got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the re-check held the request for %v (the lookup stalls 3s)", d)
	}
	deadline := time.Now().Add(20 * time.Second)
	for res.stalled.Load() == 0 || v.inflightLen() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the re-check never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := v.Verify(context.Background(), ip, gb); got != Verified {
		t.Errorf("after a failed re-check: %v", got)
	}
	// Past one more TTL, a failed re-check no longer holds.
	advance(time.Hour)
	if got := v.Verify(context.Background(), ip, gb); got == Verified {
		t.Errorf("two TTLs after the last confirmation: %v", got)
	}
	// The address now points elsewhere: an impostor verdict ends it at once.
	v2 := NewVerifier(VerifierOptions{Resolver: srv.resolver(), Wait: 2 * time.Second, TTL: time.Hour, Now: clock})
	if got := v2.Verify(context.Background(), ip, gb); got != Verified {
		t.Fatalf("Verify = %v", got)
	}
	rev, _ := dns.ReverseAddr("66.249.66.1")
	srv.mu.Lock()
	srv.ptr[rev] = "host.evil.example."
	srv.mu.Unlock()
	advance(61 * time.Minute)
	v2.Verify(context.Background(), ip, gb) // starts the re-check, answers Verified
	deadline = time.Now().Add(5 * time.Second)
	for v2.Verify(context.Background(), ip, gb) != Impostor {
		if time.Now().After(deadline) {
			t.Fatal("an impostor verdict did not end the verified entry")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (v *Verifier) inflightLen() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.inflight)
}

// BenchmarkVerifyCached: a claimed, DNS-verified crawler whose verdict is
// cached (the common case on the hot path).
func BenchmarkVerifyCached(b *testing.B) {
	srv := startTestDNS(b)
	srv.host("66.249.66.1", "crawl-66-249-66-1.googlebot.com", "crawl-66-249-66-1.googlebot.com")
	c, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	gb := c.Classify(googlebotUA)
	v := NewVerifier(VerifierOptions{Resolver: srv.resolver(), Wait: 2 * time.Second})
	ip := netip.MustParseAddr("66.249.66.1")
	if got := v.Verify(context.Background(), ip, gb); got != Verified {
		b.Fatalf("Verify = %v", got)
	}
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if v.Verify(ctx, ip, gb) != Verified {
				b.Fatal("not verified")
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if v.Verify(ctx, ip, gb) != Verified {
					b.Fatal("not verified")
				}
			}
		})
	})
	b.Run("parallel, 16 goroutines per CPU", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if v.Verify(ctx, ip, gb) != Verified {
					b.Fatal("not verified")
				}
			}
		})
	})
}

// TestSignedAgent: a verified signing agent is classified by its origin.
func TestSignedAgent(t *testing.T) {
	c := newTestClassifier(t)
	browser := c.Classify("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36")
	r := c.SignedAgent("https://chatgpt.com", browser)
	if r.Class != AI || r.Token() != "chatgpt" || r.Bot == nil || r.Bot.Operator != "OpenAI" {
		t.Errorf("chatgpt.com: %+v", r)
	}
	user := c.Classify("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot")
	if r := c.SignedAgent("https://chatgpt.com", user); r.Token() != "chatgpt-user" {
		t.Errorf("ChatGPT-User signing for chatgpt.com: %v", r.Tokens)
	}
	if r := c.SignedAgent("https://agent.bot.goog", browser); r.Token() != "google-agent" || r.Class != AI {
		t.Errorf("agent.bot.goog: %+v", r)
	}
	if r := c.SignedAgent("https://unknown.example", browser); r.Class != AI || r.Bot != nil || len(r.Tokens) != 0 {
		t.Errorf("unknown agent: %+v", r)
	}
}
