package quicprint

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/robotsguard/robotsguard/tlsprint"
)

// Tracker reads the Initial packets QUIC clients send to a server and
// remembers the fingerprint of each connection's transport parameters (a
// [Print]) for the requests that come over it.
//
// A fingerprint is kept for the connection the QUIC server makes of those
// very packets, not for an address: the key is the address value that the
// server's conn returned with the datagram that started the hello (a
// *net.UDPAddr, a new one per datagram), which quic-go keeps as the
// connection's remote address and puts in every request's context
// (http3.RemoteAddrContextKey). Anyone can send an Initial from anyone's
// address, as UDP is not authenticated, but a spoofed Initial makes a
// connection of its own, which never completes: its fingerprint can never
// be another connection's.
//
// Its state is bounded: a fixed table of entries, which a flood of
// Initials fills with entries no request ever reads (an entry that
// requests read is replaced only once unused for a minute), and a fixed
// number of hellos in reassembly, each at most [MaxHello] bytes. Get takes
// no lock and allocates nothing.
type Tracker struct {
	slots []atomic.Pointer[entry]
	mask  uint64 // buckets - 1
	seed  uint64
	seq   atomic.Uint64
	table *Table

	partial partials
	stats   stats
	now     func() int64 // Unix seconds
}

// ways is the number of entries of a bucket.
const ways = 4

// idle is how long an entry that requests have read must have been unused
// before a new connection's takes its place: longer than the idle
// timeouts of browsers and quic-go (30 s), so that only entries of
// connections that are gone are replaced.
const idle = 60 * time.Second

// entry is one connection's fingerprint. It is immutable once stored, but
// for used.
type entry struct {
	conn  net.Addr // the remote address value of the connection's first datagram
	seq   uint64   // order of recording: the oldest unread entry of a bucket is replaced first
	print *Print
	// used is when a request last read the entry (Unix seconds), 0 when
	// none has.
	used atomic.Int64
}

// Print is the fingerprint of a connection's transport parameters, what
// the table says of the stack that sent them, and the JA4 of the hello
// that carried them and the family of its TLS stack.
type Print struct {
	// String is the fingerprint (see [Fingerprint]).
	String string
	// Stack is what the table knows of it; the zero Stack for an unknown
	// one.
	Stack Stack
	// JA4 is the JA4 fingerprint of the connection's ClientHello.
	JA4 string
	// TLS is the family of the TLS stack that sent the ClientHello
	// (tlsprint.Classify), as a handshake matcher would classify it; the
	// zero tlsprint.Stack for an unknown one.
	TLS tlsprint.Stack
}

// Stats counts what a Tracker did.
type Stats struct {
	// Initials is the number of client Initial packets read and Hellos the
	// hellos read from them.
	Initials, Hellos uint64
	// Unread counts Initials that could not be read: not a client's first
	// Initials (not decryptable with the keys of their connection ID),
	// malformed, a hello longer than MaxHello. Dropped counts the hellos
	// not kept because every entry of their bucket was in use.
	Unread, Dropped uint64
}

type stats struct{ initials, hellos, unread, dropped atomic.Uint64 }

// NewTracker returns a Tracker of at least n entries (a power of two, at
// least 4), which looks fingerprints up in the built-in table. An entry
// takes about 200 bytes with its fingerprint, so 16,384 entries about
// 3 MiB when all are taken.
func NewTracker(n int) *Tracker {
	buckets := 1
	for buckets*ways < n {
		buckets <<= 1
	}
	return &Tracker{slots: make([]atomic.Pointer[entry], buckets*ways), mask: uint64(buckets - 1), seed: rand.Uint64(),
		table: Builtin(), now: coarseNow}
}

// clock is a coarse clock, Unix seconds, kept by a goroutine of its own
// from the first call of coarseNow: the time a request reads costs an
// atomic load, where time.Now costs a system call on some systems.
var clock struct {
	once sync.Once
	now  atomic.Int64
}

