package enforce

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/tlsprint"
	"github.com/robotsguard/robotsguard/tlsprint/quicprint"
)

// TestFingerprintSettings: the options ja4, quic and ja4_header are
// checked, each bad one named, and read into what the facts take.
func TestFingerprintSettings(t *testing.T) {
	for _, tc := range []struct {
		s     FingerprintSettings
		field string
		want  Fingerprints
	}{
		{FingerprintSettings{}, "", Fingerprints{}},
		{FingerprintSettings{JA4: "on", QUIC: "on", Header: "x-ja4"}, "", Fingerprints{Header: "X-Ja4"}},
		{FingerprintSettings{JA4: "off", QUIC: "off"}, "", Fingerprints{NoJA4: true, NoQUIC: true}},
		{FingerprintSettings{JA4: "maybe"}, "ja4", Fingerprints{}},
		{FingerprintSettings{QUIC: "yes"}, "quic", Fingerprints{}},
		{FingerprintSettings{Header: "X JA4"}, "ja4_header", Fingerprints{}},
	} {
		got, err := tc.s.Check()
		var fe *FieldError
		if tc.field != "" && (!errors.As(err, &fe) || fe.Path != tc.field) || tc.field == "" && (err != nil || got != tc.want) {
			t.Errorf("%+v: %+v, %v; want %+v, an error of %q", tc.s, got, err, tc.want, tc.field)
		}
	}
}

// TestFingerprintsFacts: each source sets what it knows, and only what the
// options take: a proxy's header (the exact table's stack, no QUIC), a
// TCP connection's handshake, an HTTP/3 connection's entry with and
// without the QUIC wrapper's reading; nothing allocates.
func TestFingerprintsFacts(t *testing.T) {
	const chrome = "t13d1516h2_8daaf6152771_02713d6af862"
	goStack := tlsprint.Stack{Known: true, Family: "go"}
	wrapped := &quicprint.Print{String: "q1_g.5.6.7.4.8.9.1.3.b.e.f", Stack: quicprint.Stack{Known: true, Family: "quic-go"}, JA4: "q13d0313h3_55b375c5d22e_f902b76752af", TLS: goStack}
	matched := &quicprint.Print{JA4: wrapped.JA4, TLS: goStack}
	on, noQUIC, noJA4 := Fingerprints{Header: "X-Ja4"}, Fingerprints{NoQUIC: true, Header: "X-Ja4"}, Fingerprints{NoJA4: true, Header: "X-Ja4"}
	proxied, notJA4, unnamed := http.Header{"X-Ja4": {chrome}}, http.Header{"X-Ja4": {"chrome"}}, http.Header{"": {chrome}}
	for _, tc := range []struct {
		name string
		set  func(f *Facts)
		want Facts
	}{
		{"proxied", func(f *Facts) { on.Proxied(f, proxied) },
			Facts{JA4: chrome, TLS: evidence.TLS{Known: true, Browser: true, Family: "chromium"}}},
		{"proxied, not a JA4", func(f *Facts) { on.Proxied(f, notJA4) }, Facts{}},
		{"proxied, no ja4_header", func(f *Facts) { Fingerprints{}.Proxied(f, unnamed) }, Facts{}},
		{"proxied, ja4 off", func(f *Facts) { noJA4.Proxied(f, proxied) }, Facts{}},
		{"given", func(f *Facts) { Fingerprints{}.Given(f, chrome) }, Facts{JA4: chrome, TLS: evidence.TLS{Known: true, Browser: true, Family: "chromium"}}},
		{"tcp", func(f *Facts) { on.Conn(f, "t13d1312h2_f57a46bbacb6_ab7e3b40a677", goStack) },
			Facts{JA4: "t13d1312h2_f57a46bbacb6_ab7e3b40a677", TLS: evidence.TLS{Known: true, Family: "go"}}},
		{"tcp, ja4 off", func(f *Facts) { noJA4.Conn(f, "t13d1312h2_f57a46bbacb6_ab7e3b40a677", goStack) }, Facts{}},
		{"h3, wrapper", func(f *Facts) { on.QUICConn(f, wrapped) },
			Facts{JA4: wrapped.JA4, QUIC: wrapped.String, TLS: evidence.TLS{Known: true, Family: "go", QUIC: evidence.QUIC{Known: true, Family: "quic-go"}}}},
		{"h3, wrapper, quic off", func(f *Facts) { noQUIC.QUICConn(f, wrapped) }, Facts{JA4: wrapped.JA4, TLS: evidence.TLS{Known: true, Family: "go"}}},
		{"h3, wrapper, ja4 off", func(f *Facts) { noJA4.QUICConn(f, wrapped) },
			Facts{QUIC: wrapped.String, TLS: evidence.TLS{QUIC: evidence.QUIC{Known: true, Family: "quic-go"}}}},
		{"h3, matcher only", func(f *Facts) { on.QUICConn(f, matched) }, Facts{JA4: wrapped.JA4, TLS: evidence.TLS{Known: true, Family: "go"}}},
		{"h3, unknown connection", func(f *Facts) { on.QUICConn(f, nil) }, Facts{}},
	} {
		var f Facts
		tc.set(&f)
		if f != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, f, tc.want)
		}
		if n := testing.AllocsPerRun(100, func() { tc.set(&f) }); n != 0 {
			t.Errorf("%s: %v allocations", tc.name, n)
		}
	}
}

// fleet is a Fleet whose answers a test sets.
type fleet struct {
	up      atomic.Bool
	tracked int
}

func (f *fleet) Up() bool { return f.up.Load() }
func (f *fleet) Counts(time.Time) (int, int, error) {
	return f.tracked, 7, nil
}

// TestSweepEvery: the tracked and blocked clients are reported at once and
// after every sweep: the store's own without a fleet or while the fleet
// does not answer, else the fleet's.
func TestSweepEvery(t *testing.T) {
	s := NewMemoryStore(100, 10, time.Hour)
	s.Apply(Key{Prefix: netip.MustParsePrefix("203.0.113.1/32"), Token: "rogue"}, time.Now(), Op{Block: true, Cooldown: time.Hour, MaxCooldown: time.Hour})
	_, blocked := s.Sweep(time.Now())
	own := [2]int{s.Len(), blocked}
	if own != [2]int{1, 1} {
		t.Fatalf("the store holds %v, want 1 client, blocked", own)
	}
	reports := make(chan [2]int, 100)
	report := func(tracked, blocked int) { reports <- [2]int{tracked, blocked} }
	for _, f := range []Fleet{nil, &fleet{tracked: 42}} {
		ctx, cancel := context.WithCancel(t.Context())
		go s.SweepEvery(ctx, 10*time.Millisecond, f, report)
		if r := <-reports; r != own {
			t.Errorf("fleet %v: %v, want the store's own %v", f, r, own)
		}
		if f != nil {
			f.(*fleet).up.Store(true)
			for r := <-reports; r != [2]int{42, 7}; r = <-reports {
			}
		}
		cancel()
	}
}
