package quicprint

import (
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestTable: the built-in table reads, and each row's stack is what its
// kind says.
func TestTable(t *testing.T) {
	tb, err := ParseTable(quicTSV)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Rows) < 4 {
		t.Fatalf("%d rows", len(tb.Rows))
	}
	for _, bad := range []string{"1.2\tx\tlibrary\n", "1.x\tx\tlibrary\ts\n", "set:1.2?\tx\tbrowser\ts\n", "1b\tx\tlibrary\ts\n1c\tx\tbrowser\ts\n",
		"01\tx\tlibrary\ts\n", "1\tx\tmaybe\ts\n", "3a\tx\tlibrary\ts\n"} {
		if _, err := ParseTable(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestObserved: every hello that the real clients sent on this machine
// (internal/collect/testdata/observed.tsv: Chromium, Firefox ESR, quic-go,
// ngtcp2) is known as its own stack, by its fingerprint as the Tracker
// writes it.
func TestObserved(t *testing.T) {
	data, err := os.ReadFile("internal/collect/testdata/observed.tsv")
	if err != nil {
		t.Fatal(err)
	}
	family := map[string]string{"chromium": "chromium", "firefox-esr": "firefox", "quic-go": "quic-go", "quic-go (datagrams)": "quic-go", "ngtcp2": "ngtcp2"}
	seen := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, "\t")
		if strings.HasPrefix(line, "#") || len(f) != 6 {
			continue
		}
		want, ok := family[f[0]]
		if !ok {
			t.Errorf("observed client %q: which stack is it?", f[0])
			continue
		}
		s := Builtin().Lookup(f[2])
		if s.Family != want || f[3] != want || s.Browser != (want == "chromium" || want == "firefox") {
			t.Errorf("%s %s: %s is %+v (recorded as %q), want %s", f[0], f[1], f[2], s, f[3], want)
		}
		seen[want]++
	}
	for _, f := range []string{"chromium", "firefox", "quic-go", "ngtcp2"} {
		if seen[f] == 0 {
			t.Errorf("no observed hello of %s", f)
		}
	}
}

// TestNoBrowserIsALibrary: no order of a browser's parameters, Chromium's
// shuffled ones or Firefox's, is known as a library's: each holds an id
// that no library row has (0x3128, 0xff02de1a), whatever its order.
func TestNoBrowserIsALibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, set := range [][]uint64{
		{1, 3, 4, 5, 6, 7, 8, 9, 0xf, 0x11, 0x20, 0x3128, 27},
		{1, 4, 5, 6, 7, 8, 9, 0xb, 0xe, 0xf, 0x11, 0xff02de1a, 0x20},
	} {
		for range 20000 {
			r.Shuffle(len(set), func(i, j int) { set[i], set[j] = set[j], set[i] })
			ps := make([]param, len(set))
			for i, id := range set {
				ps[i] = param{id: id}
			}
			if s := Builtin().lookup(ps); s.Known && !s.Browser {
				t.Fatalf("%s is %+v", Fingerprint(Version1, ps, false), s)
			}
		}
	}
	for _, r := range Builtin().Rows {
		if !r.Stack.Browser && (slices.Contains(r.ids, 0x3128) || slices.Contains(r.ids, 0xff02de1a)) {
			t.Errorf("library row %s has a browser's own id", r.Match)
		}
	}
}
