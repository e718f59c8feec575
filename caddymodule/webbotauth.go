package caddymodule

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/signature"
	"github.com/robotsguard/robotsguard/uaclass"
)

// WebBotAuthConfig configures the verification of signed agents: HTTP
// Message Signatures (RFC 9421) in the Web Bot Auth profile
// (draft-ietf-webbotauth-httpsig-protocol). A verified agent is treated like
// a verified crawler (robots.txt applies, it is never throttled or
// blocked), with its class from the bot database by its origin, else ai; an
// invalid signature is refused like an impostor, with a strike; an unsigned
// request or an agent that cannot be checked is handled as before.
type WebBotAuthConfig struct {
	// TrustedAgents pins keys: an agent's origin (e.g.
	// "https://chatgpt.com") to a JWKS file of its Ed25519 keys, used in
	// place of its key directory (for offline sites and tests).
	TrustedAgents map[string]string `json:"trusted_agents,omitempty"`
	// FetchDirectories fetches the key directories
	// (/.well-known/http-message-signatures-directory) of agents without
	// pinned keys: https only, public addresses only, no redirects, 5s,
	// 1 MiB, HTTP caching. Default: on; false verifies pinned agents only.
	FetchDirectories *bool `json:"fetch_directories,omitempty"`
	// MaxValidity is the longest a signature may be valid (expires minus
	// created). Default: 24h.
	MaxValidity caddy.Duration `json:"max_validity,omitempty"`
	// ClockSkew is how far created may lie in the future and expires in
	// the past. Default: 60s.
	ClockSkew caddy.Duration `json:"clock_skew,omitempty"`
	// NonceCache, when above zero, remembers this many nonces of verified
	// signatures and refuses a signature whose nonce comes again (a
	// replay). Default: 0, off.
	NonceCache int `json:"nonce_cache,omitempty"`
}

// webBotAuth is a handler's signature verification at run time.
type webBotAuth struct {
	verifier   *signature.Verifier
	dirs       *signature.Directories
	classifier *uaclass.Classifier
	outcomes   *prometheus.CounterVec
	counters   [4]prometheus.Counter // by signature.Outcome
}

// provisionWebBotAuth sets up the verification of signed agents, when
// configured. Values are checked here, before they are used, for the
// Caddyfile and JSON alike.
func (h *Handler) provisionWebBotAuth(ctx caddy.Context) error {
	c := h.WebBotAuth
	if c == nil {
		return nil
	}
	switch {
	case c.MaxValidity < 0:
		return fmt.Errorf("web_bot_auth: max_validity: must not be negative, got %v", time.Duration(c.MaxValidity))
	case c.ClockSkew < 0:
		return fmt.Errorf("web_bot_auth: clock_skew: must not be negative, got %v", time.Duration(c.ClockSkew))
	case c.NonceCache < 0:
		return fmt.Errorf("web_bot_auth: nonce_cache: must not be negative, got %d", c.NonceCache)
	}
	w := &webBotAuth{classifier: h.classifier}
	if c.FetchDirectories == nil || *c.FetchDirectories {
		w.dirs = signature.NewDirectories(signature.DirectoryOptions{})
	}
	keys := signature.NewKeyring(w.dirs)
	agents := make([]string, 0, len(c.TrustedAgents))
	for agent := range c.TrustedAgents {
		agents = append(agents, agent)
	}
	sort.Strings(agents)
	for _, agent := range agents {
		_, err := signature.AgentOrigin(agent)
		var jwks map[string]*signature.Key
		if err == nil {
			jwks, err = signature.LoadJWKS(c.TrustedAgents[agent])
		}
		if err == nil {
			err = keys.Pin(agent, jwks)
		}
		if err != nil {
			w.close()
			return fmt.Errorf("web_bot_auth: trusted_agent %s: %v", agent, err)
		}
	}
	opts := signature.Options{Keys: keys, MaxValidity: time.Duration(c.MaxValidity), ClockSkew: time.Duration(c.ClockSkew)}
	if c.NonceCache > 0 {
		opts.Nonces = signature.NewNonceCache(c.NonceCache)
	}
	w.verifier = signature.NewVerifier(opts)
	w.outcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "signatures_total",
		Help: "Requests with Web Bot Auth signature headers, by outcome: verified, invalid, unverified.",
	}, []string{"outcome"})
	if reg := ctx.GetMetricsRegistry(); reg != nil {
		var err error
		if w.outcomes, err = registerOrExisting(reg, w.outcomes); err != nil {
			w.close()
			return fmt.Errorf("registering metrics: %v", err)
		}
	}
	for _, o := range []signature.Outcome{signature.Verified, signature.Invalid, signature.Unverified} {
		w.counters[o] = w.outcomes.WithLabelValues(o.String())
	}
	h.webBotAuth = w
	return nil
}

