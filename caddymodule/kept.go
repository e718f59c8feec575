package caddymodule

import (
	"encoding/json"
	"fmt"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsguard/robotsguard/uaclass"
)

// kept holds what a reload keeps when the configuration that built it did
// not change: the classifier (its phrase index and User-Agent cache), keyed
// by the bot entries and the cache size, and the verifier (its verdicts),
// keyed by its options. Caddy provisions the new handlers before it cleans
// up the old ones, so the count goes 1 -> 2 -> 1 and the value survives; a
// changed key builds a new one, and the old one goes with the old config.
var kept = caddy.NewUsagePool()

// keptValue is a value in the pool; it holds no resources.
type keptValue[T any] struct{ v T }

func (keptValue[T]) Destruct() error { return nil }

// keep returns the value kept under key, made by newValue when there is
// none, and the key to release it with.
func keep[T any](key string, newValue func() (T, error)) (T, string, error) {
	v, _, err := kept.LoadOrNew(key, func() (caddy.Destructor, error) {
		x, err := newValue()
		return keptValue[T]{x}, err
	})
	if err != nil {
		var zero T
		return zero, "", err
	}
	return v.(keptValue[T]).v, key, nil
}

// keepClassifier returns the classifier for these bot entries and cache
// size, and the key to release it with.
func keepClassifier(extra []uaclass.Bot, cacheBytes int) (*uaclass.Classifier, string, error) {
	b, err := json.Marshal(extra)
	if err != nil {
		return nil, "", fmt.Errorf("robots_guard: bots: %v", err)
	}
	return keep(fmt.Sprintf("classifier %d %s", cacheBytes, b), func() (*uaclass.Classifier, error) {
		return uaclass.New(uaclass.Options{Extra: extra, CacheBytes: cacheBytes})
	})
}

// keepVerifier returns the verifier for these options, and the key to
// release it with. Options with a Resolver or a clock (tests) get a
// verifier of their own.
func keepVerifier(opts uaclass.VerifierOptions) (*uaclass.Verifier, string, error) {
	if opts.Resolver != nil || opts.Now != nil {
		return uaclass.NewVerifier(opts), "", nil
	}
	// Every field left is a number or the ranges (a map, which fmt prints
	// sorted by token).
	return keep(fmt.Sprintf("verifier %+v", opts), func() (*uaclass.Verifier, error) { return uaclass.NewVerifier(opts), nil })
}

// release gives back what keepClassifier or keepVerifier returned.
func release(key string) {
	if key != "" {
		_, _ = kept.Delete(key)
	}
}
