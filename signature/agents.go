package signature

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Config is a checked Web Bot Auth set-up: the pinned keys and the
// verifier's limits. A zero limit is the [Verifier]'s default.
type Config struct {
	// Pinned are the keys pinned by agent origin, used in place of the
	// agents' key directories.
	Pinned map[string]map[string]*Key
	// Fetch fetches the key directories of agents without pinned keys.
	Fetch bool
	// MaxValidity is the longest a signature may be valid.
	MaxValidity time.Duration
	// ClockSkew is how far created may lie in the future and expires in
	// the past.
	ClockSkew time.Duration
	// NonceCache, when above zero, remembers this many nonces of verified
	// signatures and refuses a replay.
	NonceCache int

	// directories, in tests only, says how directories are fetched.
	directories DirectoryOptions
}

// Settings are the web_bot_auth block as a configuration writes it.
type Settings struct {
	// TrustedAgents maps an agent (its origin, e.g.
	// "https://chatgpt.com") to the JWKS file of its pinned keys.
	TrustedAgents map[string]string
	// FetchDirectories is the fetch_directories setting: nil means on.
	FetchDirectories *bool
	// MaxValidity, ClockSkew and NonceCache are the verifier's limits; 0:
	// their defaults.
	MaxValidity, ClockSkew time.Duration
	NonceCache             int
	// MaxFile bounds a key file's size.
	MaxFile int64
}

// Check checks s and reads the pinned key files (ReadPinned). Its errors
// are *field.Error with the paths web_bot_auth.max_validity,
// web_bot_auth.clock_skew, web_bot_auth.nonce_cache and
// web_bot_auth.trusted_agents[.<agent>].
func (s Settings) Check() (*Config, error) {
	for _, d := range []struct {
		path string
		v    time.Duration
	}{{"web_bot_auth.max_validity", s.MaxValidity}, {"web_bot_auth.clock_skew", s.ClockSkew}} {
		if d.v < 0 {
			return nil, field.Wrap(d.path, field.AboveZero(d.v))
		}
	}
	if s.NonceCache < 0 {
		return nil, field.Wrap("web_bot_auth.nonce_cache", field.AtLeast(1, s.NonceCache))
	}
	pinned, err := ReadPinned(s.TrustedAgents, s.MaxFile)
	if err != nil {
		var ae *AgentError
		if errors.As(err, &ae) {
			return nil, field.Wrap("web_bot_auth.trusted_agents."+ae.Agent, ae.Err)
		}
		return nil, field.Wrap("web_bot_auth.trusted_agents", err)
	}
	return &Config{Pinned: pinned, Fetch: s.FetchDirectories == nil || *s.FetchDirectories,
		MaxValidity: s.MaxValidity, ClockSkew: s.ClockSkew, NonceCache: s.NonceCache}, nil
}

// AgentError is a trusted agent whose keys cannot be pinned: Agent is as
// the configuration names it.
type AgentError struct {
	Agent string
	Err   error
}

func (e *AgentError) Error() string { return e.Agent + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *AgentError) Unwrap() error { return e.Err }

// ReadPinned reads the JWKS file of each trusted agent (agent URL -> file,
// each at most maxSize bytes; see [LoadJWKS]), in the order of the agents'
// names, and returns the keys by agent origin. Its errors are *AgentError.
func ReadPinned(agents map[string]string, maxSize int64) (map[string]map[string]*Key, error) {
	pinned := map[string]map[string]*Key{}
	for _, agent := range slices.Sorted(maps.Keys(agents)) {
		origin, err := AgentOrigin(agent)
		if err != nil {
			return nil, &AgentError{agent, err}
		}
		if _, dup := pinned[origin]; dup {
			return nil, &AgentError{agent, fmt.Errorf("%s is already pinned", origin)}
		}
		keys, err := LoadJWKS(agents[agent], maxSize)
		if err != nil {
			return nil, &AgentError{agent, err}
		}
		pinned[origin] = keys
	}
	return pinned, nil
}

