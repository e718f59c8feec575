package signature

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/robotsguard/robotsguard/internal/readfile"
)

// Key is one public key of an agent, from a key directory or a pinned JWKS
// file.
type Key struct {
	// ID is the key's JWK SHA-256 thumbprint (RFC 7638; RFC 8037 for
	// Ed25519), base64url without padding: the keyid a signature names.
	ID string
	// Ed25519 is the public key, or nil for a key of another type, which
	// this verifier cannot use (RSA, EC) or refuses (symmetric keys).
	Ed25519 ed25519.PublicKey
	// NotBefore and Expires bound the key's use when the JWK has "nbf" and
	// "exp"; zero means unbounded.
	NotBefore, Expires time.Time
}

// valid reports whether the key may verify a signature at now.
func (k *Key) valid(now time.Time) bool {
	return (k.NotBefore.IsZero() || !now.Before(k.NotBefore)) && (k.Expires.IsZero() || now.Before(k.Expires))
}

// jwk holds the JWK members this verifier reads.
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	N   string `json:"n"`
	E   string `json:"e"`
	Kid string `json:"kid"`
	Nbf int64  `json:"nbf"`
	Exp int64  `json:"exp"`
}

// testKeys are published example keys (RFC 9421 appendix B.1.4), refused
// in directories and pinned files: anyone can sign with them.
var testKeys = map[string]bool{
	"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs": true,
}

// maxKeys bounds the keys read from one key set.
const maxKeys = 64

// ParseJWKS reads a JSON Web Key Set ({"keys": [...]}) and returns its
// keys by thumbprint. Ed25519 keys (kty OKP, crv Ed25519) are usable; RSA
// and EC keys are listed without a usable key, so that a signature by one
// is told apart from one by an unknown key; symmetric keys and the RFC
// 9421 example keys are refused. A "kid", when present, must be the key's
// thumbprint.
func ParseJWKS(data []byte) (map[string]*Key, error) {
	return parseJWKS(data, true)
}

// parseJWKS reads a key set; unless strict, keys it cannot read are
// skipped rather than failing the set (a directory may list keys for other
// verifiers).
func parseJWKS(data []byte, strict bool) (map[string]*Key, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("parsing JWKS: %v", err)
	}
	if set.Keys == nil {
		return nil, errors.New("parsing JWKS: no \"keys\" array")
	}
	if len(set.Keys) > maxKeys {
		return nil, fmt.Errorf("parsing JWKS: %d keys, more than %d", len(set.Keys), maxKeys)
	}
	keys := make(map[string]*Key, len(set.Keys))
	for i, raw := range set.Keys {
		var j jwk
		err := json.Unmarshal(raw, &j)
		var k *Key
		if err == nil {
			k, err = j.key()
		}
		if err != nil {
			if strict {
				return nil, fmt.Errorf("key %d: %v", i, err)
			}
			continue
		}
		keys[k.ID] = k
	}
	return keys, nil
}

// LoadJWKS reads a JWKS file, at most maxSize bytes of a regular file, so
// that a wrong path (a device, a FIFO, a huge file) cannot hang or exhaust
// the config load; see [ParseJWKS].
func LoadJWKS(path string, maxSize int64) (map[string]*Key, error) {
	data, err := readfile.Bounded(path, maxSize)
	if err != nil {
		return nil, err
	}
	keys, err := ParseJWKS(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return keys, nil
}

func (j *jwk) key() (*Key, error) {
	var members string
	k := &Key{}
	switch j.Kty {
	case "OKP":
		if j.Crv != "Ed25519" {
			return nil, fmt.Errorf("OKP curve %q is not Ed25519", j.Crv)
		}
		x, err := base64.RawURLEncoding.DecodeString(j.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, errors.New("x is not a base64url Ed25519 public key")
		}
		if testKeys[j.X] {
			return nil, errors.New("the RFC 9421 example key must not be trusted")
		}
		k.Ed25519 = ed25519.PublicKey(x)
		members = `{"crv":` + quote(j.Crv) + `,"kty":"OKP","x":` + quote(j.X) + `}`
	case "RSA":
		if j.N == "" || j.E == "" {
			return nil, errors.New("RSA key without n or e")
		}
		members = `{"e":` + quote(j.E) + `,"kty":"RSA","n":` + quote(j.N) + `}`
	case "EC":
		if j.Crv == "" || j.X == "" || j.Y == "" {
			return nil, errors.New("EC key without crv, x or y")
		}
		members = `{"crv":` + quote(j.Crv) + `,"kty":"EC","x":` + quote(j.X) + `,"y":` + quote(j.Y) + `}`
	case "oct":
		return nil, errors.New("symmetric (HMAC) keys are not allowed")
	default:
		return nil, fmt.Errorf("unknown key type %q", j.Kty)
	}
	sum := sha256.Sum256([]byte(members))
	k.ID = base64.RawURLEncoding.EncodeToString(sum[:])
	if j.Kid != "" && j.Kid != k.ID {
		return nil, fmt.Errorf("kid %q is not the key's thumbprint %q", j.Kid, k.ID)
	}
	if j.Nbf != 0 {
		k.NotBefore = time.Unix(j.Nbf, 0)
	}
	if j.Exp != 0 {
		k.Expires = time.Unix(j.Exp, 0)
	}
	return k, nil
}

// quote writes a JSON string; thumbprint members are base64url or names.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Thumbprint returns the JWK SHA-256 thumbprint of an Ed25519 public key
// (RFC 7638 and RFC 8037 appendix A.3), the keyid of its signatures.
func Thumbprint(pub ed25519.PublicKey) string {
	x := base64.RawURLEncoding.EncodeToString(pub)
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
