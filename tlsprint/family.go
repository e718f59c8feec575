package tlsprint

import (
	_ "embed"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// Marks are things a TLS stack does in every hello that its caller does
// not choose in one line of code: extensions it always sends, and GREASE.
// One bit each; a Profile's Marks are those every hello of its family has.
type Marks uint32

const (
	// MarkGREASE: a GREASE value (RFC 8701) among the ciphers,
	// extensions, groups, versions or signature algorithms. BoringSSL
	// sends them when its caller asks, and Chromium and Safari's stack
	// always do over TCP; no library does by default.
	MarkGREASE Marks = 1 << iota
	// MarkALPS: application_settings (0x4469, or 0x44cd since Chromium
	// 131), Chromium's alone.
	MarkALPS
	// MarkDelegatedCredentials: delegated_credentials (0x0022), which
	// Firefox turns on in NSS; NSS leaves it off for other callers.
	MarkDelegatedCredentials
	// MarkECH: encrypted_client_hello (0xfe0d): browsers send it as GREASE
	// when the site has no ECH key; a library with an ECH key does too.
	MarkECH
	// MarkCertCompression: compress_certificate (0x001b).
	MarkCertCompression
	// MarkRecordSizeLimit: record_size_limit (0x001c): NSS, GnuTLS.
	MarkRecordSizeLimit
	// MarkEncryptThenMAC: encrypt_then_mac (0x0016): OpenSSL, GnuTLS.
	MarkEncryptThenMAC
	// MarkExtendedMasterSecret: extended_master_secret (0x0017).
	MarkExtendedMasterSecret
	// MarkRenegotiationInfo: the renegotiation_info extension (0xff01).
	MarkRenegotiationInfo
	// MarkSCSV: TLS_EMPTY_RENEGOTIATION_INFO_SCSV (0x00ff) among the
	// ciphers, which OpenSSL and Java add to whatever list their caller
	// sets, where others send the extension.
	MarkSCSV
	// MarkStatusRequest: status_request (0x0005), OCSP stapling.
	MarkStatusRequest
	// MarkStatusRequestV2: status_request_v2 (0x0011): Java's.
	MarkStatusRequestV2
	// MarkSCT: signed_certificate_timestamp (0x0012).
	MarkSCT
	// MarkSignatureAlgorithmsCert: signature_algorithms_cert (0x0032).
	MarkSignatureAlgorithmsCert
	// MarkPostHandshakeAuth: post_handshake_auth (0x0031).
	MarkPostHandshakeAuth

	lastMark = MarkPostHandshakeAuth
)

// BrowserMarks are the marks no library's hello has by default: GREASE,
// ALPS and delegated credentials. A hello with one is never a library's
// (a library made to send one copies a browser, which the TLS hello cannot
// tell); without one, never a browser family's.
const BrowserMarks = MarkGREASE | MarkALPS | MarkDelegatedCredentials

var markNames = [...]string{"grease", "alps", "delegated-credentials", "ech", "cert-compression", "record-size-limit",
	"encrypt-then-mac", "extended-master-secret", "renegotiation-info", "scsv", "status-request", "status-request-v2",
	"sct", "signature-algorithms-cert", "post-handshake-auth"}

// markOf maps an extension type to its mark.
func markOf(ext uint16) Marks {
	switch ext {
	case 0x4469, 0x44cd:
		return MarkALPS
	case 0x0022:
		return MarkDelegatedCredentials
	case 0xfe0d:
		return MarkECH
	case 0x001b:
		return MarkCertCompression
	case 0x001c:
		return MarkRecordSizeLimit
	case 0x0016:
		return MarkEncryptThenMAC
	case 0x0017:
		return MarkExtendedMasterSecret
	case 0xff01:
		return MarkRenegotiationInfo
	case 0x0005:
		return MarkStatusRequest
	case 0x0011:
		return MarkStatusRequestV2
	case 0x0012:
		return MarkSCT
	case 0x0032:
		return MarkSignatureAlgorithmsCert
	case 0x0031:
		return MarkPostHandshakeAuth
	}
	return 0
}

// MarksOf returns the marks of a hello.
func MarksOf(h Hello) Marks {
	var m Marks
	for _, e := range h.Extensions {
		if isGREASE(e) {
			m |= MarkGREASE
		}
		m |= markOf(e)
	}
	for _, c := range h.Ciphers {
		if isGREASE(c) {
			m |= MarkGREASE
		} else if c == 0x00ff {
			m |= MarkSCSV
		}
	}
	for _, l := range [...][]uint16{h.Groups, h.Versions, h.SignatureAlgorithms} {
		for _, v := range l {
			if isGREASE(v) {
				m |= MarkGREASE
			}
		}
	}
	return m
}

// String returns the names of the marks, comma-separated.
func (m Marks) String() string {
	var names []string
	for i := range markNames {
		if m&(1<<i) != 0 {
			names = append(names, markNames[i])
		}
	}
	return strings.Join(names, ",")
}

// parseMarks reads Marks.String's form ("" or "-" for none).
func parseMarks(s string) (Marks, error) {
	var m Marks
	if s == "" || s == "-" {
		return 0, nil
	}
	for name := range strings.SplitSeq(s, ",") {
		i := slices.Index(markNames[:], name)
		if i < 0 {
			return 0, fmt.Errorf("unknown mark %q", name)
		}
		m |= 1 << i
	}
	return m, nil
}

// Profile is what every hello of a TLS stack's family has in common: its
// marks, the order of its signature algorithms, and the order of its
// extensions where the stack does not shuffle them. None of these is set
// by a caller in one line: a cipher list, groups, ALPN, SNI, session
// tickets and TLS versions are, and are not read. A browser's profile is
// of one transport (its QUIC stack is another: Chromium's QUIC hello has no
// GREASE, Firefox's is neqo's); a library's is of both (quic-go's hello is
// Go's crypto/tls's).
type Profile struct {
	Family  string
	Browser bool
	// QUIC is the transport of a browser's profile.
	QUIC bool
	// Marks are the marks every hello of the family has.
	Marks Marks
	// Sends are the browser marks some hello of a browser's family has: a
	// hello with another is not the family's (ALPS is Chromium's, not
	// Safari's, whose hello is otherwise much like Chrome's before 110).
	Sends Marks
	// Signatures are its signature algorithms in its order; nil when its
	// hellos disagree on the order.
	Signatures []uint16
	// Extensions are its extension types in its order; nil when its hellos
	// disagree on the order (Chromium shuffles its extensions).
	Extensions []uint16
	// Hellos is the number of hellos the profile was derived from.
	Hellos int

	sigs, exts order
}

// order finds a value's place in a Profile's list, allocation-free.
type order struct {
	vals []uint16 // sorted
	pos  []uint16 // pos[i] is the place (1-based) of vals[i]
}

func newOrder(list []uint16) order {
	o := order{vals: slices.Clone(list)}
	slices.Sort(o.vals)
	o.pos = make([]uint16, len(o.vals))
	for i, v := range o.vals {
		o.pos[i] = uint16(slices.Index(list, v) + 1)
	}
	return o
}

// place returns v's place (1-based), 0 when the list lacks it.
func (o order) place(v uint16) uint16 {
	lo, hi := 0, len(o.vals)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if o.vals[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(o.vals) && o.vals[lo] == v {
		return o.pos[lo]
	}
	return 0
}

// Thresholds of a tell: how much of a hello's list must be the family's
// for its order to say anything.
const (
	minSignatures = 4
	minExtensions = 5
)

// agrees reports a tell of order: at least min of the hello's values
// (GREASE aside) are in the family's list, at least half of them, and in
// the family's order. New values (a release adds a signature algorithm or
// an extension) are allowed anywhere.
func (o order) agrees(list []uint16, min int) bool {
	if o.vals == nil {
		return false
	}
	known, all := 0, 0
	var last uint16
	for _, v := range list {
		if isGREASE(v) {
			continue
		}
		all++
		p := o.place(v)
		if p == 0 {
			continue
		}
		if p < last {
			return false
		}
		last = p
		known++
	}
	return known >= min && 2*known >= all
}

// Tells counts what of a hello is the profile's, 0 to 3: its signature
// algorithms in the family's order, its extensions in the family's order,
// and the family's marks (at least two of them) all present.
func (p *Profile) Tells(h Hello, m Marks) int {
	n := 0
	if p.sigs.agrees(h.SignatureAlgorithms, minSignatures) {
		n++
	}
	if p.exts.agrees(h.Extensions, minExtensions) {
		n++
	}
	if bits.OnesCount32(uint32(p.Marks)) >= 2 && m&p.Marks == p.Marks {
		n++
	}
	return n
}

// Families is a set of profiles, which Classify matches a hello against.
type Families struct {
	Profiles []*Profile
}

// Classify returns the stack of a hello's family: the profile of its
// transport with two or more tells (the most; then the one with more
// marks), among the browsers' when the hello has a browser mark and among
// the libraries' when it has none. A one-line change of the caller's moves
// at most one tell, and so does a release that reorders its extensions
// (Go 1.23) or its signature algorithms. A hello no profile matches is
// the zero Stack: unknown, which is never evidence. It allocates nothing.
func (f *Families) Classify(h Hello) Stack {
	m := MarksOf(h)
	browser := m&BrowserMarks != 0
	var best *Profile
	bestTells := 1
	for _, p := range f.Profiles {
		if p.Browser != browser || browser && (p.QUIC != h.QUIC || m&BrowserMarks&^p.Sends != 0) {
			continue
		}
		t := p.Tells(h, m)
		if t > bestTells || t == bestTells && best != nil && bits.OnesCount32(uint32(p.Marks)) > bits.OnesCount32(uint32(best.Marks)) {
			best, bestTells = p, t
		}
	}
	if best == nil {
		return Stack{}
	}
	return Stack{Known: true, Browser: best.Browser, Family: best.Family}
}

// DeriveProfile derives a family's profile from its hellos (a browser's:
// of one transport, quic): the marks they all have, the browser marks any
// has, and the orders of signature algorithms and of extensions they all
// agree on (GREASE aside; nil where two of them disagree).
func DeriveProfile(family string, browser, quic bool, hellos []Hello) (*Profile, error) {
	if len(hellos) == 0 {
		return nil, fmt.Errorf("%s: no hellos", family)
	}
	p := &Profile{Family: family, Browser: browser, QUIC: browser && quic, Marks: ^Marks(0) & (lastMark<<1 - 1), Hellos: len(hellos)}
	var sigs, exts [][]uint16
	for _, h := range hellos {
		if browser && h.QUIC != quic {
			return nil, fmt.Errorf("%s: a hello of the other transport", family)
		}
		m := MarksOf(h)
		p.Marks &= m
		p.Sends |= m & BrowserMarks
		sigs = append(sigs, h.SignatureAlgorithms)
		exts = append(exts, h.Extensions)
	}
	if browser && p.Marks&BrowserMarks == 0 {
		return nil, fmt.Errorf("%s: a browser's hello without GREASE, ALPS or delegated credentials", family)
	}
	if !browser && p.Sends != 0 {
		return nil, fmt.Errorf("%s: a library's hello with %s", family, p.Sends)
	}
	p.Signatures, p.Extensions = mergeOrders(sigs), mergeOrders(exts)
	p.index()
	return p, nil
}

// index makes the profile's orders.
func (p *Profile) index() {
	p.sigs, p.exts = order{}, order{}
	if p.Signatures != nil {
		p.sigs = newOrder(p.Signatures)
	}
	if p.Extensions != nil {
		p.exts = newOrder(p.Extensions)
	}
}

// mergeOrders returns one order of all values of the lists (GREASE aside)
// that keeps each list's order, values first seen first; nil when two
// lists disagree, or none has a value.
func mergeOrders(lists [][]uint16) []uint16 {
	var nodes []uint16
	after := map[uint16]map[uint16]bool{}
	for _, l := range lists {
		var prev uint16
		have := false
		seen := map[uint16]bool{}
		for _, v := range l {
			if isGREASE(v) || seen[v] {
				continue
			}
			seen[v] = true
			if after[v] == nil {
				after[v] = map[uint16]bool{}
				nodes = append(nodes, v)
			}
			if have {
				after[prev][v] = true
			}
			prev, have = v, true
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	in := map[uint16]int{}
	for _, next := range after {
		for v := range next {
			in[v]++
		}
	}
	var out []uint16
	done := map[uint16]bool{}
	for len(out) < len(nodes) {
		progress := false
		for _, v := range nodes { // the first seen of those free
			if !done[v] && in[v] == 0 {
				done[v], progress = true, true
				out = append(out, v)
				for w := range after[v] {
					in[w]--
				}
				break
			}
		}
		if !progress {
			return nil // a cycle: the lists disagree
		}
	}
	return out
}

// MarshalText writes a profile as a line of families.tsv: family, kind,
// transport (a library's: any), marks, the browser marks it sends,
// signature algorithms and extensions (hex, "-" for no order), and the
// number of hellos.
func (p *Profile) MarshalText() ([]byte, error) {
	kind, transport := "library", "any"
	if p.Browser {
		kind, transport = "browser", "tcp"
		if p.QUIC {
			transport = "quic"
		}
	}
	hexes := func(vs []uint16) string {
		if vs == nil {
			return "-"
		}
		b := make([]byte, 0, 5*len(vs))
		for i, v := range vs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, hexDigit(v>>12), hexDigit(v>>8), hexDigit(v>>4), hexDigit(v))
		}
		return string(b)
	}
	names := func(m Marks) string {
		if m == 0 {
			return "-"
		}
		return m.String()
	}
	return fmt.Appendf(nil, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d", p.Family, kind, transport, names(p.Marks), names(p.Sends),
		hexes(p.Signatures), hexes(p.Extensions), p.Hellos), nil
}

// ParseFamilies reads families.tsv: one profile a line (Profile's
// MarshalText), "#" comment lines. It refuses a malformed line, a family
// of the wrong kind, and a browser's profile without a browser mark or a
// library's with one.
func ParseFamilies(text string) (*Families, error) {
	f := &Families{}
	for n, line := range strings.Split(text, "\n") {
		n++
		if line == "" || line[0] == '#' {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 8 {
			return nil, fmt.Errorf("line %d: want 8 tab-separated fields (family, kind, transport, marks, sends, signatures, extensions, hellos)", n)
		}
		p := &Profile{Family: c[0], Browser: c[1] == "browser", QUIC: c[2] == "quic"}
		if c[0] == "" || !(c[1] == "browser" && (c[2] == "tcp" || c[2] == "quic") || c[1] == "library" && c[2] == "any") {
			return nil, fmt.Errorf("line %d: want a family, then browser with tcp or quic, or library with any", n)
		}
		if p.Browser != browsers[p.Family] {
			return nil, fmt.Errorf("line %d: family %q is not of kind %s", n, c[0], c[1])
		}
		var err error
		if p.Marks, err = parseMarks(c[3]); err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		if p.Sends, err = parseMarks(c[4]); err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		if p.Sends&^BrowserMarks != 0 || p.Browser != (p.Sends != 0) || p.Marks&BrowserMarks&^p.Sends != 0 {
			return nil, fmt.Errorf("line %d: a browser's profile sends a browser mark (%s), a library's none", n, BrowserMarks)
		}
		for i, dst := range []*[]uint16{&p.Signatures, &p.Extensions} {
			if c[5+i] == "-" {
				continue
			}
			if strings.IndexFunc(c[5+i], unicode.IsSpace) >= 0 {
				return nil, fmt.Errorf("line %d: %q is not a list of 4-digit hex values", n, c[5+i])
			}
			h, err := ParseHello("tcp s=" + c[5+i])
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			*dst = h.SignatureAlgorithms
		}
		if p.Hellos, err = strconv.Atoi(c[7]); err != nil || p.Hellos < 1 {
			return nil, fmt.Errorf("line %d: hellos %q", n, c[7])
		}
		p.index()
		f.Profiles = append(f.Profiles, p)
	}
	return f, nil
}

//go:embed families.tsv
var familiesTSV string

var builtinFamilies = sync.OnceValue(func() *Families {
	f, err := ParseFamilies(familiesTSV)
	if err != nil {
		panic("tlsprint: families.tsv: " + err.Error()) // TestFamilies keeps this from happening
	}
	return f
})

// BuiltinFamilies returns the built-in families (families.tsv).
func BuiltinFamilies() *Families { return builtinFamilies() }

// Classify returns the stack of a hello's family by the built-in families
// (families.tsv, see Families.Classify). It allocates nothing.
func Classify(h Hello) Stack { return builtinFamilies().Classify(h) }
