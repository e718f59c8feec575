package signature

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
)

// Outcome is the result of checking a request's Web Bot Auth signatures.
type Outcome uint8

// Outcomes.
const (
	// None: the request carries no signature headers.
	None Outcome = iota
	// Verified: a key the agent publishes (or the operator pinned for it)
	// signed the request, within the allowed validity.
	Verified
	// Invalid: a Web Bot Auth signature fails: it does not verify, covers
	// too little, has expired or is not yet valid, names a key its agent
	// does not publish, replays a nonce, or the headers are malformed.
	Invalid
	// Unverified: signed, but not decidable: no label with the web-bot-auth
	// tag, no Signature-Agent, an agent whose keys are unknown or whose
	// directory cannot be fetched, an algorithm other than Ed25519.
	Unverified
)

var outcomeNames = [...]string{None: "none", Verified: "verified", Invalid: "invalid", Unverified: "unverified"}

// String returns "none", "verified", "invalid" or "unverified".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Result is the outcome of [Verifier.Verify], with what it is about.
type Result struct {
	// Outcome is the verdict.
	Outcome Outcome
	// Agent is the agent's origin (e.g. "https://chatgpt.com"): verified
	// for Verified, claimed otherwise; "" when none was named.
	Agent string
	// KeyID and Label are the key thumbprint and the signature label that
	// decided.
	KeyID, Label string
	// Pinned reports that a Verified signature's key is one the operator
	// pinned for the agent (trusted_agent), not one from the agent's own
	// directory: only then is the signer trusted (see [Result.Identify]).
	// [Agents.Check] sets it.
	Pinned bool
	// Err says why the outcome is Invalid or Unverified.
	Err error
}

// Options configure a [Verifier]. Zero values mean the defaults.
type Options struct {
	// Keys finds agents' keys. Default: none known, every signature is
	// Unverified.
	Keys KeySource
	// MaxValidity is the longest a signature may be valid (expires minus
	// created). Default: 24h.
	MaxValidity time.Duration
	// ClockSkew is how far created may lie in the future and expires in the
	// past. Default: 60s.
	ClockSkew time.Duration
	// Nonces, when set, refuses a signature whose nonce it has seen.
	// Default: no replay check.
	Nonces *NonceCache
	// Now returns the current time. Default: time.Now.
	Now func() time.Time
}

// maxSignatures bounds the Web Bot Auth signatures checked per request.
const maxSignatures = 4

// tag is the signature tag of the Web Bot Auth profile.
const tag = "web-bot-auth"

// Verifier checks Web Bot Auth signatures. It is safe for concurrent use.
type Verifier struct {
	opts Options
}

