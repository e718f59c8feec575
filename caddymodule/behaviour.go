package caddymodule

import (
	"cmp"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsguard/robotsguard/enforce"
)

// BehaviourConfig configures the behaviour evidence (docs/posers.md,
// "Behaviour"): a browser claim whose navigations start as a crawler's
// that drives a browser (many pages within seconds with no page of the
// site behind them) is held to robots.txt as an undeclared bot, as a
// poser is. Posers "log" and "off", and dry run, apply to it.
type BehaviourConfig struct {
	// Disabled turns the behaviour evidence off. Default: false, on.
	Disabled bool `json:"disabled,omitempty"`
	// Window is how far back it looks. Default: 10s.
	Window caddy.Duration `json:"window,omitempty"`
	// Pages is how many such navigations to distinct pages in the window
	// make a crawler. Default: 8.
	Pages int `json:"pages,omitempty"`
	// Disallowed is how many such navigations to distinct pages the "*"
	// group disallows make one. Default: 4.
	Disallowed int `json:"disallowed,omitempty"`
	// Hold is how long the client is held after its last such navigation.
	// Default: 30m.
	Hold caddy.Duration `json:"hold,omitempty"`
}

// settings returns the engine's settings of c (nil: the defaults).
func (c *BehaviourConfig) settings() (s enforce.BehaviourSettings) {
	if c != nil {
		s = enforce.BehaviourSettings{Off: c.Disabled, Window: time.Duration(c.Window), Hold: time.Duration(c.Hold), Pages: c.Pages, Disallowed: c.Disallowed}
	}
	return s
}

// behaviourOption reads "behaviour off" or a block of the options below.
var behaviourOption = caddyfileOption{read: func(h *Handler, r *optionReader) error {
	h.Behaviour = cmp.Or(h.Behaviour, &BehaviourConfig{})
	r.set("behaviour")
	if d := r.d; d.NextArg() {
		if d.Val() != "off" || d.NextArg() {
			return r.errf("want 'off' or a block, got '%s'", d.Val())
		}
		h.Behaviour.Disabled = true
		return nil
	}
	return readOptions(h, r, r.d.Nesting(), behaviourOptions, "behaviour")
}}

var behaviourOptions = map[string]caddyfileOption{
	"window":     fieldOption("behaviour.window", func(h *Handler) *caddy.Duration { return &h.Behaviour.Window }),
	"pages":      fieldOption("behaviour.pages", func(h *Handler) *int { return &h.Behaviour.Pages }),
	"disallowed": fieldOption("behaviour.disallowed", func(h *Handler) *int { return &h.Behaviour.Disallowed }),
	"hold":       fieldOption("behaviour.hold", func(h *Handler) *caddy.Duration { return &h.Behaviour.Hold }),
}
