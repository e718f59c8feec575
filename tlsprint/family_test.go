package tlsprint

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"io"
	"strings"
	"testing"
)

// chromeHello is Chromium 156's hello as observed (GREASE, ALPS, ECH
// GREASE, ML-KEM, ML-DSA signature algorithms, shuffled extensions).
const chromeHello = "tcp v=3a3a,0304,0303 c=1a1a,1301,1302,1303,c02b,c02f,c02c,c030,cca9,cca8,c013,c014,009c,009d,002f,0035 e=5a5a,ff01,001b,000a,0000,fe0d,44cd,0010,0012,0033,0017,002b,0005,ca34,000d,0023,000b,002d,dada g=baba,11ec,001d,0017,0018 s=5a5a,0904,0905,0906,0403,0804,0401,0503,0805,0501,0806,0601 alpn=h2,http/1.1"

// helloOf returns the Hello of the ClientHello Go's client sends with cfg,
// as crypto/tls's server reads it.
func helloOf(t testing.TB, cfg *tls.Config) Hello {
	t.Helper()
	msg := goClientHello(t, cfg)
	rec := binary.BigEndian.AppendUint16([]byte{22, 3, 1}, uint16(len(msg)))
	var h Hello
	srv := &tls.Config{GetConfigForClient: func(info *tls.ClientHelloInfo) (*tls.Config, error) {
		h = FromClientHello(info)
		return nil, io.EOF
	}}
	tls.Server(scriptConn{bytes.NewReader(append(rec, msg...))}, srv).Handshake()
	return h
}

// TestClassifyGo: this Go's client is Go's family whatever its caller sets
// in a line of tls.Config: Chrome's twelve TLS 1.2 cipher suites, TLS 1.2
// at most, X25519 alone, TLS 1.3 alone (as quic-go), no SNI or ALPN.
func TestClassifyGo(t *testing.T) {
	chrome := []uint16{0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035}
	for name, cfg := range map[string]*tls.Config{
		"default":         {ServerName: "example.test", NextProtos: []string{"h2", "http/1.1"}},
		"chrome ciphers":  {ServerName: "example.test", NextProtos: []string{"h2", "http/1.1"}, CipherSuites: chrome},
		"tls 1.2":         {ServerName: "example.test", MaxVersion: tls.VersionTLS12},
		"x25519":          {ServerName: "example.test", CurvePreferences: []tls.CurveID{tls.X25519}},
		"tls 1.3":         {ServerName: "example.test", MinVersion: tls.VersionTLS13},
		"an address":      {InsecureSkipVerify: true},
		"chrome, tls 1.2": {ServerName: "example.test", CipherSuites: chrome, MaxVersion: tls.VersionTLS12, NextProtos: []string{"h2"}},
	} {
		h := helloOf(t, cfg)
		if got := Classify(h); got != (Stack{Known: true, Browser: false, Family: "go"}) {
			t.Errorf("%s: %+v, want go's\n\t%s", name, got, h)
		}
	}
}