// NewVerifier returns a Verifier with the given options.
func NewVerifier(opts Options) *Verifier {
	if opts.MaxValidity <= 0 {
		opts.MaxValidity = 24 * time.Hour
	}
	if opts.ClockSkew <= 0 {
		opts.ClockSkew = 60 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Verifier{opts: opts}
}

// Signed reports whether r carries signature headers at all; a request
// without them costs nothing more.
func Signed(r *http.Request) bool {
	return len(r.Header["Signature-Input"]) > 0 || len(r.Header["Signature"]) > 0 || len(r.Header["Signature-Agent"]) > 0
}

// Verify checks the request's Web Bot Auth signatures (the labels tagged
// "web-bot-auth"; others are ignored). Any invalid one makes the request
// Invalid; otherwise one that verifies makes it Verified. The context
// bounds a key directory fetch.
func (v *Verifier) Verify(ctx context.Context, r *http.Request) Result {
	if !Signed(r) {
		return Result{}
	}
	inputs, sigs := r.Header["Signature-Input"], r.Header["Signature"]
	if len(inputs) == 0 || len(sigs) == 0 {
		return Result{Outcome: Unverified, Err: errors.New("Signature-Agent, Signature-Input and Signature do not come together")}
	}
	inDict, err := parseDict("Signature-Input", inputs)
	if err != nil {
		return Result{Outcome: Invalid, Err: err}
	}
	sigDict, err := parseDict("Signature", sigs)
	if err != nil {
		return Result{Outcome: Invalid, Err: err}
	}
	var agents *httpsfv.Dictionary
	var legacyAgent string // the older bare-string form of Signature-Agent
	if lines := r.Header["Signature-Agent"]; len(lines) > 0 {
		if strings.HasPrefix(strings.TrimLeft(lines[0], " \t"), `"`) {
			it, err := httpsfv.UnmarshalItem(lines)
			s, ok := it.Value.(string)
			if err != nil || !ok {
				return Result{Outcome: Invalid, Err: fmt.Errorf("Signature-Agent: not a string or dictionary")}
			}
			legacyAgent = s
		} else if agents, err = parseDict("Signature-Agent", lines); err != nil {
			return Result{Outcome: Invalid, Err: err}
		}
	}
	m := requestMessage(r)
	if agents != nil {
		m.dicts = map[string]*httpsfv.Dictionary{"signature-agent": agents}
	}
	now := v.opts.Now()
	var verified, unverified *Result
	checked := 0
	for _, label := range inDict.Names() {
		member, _ := inDict.Get(label)
		in, err := parseInput(label, member)
		if err != nil {
			return Result{Outcome: Invalid, Label: label, Err: err}
		}
		if in.tag != tag {
			continue
		}
		if checked++; checked > maxSignatures {
			return Result{Outcome: Invalid, Err: fmt.Errorf("more than %d web-bot-auth signatures", maxSignatures)}
		}
		res := v.check(ctx, &m, &in, sigDict, agents, legacyAgent, r.Header["Signature-Agent"] != nil, now)
		switch res.Outcome {
		case Invalid:
			return res
		case Verified:
			if verified == nil {
				verified = &res
			}
		default:
			if unverified == nil {
				unverified = &res
			}
		}
	}
	switch {
	case verified != nil:
		return *verified
	case unverified != nil:
		return *unverified
	}
	return Result{Outcome: Unverified, Err: errors.New("no signature is tagged web-bot-auth")}
}

// check verifies one web-bot-auth signature.
func (v *Verifier) check(ctx context.Context, m *message, in *input, sigs *httpsfv.Dictionary, agents *httpsfv.Dictionary, legacyAgent string, hasAgent bool, now time.Time) Result {
	res := Result{Outcome: Invalid, Label: in.label, KeyID: in.keyID}
	fail := func(format string, args ...any) Result {
		res.Err = fmt.Errorf("signature %q: %s", in.label, fmt.Sprintf(format, args...))
		return res
	}
	sigMember, ok := sigs.Get(in.label)
	if !ok {
		return fail("no Signature member")
	}
	sigItem, ok := sigMember.(httpsfv.Item)
	sig, isBytes := sigItem.Value.([]byte)
	if !ok || !isBytes {
		return fail("the Signature member is not a byte sequence")
	}
	// The agent the signature claims, for the result even when it fails.
	agent, agentOutcome, agentErr := claimedAgent(in, agents, legacyAgent, hasAgent)
	res.Agent = agent
	// The profile's parameters and freshness.
	skew := v.opts.ClockSkew
	switch {
	case in.keyID == "":
		return fail("no keyid")
	case !in.hasCreated || !in.hasExpires:
		return fail("created and expires are required")
	case in.expires <= in.created:
		return fail("expires is not after created")
	case in.expires-in.created > int64(v.opts.MaxValidity/time.Second):
		return fail("valid for %ds, more than %v", in.expires-in.created, v.opts.MaxValidity)
	case time.Unix(in.created, 0).After(now.Add(skew)):
		return fail("created %d is in the future", in.created)
	case !time.Unix(in.expires, 0).After(now.Add(-skew)):
		return fail("expired at %d", in.expires)
	}
	switch {
	case in.alg == "" || in.alg == "ed25519":
	case strings.HasPrefix(in.alg, "hmac"):
		return fail("alg %q: shared-secret signatures are not allowed", in.alg)
	default:
		res.Outcome = Unverified
		return fail("alg %q is not supported (Ed25519 only)", in.alg)
	}
	target := false
	for _, it := range in.components.Items {
		if name, _ := it.Value.(string); name == "@authority" || name == "@target-uri" {
			target = true
		}
	}
	if !target {
		return fail("neither @authority nor @target-uri is covered")
	}
	if agentErr != nil {
		res.Outcome = agentOutcome
		return fail("%v", agentErr)
	}
	// The signature base, the key, the signature.
	base, err := signatureBase(m, in.components)
	if err != nil {
		if errors.Is(err, errUnsupported) {
			res.Outcome = Unverified
		}
		return fail("%v", err)
	}
	if len(sig) != ed25519.SignatureSize {
		return fail("the signature is %d bytes, not an Ed25519 signature", len(sig))
	}
	if v.opts.Keys == nil {
		res.Outcome = Unverified
		return fail("%v %s", ErrUnknownAgent, agent)
	}
	key, err := v.opts.Keys.Key(ctx, agent, in.keyID)
	if err != nil {
		if !errors.Is(err, ErrUnknownKey) {
			res.Outcome = Unverified
		}
		return fail("%v", err)
	}
	if key.Ed25519 == nil {
		res.Outcome = Unverified
		return fail("key %q of %s is not an Ed25519 key", in.keyID, agent)
	}
	if !key.valid(now) {
		return fail("key %q of %s is not valid now", in.keyID, agent)
	}
	if !ed25519.Verify(key.Ed25519, base, sig) {
		return fail("the signature does not verify with key %q of %s", in.keyID, agent)
	}
	if v.opts.Nonces != nil && in.nonce != "" && !v.opts.Nonces.add(agent, in.nonce, time.Unix(in.expires, 0).Add(skew), now) {
		return fail("nonce replayed")
	}
	res.Outcome = Verified
	return res
}

// claimedAgent returns the origin of the Signature-Agent member that the
// signature covers; on failure, the outcome it leads to and why.
func claimedAgent(in *input, agents *httpsfv.Dictionary, legacyAgent string, hasAgent bool) (string, Outcome, error) {
	var agentKeys []string
	legacyCovered := false
	for _, it := range in.components.Items {
		if name, _ := it.Value.(string); name == "signature-agent" {
			if k, ok := it.Params.Get("key"); ok {
				if s, ok := k.(string); ok {
					agentKeys = append(agentKeys, s)
				}
			} else {
				legacyCovered = true
			}
		}
	}
	var rawAgent string
	var agentType any = httpsfv.Token("directory")
	switch {
	case !hasAgent:
		return "", Unverified, errors.New("no Signature-Agent: the key cannot be attributed")
	case legacyAgent != "":
		if !legacyCovered {
			return "", Invalid, errors.New("Signature-Agent is not covered")
		}
		rawAgent = legacyAgent
	default:
		if len(agentKeys) == 0 {
			return "", Invalid, errors.New("no Signature-Agent member is covered")
		}
		key := agentKeys[0]
		if len(agentKeys) > 1 {
			key = ""
			for _, k := range agentKeys {
				if k == in.label {
					key = k // the member keyed to its own label
				}
			}
			if key == "" {
				return "", Unverified, errors.New("covers several Signature-Agent members, none keyed to its label")
			}
		}
		member, ok := agents.Get(key)
		if !ok {
			return "", Invalid, fmt.Errorf("no Signature-Agent member %q", key)
		}
		item, ok := member.(httpsfv.Item)
		s, isString := item.Value.(string)
		if !ok || !isString {
			return "", Invalid, fmt.Errorf("Signature-Agent member %q is not a string", key)
		}
		if t, ok := item.Params.Get("type"); ok {
			agentType = t
		}
		rawAgent = s
	}
	if agentType != httpsfv.Token("directory") {
		return "", Unverified, fmt.Errorf("Signature-Agent discovery type %v is not supported", agentType)
	}
	agent, err := agentOrigin(rawAgent)
	if err != nil {
		return "", Unverified, err
	}
	return agent, Verified, nil
}
