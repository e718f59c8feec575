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

type keptClassifier struct{ *uaclass.Classifier }

func (keptClassifier) Destruct() error { return nil }

type keptVerifier struct{ *uaclass.Verifier }

func (keptVerifier) Destruct() error { return nil }

// keepClassifier returns the classifier for these bot entries and cache
// size, and the key to release it with.
func keepClassifier(extra []uaclass.Bot, cacheBytes int) (*uaclass.Classifier, string, error) {
	b, err := json.Marshal(extra)
	if err != nil {
		return nil, "", fmt.Errorf("robots_guard: bots: %v", err)
	}
	key := fmt.Sprintf("classifier %d %s", cacheBytes, b)
	v, _, err := kept.LoadOrNew(key, func() (caddy.Destructor, error) {
		c, err := uaclass.New(uaclass.Options{Extra: extra, CacheBytes: cacheBytes})
		return keptClassifier{c}, err
	})
	if err != nil {
		return nil, "", err
	}
	return v.(keptClassifier).Classifier, key, nil
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
	key := fmt.Sprintf("verifier %+v", opts)
	v, _, err := kept.LoadOrNew(key, func() (caddy.Destructor, error) {
		return keptVerifier{uaclass.NewVerifier(opts)}, nil
	})
	if err != nil {
		return nil, "", err
	}
	return v.(keptVerifier).Verifier, key, nil
}

// release gives back what keepClassifier or keepVerifier returned.
func release(key string) {
	if key != "" {
		_, _ = kept.Delete(key)
	}
}
