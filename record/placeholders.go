package record

import (
	"strings"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Placeholders are the values of a request's placeholders
// {http.robots_guard.action}, .reason, .rule, .class, .token, .ja4, .quic
// and .framing, for access logs and handle_errors routes: those of the
// record of the last decision on it (Set). Lookup is the provider the
// Caddy module gives the request's replacer.
type Placeholders struct {
	action  enforce.Action
	reason  enforce.Reason
	class   uaclass.Class
	rule    *policy.Rule
	token   string
	ja4     string
	quic    string
	framing string
}

// Set makes the placeholders the record's.
func (p *Placeholders) Set(r *Record) {
	p.action, p.reason, p.class, p.rule, p.token, p.ja4, p.quic, p.framing = r.Action, r.Reason, r.Class, r.Rule, r.Token(), r.JA4, r.QUIC, r.Framing
}

// Lookup returns the value of a placeholder (its key with its
// "http.robots_guard." prefix). The reason of an ordinary request is
// "none", as in the report; the rule and the token are "" when there are
// none.
func (p *Placeholders) Lookup(key string) (any, bool) {
	name, ok := strings.CutPrefix(key, "http.robots_guard.")
	if !ok {
		return nil, false
	}
	switch name {
	case "action":
		return p.action.String(), true
	case "reason":
		if p.reason == enforce.ReasonNone {
			return "none", true
		}
		return string(p.reason), true
	case "rule":
		if p.rule == nil {
			return "", true
		}
		return p.rule.String(), true
	case "class":
		return p.class.String(), true
	case "token":
		return p.token, true
	case "ja4":
		return p.ja4, true
	case "quic":
		return p.quic, true
	case "framing":
		return p.framing, true
	}
	return nil, false
}

// String says what a request's robots_guard variable holds.
func (p *Placeholders) String() string {
	return p.action.String() + " " + string(p.reason)
}
