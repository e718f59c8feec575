package caddymodule

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/metrics"
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
	counters   [4]prometheus.Counter // by signature.Outcome
}

// webBotAuthSettings is the checked web_bot_auth configuration: the keys
// read from the pinned files and the verifier's options.
type webBotAuthSettings struct {
	pinned map[string]map[string]*signature.Key // agent origin -> keys
	fetch  bool
	opts   signature.Options // without Keys and Nonces
	nonces int
}

// checkWebBotAuth checks the web_bot_auth block and reads the pinned key
// files; it is part of checkConfig (nil: not configured). Its errors are
// *configError.
func checkWebBotAuth(c *WebBotAuthConfig) (*webBotAuthSettings, error) {
	if c == nil {
		return nil, nil
	}
	for _, d := range []struct {
		path string
		v    caddy.Duration
	}{{"web_bot_auth.max_validity", c.MaxValidity}, {"web_bot_auth.clock_skew", c.ClockSkew}} {
		if d.v < 0 {
			return nil, &configError{d.path, errAboveZero(time.Duration(d.v))}
		}
	}
	if c.NonceCache < 0 {
		return nil, &configError{"web_bot_auth.nonce_cache", errAtLeast(1, c.NonceCache)}
	}
	s := &webBotAuthSettings{
		pinned: map[string]map[string]*signature.Key{},
		fetch:  c.FetchDirectories == nil || *c.FetchDirectories,
		opts:   signature.Options{MaxValidity: time.Duration(c.MaxValidity), ClockSkew: time.Duration(c.ClockSkew)},
		nonces: c.NonceCache,
	}
	for _, agent := range slices.Sorted(maps.Keys(c.TrustedAgents)) {
		path := "web_bot_auth.trusted_agents." + agent
		origin, err := signature.AgentOrigin(agent)
		if err != nil {
			return nil, &configError{path, err}
		}
		if _, dup := s.pinned[origin]; dup {
			return nil, bad(path, "%s is already pinned", origin)
		}
		keys, err := loadJWKS(c.TrustedAgents[agent])
		if err != nil {
			return nil, &configError{path, err}
		}
		s.pinned[origin] = keys
	}
	return s, nil
}

// loadJWKS reads a pinned key file, at most maxRangesFile bytes of a
// regular file, like the verify ranges files.
func loadJWKS(file string) (map[string]*signature.Key, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", file)
	}
	if st.Size() > maxRangesFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, maxRangesFile)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	keys, err := signature.ParseJWKS(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return keys, nil
}

// newWebBotAuth sets up the verification of signed agents from checked
// settings (nil: not configured), counting outcomes in m.
func newWebBotAuth(s *webBotAuthSettings, classifier *uaclass.Classifier, m *metrics.Collectors) (*webBotAuth, error) {
	if s == nil {
		return nil, nil
	}
	w := &webBotAuth{classifier: classifier}
	if s.fetch {
		w.dirs = signature.NewDirectories(signature.DirectoryOptions{})
	}
	keys := signature.NewKeyring(w.dirs)
	for origin, pinned := range s.pinned {
		if err := keys.Pin(origin, pinned); err != nil {
			w.close()
			return nil, fmt.Errorf("robots_guard: web_bot_auth.trusted_agents.%s: %v", origin, err)
		}
	}
	opts := s.opts
	opts.Keys = keys
	if s.nonces > 0 {
		opts.Nonces = signature.NewNonceCache(s.nonces)
	}
	w.verifier = signature.NewVerifier(opts)
	for _, o := range []signature.Outcome{signature.Verified, signature.Invalid, signature.Unverified} {
		w.counters[o] = m.Signature(o.String())
	}
	return w, nil
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

// webBotAuthOption reads the web_bot_auth block of the robots_guard
// directive:
//
//	web_bot_auth {
//	    trusted_agent     <agent-url> <jwks-file>
//	    fetch_directories on|off
//	    max_validity      <duration>
//	    clock_skew        <duration>
//	    nonce_cache       <entries>
//	}
var webBotAuthOption = caddyfileOption{read: func(h *Handler, r *optionReader) error {
	if h.WebBotAuth == nil {
		h.WebBotAuth = &WebBotAuthConfig{}
	}
	r.set("web_bot_auth")
	if r.d.NextArg() {
		return r.errf("unexpected argument '%s' (options go in a block)", r.d.Val())
	}
	return readOptions(h, r, r.d.Nesting(), webBotAuthOptions, "web_bot_auth")
}}

// webBotAuthOptions are the options of the web_bot_auth block.
var webBotAuthOptions = map[string]caddyfileOption{
	"trusted_agent": {repeatable: true, read: func(h *Handler, r *optionReader) error {
		args, err := r.args(2, 2, "<agent-url> <jwks-file>")
		if err != nil {
			return err
		}
		c := h.WebBotAuth
		if c.TrustedAgents == nil {
			c.TrustedAgents = map[string]string{}
		}
		if _, dup := c.TrustedAgents[args[0]]; dup {
			return r.errf("%s is already pinned", args[0])
		}
		c.TrustedAgents[args[0]] = args[1]
		r.set("web_bot_auth.trusted_agents." + args[0])
		return nil
	}},
	"fetch_directories": {read: func(h *Handler, r *optionReader) error {
		on, err := r.set("web_bot_auth.fetch_directories").onOff()
		h.WebBotAuth.FetchDirectories = &on
		return err
	}},
	"max_validity": {read: func(h *Handler, r *optionReader) error {
		return r.set("web_bot_auth.max_validity").positiveDuration(&h.WebBotAuth.MaxValidity)
	}},
	"clock_skew": {read: func(h *Handler, r *optionReader) error {
		return r.set("web_bot_auth.clock_skew").positiveDuration(&h.WebBotAuth.ClockSkew)
	}},
	"nonce_cache": {read: func(h *Handler, r *optionReader) error {
		return r.set("web_bot_auth.nonce_cache").positiveInt(&h.WebBotAuth.NonceCache)
	}},
}
