// Package quicprint reads the transport parameters a QUIC client sends in
// its first packets and says which QUIC stack sent them.
//
// A QUIC client's first flight is one or more Initial packets, protected
// with keys anyone can derive from the packet's Destination Connection ID
// and a public salt (RFC 9001 section 5.2; RFC 9369 for version 2). They
// carry the client's TLS ClientHello in CRYPTO frames, and the hello
// carries the client's QUIC transport parameters (its
// quic_transport_parameters extension, RFC 9000 section 18): which ones,
// in which order, with reserved (GREASE) ids or not. That is the QUIC
// stack's code, not its caller's settings: quic-go sends a reserved id
// first and then always 5, 6, 7, 4, 8, 9, 1; ngtcp2 starts with the
// initial_source_connection_id; Firefox (neqo) sends its fixed list;
// Chromium (QUICHE) shuffles its own set on every connection. The
// [Fingerprint] writes them down ("q1_g.5.6.7.4.8.9.1.3.b.e.f") and the
// [Table] (quic.tsv) maps them to a [Stack].
//
// A [Tracker] sees a server's datagrams (through [Tracker.Wrap], a
// net.PacketConn for quic-go), removes the Initials' protection from a
// copy, reassembles the hello whatever the order of its CRYPTO frames and
// packets (Chromium scrambles them and pads with PING and PADDING frames,
// and its post-quantum hello spans two Initials), and keeps the
// fingerprint for the connection that quic-go makes of those very
// datagrams, which its requests find again through their context: a
// spoofed Initial can never lend its fingerprint to another client's
// connection. Everything it keeps is bounded, and what it cannot read
// (another version, a malformed packet, a hello over [MaxHello] bytes) is
// simply not known, which is never evidence.
//
// The package uses the standard library only.
package quicprint
