package uaclass

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/robotsguard/robotsguard/internal/readfile"
	"github.com/robotsguard/robotsguard/policy"
)

// Range list formats, as [RangeList].Format names them.
const (
	// FormatPrefixes is the "prefixes" JSON that Google, OpenAI, Bing,
	// Perplexity and Apple publish:
	//
	//	{"creationTime": "...", "prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": "2001:4860:4801:10::/64"}]}
	FormatPrefixes = "prefixes"
	// FormatJAFAR is the same JSON with a "formatVersion", as
	// draft-illyes-webbotauth-jafar writes it: "synctoken", "creationTime"
	// and a "service" per prefix (which it ignores).
	FormatJAFAR = "jafar"
	// FormatText is one CIDR or IP a line; blank lines and "#" comments
	// are skipped: a list an operator writes by hand.
	FormatText = "text"
)

// RangeList is one list of a crawler's IP ranges as its operator publishes
// it, with where it came from: a file, or a URL fetched (or its last good
// copy, kept in storage). A list in force is never changed: a refresh
// replaces it whole ([Ranges]).
type RangeList struct {
	Prefixes []netip.Prefix
	// Format is FormatPrefixes, FormatJAFAR or FormatText.
	Format string
	// Created is the list's own creationTime; zero when it has none, or
	// one that is no time.
	Created time.Time
	// SyncToken is the list's syncToken (JAFAR's synctoken), when any.
	SyncToken string
	// Source is the file or URL it was read from.
	Source string
	// Read is when this content was read from the file, or fetched.
	Read time.Time
	// Checked is when it was last confirmed current: read, fetched, or
	// answered 304 Not Modified. Zero for a file.
	Checked time.Time
	// Cached reports a URL's last good copy read from storage at start,
	// not fetched, nor confirmed by a 304, since.
	Cached bool
	// Size is the size of the document in bytes.
	Size int

	spans []span // Prefixes as sorted, disjoint address intervals
}

// span is an interval of addresses, IPv4 as IPv4-mapped IPv6.
type span struct{ lo, hi u128 }

type u128 struct{ hi, lo uint64 }

func (a u128) less(b u128) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

func u128Of(a netip.Addr) u128 {
	b := a.As16() // an IPv4 address as IPv4-mapped
	return u128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

// index builds the sorted intervals Contains searches; a list is indexed
// before it is put in force.
func (l *RangeList) index() {
	if l.spans != nil || len(l.Prefixes) == 0 {
		return
	}
	spans := make([]span, 0, len(l.Prefixes))
	for _, p := range l.Prefixes {
		p = p.Masked()
		host := 128 - p.Bits()
		if p.Addr().Is4() {
			host = 32 - p.Bits()
		}
		lo := u128Of(p.Addr())
		hi := lo
		if host >= 64 {
			hi.lo, hi.hi = ^uint64(0), hi.hi|(^uint64(0)>>(128-host))
		} else if host > 0 {
			hi.lo |= ^uint64(0) >> (64 - host)
		}
		spans = append(spans, span{lo, hi})
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.lo.less(b.lo) {
			return -1
		}
		if b.lo.less(a.lo) {
			return 1
		}
		return 0
	})
	merged := spans[:1]
	for _, s := range spans[1:] {
		last := &merged[len(merged)-1]
		if !last.hi.less(s.lo) { // overlapping or nested
			if last.hi.less(s.hi) {
				last.hi = s.hi
			}
			continue
		}
		merged = append(merged, s)
	}
	l.spans = slices.Clip(merged)
}

// Contains reports whether ip is in one of the list's ranges: a binary
// search of its intervals, without a lock or an allocation.
func (l *RangeList) Contains(ip netip.Addr) bool {
	if l.spans == nil {
		l2 := *l
		l2.index() // a list made by hand, not put in force through Ranges
		l = &l2
	}
	x := u128Of(ip.Unmap())
	i, _ := slices.BinarySearchFunc(l.spans, x, func(s span, x u128) int {
		if x.less(s.lo) {
			return 1
		}
		if s.hi.less(x) {
			return -1
		}
		return 0
	})
	return i < len(l.spans) && !x.less(l.spans[i].lo) && !l.spans[i].hi.less(x)
}