// close ends the directory fetches in flight. It is nil-safe.
func (w *webBotAuth) close() {
	if w != nil && w.dirs != nil {
		w.dirs.Close()
	}
}

// check verifies the request's signatures, if it has any, and makes the
// outcome part of req: a verified agent's classification and a Verified,
// signed verdict; for an invalid signature the claimed identity with an
// Impostor verdict. A request without signature headers costs nothing. It
// is nil-safe.
func (w *webBotAuth) check(r *http.Request, req *enforce.Request) signature.Result {
	if w == nil || !signature.Signed(r) {
		return signature.Result{}
	}
	res := w.verifier.Verify(r.Context(), r)
	if int(res.Outcome) < len(w.counters) && w.counters[res.Outcome] != nil {
		w.counters[res.Outcome].Inc()
	}
	switch res.Outcome {
	case signature.Verified:
		req.UA = w.classifier.SignedAgent(res.Agent, req.UA)
		req.Verdict, req.Signed = uaclass.Verified, true
	case signature.Invalid:
		// A forged claim: refused like an impostor, as what it claims to be.
		if res.Agent != "" {
			req.UA = w.classifier.SignedAgent(res.Agent, req.UA)
		} else if req.UA.Class == uaclass.Browser || req.UA.Class == uaclass.Unknown {
			req.UA = uaclass.Result{Class: uaclass.AI}
		}
		req.Verdict = uaclass.Impostor
	}
	return res
}

// appendSignatureFields adds a request's signature outcome to its decision
// log entry: signature (verified, invalid, unverified), signature_agent and,
// unless verified, signature_error.
func appendSignatureFields(fields []zap.Field, res *signature.Result) []zap.Field {
	if res == nil || res.Outcome == signature.None {
		return fields
	}
	fields = append(fields, zap.String("signature", res.Outcome.String()))
	if res.Agent != "" {
		fields = append(fields, zap.String("signature_agent", res.Agent))
	}
	if res.Err != nil && res.Outcome != signature.Verified {
		fields = append(fields, zap.String("signature_error", res.Err.Error()))
	}
	return fields
}

// unmarshalWebBotAuth reads the web_bot_auth block:
//
//	web_bot_auth {
//	    trusted_agent     <agent-url> <jwks-file>
//	    fetch_directories on|off
//	    max_validity      <duration>
//	    clock_skew        <duration>
//	    nonce_cache       <entries>
//	}
func (h *Handler) unmarshalWebBotAuth(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.Errf("robots_guard: web_bot_auth: unexpected argument '%s' (options go in a block)", d.Val())
	}
	c := &WebBotAuthConfig{}
	h.WebBotAuth = c
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if seen[opt] && opt != "trusted_agent" {
			return d.Errf("robots_guard: web_bot_auth: option '%s' already specified", opt)
		}
		seen[opt] = true
		var err error
		switch opt {
		case "trusted_agent":
			args := d.RemainingArgs()
			if len(args) != 2 {
				return d.Errf("robots_guard: web_bot_auth: trusted_agent: want <agent-url> <jwks-file>, got %d arguments", len(args))
			}
			origin, oerr := signature.AgentOrigin(args[0])
			if oerr != nil {
				return d.Errf("robots_guard: web_bot_auth: trusted_agent: %v", oerr)
			}
			if c.TrustedAgents == nil {
				c.TrustedAgents = map[string]string{}
			}
			if _, dup := c.TrustedAgents[origin]; dup {
				return d.Errf("robots_guard: web_bot_auth: trusted_agent: %s is already pinned", origin)
			}
			c.TrustedAgents[origin] = args[1]
		case "fetch_directories":
			var on bool
			if on, err = onOff(d); err == nil {
				c.FetchDirectories = &on
			}
		case "max_validity":
			c.MaxValidity, err = durationArg(d, "web_bot_auth "+opt)
		case "clock_skew":
			c.ClockSkew, err = durationArg(d, "web_bot_auth "+opt)
		case "nonce_cache":
			c.NonceCache, err = intArg(d, "web_bot_auth "+opt, 1)
		default:
			return d.Errf("robots_guard: web_bot_auth: unrecognized option '%s'", opt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
