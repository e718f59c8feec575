package signature

import (
	"context"
	"errors"
	"fmt"
)

// Errors of a key lookup. A [KeySource] wraps one of them, so that the
// verifier tells an unknown key of a known agent (Invalid) from an agent it
// cannot vouch for (Unverified).
var (
	// ErrUnknownAgent: no keys are known for the agent, and none are
	// fetched.
	ErrUnknownAgent = errors.New("unknown agent")
	// ErrUnavailable: the agent's key directory could not be fetched (or is
	// being fetched); nothing is known either way.
	ErrUnavailable = errors.New("key directory unavailable")
	// ErrUnknownKey: the agent's key set is known and does not contain the
	// key.
	ErrUnknownKey = errors.New("unknown key")
)

// KeySource finds an agent's key by the agent's origin and the key's
// thumbprint, never by the thumbprint alone.
type KeySource interface {
	Key(ctx context.Context, agent, keyID string) (*Key, error)
}

// Keyring is the [KeySource] of a verifier: keys pinned per agent (for
// offline sites and tests), then, for other agents, their key directories
// when a [Directories] is set. It is safe for concurrent use once set up.
type Keyring struct {
	pinned map[string]map[string]*Key
	dirs   *Directories
}

// NewKeyring returns a Keyring that fetches the directories of agents it
// has no pinned keys for through dirs (nil: none are fetched).
func NewKeyring(dirs *Directories) *Keyring {
	return &Keyring{pinned: map[string]map[string]*Key{}, dirs: dirs}
}

// Pin trusts keys for agent (an https origin) in place of its directory.
// It is not safe to call once the keyring is in use.
func (k *Keyring) Pin(agent string, keys map[string]*Key) error {
	origin, err := agentOrigin(agent)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return fmt.Errorf("no keys for %s", origin)
	}
	if k.pinned[origin] == nil {
		k.pinned[origin] = map[string]*Key{}
	}
	for id, key := range keys {
		k.pinned[origin][id] = key
	}
	return nil
}

// Key returns the key of agent with the thumbprint keyID.
func (k *Keyring) Key(ctx context.Context, agent, keyID string) (*Key, error) {
	if keys, ok := k.pinned[agent]; ok {
		if key, ok := keys[keyID]; ok {
			return key, nil
		}
		return nil, fmt.Errorf("%w %q for %s (pinned)", ErrUnknownKey, keyID, agent)
	}
	if k.dirs == nil {
		return nil, fmt.Errorf("%w %s (no pinned keys, directories are not fetched)", ErrUnknownAgent, agent)
	}
	keys, err := k.dirs.Keys(ctx, agent)
	if err != nil {
		return nil, err
	}
	if key, ok := keys[keyID]; ok {
		return key, nil
	}
	return nil, fmt.Errorf("%w %q for %s (not in its directory)", ErrUnknownKey, keyID, agent)
}
