package quicprint

import (
	"errors"
	"strconv"
	"strings"
)

// Param is one transport parameter as a client sent it.
type Param struct {
	ID    uint64
	Value []byte
}

// ReadInitials reads the hello of one client connection from its first
// datagrams, in the order they came, and returns its Print and its
// transport parameters, values included. It is for tools and tests: a
// Tracker reads datagrams as they come, and keeps no values.
func ReadInitials(datagrams [][]byte) (*Print, []Param, error) {
	var a assembly
	var d deriver
	var keys *initialKeys
	var version uint32
	for _, dg := range datagrams {
		for len(dg) > 0 {
			h, ok := parseLong(dg)
			if !ok {
				break
			}
			pkt := append([]byte(nil), dg[:h.end]...)
			dg = dg[h.end:]
			if h.typ != typeInitial {
				continue
			}
			if keys == nil {
				k, err := d.clientKeys(h.version, h.dcid)
				if err != nil {
					return nil, nil, err
				}
				keys, version = k, h.version
			}
			payload, _, err := keys.open(pkt, &h)
			if err != nil {
				continue // a later Initial, to the server's connection ID
			}
			if !a.readFrames(payload) {
				return nil, nil, errors.New("quicprint: malformed Initial")
			}
			msg, done, bad := a.hello()
			if bad {
				return nil, nil, errors.New("quicprint: not a ClientHello, or one too long")
			}
			if !done {
				continue
			}
			p := Builtin().fingerprint(version, msg)
			if p == nil {
				return nil, nil, errors.New("quicprint: malformed ClientHello")
			}
			ch, _ := parseClientHello(msg)
			ps, _ := parseParams(ch.params, nil)
			out := make([]Param, len(ps))
			for i, q := range ps {
				out[i] = Param{ID: q.id, Value: q.value}
			}
			return p, out, nil
		}
	}
	return nil, nil, errors.New("quicprint: no complete ClientHello in the datagrams")
}

// FormatParams writes transport parameters as "id=value" in hex, in the
// order sent, separated by spaces; a reserved (GREASE) id is written "g".
func FormatParams(ps []Param) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		if reserved(p.ID) {
			b.WriteByte('g')
		} else {
			b.WriteString(strconv.FormatUint(p.ID, 16))
		}
		b.WriteByte('=')
		const digits = "0123456789abcdef"
		for _, c := range p.Value {
			b.WriteByte(digits[c>>4])
			b.WriteByte(digits[c&15])
		}
	}
	return b.String()
}
