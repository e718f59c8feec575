// Package uaclass tells who is asking: it classifies a User-Agent string
// into one [Class] (browser, search, ai, seo, social, monitor, script, bad,
// bot or unknown), returns the robots.txt product tokens that apply to the
// client, most specific first, and checks with a [Verifier] whether a client
// that claims to be a known crawler really comes from its operator.
//
// The main types are:
//
//   - [Classifier], built by [New] from the embedded bot database
//     ([DefaultBots], generated from public lists; see NOTICE.md) plus
//     entries from configuration. Classification looks up every word of the
//     User-Agent once in an index of the database's phrases, so its cost does
//     not grow with the number of bots, and results are kept in a bounded
//     cache. Names match as whole words, never as bare substrings.
//   - [Result], the class, tokens and database entry of one User-Agent.
//   - [Verifier], which checks claims with forward-confirmed reverse DNS or
//     published IP ranges ([LoadRanges]) and returns a [Verdict].
//
// Database names match only where a User-Agent names a product (its start,
// a product outside comments, the start of a comment entry), never in a
// build ID, a device model or another product's comment. A browser-looking
// string that names a bot ("... (compatible; Googlebot/2.1; ...)") is that
// bot. Browsers are recognised by their engine, product and platform words
// (Opera Presto, UC Browser, QQ Browser, Windows Mobile, Konqueror, TV and
// console browsers, text browsers, carriers' phone browsers, device or app
// names before the browser string), with github.com/mssola/useragent as a
// fallback; [Result.BrowserLike] marks browsers and unknown browser-looking
// strings, which deserve a browser's rate limits. The package does not
// import Caddy.
package uaclass
