package redisstore

import (
	"fmt"
	"strings"
	"time"

	"github.com/robotsguard/robotsguard/internal/field"
)

// Config is a Redis store as configured, before it is checked and opened.
type Config struct {
	// URL locates the server; see [Open].
	URL string
	// KeyPrefix starts every key; see [Options].
	KeyPrefix string
	// Timeout bounds one round trip. Default: DefaultTimeout.
	Timeout time.Duration
	// OnError is "local", "allow" or "deny"; see [ParseOnError].
	OnError string
}

// Settings are a checked [Config], with the defaults filled in.
type Settings struct {
	URL       string
	KeyPrefix string
	Timeout   time.Duration
	OnError   OnError
}

// Check checks c and returns its settings; it makes a client for the URL
// to check it, and closes it without a round trip. Its errors are
// *enforce.FieldError (url, key_prefix, on_error), and never echo a URL, which
// may carry a password.
func (c Config) Check() (Settings, error) {
	s := Settings{URL: c.URL, KeyPrefix: c.KeyPrefix, Timeout: c.Timeout}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	var err error
	if s.OnError, err = ParseOnError(c.OnError); err != nil {
		return Settings{}, field.Wrap("on_error", err)
	}
	if strings.ContainsAny(c.KeyPrefix, "{}") {
		return Settings{}, field.Wrap("key_prefix", fmt.Errorf("%q has a brace, which would change the keys' cluster hash slots", c.KeyPrefix))
	}
	client, err := Open(c.URL, s.Timeout)
	if err != nil {
		return Settings{}, field.Wrap("url", err)
	}
	_ = client.Close()
	return s, nil
}

// Key identifies the store of these settings for a zone and a client TTL:
// handlers whose keys are equal can share one store.
func (s Settings) Key(zone string, ttl time.Duration) string {
	return strings.Join([]string{zone, s.URL, s.KeyPrefix, s.Timeout.String(), s.OnError.String(), ttl.String()}, "\x00")
}
