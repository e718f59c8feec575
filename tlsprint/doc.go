// Package tlsprint computes the JA4 fingerprint of a TLS ClientHello and
// says which TLS stack made it.
//
// JA4 is FoxIO's TLS client fingerprint (BSD-3-Clause, the only part of
// "JA4+" under that licence; JA4H and the others are not implemented
// here). [Hello] holds what JA4 and the families read of a ClientHello
// (every list as sent, GREASE values included) and [Hello.JA4] computes it
// exactly as technical_details/JA4.md of github.com/FoxIO-LLC/ja4
// specifies; [FromClientHello] reads a Hello from crypto/tls's
// ClientHelloInfo (Go 1.24 and later give its extensions), for TCP and QUIC.
//
// [Classify] says which [Stack] sent a hello by its family (families.tsv):
// what every hello of that stack has and its caller cannot change in one
// line of code. Its [Marks] (extensions it always sends, and GREASE, ALPS
// and delegated credentials, which only browsers send), the order of its
// signature algorithms, and the order of its extensions where it keeps
// one; two of these three tells make a family ([Profile]). A cipher list,
// groups, ALPN, SNI, tickets and versions are a caller's and are not read:
// Go with Chrome's cipher suites is Go. [DeriveProfile] derives a family's
// profile from its hellos (tlsprint/internal/collect does, from real
// clients' and curl-impersonate's hellos). A hello no family matches is the
// zero Stack: unknown.
//
// [Lookup] maps a JA4, which is a hash and has no family to read, to a
// stack by the exact hellos of the same test data (stacks.tsv): for a JA4
// a CDN passes on. An unknown JA4 is the zero Stack.
//
// The package uses the standard library only. Classify and Lookup allocate
// nothing.
package tlsprint
