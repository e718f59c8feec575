// Package signature verifies signed bots: HTTP Message Signatures (RFC 9421)
// in the profile of the IETF webbotauth working group's protocol
// (draft-ietf-webbotauth-httpsig-protocol, "Web Bot Auth").
//
// An agent signs each request with an Ed25519 key and names, in the
// Signature-Agent header, the https origin that publishes its keys at
// /.well-known/http-message-signatures-directory. A [Verifier] checks such a
// request and answers one of three outcomes: [Verified] (a key that the
// agent's origin publishes, or that the operator pinned for it, signed the
// covered components, within the allowed validity), [Invalid] (the request
// carries a Web Bot Auth signature that fails: forged, tampered, expired,
// not yet valid, an unknown key of a known agent, a replayed nonce) or
// [Unverified] (no Web Bot Auth signature, or not enough to decide: an
// unknown agent, a directory that cannot be fetched, an algorithm other
// than Ed25519). A request without signature headers costs three map
// lookups and no allocation.
//
// The signature base is built here, per RFC 9421 section 2.5; structured
// fields (RFC 8941/9651) are parsed with github.com/dunglas/httpsfv. The
// package does not import Caddy.
package signature