// TestClassify: the families of hellos that are not this Go's, and what
// is no family's.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		name, hello string
		want        Stack
	}{
		{"chromium 156", chromeHello, Stack{Known: true, Browser: true, Family: "chromium"}},
		// Python set up as urllib3 2 does, with python.org's ciphers: the
		// JA4 of requests 2.34.2 (t13d1812h1_85036bcba153_b26ce05bbdd6),
		// which the exact table lacked.
		{"requests 2.34", "tcp v=0304,0303 c=1302,1303,1301,c02c,c030,c02b,c02f,cca9,cca8,c024,c028,c023,c027,009f,009e,006b,0067,00ff e=0000,000b,000a,0010,0016,0017,0031,000d,002b,002d,0033,0015 g=001d,0017,001e,0019,0018,0100,0101,0102,0103,0104 s=0403,0503,0603,0807,0808,0809,080a,080b,0804,0805,0806,0401,0501,0601,0303,0301,0302,0402,0502,0602 alpn=http/1.1", Stack{Known: true, Browser: false, Family: "openssl"}},
		// Chrome's hello with its GREASE and ALPS taken out: no browser
		// mark, and a library's by nothing else.
		{"chromium without its marks", strings.NewReplacer("3a3a,", "", "1a1a,", "", "5a5a,", "", ",dada", "", "baba,", "", ",44cd", "").Replace(chromeHello), Stack{}},
		// A hello of no known stack.
		{"nobody's", "tcp v=0304 c=1301 e=0000,002b,0033 s=0403", Stack{}},
		{"nothing", "tcp", Stack{}},
	} {
		h, err := ParseHello(c.hello)
		if err != nil {
			t.Fatal(err)
		}
		if got := Classify(h); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestClassifyAllocs: classifying a hello allocates nothing.
func TestClassifyAllocs(t *testing.T) {
	chrome, _ := ParseHello(chromeHello)
	goHello := helloOf(t, &tls.Config{ServerName: "example.test"})
	for _, h := range []Hello{chrome, goHello, {}} {
		if n := testing.AllocsPerRun(100, func() { Classify(h) }); n != 0 {
			t.Errorf("Classify(%s): %v allocations", h, n)
		}
	}
}

// TestFamilies: the built-in families parse, hold each browser engine and
// the libraries, and ParseFamilies refuses what it must.
func TestFamilies(t *testing.T) {
	f, err := ParseFamilies(familiesTSV)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range f.Profiles {
		seen[p.Family] = true
		line, _ := p.MarshalText()
		again, err := ParseFamilies(string(line))
		if err != nil || len(again.Profiles) != 1 {
			t.Fatalf("%s does not read back: %v", line, err)
		}
		if back, _ := again.Profiles[0].MarshalText(); string(back) != string(line) {
			t.Errorf("%s reads back as %s", line, back)
		}
	}
	for _, fam := range []string{"chromium", "firefox", "webkit", "go", "openssl", "gnutls", "java"} {
		if !seen[fam] {
			t.Errorf("no profile of %s", fam)
		}
	}
	const good = "go\tlibrary\tany\textended-master-secret,status-request\t-\t0804,0403\t-\t3"
	if _, err := ParseFamilies(good); err != nil {
		t.Fatalf("%q: %v", good, err)
	}
	for _, bad := range []string{
		"go\tlibrary\tany\t-\t-\t-\t-",
		"go\tlibrary\ttcp\t-\t-\t-\t-\t1",
		"go\tbrowser\ttcp\tgrease\tgrease\t-\t-\t1",
		"chromium\tbrowser\ttcp\tgrease\t-\t-\t-\t1",
		"go\tlibrary\tany\tgrease\t-\t-\t-\t1",
		"go\tlibrary\tany\tshiny\t-\t-\t-\t1",
		"go\tlibrary\tany\t-\t-\t0804,403\t-\t1",
		"go\tlibrary\tany\t-\t-\t-\t-\t0",
		"\tlibrary\tany\t-\t-\t-\t-\t1",
	} {
		if _, err := ParseFamilies(bad); err == nil {
			t.Errorf("ParseFamilies(%q): no error", bad)
		}
	}
}

// TestDeriveProfile: the marks all hellos share, the browser marks any
// sends, and an order where the hellos agree, none where they do not.
func TestDeriveProfile(t *testing.T) {
	a, _ := ParseHello("tcp c=00ff e=0000,0016,0017,000d s=0403,0503,0807")
	b, _ := ParseHello("tcp c=1301,00ff e=0000,0016,000d,0029 s=0403,0807,0804")
	p, err := DeriveProfile("openssl", false, false, []Hello{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if p.Marks != MarkEncryptThenMAC|MarkSCSV || p.Sends != 0 {
		t.Errorf("marks %s, sends %s", p.Marks, p.Sends)
	}
	if got, want := (Hello{SignatureAlgorithms: p.Signatures, Extensions: p.Extensions}).String(), "tcp e=0000,0016,0017,000d,0029 s=0403,0503,0807,0804"; got != want {
		t.Errorf("orders %s, want %s", got, want)
	}
	c, _ := ParseHello("tcp e=000d,0000 s=0807,0403")
	if p, _ := DeriveProfile("x", false, false, []Hello{a, c}); p.Signatures != nil || p.Extensions != nil {
		t.Errorf("disagreeing hellos: orders %v and %v, want none", p.Signatures, p.Extensions)
	}
	g, _ := ParseHello("tcp c=0a0a,1301 e=0000")
	if _, err := DeriveProfile("go", false, false, []Hello{a, g}); err == nil {
		t.Error("a library's hello with GREASE: no error")
	}
	if _, err := DeriveProfile("chromium", true, false, []Hello{a}); err == nil {
		t.Error("a browser's hello without a browser mark: no error")
	}
	if _, err := DeriveProfile("chromium", true, true, []Hello{g}); err == nil {
		t.Error("a browser's TCP hello in its QUIC profile: no error")
	}
}

// FuzzClassify: any hello is classified without a panic, the same each
// time; a hello with a browser mark is never a library's, one without is
// never a browser's; and GREASE added to a library's hello takes it out of
// every library family.
func FuzzClassify(f *testing.F) {
	f.Add(chromeHello)
	f.Add("tcp v=0304,0303 c=c02b,c02f,1301 e=0000,000b,ff01,0017,0012,0005,000a,000d,0032,0010,002b,0033 g=11ec,001d s=0804,0403,0807,0805,0806,0401,0501,0601,0503,0603")
	f.Add("quic v=0304 c=1301 e=0000,0033,001b,000d,0039,44cd s=0403,0804,0401")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHello(s)
		if err != nil {
			return
		}
		got := Classify(h)
		if again := Classify(h); again != got {
			t.Fatalf("%s: %+v, then %+v", h, got, again)
		}
		browser := MarksOf(h)&BrowserMarks != 0
		if got.Known && got.Browser != browser {
			t.Errorf("%s: %+v, with browser marks %v", h, got, browser)
		}
		if got.Known && !got.Browser {
			g := h
			g.Extensions = append([]uint16{0x0a0a}, h.Extensions...)
			if s := Classify(g); s.Known && !s.Browser {
				t.Errorf("%s with GREASE: %+v, a library's", h, s)
			}
		}
	})
}

// BenchmarkClassify: the family of Chrome's and of Go's hello, once per
// handshake.
func BenchmarkClassify(b *testing.B) {
	chrome, _ := ParseHello(chromeHello)
	goHello := helloOf(b, &tls.Config{ServerName: "example.test"})
	for _, c := range []struct {
		name string
		h    Hello
	}{{"chrome", chrome}, {"go", goHello}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Classify(c.h)
			}
		})
	}
}

// FuzzParseFamilies: any text is refused or read into profiles that write
// back as the lines they were read from, and never panics; a hello is then
// classified by them without a panic.
func FuzzParseFamilies(f *testing.F) {
	f.Add(familiesTSV, chromeHello)
	f.Add("go\tlibrary\tany\textended-master-secret,status-request\t-\t0804,0403\t-\t3", "tcp s=0804,0403,0807,0805 e=0005,0017")
	f.Fuzz(func(t *testing.T, text, hello string) {
		fams, err := ParseFamilies(text)
		if err != nil {
			return
		}
		for _, p := range fams.Profiles {
			line, _ := p.MarshalText()
			again, err := ParseFamilies(string(line))
			if err != nil || len(again.Profiles) != 1 {
				t.Fatalf("%q does not read back: %v", line, err)
			}
			if back, _ := again.Profiles[0].MarshalText(); string(back) != string(line) {
				t.Errorf("%q reads back as %q", line, back)
			}
		}
		if h, err := ParseHello(hello); err == nil {
			fams.Classify(h)
		}
	})
}
