package caddymodule

import (
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsguard/robotsguard/signature"
)

// WebBotAuthConfig configures the verification of signed agents: HTTP
// Message Signatures (RFC 9421) in the Web Bot Auth profile
// (draft-ietf-webbotauth-httpsig-protocol). An agent verified with keys
// pinned by trusted_agent is treated like a verified crawler (robots.txt
// applies, it is never throttled or blocked), with its class from the bot
// database by its origin, else ai. One verified with the keys of its own
// directory is only identified (a known agent by its entry, another by its
// User-Agent): it is held to its group, Crawl-delay and the ladder like any
// bot. An invalid signature is refused like an impostor, with a strike; an
// unsigned request or an agent that cannot be checked is handled as before.
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

// checkWebBotAuth checks the web_bot_auth block and reads the pinned key
// files (signature.Settings); it is part of checkConfig (nil: not
// configured). Its errors are *field.Error.
func checkWebBotAuth(c *WebBotAuthConfig) (*signature.Config, error) {
	if c == nil {
		return nil, nil
	}
	return signature.Settings{TrustedAgents: c.TrustedAgents, FetchDirectories: c.FetchDirectories, MaxValidity: time.Duration(c.MaxValidity),
		ClockSkew: time.Duration(c.ClockSkew), NonceCache: c.NonceCache, MaxFile: maxRangesFile}.Check()
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
	"trusted_agent": mapOption("web_bot_auth.trusted_agents", "<agent-url> <jwks-file>", "%s is already pinned", nil, plainArg,
		func(h *Handler) *map[string]string { return &h.WebBotAuth.TrustedAgents }),
	"fetch_directories": fieldOption("web_bot_auth.fetch_directories", func(h *Handler) **bool { return &h.WebBotAuth.FetchDirectories }),
	"max_validity":      fieldOption("web_bot_auth.max_validity", func(h *Handler) *caddy.Duration { return &h.WebBotAuth.MaxValidity }),
	"clock_skew":        fieldOption("web_bot_auth.clock_skew", func(h *Handler) *caddy.Duration { return &h.WebBotAuth.ClockSkew }),
	"nonce_cache":       fieldOption("web_bot_auth.nonce_cache", func(h *Handler) *int { return &h.WebBotAuth.NonceCache }),
}
