package enforce

import (
	"hash/maphash"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/evidence/behaviour"
	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Behaviour evidence (issue 37, package evidence/behaviour): a browser
// claim that navigates as a crawler driving a browser does is held to
// robots.txt as an undeclared bot, exactly as a poser is (class poser,
// evidence "behaviour"), for the hold's length: its self-started
// navigations are, the ones that made it a crawler. Its clicks, reloads
// and subresources are a browser's still: people who share its address
// and browser build (an office) keep theirs. A summary is kept per
// client (its address prefix and TLS fingerprint) and per group (its
// network, /24 or /48, and fingerprint; behaviour.Config.Group: higher
// thresholds, since a group pools people): a client of a group that
// behaves as a crawler is held at half the thresholds, so that a crawler
// spread over a network's addresses is caught, while a person there who
// only clicks is never held. Posers "log" logs and counts the evidence and
// serves the client as a browser; posers "off" and behaviour "off" read
// nothing.
//
// The summaries are kept in process, bounded (behaviourTable), unless the
// Store keeps them for a fleet ([BehaviourStore], the Redis store): then a
// navigation's summaries travel in the round trip that reads the client's
// address state, so every instance judges what the fleet saw. While such a
// store cannot answer, the in-process tables do.

// BehaviourSettings are the behaviour evidence's options as a
// configuration writes them; a zero value is the default
// (behaviour.Default).
type BehaviourSettings struct {
	Off               bool
	Window, Hold      time.Duration
	Pages, Disallowed int
}

// check returns the configuration of s: its values, or the defaults'. Its
// errors name the field (behaviour.window, ...).
func (s BehaviourSettings) check() (behaviour.Config, error) {
	c := behaviour.Default
	if s.Window != 0 {
		c.Window = s.Window
	}
	if s.Hold != 0 {
		c.Hold = s.Hold
	}
	if s.Pages != 0 {
		c.Pages = s.Pages
	}
	if s.Disallowed != 0 {
		c.Disallowed = s.Disallowed
	} else {
		c.Disallowed = min(c.Disallowed, c.Pages) // the default, at most pages
	}
	switch {
	case c.Window < 100*time.Millisecond || c.Window > 24*time.Hour:
		return c, field.Errorf("behaviour.window", "must be between 100ms and 24h, got %v", c.Window)
	case c.Hold < time.Second:
		return c, field.Errorf("behaviour.hold", "must be at least 1s, got %v", c.Hold)
	case c.Pages < 1 || c.Pages > behaviour.Slots:
		return c, field.Errorf("behaviour.pages", "must be between 1 and %d, got %d", behaviour.Slots, c.Pages)
	case c.Disallowed < 1 || c.Disallowed > c.Pages:
		return c, field.Errorf("behaviour.disallowed", "must be between 1 and pages (%d), got %d", c.Pages, c.Disallowed)
	}
	return c, c.Validate()
}

// ReadBehaviour reads what the behaviour evidence needs of a request
// whose User-Agent claims a browser (ua, after [Engine.Judge]): its Fetch
// Metadata, only for a document (one request in a page's dozens), and
// whether its TLS handshake (f.TLS) is an engine's that sends Sec-Fetch-User.
// ok is false when the claim is not judged (behaviour or posers off, a
// claim Judge does not judge, an allowed fingerprint, a poser) or the
// request has no Fetch Metadata. [Reader.Read]
// calls it; [Engine.Decide] judges what the client did. It allocates
// nothing.
func (e *Engine) ReadBehaviour(ua *uaclass.Result, f *Facts, h http.Header) (b behaviour.Request, ok bool) {
	if e.behaviours == nil || ua.Class != uaclass.Browser || !ua.Claim.Judged() || e.allowedPrint(f) {
		return b, false
	}
	if b.Dest = header(h, "Sec-Fetch-Dest"); b.Dest != "document" {
		// A page's subresources, or no Fetch Metadata (plain HTTP, where
		// browsers send none): only navigations count, and only they are
		// held.
		return b, false
	}
	b.Mode, b.Site, b.User = header(h, "Sec-Fetch-Mode"), header(h, "Sec-Fetch-Site"), header(h, "Sec-Fetch-User")
	if b.Mode != "navigate" || b.Site == "cross-site" || b.Site != "none" && b.User == "?1" {
		// No navigation, or one a page led to with a gesture (a click, a
		// link from elsewhere): it can only be counted among the
		// navigations, and nothing below changes that.
		return b, true
	}
	b.Purpose = len(h["Sec-Purpose"]) > 0 || len(h["Purpose"]) > 0 || len(h["X-Moz"]) > 0
	b.Conditional = len(h["If-None-Match"]) > 0 || len(h["If-Modified-Since"]) > 0
	eng := f.TLS.Engine()
	b.Gestures = eng == evidence.Chromium || eng == evidence.Firefox
	return b, true
}

// behave judges a browser claim by what its client did (see above): it
// adds the request to the client's and its group's summaries and, when
// the client behaves as a crawler, adds evidence.Behaviour to
// req.Evidence and, with posers "enforce", makes it a poser. p is the
// served robots.txt, whose "*" group says which navigations are to
// disallowed targets. It allocates nothing but a new summary's slot.
//
// With a [BehaviourStore] it also reads the address's state (the peek a
// browser's request makes) in the same round trip, and returns it with
// peeked true.
func (e *Engine) behave(req *Request, p *policy.Policy, now int64) (peek Outcome, peeked bool) {
	b := &req.Behaviour
	if !req.behaviourRead {
		return peek, false
	}
	if !b.Navigation() {
		return peek, false
	}
	bs := e.behaviours
	ip := clientAddr(req.IP)
	if b.MayCount() {
		b.Target = behaviour.Hash(req.Target.Normal)
		b.Disallowed = p != nil && !req.Invalid && !starReference(req, p).Allowed
	}
	var v behaviour.Verdict
	if e.shared != nil {
		v, peek, peeked = e.behaveShared(req, ip, now)
	}
	if !peeked {
		fp := maphash.String(bs.seed, req.JA4)
		cfg := &e.cfg.Behaviour
		if bs.groups.observe(bs.key(behaviourNet(ip), fp, e.cfg.DryRun, 1), now, b, &e.behaviourGroup).Held {
			cfg = &e.behaviourMember
		}
		v = bs.clients.observe(bs.key(e.key(ip, "").Prefix, fp, e.cfg.DryRun, 0), now, b, cfg)
	}
	if !v.Held || !v.Counted {
		// Only the self-started navigations of a held client are held:
		// the clicks, reloads and images of people who share its address
		// and browser build (an office) are theirs.
		return
	}
	req.Evidence.Evidence |= evidence.Behaviour
	req.Evidence.Claim = req.UA.Claim
	req.Evidence.Seen = evidence.Seen{Pages: uint16(v.Pages), Disallowed: uint16(v.Disallowed), Navs: uint16(min(v.Navs, 1<<16-1)),
		Window: e.cfg.Behaviour.Window}
	if e.cfg.Posers == PosersEnforce {
		req.UA = uaclass.Result{Class: uaclass.Poser, Claim: req.UA.Claim}
		req.BrowserLike, req.CrossSite = false, false
	}
	return peek, peeked
}

// BehaviourStore is a [Store] that keeps the behaviour summaries for a
// fleet. [New] uses it when its store implements it.
type BehaviourStore interface {
	// Behave adds the navigation n, made at now, to the summaries of its
	// group and of its client, as the in-process tables do (see
	// behaviourTable.observe: the group's first, under n.Group; then the
	// client's under n.Member when the group is held, else n.Client),
	// applies op to key, and returns the outcome and the client's
	// verdict, in one round trip. ok is false when the store could not
	// do it (it cannot reach its server): then it did nothing, and the
	// engine judges in process and applies op as usual.
	Behave(key Key, now time.Time, op Op, n *Navigation) (out Outcome, v behaviour.Verdict, ok bool)
}

// Navigation is one navigation for a [BehaviourStore]: its request (a
// navigation, behaviour.Request.Navigation), its client and group, and
// the thresholds.
type Navigation struct {
	Request behaviour.Request
	// Print is the hash of the client's TLS fingerprint (its JA4), the
	// same on every instance.
	Print uint64
	// Prefix is the client's address prefix, Group its group's network
	// (/24, /48).
	Prefix, Group netip.Prefix
	// DryRun marks a dry-run engine's summaries.
	DryRun bool
	// Client, GroupConfig and Member are the thresholds of a client, of a
	// group, and of a client of a group that behaves as a crawler.
	Client, GroupConfig, Member behaviour.Config
}

// behaveShared judges the navigation with the fleet's summaries, along
// with the peek a browser's request makes of its address; peeked is false
// when the store could not answer.
func (e *Engine) behaveShared(req *Request, ip netip.Addr, now int64) (v behaviour.Verdict, peek Outcome, peeked bool) {
	k := e.key(ip, req.UA.Token())
	n := &Navigation{Request: req.Behaviour, Print: hashString(req.JA4), Prefix: k.Prefix, Group: behaviourNet(ip), DryRun: k.DryRun,
		Client: e.cfg.Behaviour, GroupConfig: e.behaviourGroup, Member: e.behaviourMember}
	peek, v, peeked = e.shared.Behave(AddrKey(k), time.Unix(0, now), Op{Peek: true}, n)
	return v, peek, peeked
}

// behaviourNet is the network of a group: /24 for IPv4, /48 for IPv6.
func behaviourNet(ip netip.Addr) netip.Prefix {
	bits := 48
	if ip.Is4() {
		bits = 24
	}
	p, _ := ip.Prefix(bits)
	return p
}

// behaviours are the summaries of an engine. Their keys are hashed with a
// seed of the process's, so that nobody can aim a key at another's.
type behaviours struct {
	seed            maphash.Seed
	clients, groups behaviourTable
}

// newBehaviours returns tables of at most n clients and n groups.
func newBehaviours(n int) *behaviours {
	b := &behaviours{seed: maphash.MakeSeed()}
	b.clients.init(n)
	b.groups.init(n)
	return b
}

// key returns the key of a client (kind 0: its address prefix p and the
// hash fp of its TLS fingerprint) or of a group (kind 1: its network p
// and fp), in a mode.
func (b *behaviours) key(p netip.Prefix, fp uint64, dry bool, kind byte) uint64 {
	var buf [16 + 1 + 1 + 8]byte
	a := p.Addr().As16()
	copy(buf[:16], a[:])
	buf[16] = byte(p.Bits())
	buf[17] = kind
	if dry {
		buf[17] |= 2
	}
	for i := range 8 {
		buf[18+i] = byte(fp >> (8 * i))
	}
	return maphash.Bytes(b.seed, buf[:])
}

// behaviourShards is how many locks a table has.
const behaviourShards = 32

// behaviourTable is a bounded table of summaries: a shard's slots are
// reused in a clock's order (a slot touched since the hand last passed
// gets another turn), never one whose hold is in force while another
// can go, so that a flood of new clients evicts old summaries and not the
// holds it should not escape.
type behaviourTable struct {
	shards [behaviourShards]behaviourShard
}

type behaviourShard struct {
	mu   sync.Mutex
	idx  map[uint64]int32
	ents []behaviourEntry
	max  int
	hand int
	_    [40]byte // keep shards apart in memory
}

type behaviourEntry struct {
	key uint64
	ref bool
	s   behaviour.Summary
}

func (t *behaviourTable) init(n int) {
	for i := range t.shards {
		t.shards[i].idx = map[uint64]int32{}
		t.shards[i].max = max(1, n/behaviourShards)
	}
}

// Len returns how many summaries the table holds.
func (t *behaviourTable) Len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += len(s.ents)
		s.mu.Unlock()
	}
	return n
}

