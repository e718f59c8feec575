package enforce

import (
	"errors"
	"net/http"
	"net/netip"

	"github.com/robotsguard/robotsguard/evidence"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/signature"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Facts are what only the server knows of a request: what its connection,
// its configuration and its routes say, which the request's own fields do
// not. The Caddy handler fills them from Caddy (the client IP after
// trusted_proxies, the TLS handshake table, the original request);
// "caddy robots check" from its flags, saying which it assumed. A new kind
// of evidence about how a client speaks is one more field here, read in
// one place by [Reader.Read].
type Facts struct {
	// ClientIP is the client's address as the server determined it
	// (trusted proxies honoured), never from a header the client sends.
	ClientIP netip.Addr
	// URI is the request target as the client sent it, before any
	// rewrite: what policy.ParseTarget reads as the backend will.
	URI string
	// Scheme is "https" or "http", as the client asked: the scheme of the
	// canonical URL.
	Scheme string
	// Origin is how the client saw the site (evidence.Secure over HTTPS):
	// which headers a browser sends it.
	Origin evidence.Origin
	// JA4 is the fingerprint of the client's TLS handshake, and TLS what
	// the fingerprint table says of its stack; "" and the zero TLS when
	// unknown (no TLS, or a proxy in front), which is no evidence.
	JA4 string
	TLS evidence.TLS
	// QUIC is the fingerprint of the transport parameters of an HTTP/3
	// request's connection (tlsprint/quicprint), and TLS.QUIC what the
	// QUIC table says of its stack; "" and the zero evidence.QUIC when
	// unknown (not HTTP/3, the QUIC wrapper not on the listener, a proxy
	// in front), which is no evidence.
	QUIC string
	// Framing is the framing fingerprint of the request's connection (how
	// its HTTP stack opened it and wrote its first request: HTTP/2
	// SETTINGS, window, priorities and pseudo-header order, HTTP/1.1
	// header order and case, HTTP/3 SETTINGS; package framing), and
	// TLS.Framing what the framing table says of its stack; "" and the
	// zero evidence.Framing when unknown (plain HTTP, the robots_guard
	// listener wrapper not on the server, a proxy in front), which is no
	// evidence.
	Framing string
}

// Reader reads a request as the engine judges it: who is asking (the
// User-Agent's class, a Web Bot Auth signature, the evidence against a
// browser's claim, the verification of a crawler's claim) and what it asks
// for (the target and the spellings a backend may serve alike, the
// canonical URL's among them). The Caddy handler and "caddy robots check"
// read through the same Reader, so that they decide alike. It is safe for
// concurrent use; its fields are set once.
type Reader struct {
	// Classifier classifies User-Agents.
	Classifier *uaclass.Classifier
	// Agents verifies Web Bot Auth signatures; nil when not configured.
	Agents *signature.Agents
	// Verifier verifies crawlers' claims; nil: claims are not verified
	// (verify off, or "caddy robots check", which looks nothing up).
	Verifier *uaclass.Verifier
	// Engine judges browsers' claims (its posers and allow_fingerprints
	// settings) and decides.
	Engine *Engine
	// Canonical applies the robots.txt's canonicalisation fields
	// (QueryParam, Domain, IndexPage): false with canonical "off".
	Canonical bool
}

// Reading is one request as a [Reader] read it: the [Request] that
// [Engine.Decide] judges, and what the reading found on the way that the
// response and the record of the decision need.
type Reading struct {
	// Request is what the engine judges.
	Request Request
	// UserAgent is the User-Agent header as sent, and URI the target as
	// sent (Facts.URI): the record writes them as they came.
	UserAgent, URI string
	// Signature is the outcome of the request's Web Bot Auth signatures;
	// the zero Result for an unsigned request or without Agents.
	Signature signature.Result
	// Canonical is the canonical URL by the robots.txt's QueryParam,
	// Domain and IndexPage fields ("" when it has none, or Canonical is
	// off): a relative reference when the file names no Domain, so that
	// a Host header is never echoed. NonCanonical reports that the
	// request's URL is not it.
	Canonical    string
	NonCanonical bool
}

// Read reads r, with the facts f only the server knows, under the policy p
// the request will be judged by (its canonicalisation fields), into out.
// It fails only for a target with '#' (policy.ErrFragment), which no
// client sends and which must be answered 400; out is then incomplete.
//
// Each field of out.Request is written once, in this order, each step
// reading only what the steps before it wrote:
//
//  1. Classification: the User-Agent's class, tokens and bot entry
//     (uaclass.Classifier.Classify).
//  2. Signature identification: a Web Bot Auth signature that verifies,
//     or fails, makes its outcome part of who is asking
//     (signature.Result.Identify): the class, the verdict, Signed.
//  3. Evidence judgement: a browser's claim held to how the request
//     speaks ([Engine.Judge]: headers, TLS, QUIC, framing, origin);
//     decisive evidence makes the client a poser, with no tokens and no
//     browser's allowance. BrowserLike and CrossSite follow from the
//     class it ends with: a poser's request is no browser's fetch for
//     another site, nor is one whose Fetch Metadata no browser sends
//     ([CrossSiteFetch]). A claim that stands has what the behaviour
//     evidence reads of it read ([Engine.ReadBehaviour]); [Engine.Decide]
//     judges it with what the client did before.
//  4. Verification: a crawler's claim not settled by a signature is
//     verified (uaclass.Verifier: published ranges, forward-confirmed
//     reverse DNS).
//  5. Target parse: the target as sent, its normal form and the other
//     spellings a backend serves alike (policy.ParseTarget); Invalid when
//     it cannot be read.
//  6. Canonical variants: the canonical URL's target joins the spellings
//     checked, so that a parameter or a host alias does not dodge a rule.
//
// With Agents nil Read allocates nothing for a classified User-Agent
// (the classifier caches) and an ordinary target.
func (rd *Reader) Read(r *http.Request, f *Facts, p *policy.Policy, out *Reading) error {
	// out is filled in place, field by field: a Reading literal would be
	// built in Read's frame and copied, a deeper stack on every request
	// (examples/bench/README.md, "The refusal's stack").
	*out = Reading{}
	req := &out.Request
	ua := header(r.Header, "User-Agent")
	out.UserAgent, out.URI = ua, f.URI
	// 1. Classification.
	who := rd.Classifier.Classify(ua)
	// 2. Signature identification.
	var verdict uaclass.Verdict
	out.Signature = rd.Agents.Check(r)
	if sig := &out.Signature; sig.Outcome != signature.None {
		who, verdict, req.Signed = sig.Identify(rd.Classifier, who, verdict)
	}
	// 3. Evidence judgement.
	judged, poser := rd.Engine.Judge(&who, f, r.Method, r.Header)
	if poser {
		who = uaclass.Result{Class: uaclass.Poser, Claim: who.Claim}
	}
	req.UA, req.BrowserLike = who, who.BrowserLike
	req.Evidence = judged
	req.CrossSite = !poser && CrossSiteFetch(r.Header, r.Host)
	// What the request says of how its client navigates, for the
	// behaviour evidence that Decide judges over its requests.
	req.Behaviour, req.behaviourRead = rd.Engine.ReadBehaviour(&req.UA, f, r.Header)
	// 4. Verification.
	if rd.Verifier != nil && verdict == uaclass.NotClaimed && who.Bot != nil && who.Bot.Verify != "" {
		verdict = rd.Verifier.Verify(r.Context(), f.ClientIP, who)
	}
	req.Verdict = verdict
	// 5. Target parse.
	target, err := policy.ParseTarget(f.URI)
	if errors.Is(err, policy.ErrFragment) {
		return err
	}
	req.Invalid = err != nil
	// 6. Canonical variants.
	if rd.Canonical && p != nil && p.HasCanonical() {
		var canonTarget string
		out.Canonical, canonTarget, out.NonCanonical = p.Canonical(who.Tokens, f.Scheme, r.Host, target.Normal)
		if out.NonCanonical {
			target.AddVariant(canonTarget)
		}
		if !p.HasDomain() {
			// Without a Domain the host would be the request's own: never
			// echo a Host header into Link or Location.
			out.Canonical = policy.RelativeRef(canonTarget)
		}
	}
	req.Target = target
	req.IP, req.Method, req.Host = f.ClientIP, r.Method, r.Host
	req.Dest, req.Accept = header(r.Header, "Sec-Fetch-Dest"), header(r.Header, "Accept")
	req.JA4, req.QUIC, req.Framing, req.FramingStack = f.JA4, f.QUIC, f.Framing, f.TLS.Framing
	return nil
}

// header returns the first value of a header field by its canonical name:
// Header.Get without canonicalising the name, which costs every request
// (a server's request header names are canonical: net/http's, HTTP/2's
// and HTTP/3's alike).
func header(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
