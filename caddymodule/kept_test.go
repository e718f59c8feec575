package caddymodule

import (
	"context"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/robotsguard/robotsguard/uaclass"
)

// TestKeptAcrossReload: a reload that changes neither the bot entries nor
// the cache size keeps the classifier (and its User-Agent cache), and one
// that keeps the verify options keeps the verifier (and its verdicts); a
// change builds new ones, and the last Cleanup lets them go.
func TestKeptAcrossReload(t *testing.T) {
	provision := func(h *Handler) *Handler {
		t.Helper()
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		t.Cleanup(cancel)
		if err := h.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		return h
	}
	bot := uaclass.Bot{Token: "examplebot", Class: uaclass.SEO, Name: "ExampleBot", Match: []string{"ExampleBot"}, Source: "config"}
	old := provision(&Handler{Bots: []uaclass.Bot{bot}, Verify: &VerifyConfig{}})
	if old.verifier == nil {
		t.Fatal("no verifier")
	}
	if r := old.classifier.Classify("ExampleBot/1.0"); r.Bot == nil || r.Bot.Token != "examplebot" {
		t.Fatalf("classified as %+v", r)
	}

	firstKey := old.classifierKey
	// A reload: the new handler is provisioned, then the old one cleaned up.
	same := provision(&Handler{Bots: []uaclass.Bot{bot}, Verify: &VerifyConfig{}})
	if err := old.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if same.classifier != old.classifier || same.verifier != old.verifier {
		t.Error("a reload with the same bots and verify options built a new classifier or verifier")
	}

	other := bot
	other.Match = []string{"OtherBot"}
	changed := provision(&Handler{Bots: []uaclass.Bot{other}, Verify: &VerifyConfig{TTL: caddy.Duration(60e9)}})
	if err := same.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if changed.classifier == same.classifier || changed.verifier == same.verifier {
		t.Error("changed bots or verify options kept the old classifier or verifier")
	}
	if r := changed.classifier.Classify("ExampleBot/1.0"); r.Bot != nil && r.Bot.Token == "examplebot" {
		t.Error("the new classifier still knows the old entry")
	}
	// Other tests' handlers may share the default verifier; these keys are
	// this test's own.
	keys := []string{changed.classifierKey, changed.verifierKey}
	if err := changed.Cleanup(); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(keys, firstKey) {
		if n, ok := kept.References(k); ok {
			t.Errorf("%d references still kept after the last Cleanup: %.60s", n, k)
		}
	}
}

// BenchmarkReload measures a reload's Provision and Cleanup of a handler
// whose config did not change, while the old handler still runs.
func BenchmarkReload(b *testing.B) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	old := &Handler{Verify: &VerifyConfig{}}
	if err := old.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	defer old.Cleanup()
	for b.Loop() {
		h := &Handler{Verify: &VerifyConfig{}}
		if err := h.Provision(ctx); err != nil {
			b.Fatal(err)
		}
		if err := h.Cleanup(); err != nil {
			b.Fatal(err)
		}
	}
}
