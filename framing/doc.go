// Package framing reads how a client's HTTP stack speaks on a decrypted
// connection, before and with its first request, and says which stack
// that is: the framing fingerprint.
//
// A browser's TLS hello can be copied (uTLS, curl-impersonate); the HTTP
// stack behind it is another layer the copy must get right. Over HTTP/2 a
// client opens with its own SETTINGS (which, with what values, in what
// order), a connection WINDOW_UPDATE, PRIORITY frames or none, and its
// first HEADERS frame carries the pseudo-header fields in its own order
// (Chrome :method, :authority, :scheme, :path; Go's http2 :authority
// first). Over HTTP/1.1 the header fields come in the stack's own order
// and case, which Go's net/http server loses. Over HTTP/3, quic-go's
// server gives the client's SETTINGS (their order is lost).
//
// [Parser] reads the first bytes of a connection, incrementally and within
// [Budget]: the HTTP/2 preface and frames up to the end of the first
// HEADERS block (HPACK-decoded with a fresh decoder, CONTINUATION frames
// included), or the HTTP/1.1 request line and header lines. Malformed,
// huge or endless input ends the reading with no fingerprint, never with
// more work than the budget. [Listener] and [Conn] wrap a listener of
// decrypted connections: bytes pass through unchanged, and each
// connection's fingerprint is kept in a bounded table ([Conns]) by the
// client's address and port, for the requests that come over it. [H3Settings]
// makes the fingerprint of HTTP/3 SETTINGS.
//
// [Lookup] maps a fingerprint to the [Stack] that sends it, from the
// table in stacks.tsv (made by framing/internal/collect from real
// clients). An unknown fingerprint is the zero Stack, which is never
// evidence.
//
// The package does not import Caddy.
package framing
