package framing

import (
	"hash/maphash"
	"slices"
)

// HTTP/3 SETTINGS identifiers quic-go's server reports as flags
// (RFC 9220, RFC 9297), and the identifier GREASE ones are written as
// (RFC 9114 section 7.2.4.1: 0x1f * N + 0x21).
const (
	h3ExtendedConnect = 0x8
	h3Datagram        = 0x33
	greaseSetting     = 0x21
)

// isGrease reports a reserved (GREASE) identifier.
func isGrease(id uint64) bool { return id >= greaseSetting && (id-greaseSetting)%0x1f == 0 }

// H3Settings returns the Frames of an HTTP/3 client's SETTINGS as quic-go's server
// gives them (http3.Settings): the parameters it does not interpret
// (other: the QPACK ones, GREASE ones, ...) and the two it does,
// SETTINGS_ENABLE_CONNECT_PROTOCOL and SETTINGS_H3_DATAGRAM (which it
// reports only when 1). quic-go keeps neither their order nor
// SETTINGS_MAX_FIELD_SECTION_SIZE, so the Frames have the identifiers in
// order, GREASE ones as one 0x21.
func H3Settings(other map[uint64]uint64, extendedConnect, datagram bool) Frames {
	f := Frames{Proto: H3}
	grease := false
	for id, v := range other {
		if isGrease(id) {
			grease = true
			continue
		}
		f.Settings = append(f.Settings, Setting{ID: id, Value: v})
	}
	if extendedConnect {
		f.Settings = append(f.Settings, Setting{ID: h3ExtendedConnect, Value: 1})
	}
	if datagram {
		f.Settings = append(f.Settings, Setting{ID: h3Datagram, Value: 1})
	}
	if grease {
		f.Settings = append(f.Settings, Setting{ID: greaseSetting})
	}
	slices.SortFunc(f.Settings, func(a, b Setting) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return f
}

// h3Seed keys the digests of HTTP/3 settings.
var h3Seed = maphash.MakeSeed()

// h3Digest is a digest of the settings that does not depend on the map's
// order: the sum of each parameter's hash (GREASE ones as one).
func h3Digest(other map[uint64]uint64, extendedConnect, datagram bool) uint64 {
	var sum uint64
	for id, v := range other {
		if isGrease(id) {
			id, v = greaseSetting, 0
		}
		sum += maphash.Comparable(h3Seed, [2]uint64{id, v})
	}
	if extendedConnect {
		sum += 0x9e3779b97f4a7c15
	}
	if datagram {
		sum += 0xc2b2ae3d27d4eb4f
	}
	return sum + uint64(len(other))
}

// H3 returns the Print of an HTTP/3 connection's SETTINGS (see H3Settings),
// keeping it for the connection from remoteAddr: the next request of the
// same connection finds it and allocates nothing.
func (c *Conns) H3(remoteAddr string, other map[uint64]uint64, extendedConnect, datagram bool) *Print {
	key := h3Digest(other, extendedConnect, datagram)
	if e, ok := c.t.Get(remoteAddr); ok && e.key == key && e.print.Proto == H3 {
		return e.print
	}
	f := H3Settings(other, extendedConnect, datagram)
	p := Builtin().Print(&f)
	c.t.Put(remoteAddr, connEntry{print: p, key: key})
	return p
}