// Agents verifies the signatures of signed agents as a [Config] says,
// counting each outcome. It is safe for concurrent use; its methods are
// nil-safe (nil: Web Bot Auth is not configured).
type Agents struct {
	verifier *Verifier
	dirs     *Directories
	pinned   map[string]bool // the origins with pinned keys
	count    func(Outcome)
}

// NewAgents sets up the verification of c, calling count (if not nil) with
// the outcome of each signed request; a nil c (Web Bot Auth not
// configured) gives nil Agents. Its errors are *field.Error, at
// web_bot_auth.trusted_agents.<origin>, as the configuration names the
// agent. Close ends the directory fetches in flight.
func NewAgents(c *Config, count func(Outcome)) (*Agents, error) {
	if c == nil {
		return nil, nil
	}
	a := &Agents{count: count, pinned: map[string]bool{}}
	if c.Fetch {
		a.dirs = NewDirectories(c.directories)
	}
	keys := NewKeyring(a.dirs)
	for origin, pinned := range c.Pinned {
		if err := keys.Pin(origin, pinned); err != nil {
			a.Close()
			return nil, field.Wrap("web_bot_auth.trusted_agents."+origin, err)
		}
		o, _ := agentOrigin(origin) // Pin checked it
		a.pinned[o] = true
	}
	opts := Options{Keys: keys, MaxValidity: c.MaxValidity, ClockSkew: c.ClockSkew}
	if c.NonceCache > 0 {
		opts.Nonces = NewNonceCache(c.NonceCache)
	}
	a.verifier = NewVerifier(opts)
	return a, nil
}

// Check verifies the request's signatures, if it has any; a request
// without signature headers costs nothing and gives the zero Result. A
// Verified result says whether the key was pinned (Result.Pinned).
func (a *Agents) Check(r *http.Request) Result {
	if a == nil || !Signed(r) {
		return Result{}
	}
	res := a.verifier.Verify(r.Context(), r)
	res.Pinned = res.Outcome == Verified && a.pinned[res.Agent]
	if a.count != nil {
		a.count(res.Outcome)
	}
	return res
}

// Identify makes the outcome of a request's signatures part of what is
// known of the client: its classification ua and verdict v, with c's bot
// database. A signature proves who signed, not that the signer is trusted.
//
// An agent verified with keys the operator pinned (res.Pinned) gets the
// classification of the origin it signs for (uaclass.Classifier.SignedAgent)
// and a Verified verdict, and signed is true: the engine treats it like a
// verified crawler. An agent verified with keys from its own directory is
// identified only: a known signing agent gets its database entry, whose
// claim is then checked as any other (by its IP ranges or DNS); another
// keeps what its User-Agent names (its tokens, so its own group), or
// becomes class ai without tokens where that names no bot; v stays and
// signed is false, so that it is held to its group, Crawl-delay and the
// ladder like any bot. An invalid signature is a forged claim: the client
// is refused like an impostor, as what it claims to be (class ai where it
// names no agent and its User-Agent no bot). Any other outcome leaves ua
// and v as they are.
func (res Result) Identify(c *uaclass.Classifier, ua uaclass.Result, v uaclass.Verdict) (_ uaclass.Result, _ uaclass.Verdict, signed bool) {
	switch res.Outcome {
	case Verified:
		id := c.SignedAgent(res.Agent, ua)
		if res.Pinned {
			return id, uaclass.Verified, true
		}
		if id.Bot == nil && ua.Class != uaclass.Browser && ua.Class != uaclass.Unknown {
			id = ua // an agent of its own, named by its User-Agent
		}
		return id, v, false
	case Invalid:
		if res.Agent != "" {
			ua = c.SignedAgent(res.Agent, ua)
		} else if ua.Class == uaclass.Browser || ua.Class == uaclass.Unknown {
			ua = uaclass.Result{Class: uaclass.AI}
		}
		return ua, uaclass.Impostor, false
	}
	return ua, v, false
}

// Close ends the directory fetches in flight.
func (a *Agents) Close() {
	if a != nil && a.dirs != nil {
		a.dirs.Close()
	}
}