// Ranges holds the list of a crawler's ranges in force, replaced whole when
// a refresh brings a new one; reads take no lock. Its zero value holds
// none, and a crawler verified only by ranges is then unverified.
type Ranges struct{ p atomic.Pointer[RangeList] }

// NewRanges returns Ranges holding l.
func NewRanges(l *RangeList) *Ranges {
	r := &Ranges{}
	r.Store(l)
	return r
}

// Load returns the list in force, nil when none is.
func (r *Ranges) Load() *RangeList { return r.p.Load() }

// Store puts l in force; l is not to be changed after.
func (r *Ranges) Store(l *RangeList) {
	if l != nil {
		l.index()
	}
	r.p.Store(l)
}

// LoadRanges reads a file of IP ranges in one of the formats of
// [ParseRangeList]. It reads at most maxSize bytes of a regular file, so
// that a wrong path (a device, a FIFO, a huge file) cannot hang or exhaust
// the config load.
func LoadRanges(path string, maxSize int64) ([]netip.Prefix, error) {
	l, err := LoadRangeList(path, maxSize)
	if err != nil {
		return nil, err
	}
	return l.Prefixes, nil
}

// LoadRangeList reads a file of IP ranges as [LoadRanges] does, with its
// provenance.
func LoadRangeList(path string, maxSize int64) (*RangeList, error) {
	data, err := readfile.Bounded(path, maxSize)
	if err != nil {
		return nil, err
	}
	l, err := ParseRangeList(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	l.Source, l.Read = path, time.Now()
	return l, nil
}

// TokenError is a range file that cannot be loaded: Token is the crawler's
// product token as the configuration names it.
type TokenError struct {
	Token string
	Err   error
}

func (e *TokenError) Error() string { return e.Token + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *TokenError) Unwrap() error { return e.Err }

// ReadRanges loads the range file of each crawler (product token -> file,
// each at most maxSize bytes; see [LoadRanges]), in the order of the
// tokens, and returns the ranges by normalised product token, as
// [VerifierOptions].Ranges wants them. Its errors are *TokenError.
func ReadRanges(files map[string]string, maxSize int64) (map[string][]netip.Prefix, error) {
	lists, err := ReadRangeLists(files, maxSize)
	if err != nil {
		return nil, err
	}
	ranges := map[string][]netip.Prefix{}
	for t, l := range lists {
		ranges[t] = l.Prefixes
	}
	return ranges, nil
}

// ReadRangeLists loads the range files as [ReadRanges] does, with their
// provenance.
func ReadRangeLists(files map[string]string, maxSize int64) (map[string]*RangeList, error) {
	lists := map[string]*RangeList{}
	for _, tok := range slices.Sorted(maps.Keys(files)) {
		t := policy.ProductToken(tok)
		if t == "" {
			return nil, &TokenError{tok, fmt.Errorf("%q is not a product token", tok)}
		}
		l, err := LoadRangeList(files[tok], maxSize)
		if err != nil {
			return nil, &TokenError{tok, err}
		}
		lists[t] = l
	}
	return lists, nil
}

// ParsePrefix reads a CIDR (masked) or a single IP (its own prefix).
func ParsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return p, fmt.Errorf("invalid IP range %q", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("invalid IP %q", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// ParseRanges parses IP ranges in one of the formats of [ParseRangeList].
func ParseRanges(data []byte) ([]netip.Prefix, error) {
	l, err := ParseRangeList(data)
	if err != nil {
		return nil, err
	}
	return l.Prefixes, nil
}

// ParseRangeList parses a list of IP ranges: a JSON object (FormatPrefixes,
// or FormatJAFAR when it has a formatVersion) or, for anything else, one
// range a line (FormatText). A list without a range, or with one range
// that is not one, is refused whole: a list cut short or garbled is no
// list, and the one in force stays.
func ParseRangeList(data []byte) (*RangeList, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return parseJSONRanges(t)
	}
	return parseTextRanges(data)
}

func parseJSONRanges(data []byte) (*RangeList, error) {
	var doc struct {
		FormatVersion json.RawMessage `json:"formatVersion"`
		SyncToken     json.RawMessage `json:"syncToken"` // JAFAR's synctoken too: keys match case-insensitively
		CreationTime  string          `json:"creationTime"`
		Prefixes      []struct {
			IPv4 string `json:"ipv4Prefix"`
			IPv6 string `json:"ipv6Prefix"`
		} `json:"prefixes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parsing IP ranges: %w", err)
	}
	if len(doc.Prefixes) == 0 {
		return nil, fmt.Errorf("parsing IP ranges: no prefixes")
	}
	l := &RangeList{Format: FormatPrefixes, Created: creationTime(doc.CreationTime), SyncToken: rawString(doc.SyncToken), Size: len(data)}
	if len(doc.FormatVersion) > 0 && string(doc.FormatVersion) != "null" {
		l.Format = FormatJAFAR
	}
	l.Prefixes = make([]netip.Prefix, 0, len(doc.Prefixes))
	for i, p := range doc.Prefixes {
		if p.IPv4 == "" && p.IPv6 == "" {
			return nil, fmt.Errorf("prefix %d: neither ipv4Prefix nor ipv6Prefix", i)
		}
		for _, f := range []struct {
			s  string
			v4 bool
		}{{p.IPv4, true}, {p.IPv6, false}} {
			if f.s == "" {
				continue
			}
			pfx, err := netip.ParsePrefix(f.s)
			if err != nil {
				return nil, fmt.Errorf("prefix %d: %w", i, err)
			}
			if f.v4 != pfx.Addr().Is4() {
				return nil, fmt.Errorf("prefix %d: %q is in the wrong family field", i, f.s)
			}
			l.Prefixes = append(l.Prefixes, pfx.Masked())
		}
	}
	return l, nil
}

func parseTextRanges(data []byte) (*RangeList, error) {
	l := &RangeList{Format: FormatText, Size: len(data)}
	for n, line := range strings.Split(string(data), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		p, err := ParsePrefix(line)
		if err != nil {
			return nil, fmt.Errorf("parsing IP ranges: line %d: %v", n+1, err)
		}
		l.Prefixes = append(l.Prefixes, p)
	}
	if len(l.Prefixes) == 0 {
		return nil, fmt.Errorf("parsing IP ranges: no prefixes")
	}
	return l, nil
}

// creationTime reads a list's creationTime: RFC 3339, or the
// "2026-11-01T00:00:00.000000" without a zone that Google and Bing write
// (UTC). It returns zero for anything else.
func creationTime(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// rawString returns a JSON string's value, or a number's text.
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if n := json.Number(""); json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// PublishedRanges returns the URLs where the operators of bots publish
// their IP ranges, by token; of entries with the same token, the last one
// with URLs counts (the configuration's entries come after the
// database's, and one that changes a crawler's class keeps its URLs).
func PublishedRanges(bots []Bot) map[string][]string {
	out := map[string][]string{}
	for i := range bots {
		if b := &bots[i]; len(b.Ranges) > 0 {
			out[b.Token] = b.Ranges
		}
	}
	return out
}

// ListVerdict is what a bot's lists of ranges say of a claim from ip, as
// [Verifier.Verify] reads them, without a DNS lookup: Verified and the
// list that holds ip; for a bot verified by ranges, Impostor outside its
// lists, or Unverified while none is loaded; for a bot verified by reverse
// DNS outside its lists, Unverified and dns true (the lookup decides);
// NotClaimed for a bot without a method and no lists. Lists not loaded
// are nil.
func ListVerdict(b *Bot, lists []*RangeList, ip netip.Addr) (v Verdict, by *RangeList, dns bool) {
	if b == nil {
		return NotClaimed, nil, false
	}
	loaded := false
	for _, l := range lists {
		if l != nil {
			if l.Contains(ip) {
				return Verified, l, false
			}
			loaded = true
		}
	}
	switch {
	case b.Verify == VerifyDNS:
		return Unverified, nil, true
	case loaded:
		return Impostor, nil, false
	case b.Verify == VerifyRanges || len(lists) > 0:
		return Unverified, nil, false
	}
	return NotClaimed, nil, false
}
