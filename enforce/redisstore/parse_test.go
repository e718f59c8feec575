package redisstore

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/enforce"
)

// TestOpen: each URL form gives its kind of client; bad URLs are refused
// with a message that says what is wrong.
func TestOpen(t *testing.T) {
	for _, tc := range []struct{ url, kind, err string }{
		{"redis://127.0.0.1:6379/2", "*redis.Client", ""},
		{"rediss://user:pw@redis.example:6380", "*redis.Client", ""},
		{"unix:///run/redis.sock?db=1", "*redis.Client", ""},
		{"redis+cluster://10.0.0.1:7000?addr=10.0.0.2:7000", "*redis.ClusterClient", ""},
		{"redis+sentinel://10.0.0.1:26379/0?master_name=mymaster", "*redis.Client", ""},
		{"redis+sentinel://10.0.0.1:26379", "", "needs ?master_name=NAME"},
		{"http://127.0.0.1:6379", "", `unknown scheme "http"`},
		{"unix+cluster:///x", "", `unknown scheme "unix+cluster"`},
		{"redis://127.0.0.1:6379/x", "", "invalid database number"},
		{"redis://127.0.0.1:6379?bogus=1", "", "unexpected option"},
		{"redis://[::1", "", "missing ']'"},
	} {
		c, err := Open(tc.url, time.Second)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Open(%q) = %v, want an error with %q", tc.url, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(%q): %v", tc.url, err)
			continue
		}
		if got := fmt.Sprintf("%T", c); got != tc.kind {
			t.Errorf("Open(%q) is a %s, want %s", tc.url, got, tc.kind)
		}
		c.Close()
	}
}

// FuzzOpen: any URL is refused or opened; Open never panics.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{"redis://127.0.0.1:6379/0?dial_timeout=1s", "redis+cluster://a:1?addr=b:2", "redis+sentinel://a:1?master_name=m", "unix:///x", "rediss://u:p@h", "%zz", "redis://h?pool_size=-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if c, err := Open(s, time.Second); err == nil {
			c.Close()
		}
	})
}

// FuzzRecordID: record IDs read back as written (what a ref says writes
// an ID that says the same), and any string is read or refused without a
// panic.
func FuzzRecordID(f *testing.F) {
	for _, s := range []string{"{203.0.113.7/32}", "{2001:db8::/64}:dry", "{none}", "{1.2.3.4/32}:x", "{", "{}", "}",
		"{203.0.113.0/24}203.0.113.7/32", "{203.0.113.0/24}~t9f3a", "{v1f2e}~v1f2e:dry", "{v1f2e}20.15.240.5/32", "{2001:db8::/48}~f0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := parseRef(s)
		if !ok || r.Old {
			return
		}
		back := r.String()
		again, ok := parseRef(back)
		if !ok || again != r {
			t.Errorf("%q -> %+v -> %q -> %+v, %v", s, r, back, again, ok)
		}
	})
}

// TestRecordIDs: the IDs of an address's record and of its crawler's share
// their hash tag: the network, or a verified identity.
func TestRecordIDs(t *testing.T) {
	k := enforce.Key{Prefix: netip.MustParsePrefix("203.0.113.7/32"), Net: netip.MustParsePrefix("203.0.113.0/24"), Token: "examplebot",
		Crawler: enforce.Crawler{Kind: enforce.CrawlerToken, ID: 0x9f3a, Name: "examplebot"}}
	if a, c := addrRef(k).String(), crawlerRef(k).String(); a != "{203.0.113.0/24}203.0.113.7/32" || c != "{203.0.113.0/24}~t9f3a" {
		t.Errorf("token: %s, %s", a, c)
	}
	k.Crawler.Kind, k.DryRun = enforce.CrawlerVerified, true
	if a, c := addrRef(k).String(), crawlerRef(k).String(); a != "{v9f3a}203.0.113.7/32:dry" || c != "{v9f3a}~v9f3a:dry" {
		t.Errorf("verified: %s, %s", a, c)
	}
	if r, ok := parseRef("{203.0.113.7/32}:dry"); !ok || !r.Old || !r.Dry || r.Prefix != netip.MustParsePrefix("203.0.113.7/32") {
		t.Errorf("an ID of before issue 38: %+v %v", r, ok)
	}
}

// FuzzDecodeState: any state string is read or refused without a panic;
// a state read writes back, as the scripts write it, to one that reads the
// same.
func FuzzDecodeState(f *testing.F) {
	for _, s := range []string{"", "0,0,0,0,0,0,0,0,0,0,0", "1800000000000000000,0,0,1,2,3,4,5,6,7,8", "1,2", "a,b,c,d,e,f,g,h,i,j,k", "0,0,0,0,0,0,0,0,0,0,0,0", "0,0,0,0,0,0,0,0,0,0,0,0,0", "1,2,3,4,5,6,7,8,9,10,11,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := decodeState(s)
		if err != nil {
			return
		}
		back := fmt.Sprintf("%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d", st.TAT, st.ThrottleUntil, st.StrikeFrom, st.WindowStart,
			st.BlockedUntil, st.Remember, st.RobotsAt, st.LastSeen, st.Strikes, st.Slips, st.Offenses, st.Why)
		if again, err := decodeState(back); err != nil || again != st {
			t.Errorf("%q -> %+v -> %q -> %+v, %v", s, st, back, again, err)
		}
	})
}

// FuzzEvent: any message on the events channel is applied or ignored
// without a panic; the cache takes at most the one record a message names,
// with at most 4 tokens.
func FuzzEvent(f *testing.F) {
	for _, s := range []string{
		`{"op":"block","from":1,"zone":"z","id":"{203.0.113.0/24}203.0.113.7/32","rec":{"v":3,"a":{"BlockedUntil":99999999999999999},"t":[{"n":"x","s":{}}]}}`,
		`{"op":"unblock","from":1,"zone":"z","prefix":"203.0.113.0/24"}`,
		`{"op":"block","zone":"z","id":"{none}:dry","rec":{"t":[{},{},{},{},{}]}}`,
		`{"op":"block","zone":"other","id":"{1.2.3.4/32}","rec":{}}`, `[]`, `{"op":"unblock","zone":"z","prefix":"::/0"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		s := &Store{zone: "z", id: 7, cache: newCache(), now: time.Now}
		s.handle(payload)
		if n := s.cache.len(); n > 1 {
			t.Errorf("one message cached %d records", n)
		}
		for i := range s.cache.shards {
			for _, e := range s.cache.shards[i].m {
				if len(e.rec.Tokens) > 4 {
					t.Errorf("a record with %d tokens was cached", len(e.rec.Tokens))
				}
			}
		}
	})
}