func coarseNow() int64 {
	clock.once.Do(func() {
		clock.now.Store(time.Now().Unix())
		go func() {
			for range time.Tick(time.Second) {
				clock.now.Store(time.Now().Unix())
			}
		}()
	})
	return clock.now.Load()
}

// Stats returns the counts.
func (t *Tracker) Stats() Stats {
	return Stats{Initials: t.stats.initials.Load(), Hellos: t.stats.hellos.Load(), Unread: t.stats.unread.Load(), Dropped: t.stats.dropped.Load()}
}

// Received reads a datagram the server received from a client, from the
// address value addr that the conn returned with it. It does nothing with
// a datagram that starts with a short header (a connection's packets
// after its handshake) or is not of QUIC version 1 or 2, and reads the
// client Initial packets of the others. It never changes the datagram.
func (t *Tracker) Received(d []byte, addr net.Addr) {
	if len(d) == 0 || d[0]&0x80 == 0 {
		return
	}
	from, ok := addrPort(addr)
	if !ok {
		return
	}
	for len(d) > 0 {
		h, ok := parseLong(d)
		if !ok {
			return
		}
		if h.typ == typeInitial {
			t.initial(addr, from, d[:h.end], &h)
		}
		d = d[h.end:]
	}
}

// Get returns the fingerprint of the connection whose remote address
// value is addr (a request's http3.RemoteAddrContextKey), or nil. It takes
// no lock and allocates nothing.
func (t *Tracker) Get(addr net.Addr) *Print {
	k, ok := key(addr)
	if !ok {
		return nil
	}
	b := t.bucket(k)
	for i := range b {
		if e := b[i].Load(); e != nil && e.conn == addr {
			if now := t.now(); e.used.Load() < now {
				e.used.Store(now)
			}
			return e.print
		}
	}
	return nil
}

// PutJA4 keeps the JA4 of a connection's hello and its TLS stack's family
// (tlsprint.Classify), as a TLS handshake matcher reads them, for the
// connection whose remote address value is addr (quic-go gives the
// matcher the connection's own), unless the connection has a fingerprint
// already. Without the wrapper, a request of an HTTP/3 connection then
// still finds its own hello's JA4 and family, by the connection and not by
// its address, which anyone's spoofed Initials share.
func (t *Tracker) PutJA4(addr net.Addr, ja4 string, stack tlsprint.Stack) {
	if t.Get(addr) == nil {
		t.store(addr, &Print{JA4: ja4, TLS: stack})
	}
}

// initial reads one of a client's Initial packets (pkt, h its header)
// that came with the datagram of addr.
func (t *Tracker) initial(addr net.Addr, from netip.AddrPort, pkt []byte, h *longHeader) {
	t.stats.initials.Add(1)
	p, conns, ok := t.partial.read(t.table, addr, from, t.connKey(h.dcid, h.scid), t.connKey(nil, h.scid), pkt, h)
	switch {
	case !ok:
		t.stats.unread.Add(1)
	case p != nil:
		t.stats.hellos.Add(1)
		// The first datagram's last: the newest of the hello's entries is
		// the last an unread one replaced.
		for i := len(conns) - 1; i >= 0; i-- {
			t.store(conns[i], p)
		}
	}
}

// fingerprint reads the hello msg and returns its Print, or nil when it
// is malformed.
func (t *Table) fingerprint(version uint32, msg []byte) *Print {
	ch, err := parseClientHello(msg)
	if err != nil {
		return nil
	}
	var buf [maxParams]param
	ps, ok := parseParams(ch.params, buf[:0])
	if !ok {
		return nil
	}
	fp := Fingerprint(version, ps, ch.draftParams)
	if canon, ok := t.strings[fp]; ok {
		fp = canon // the table's copy: one string per known fingerprint
	}
	return &Print{String: fp, Stack: t.lookup(ps), JA4: ch.JA4(), TLS: tlsprint.Classify(ch.Hello)}
}

