// Package tlsprint computes the JA4 fingerprint of a TLS ClientHello and
// says which TLS stack made it.
//
// JA4 is FoxIO's TLS client fingerprint (BSD-3-Clause, the only part of
// "JA4+" under that licence; JA4H and the others are not implemented
// here). [Hello] holds what JA4 reads of a ClientHello and [Hello.JA4]
// computes it exactly as technical_details/JA4.md of github.com/FoxIO-LLC/ja4
// specifies; [FromClientHello] reads a Hello from crypto/tls's
// ClientHelloInfo (Go 1.24 and later give its extensions), for TCP and QUIC.
//
// [Lookup] maps a JA4 to the [Stack] that sends it, from the table in
// stacks.tsv: browser engines (Chromium's BoringSSL, Firefox's NSS,
// Safari's) and libraries (Go, OpenSSL as curl and Python use it, GnuTLS,
// Node, Java, ...). A library is known by its exact cipher and extension
// hashes; a browser engine also by its cipher hash alone, so that the next
// release of a browser is still that browser. An unknown JA4 is the zero
// Stack.
//
// The package uses the standard library only. Lookup allocates nothing.
package tlsprint
