// Package evidence judges whether a client that claims to be a browser
// speaks like one. A User-Agent is a claim; the headers a browser always
// sends and the TLS stack it uses are how it speaks. When the two disagree,
// that is evidence against the claim, and only ever that: nothing here can
// make a client more trusted than its User-Agent already makes it, and an
// unknown TLS stack, a missing header a browser may omit, or a header
// nobody checks are never evidence.
//
// A request is judged in two steps. [ParseClaim] reads what a User-Agent
// claims (the browser's engine, product, version and platform) and which
// checks that claim can be held to; it claims nothing, and nothing is
// checked, for robots, tools, rare browsers and in-app web views. [Judge]
// then compares the request with the claim and returns a [Verdict]: the
// [Evidence] found, a bit mask with a stable code per check for logs and
// metrics, and a short text for people.
//
// Evidence comes in two strengths. [Decisive] evidence is what no browser
// shows, even one whose user changed its User-Agent: a TLS stack the table
// knows as a library's ("tls"), no Sec-Fetch-* headers where every current
// browser sends them ("sec-fetch"), a Gecko token no Firefox writes
// ("gecko"). The rest is a [Mismatch]: the client is not the browser it
// names, but it may well be another browser whose User-Agent its user
// changed (User-Agent switcher extensions, Firefox's site-specific
// overrides, Safari's Develop menu, DevTools) or a privacy browser that
// sends fewer hints; it is worth a log line, not a refusal.
//
// The package uses the standard library only and does no I/O. Judge does
// no work for a claim that is not judged and allocates nothing.
package evidence