// store keeps the fingerprint of the connection of addr.
func (t *Tracker) store(addr net.Addr, p *Print) {
	k, ok := key(addr)
	if !ok {
		return
	}
	n := &entry{conn: addr, seq: t.seq.Add(1), print: p}
	for range 4 {
		slot := t.victim(k)
		if slot == nil {
			t.stats.dropped.Add(1)
			return
		}
		if old := slot.Load(); slot.CompareAndSwap(old, n) {
			return
		}
	}
}

// victim returns the slot a new connection takes in its bucket: an empty
// one, else one that requests read but not for longer than idle (its
// connection is gone), else the oldest that no request has read (a
// connection that never completed, or one whose first request is still to
// come); nil when there is none.
func (t *Tracker) victim(k uint64) *atomic.Pointer[entry] {
	b := t.bucket(k)
	var unread, stale *atomic.Pointer[entry]
	var seq uint64 = ^uint64(0)
	limit := t.now() - int64(idle/time.Second)
	for i := range b {
		e := b[i].Load()
		if e == nil {
			return &b[i]
		}
		switch used := e.used.Load(); {
		case used == 0:
			if e.seq < seq {
				unread, seq = &b[i], e.seq
			}
		case used <= limit:
			stale = &b[i]
		}
	}
	if stale != nil {
		return stale
	}
	return unread
}

// Len returns the number of entries, and how many of them requests have
// read.
func (t *Tracker) Len() (entries, read int) {
	for i := range t.slots {
		if e := t.slots[i].Load(); e != nil {
			entries++
			if e.used.Load() != 0 {
				read++
			}
		}
	}
	return entries, read
}

// key returns the identity of a remote address value: the address of the
// *net.UDPAddr it points to, which the entry holding it keeps alive and
// so never reused while the entry exists.
func key(a net.Addr) (uint64, bool) {
	u, ok := a.(*net.UDPAddr)
	if !ok || u == nil {
		return 0, false
	}
	return uint64(uintptr(unsafe.Pointer(u))), true
}

// bucket returns the slots a connection may take, chosen by a keyed hash.
func (t *Tracker) bucket(k uint64) []atomic.Pointer[entry] {
	i := (mix(t.seed^k) & t.mask) * ways
	return t.slots[i : i+ways : i+ways]
}

// connKey hashes an Initial's connection IDs: the same client connection
// sends its hello's Initials with the same ones.
func (t *Tracker) connKey(dcid, scid []byte) uint64 {
	h := mix(t.seed ^ uint64(len(dcid))<<8 ^ uint64(len(scid)))
	for _, id := range [2][]byte{dcid, scid} {
		for len(id) >= 8 {
			h = mix(h ^ binary.LittleEndian.Uint64(id))
			id = id[8:]
		}
		var last [8]byte
		copy(last[:], id)
		h = mix(h ^ binary.LittleEndian.Uint64(last[:]))
	}
	return h
}

// mix is a 64-bit finaliser (wyhash's multiply-fold).
func mix(x uint64) uint64 {
	hi, lo := bits.Mul64(x^0xa0761d6478bd642f, 0xe7037ed1a0b428db)
	return hi ^ lo
}

// partials holds the hellos that span several Initial packets until they
// are complete: a fixed number, the oldest replaced first.
type partials struct {
	mu      sync.Mutex
	slots   [maxPartials]partial
	seq     uint64
	scratch assembly // a new hello's first packet
	keys    deriver
	buf     [1500]byte
}

// maxPartials is how many hellos may be in reassembly at once: a hello's
// Initials come back to back, so these are the hellos of the last few
// milliseconds. Each holds an assembly of about 9 KiB, allocated when
// first needed and kept.
const maxPartials = 64

