package source

import (
	"context"
	"errors"
	"fmt"
	"github.com/robotsguard/robotsguard/uaclass"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// listServer serves a ranges list that a test changes, with an ETag, and
// counts what it answered.
type listServer struct {
	*httptest.Server
	mu      sync.Mutex
	body    string
	status  int
	header  http.Header
	gets    atomic.Int64
	answers map[int]int
}

func newListServer(t *testing.T, body string) *listServer {
	s := &listServer{body: body, status: 200, header: http.Header{}, answers: map[int]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.gets.Add(1)
		s.mu.Lock()
		body, status := s.body, s.status
		for k, v := range s.header {
			w.Header()[k] = v
		}
		etag := fmt.Sprintf(`"%x"`, len(body)*31+int(body[len(body)/2]))
		code := status
		if status == 200 && r.Header.Get("If-None-Match") == etag {
			code = http.StatusNotModified
		}
		s.answers[code]++
		s.mu.Unlock()
		w.Header().Set("ETag", etag)
		w.WriteHeader(code)
		if code == 200 {
			fmt.Fprint(w, body)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *listServer) set(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

// memCache is a RangeCache in memory.
type memCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (c *memCache) Load(_ context.Context, key string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[key]; ok {
		return v, nil
	}
	return nil, fs.ErrNotExist
}

func (c *memCache) Store(_ context.Context, key string, v []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string][]byte{}
	}
	c.m[key] = v
	return nil
}

func newTestFeed(t *testing.T, url string, cache RangeCache, timeout ...time.Duration) (*RangeFeed, *observer.ObservedLogs, map[string]int) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	var mu sync.Mutex
	counts := map[string]int{}
	o := RangeFeedOptions{URL: url, Cache: cache, Logger: zap.New(core), Timeout: 2 * time.Second}
	if len(timeout) > 0 {
		o.Timeout = timeout[0]
	}
	f, err := NewRangeFeed(RangeFeedOptions{URL: o.URL, Cache: o.Cache, Logger: o.Logger, Timeout: o.Timeout,
		Fetched: func(u, outcome string) {
			if u != url {
				t.Errorf("counted for %s", u)
			}
			mu.Lock()
			counts[outcome]++
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	return f, logs, counts
}

func holds(f *RangeFeed, ip string) bool {
	l := f.Ranges().Load()
	return l != nil && l.Contains(netip.MustParseAddr(ip))
}

const (
	listA = `{"creationTime": "2026-11-20T15:46:01.000000", "prefixes": [{"ipv4Prefix": "20.171.206.0/24"}]}`
	listB = `{"creationTime": "2026-11-27T15:46:01.000000", "prefixes": [{"ipv4Prefix": "52.230.152.0/24"}, {"ipv6Prefix": "2603:1030::/32"}]}`
)

// TestRangeFeedRefresh: the list is fetched, revalidated with its ETag (a
// 304 keeps it, with its check time), replaced when it changes, and kept
// whatever a fetch brings: a 500, a 404, garbage, an HTML error page, an
// empty body, a list of 50 MB; each failure is logged at warn with the URL
// and the reason and counted, and the list follows again once the server
// serves one.
func TestRangeFeedRefresh(t *testing.T) {
	srv := newListServer(t, listA)
	// A fetch's time limit far above what reading the 50 MiB list's first
	// 4 MiB takes, even under -race on a loaded machine (it once took 2.6
	// s): the test is about what each answer does, not how fast.
	f, logs, counts := newTestFeed(t, srv.URL+"/gptbot.json", nil, 30*time.Second)
	ctx := context.Background()
	f.Refresh(ctx)
	l := f.Ranges().Load()
	if l == nil || !holds(f, "20.171.206.9") || l.Source != srv.URL+"/gptbot.json" || l.Created.Format(time.DateOnly) != "2026-11-20" || l.Cached {
		t.Fatalf("first fetch: %+v", l)
	}
	read := l.Read
	time.Sleep(2 * time.Millisecond)
	f.Refresh(ctx)
	if l2 := f.Ranges().Load(); srv.answers[304] != 1 || l2.Read != read || !l2.Checked.After(read) || counts["not_modified"] != 1 {
		t.Errorf("revalidation: answers %v, read %v -> %v, checked %v", srv.answers, read, l2.Read, l2.Checked)
	}
	srv.set(200, listB)
	f.Refresh(ctx)
	if holds(f, "20.171.206.9") || !holds(f, "52.230.152.9") || !holds(f, "2603:1030::1") {
		t.Errorf("the changed list is not in force: %v", f.Ranges().Load().Prefixes)
	}
	big := `{"prefixes": [` + strings.Repeat(`{"ipv4Prefix": "10.0.0.0/8"},`, 50<<20/29) + `{"ipv4Prefix": "10.0.0.0/8"}]}`
	for _, tc := range []struct {
		status        int
		body, outcome string
		reason        string
	}{
		{500, "oops", "unreachable", "HTTP 500 Internal Server Error"},
		{404, "gone", "unavailable", "HTTP 404 Not Found"},
		{200, "\x00\x01garbage\xff", "refused", "the answer is no list of IP ranges: parsing IP ranges: line 1: invalid IP"},
		{200, "<html><body>Service unavailable</body></html>", "refused", "the answer is no list of IP ranges"},
		{200, `{"prefixes": []}`, "refused", "no prefixes"},
		{200, big, "refused", fmt.Sprintf("the list is larger than %d bytes", DefaultMaxRanges)},
	} {
		srv.set(tc.status, tc.body)
		logs.TakeAll()
		start := time.Now()
		wait := f.Refresh(ctx)
		took := time.Since(start)
		if !holds(f, "52.230.152.9") || holds(f, "10.1.1.1") {
			t.Errorf("%d %.20q: the last good list was not kept", tc.status, tc.body)
		}
		if wait >= DefaultRangesRefresh {
			t.Errorf("%d %.20q: next fetch in %v, want a retry sooner", tc.status, tc.body, wait)
		}
		warned := logs.FilterLevelExact(zap.WarnLevel).FilterMessage("ranges: fetch failed; keeping the last good list").All()
		if len(warned) != 1 || warned[0].ContextMap()["url"] != srv.URL+"/gptbot.json" || !strings.Contains(fmt.Sprint(warned[0].ContextMap()["reason"]), tc.reason) {
			t.Errorf("%d %.20q: logged %v, want a warning with the URL and %q", tc.status, tc.body, logs.All(), tc.reason)
		}
		t.Logf("%d, %d bytes: %s in %v", tc.status, len(tc.body), tc.outcome, took)
	}
	if counts["unreachable"] != 1 || counts["unavailable"] != 1 || counts["refused"] != 4 {
		t.Errorf("counted %v", counts)
	}
	srv.set(200, listA)
	logs.TakeAll()
	f.Refresh(ctx)
	if !holds(f, "20.171.206.9") || logs.FilterMessage("ranges: the list can be fetched again").Len() != 1 {
		t.Errorf("after the failures: %v, %v", f.Ranges().Load().Prefixes, logs.All())
	}
}

// TestRangeFeedCacheControl: a max-age longer than the refresh delays the
// next fetch (less the Age), at most a week; no-cache or none leaves the
// refresh.
func TestRangeFeedCacheControl(t *testing.T) {
	now := time.Now()
	for cc, want := range map[string]time.Duration{
		"":                              0,
		"public, max-age=172800":        48*time.Hour - 100*time.Second,
		"max-age=3600, must-revalidate": time.Hour - 100*time.Second,
		"no-cache, max-age=172800":      0,
		"max-age=99999999999":           maxFreshness - 100*time.Second,
		"max-age=bad":                   0,
	} {
		h := http.Header{"Cache-Control": {cc}, "Age": {"100"}}
		if cc == "" {
			h = http.Header{}
		}
		if got := freshness(h, now); got != want {
			t.Errorf("%q: %v, want %v", cc, got, want)
		}
	}
	srv := newListServer(t, listA)
	srv.header.Set("Cache-Control", "public, max-age=172800")
	f, _, _ := newTestFeed(t, srv.URL, nil)
	if wait := f.Refresh(context.Background()); wait != 48*time.Hour {
		t.Errorf("next fetch in %v, want 48h", wait)
	}
}

// TestRangeFeedStart: a start with the URL down and no copy in storage
// returns at once with no list (the crawlers are unverified) and warns; a
// fetch stores the list; a later start with the URL down starts from that
// copy, marked cached, with its fetch time, and sends its ETag; a copy of
// another URL or an unreadable one is not used.
func TestRangeFeedStart(t *testing.T) {
	srv := newListServer(t, listB)
	url := srv.URL + "/list.json"
	cache := &memCache{}
	srv.set(503, "down")
	f, logs, _ := newTestFeed(t, url, cache)
	start := time.Now()
	f.Start()
	WaitRanges([]*RangeFeed{f})
	if took := time.Since(start); took > FirstFetchWait || f.Ranges().Load() != nil {
		t.Fatalf("start with the URL down: %v, list %v", took, f.Ranges().Load())
	}
	if logs.FilterMessage("ranges: fetch failed and no list is known; its crawlers are unverified until one is fetched").Len() != 1 {
		t.Errorf("logged %v", logs.All())
	}
	f.Stop()

	srv.set(200, listB)
	f2, _, _ := newTestFeed(t, url, cache)
	f2.Start()
	WaitRanges([]*RangeFeed{f2})
	if !holds(f2, "52.230.152.1") || len(cache.m) != 1 {
		t.Fatalf("start with the URL up: %v, cache %d", f2.Ranges().Load(), len(cache.m))
	}
	fetched := f2.Ranges().Load().Read
	f2.Stop()

	srv.Close() // down: connection refused
	f3, logs3, _ := newTestFeed(t, url, cache)
	f3.Start()
	WaitRanges([]*RangeFeed{f3})
	l := f3.Ranges().Load()
	if l == nil || !l.Cached || !l.Read.Equal(fetched) || !holds(f3, "52.230.152.1") {
		t.Fatalf("start from the copy: %+v", l)
	}
	if f3.validators.ETag == "" || logs3.FilterMessage("ranges: starting from the last good copy in storage until the list is fetched").Len() != 1 {
		t.Errorf("validators %+v, logs %v", f3.validators, logs3.All())
	}
	for range 100 {
		if logs3.FilterMessage("ranges: fetch failed; keeping the last good list").Len() == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if logs3.FilterMessage("ranges: fetch failed; keeping the last good list").Len() != 1 || !holds(f3, "52.230.152.1") {
		t.Errorf("after the failed fetch: %v", logs3.All())
	}

	other, _, _ := newTestFeed(t, "http://127.0.0.1:1/other.json", &memCache{m: map[string][]byte{}})
	_ = other.o.Cache.Store(context.Background(), other.key, cache.m[f.key])
	if l, _, err := LoadCachedRanges(context.Background(), other.o.Cache, other.key, other.o.URL); l != nil || err == nil {
		t.Errorf("a copy of another URL: %v, %v", l, err)
	}
	if l, _, err := LoadCachedRanges(context.Background(), &memCache{m: map[string][]byte{"k": []byte("{")}}, "k", url); l != nil || err == nil {
		t.Errorf("an unreadable copy: %v, %v", l, err)
	}
	if l, _, err := LoadCachedRanges(context.Background(), &memCache{}, "k", url); l != nil || err != nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no copy: %v, %v", l, err)
	}
}

// TestWaitRangesHanging: a list whose server accepts and never answers
// holds the start up FirstFetchWait at most, for all feeds together, and
// is warned about; the list that answers is in force.
func TestWaitRangesHanging(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	up := newListServer(t, listA)
	var feeds []*RangeFeed
	var logs []*observer.ObservedLogs
	for _, u := range []string{hang.URL + "/a.json", hang.URL + "/b.json", up.URL + "/c.json"} {
		f, l, _ := newTestFeed(t, u, nil, 3*FirstFetchWait)
		f.Start()
		feeds, logs = append(feeds, f), append(logs, l)
	}
	start := time.Now()
	WaitRanges(feeds)
	took := time.Since(start)
	if took > FirstFetchWait+time.Second || took < FirstFetchWait/2 {
		t.Errorf("waited %v, want about %v", took, FirstFetchWait)
	}
	for i, l := range logs {
		warned := l.FilterMessage("ranges: the first fetch is taking long; starting without this list, its crawlers are unverified until it answers").Len() == 1
		if warned != (i < 2) {
			t.Errorf("feed %d: warned %v: %v", i, warned, l.All())
		}
	}
	if !holds(feeds[2], "20.171.206.1") || feeds[0].Ranges().Load() != nil {
		t.Error("the lists in force are not those fetched")
	}
}

// TestRangeSettings: files are read, URLs kept with the tokens they
// verify (several tokens may share one), published URLs added for the
// tokens the configuration does not name; bad tokens, URLs and refreshes
// are refused with their field.
func TestRangeSettings(t *testing.T) {
	file := t.TempDir() + "/gptbot.json"
	if err := os.WriteFile(file, []byte(listA), 0o644); err != nil {
		t.Fatal(err)
	}
	bots := []uaclass.Bot{
		{Token: "gptbot", Ranges: []string{"https://openai.com/gptbot.json"}},
		{Token: "feedfetcher-google", Ranges: []string{"https://g.example/u.json", "https://g.example/ug.json"}},
		{Token: "google-read-aloud", Ranges: []string{"https://g.example/u.json", "https://g.example/ug.json"}},
		{Token: "bingbot", Ranges: []string{"https://www.bing.com/toolbox/bingbot.json"}},
		{Token: "bingbot", Ranges: []string{"https://bing.example/bingbot.json"}}, // the configuration's entry replaces the database's
		{Token: "bingbot"}, // and one without URLs keeps them
	}
	src, err := RangeSettings{Ranges: map[string]string{"GPTBot": file, "chatgpt-user": "https://openai.com/chatgpt-user.json"}, Published: true, Bots: bots, MaxFile: 1 << 20}.Check()
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(src.URLs)
	want := "map[https://bing.example/bingbot.json:[bingbot] https://g.example/u.json:[feedfetcher-google google-read-aloud] https://g.example/ug.json:[feedfetcher-google google-read-aloud] https://openai.com/chatgpt-user.json:[chatgpt-user]]"
	if got != want || src.Files["gptbot"] == nil || src.Files["gptbot"].Source != file || src.Refresh != DefaultRangesRefresh {
		t.Errorf("sources: %s, files %v, refresh %v\nwant %s", got, src.Files, src.Refresh, want)
	}
	for _, tc := range []struct {
		s    RangeSettings
		want string
	}{
		{RangeSettings{Refresh: time.Millisecond}, "verify.ranges_refresh: must be at least 1s, got 1ms"},
		{RangeSettings{Ranges: map[string]string{"/x": file}}, `verify.ranges./x: "/x" is not a product token`},
		{RangeSettings{Ranges: map[string]string{"gptbot": "https://"}}, `verify.ranges.gptbot: "https://" is not an absolute http(s) URL`},
		{RangeSettings{Ranges: map[string]string{"gptbot": "/nonexistent/gptbot.json"}, MaxFile: 1 << 20}, "verify.ranges.gptbot: /nonexistent/gptbot.json: no such file or directory"},
	} {
		if _, err := tc.s.Check(); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %s", tc.s, err, tc.want)
		}
	}
}