// observe adds r to the summary of key (see behaviour.Summary.Observe) and
// returns its verdict. A request that cannot start counting (anything but
// a navigation that may be self-started) only reads an existing summary:
// only such a navigation makes one.
func (t *behaviourTable) observe(key uint64, now int64, r *behaviour.Request, c *behaviour.Config) behaviour.Verdict {
	s := &t.shards[key%behaviourShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.idx[key]
	if !ok {
		if !r.MayCount() {
			return behaviour.Verdict{}
		}
		i = s.slot(key, now)
	}
	e := &s.ents[i]
	e.ref = true
	return e.s.Observe(now, r, c)
}

// slot returns a free slot for key: a new one below the bound, else the
// clock's next slot whose summary may go.
func (s *behaviourShard) slot(key uint64, now int64) int32 {
	if len(s.ents) < s.max {
		s.ents = append(s.ents, behaviourEntry{key: key})
		i := int32(len(s.ents) - 1)
		s.idx[key] = i
		return i
	}
	victim := -1
	for range 2 * len(s.ents) {
		e := &s.ents[s.hand]
		if !e.ref && !e.s.Held(now) {
			victim = s.hand
			break
		}
		e.ref = false
		s.hand = (s.hand + 1) % len(s.ents)
	}
	if victim < 0 { // every slot holds a client: the oldest in the clock's order goes
		victim = s.hand
	}
	s.hand = (victim + 1) % len(s.ents)
	delete(s.idx, s.ents[victim].key)
	s.ents[victim] = behaviourEntry{key: key}
	s.idx[key] = int32(victim)
	return int32(victim)
}