type partial struct {
	a    *assembly
	used bool
	from netip.AddrPort
	// addrs are the address values of the hello's datagrams so far: quic-go
	// keeps the first it accepts for the connection, the hello's first
	// unless its receive queue was full.
	addrs [maxDatagrams]net.Addr
	n     int
	conn  uint64 // the hash of the connection IDs of its first Initial
	scid  uint64 // the hash of its Source Connection ID alone
	keys  *initialKeys
	seq   uint64
}

// maxDatagrams bounds the datagrams of a hello whose address values are
// kept.
const maxDatagrams = 4

// read decrypts one Initial packet (that came from from, with the
// address value addr) and returns the Print of its hello once the hello is
// complete (nil while more is to come), with the address values of the
// hello's datagrams, for the connection. ok is false when the packet
// cannot be read: not decryptable, malformed, or a hello that is not one
// or is too long.
func (ps *partials) read(table *Table, addr net.Addr, from netip.AddrPort, conn, scid uint64, pkt []byte, h *longHeader) (p *Print, conns []net.Addr, ok bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var slot *partial
	for i := range ps.slots {
		if s := &ps.slots[i]; s.used && s.conn == conn && s.from == from {
			slot = s
			break
		}
	}
	var keys *initialKeys
	var payload []byte
	var err error
	if slot != nil {
		payload, err = ps.open(slot.keys, pkt, h)
	} else if keys, err = ps.keys.clientKeys(h.version, h.dcid); err == nil {
		if payload, err = ps.open(keys, pkt, h); err != nil {
			// A client that took the server's connection ID before the
			// end of its hello (the server acknowledged its first
			// Initial): the keys are still those of its first.
			for i := range ps.slots {
				if s := &ps.slots[i]; s.used && s.scid == scid && s.from == from {
					if payload, err = ps.open(s.keys, pkt, h); err == nil {
						slot = s
						break
					}
				}
			}
		}
	}
	if err != nil {
		return nil, nil, false
	}
	a, conns := &ps.scratch, []net.Addr{addr}
	if slot != nil {
		a = slot.a
		if slot.n < maxDatagrams {
			slot.addrs[slot.n] = addr
			slot.n++
		}
		conns = slot.addrs[:slot.n]
	} else {
		a.have = [MaxHello / 64]uint64{}
	}
	if !a.readFrames(payload) {
		ps.free(slot)
		return nil, nil, false
	}
	msg, done, bad := a.hello()
	switch {
	case bad:
		ps.free(slot)
		return nil, nil, false
	case done:
		p = table.fingerprint(h.version, msg)
		conns = slices.Clone(conns)
		ps.free(slot)
		return p, conns, p != nil
	}
	if slot == nil { // keep it for the next packets
		slot = ps.oldest()
		if slot.a == nil {
			slot.a = new(assembly)
		}
		*slot.a = ps.scratch
		ps.seq++
		*slot = partial{a: slot.a, used: true, from: from, conn: conn, scid: scid, keys: keys, seq: ps.seq, n: 1}
		slot.addrs[0] = addr
	}
	return nil, nil, true
}

// open decrypts a copy of pkt with keys.
func (ps *partials) open(keys *initialKeys, pkt []byte, h *longHeader) ([]byte, error) {
	cp := ps.buf[:0]
	if len(pkt) > len(ps.buf) {
		cp = make([]byte, 0, len(pkt))
	}
	payload, _, err := keys.open(append(cp, pkt...), h)
	return payload, err
}

// free empties a slot, keeping its assembly for the next.
func (ps *partials) free(s *partial) {
	if s != nil {
		*s = partial{a: s.a}
	}
}

// oldest returns an empty slot or the oldest.
func (ps *partials) oldest() *partial {
	o := &ps.slots[0]
	for i := range ps.slots {
		s := &ps.slots[i]
		if !s.used {
			return s
		}
		if s.seq < o.seq {
			o = s
		}
	}
	return o
}
