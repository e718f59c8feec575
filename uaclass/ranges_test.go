package uaclass

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLoadRangesBounds: a directory, a missing file and a file above the
// bound are refused before they are read, with the path in the message.
func TestLoadRangesBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"prefixes": [{"ipv4Prefix": "10.0.0.0/8"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{dir, dir + " is not a regular file"},
		{filepath.Join(dir, "none.json"), filepath.Join(dir, "none.json") + ": no such file or directory"},
		{big, big + " is larger than 4 bytes"},
	} {
		if _, err := LoadRanges(tc.path, 4); err == nil || err.Error() != tc.want {
			t.Errorf("LoadRanges(%q) = %v, want %q", tc.path, err, tc.want)
		}
	}
	if _, err := LoadRanges(big, 1<<10); err != nil {
		t.Errorf("LoadRanges(%q): %v", big, err)
	}
}

// TestParsePrefix: a CIDR is masked, a single IP is its own prefix.
func TestParsePrefix(t *testing.T) {
	for in, want := range map[string]string{
		"10.1.2.3/8":  "10.0.0.0/8",
		"10.1.2.3":    "10.1.2.3/32",
		"2001:db8::1": "2001:db8::1/128",
		"10.0.0.0/33": "invalid IP range \"10.0.0.0/33\"",
		"nope":        "invalid IP \"nope\"",
	} {
		p, err := ParsePrefix(in)
		got := p.String()
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("ParsePrefix(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestReadRanges: files are read by normalised product token; a bad token
// or file names the token as given.
func TestReadRanges(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "gptbot.json")
	if err := os.WriteFile(file, []byte(`{"prefixes": [{"ipv4Prefix": "20.171.206.0/24"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ranges, err := ReadRanges(map[string]string{"GPTBot": file}, 1<<20)
	if err != nil || len(ranges["gptbot"]) != 1 {
		t.Fatalf("ReadRanges = %v, %v", ranges, err)
	}
	for _, tc := range []struct {
		files       map[string]string
		token, want string
	}{
		{map[string]string{"/bad": file}, "/bad", `"/bad" is not a product token`},
		{map[string]string{"gptbot": dir}, "gptbot", "is not a regular file"},
	} {
		_, err := ReadRanges(tc.files, 1<<20)
		var te *TokenError
		if !errors.As(err, &te) || te.Token != tc.token || !strings.Contains(te.Err.Error(), tc.want) {
			t.Errorf("ReadRanges(%v) = %v, want %s: ...%s...", tc.files, err, tc.token, tc.want)
		}
	}
}

// TestParseRangeFormats: the lists as Google, OpenAI, Bing and the JAFAR
// draft publish them, and a hand-written text list, parse with their
// creation time and sync token; garbage, an HTML page, an empty body and
// a list with one bad entry are refused whole.
func TestParseRangeFormats(t *testing.T) {
	for _, tc := range []struct {
		name, doc, format, created, sync string
		prefixes                         []string
	}{
		{"google", `{
  "creationTime": "2026-11-20T15:46:01.000000",
  "syncToken": "1763653561000",
  "prefixes": [
    {
      "ipv6Prefix": "2001:4860:4801:10::/64"
    },
    {
      "ipv4Prefix": "66.249.64.0/27"
    }
  ]
}`, FormatPrefixes, "2026-11-20T15:46:01Z", "1763653561000", []string{"2001:4860:4801:10::/64", "66.249.64.0/27"}},
		{"openai", `{"creationTime": "2026-10-11T17:23:01.085549", "prefixes": [{"ipv4Prefix": "52.230.152.0/24"}, {"ipv4Prefix": "20.171.206.0/24"}]}`,
			FormatPrefixes, "2026-10-11T17:23:01.085549Z", "", []string{"52.230.152.0/24", "20.171.206.0/24"}},
		{"bing", "\xef\xbb\xbf{\r\n  \"creationTime\": \"2026-11-26T19:21:25.2412406+00:00\",\r\n  \"prefixes\": [\r\n    {\"ipv4Prefix\": \"157.55.39.0/24\"},\r\n    {\"ipv4Prefix\": \"207.46.13.0/24\"}\r\n  ]\r\n}\r\n",
			FormatPrefixes, "2026-11-26T19:21:25.2412406Z", "", []string{"157.55.39.0/24", "207.46.13.0/24"}},
		{"jafar", `{"formatVersion": "1.0", "synctoken": "1759417200", "creationTime": "2026-10-02T15:00:00Z",
  "prefixes": [{"ipv4Prefix": "192.0.2.0/24", "service": "examplebot"}, {"ipv6Prefix": "2001:db8::/32", "service": "examplebot-user"}]}`,
			FormatJAFAR, "2026-10-02T15:00:00Z", "1759417200", []string{"192.0.2.0/24", "2001:db8::/32"}},
		{"jafar number version", `{"formatVersion": 1, "synctoken": 42, "creationTime": "yesterday", "prefixes": [{"ipv4Prefix": "192.0.2.1/24"}]}`,
			FormatJAFAR, "0001-01-01T00:00:00Z", "42", []string{"192.0.2.0/24"}},
		{"text", "# DuckDuckBot, copied from its help page\n20.191.45.212\n40.88.21.235 # east\n\n2001:db8::/48\r\n", FormatText, "0001-01-01T00:00:00Z", "",
			[]string{"20.191.45.212/32", "40.88.21.235/32", "2001:db8::/48"}},
	} {
		l, err := ParseRangeList([]byte(tc.doc))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var got []string
		for _, p := range l.Prefixes {
			got = append(got, p.String())
		}
		if l.Format != tc.format || l.Created.Format(time.RFC3339Nano) != tc.created || l.SyncToken != tc.sync || strings.Join(got, " ") != strings.Join(tc.prefixes, " ") {
			t.Errorf("%s: %s %s %q %v (%d bytes)", tc.name, l.Format, l.Created.Format(time.RFC3339Nano), l.SyncToken, got, l.Size)
		}
	}
	for name, bad := range map[string]string{
		"empty":          "",
		"blank":          " \n\n# nothing\n",
		"html":           "<!doctype html>\n<html><body>Bad gateway</body></html>\n",
		"garbage":        "\x00\x01\x02\xff",
		"no prefixes":    `{"creationTime": "2026-11-20T15:46:01", "prefixes": []}`,
		"null prefixes":  `{"prefixes": null}`,
		"cut short":      `{"prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv4Pre`,
		"empty entry":    `{"prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"service": "x"}]}`,
		"one bad":        "20.191.45.212\n20.191.45.300\n",
		"wrong family 6": `{"prefixes": [{"ipv6Prefix": "66.249.64.0/27"}]}`,
		"array":          `[{"ipv4Prefix": "66.249.64.0/27"}]`,
	} {
		if l, err := ParseRangeList([]byte(bad)); err == nil {
			t.Errorf("%s: accepted %v", name, l.Prefixes)
		}
	}
}

// TestVerifyListsSwap: a list replaced in its Ranges changes the verdicts
// at once; a ranges bot whose only list is not loaded yet is unverified; a
// dns bot outside its list goes to reverse DNS (here: no PTR, impostor),
// inside it needs no lookup.
func TestVerifyListsSwap(t *testing.T) {
	c := newTestClassifier(t)
	gpt := c.Classify("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)")
	gb := c.Classify(googlebotUA)
	gptList, gbList := &Ranges{}, NewRanges(mustList(t, "66.249.64.0/27"))
	srv := startTestDNS(t)
	v := NewVerifier(VerifierOptions{Lists: map[string][]*Ranges{"gptbot": {gptList}, "googlebot": {gbList}}, Resolver: srv.resolver()})
	a, b := netip.MustParseAddr("20.171.206.17"), netip.MustParseAddr("52.230.152.9")
	if got := v.Verify(context.Background(), a, gpt); got != Unverified {
		t.Errorf("no list loaded: %v, want unverified", got)
	}
	gptList.Store(mustList(t, "20.171.206.0/24"))
	if got, got2 := v.Verify(context.Background(), a, gpt), v.Verify(context.Background(), b, gpt); got != Verified || got2 != Impostor {
		t.Errorf("first list: %v %v", got, got2)
	}
	gptList.Store(mustList(t, "52.230.152.0/24"))
	if got, got2 := v.Verify(context.Background(), a, gpt), v.Verify(context.Background(), b, gpt); got != Impostor || got2 != Verified {
		t.Errorf("second list: %v %v", got, got2)
	}
	if l := v.Lists("gptbot"); len(l) != 1 || l[0].Prefixes[0].String() != "52.230.152.0/24" {
		t.Errorf("Lists = %v", l)
	}
	q := srv.queries.Load()
	if got := v.Verify(context.Background(), netip.MustParseAddr("66.249.64.3"), gb); got != Verified || srv.queries.Load() != q {
		t.Errorf("googlebot in its list: %v after %d lookups", got, srv.queries.Load()-q)
	}
	if got := v.Verify(context.Background(), netip.MustParseAddr("10.9.9.9"), gb); got != Impostor || srv.queries.Load() == q {
		t.Errorf("googlebot outside its list: %v, lookups %d (want reverse DNS)", got, srv.queries.Load()-q)
	}
}

func mustList(t *testing.T, prefixes ...string) *RangeList {
	t.Helper()
	l, err := ParseRangeList([]byte(strings.Join(prefixes, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// FuzzParseRangeList: any input, JSON or text, is parsed or refused
// without panicking; what is accepted has a range, every range masked,
// and a list parses the same the second time.
func FuzzParseRangeList(f *testing.F) {
	f.Add([]byte(`{"creationTime":"2026-11-20T15:46:01.000000","syncToken":"1","prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"}]}`))
	f.Add([]byte(`{"formatVersion":"1.0","synctoken":"1759417200","prefixes":[{"ipv4Prefix":"192.0.2.0/24","service":"x"}]}`))
	f.Add([]byte("# list\n20.191.45.212\n2001:db8::/48 # v6\n"))
	f.Add([]byte("\xef\xbb\xbf{\"prefixes\":[{\"ipv4Prefix\":\"1.2.3.4/8\",\"ipv6Prefix\":\"::1/128\"}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseRangeList(data)
		if err != nil {
			return
		}
		if len(l.Prefixes) == 0 {
			t.Fatal("accepted a list without ranges")
		}
		for _, p := range l.Prefixes {
			if p != p.Masked() || !p.Contains(p.Addr()) || !l.Contains(p.Addr()) {
				t.Fatalf("accepted %v, not a masked range it contains", p)
			}
		}
		again, err := ParseRangeList(data)
		if err != nil || !slices.Equal(again.Prefixes, l.Prefixes) || again.Format != l.Format {
			t.Fatalf("parsed differently the second time: %v", err)
		}
	})
}

// TestRangeIntervals: the sorted intervals Contains searches say what a
// scan of the prefixes says, for random IPv4 and IPv6 lists with nested,
// overlapping and adjacent prefixes, at random addresses and at each
// prefix's first and last address and their neighbours.
func TestRangeIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	addr := func(v4 bool) netip.Addr {
		if v4 {
			return netip.AddrFrom4([4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(256))})
		}
		var b [16]byte
		b[0], b[1], b[2] = 0x20, 0x01, byte(rng.IntN(4))
		for i := 3; i < 16; i++ {
			b[i] = byte(rng.IntN(256))
		}
		return netip.AddrFrom16(b)
	}
	for round := range 200 {
		var prefixes []netip.Prefix
		for range 1 + rng.IntN(40) {
			v4 := rng.IntN(2) == 0
			bits := 8 + rng.IntN(25)
			if !v4 {
				bits = 16 + rng.IntN(113)
			}
			prefixes = append(prefixes, netip.PrefixFrom(addr(v4), bits).Masked())
		}
		l := NewRanges(&RangeList{Prefixes: prefixes}).Load()
		scan := func(ip netip.Addr) bool {
			for _, p := range prefixes {
				if p.Contains(ip) {
					return true
				}
			}
			return false
		}
		var probes []netip.Addr
		for _, p := range prefixes {
			last := lastAddr(p)
			probes = append(probes, p.Addr(), p.Addr().Prev(), last, last.Next())
		}
		for range 200 {
			probes = append(probes, addr(rng.IntN(2) == 0))
		}
		for _, ip := range probes {
			if ip.IsValid() && l.Contains(ip) != scan(ip) {
				t.Fatalf("round %d: Contains(%s) = %v, a scan says %v; prefixes %v", round, ip, l.Contains(ip), scan(ip), prefixes)
			}
		}
	}
	if l := NewRanges(mustList(t, "10.0.0.0/8")).Load(); !l.Contains(netip.MustParseAddr("::ffff:10.1.2.3")) || l.Contains(netip.MustParseAddr("::a01:203")) {
		t.Error("an IPv4-mapped address is its IPv4 address; an IPv6 one is not")
	}
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// TestPublishedRangesDocumented: docs/verification.md lists every URL
// where the bot database says an operator publishes its ranges, with the
// page that documents it; every ranges crawler but DuckDuckBot (a web
// page, not a list) has one.
func TestPublishedRangesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/verification.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range DefaultBots() {
		for _, u := range b.Ranges {
			if !strings.Contains(string(doc), u) || !strings.Contains(string(doc), b.RangesDoc) {
				t.Errorf("docs/verification.md lacks %s's %s or %s", b.Token, u, b.RangesDoc)
			}
		}
		if b.Verify == VerifyRanges && len(b.Ranges) == 0 && b.Token != "duckduckbot" {
			t.Errorf("%s is verified by ranges and has no published URL", b.Token)
		}
	}
	if n := len(slices.Collect(maps.Keys(urlSet(PublishedRanges(DefaultBots()))))); n != 12 {
		t.Errorf("%d published URLs; docs/verification.md says 12", n)
	}
}

func urlSet(m map[string][]string) map[string]bool {
	set := map[string]bool{}
	for _, us := range m {
		for _, u := range us {
			set[u] = true
		}
	}
	return set
}

// TestListVerdictAgrees: ListVerdict says what the verifier says for
// every case that needs no lookup, and sends a dns bot outside its lists
// to reverse DNS.
func TestListVerdictAgrees(t *testing.T) {
	c := newTestClassifier(t)
	gpt := c.Classify("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)")
	gb := c.Classify(googlebotUA)
	curl := c.Classify("curl/8.5.0")
	list := NewRanges(mustList(t, "20.171.206.0/24", "66.249.64.0/27"))
	for _, tc := range []struct {
		r     Result
		lists []*Ranges
		ip    string
		want  Verdict
		dns   bool
	}{
		{gpt, []*Ranges{list}, "20.171.206.1", Verified, false},
		{gpt, []*Ranges{list}, "10.0.0.1", Impostor, false},
		{gpt, []*Ranges{{}}, "20.171.206.1", Unverified, false},
		{gpt, nil, "20.171.206.1", Unverified, false},
		{gb, []*Ranges{list}, "66.249.64.1", Verified, false},
		{gb, []*Ranges{list}, "10.0.0.1", Unverified, true},
		{curl, nil, "10.0.0.1", NotClaimed, false},
	} {
		var lists []*RangeList
		for _, r := range tc.lists {
			lists = append(lists, r.Load())
		}
		ip := netip.MustParseAddr(tc.ip)
		v, by, dns := ListVerdict(tc.r.Bot, lists, ip)
		if v != tc.want || dns != tc.dns || (v == Verified) != (by != nil) {
			t.Errorf("%v from %s: %v %v %v, want %v dns %v", tc.r.Tokens, ip, v, by, dns, tc.want, tc.dns)
		}
		if tc.dns {
			continue
		}
		opts := VerifierOptions{Resolver: failResolver{t}}
		if tc.r.Bot != nil && len(tc.lists) > 0 {
			opts.Lists = map[string][]*Ranges{tc.r.Bot.Token: tc.lists}
		}
		if got := NewVerifier(opts).Verify(context.Background(), ip, tc.r); got != v {
			t.Errorf("%v from %s: the verifier says %v, ListVerdict %v", tc.r.Tokens, ip, got, v)
		}
	}
}
