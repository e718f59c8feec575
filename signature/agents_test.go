package signature

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadPinned: the keys of each trusted agent are read by its origin;
// a bad agent, a second agent with the same origin and a file that is
// missing or too large are refused with the agent named.
func TestReadPinned(t *testing.T) {
	dir := t.TempDir()
	s := newSigner(t)
	jwks := filepath.Join(dir, "agent.jwks")
	doc := `{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "` + base64.RawURLEncoding.EncodeToString(s.pub) + `"}]}`
	if err := os.WriteFile(jwks, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	pinned, err := ReadPinned(map[string]string{testAgent + "/": jwks}, 1<<20)
	if err != nil || pinned[testAgent][Thumbprint(s.pub)] == nil {
		t.Fatalf("ReadPinned = %v, %v", pinned, err)
	}
	for _, tc := range []struct {
		agents      map[string]string
		agent, want string
	}{
		{map[string]string{"http://agent.example": jwks}, "http://agent.example", "https"},
		{map[string]string{testAgent: jwks, testAgent + "/": jwks}, testAgent + "/", "is already pinned"},
		{map[string]string{testAgent: filepath.Join(dir, "none")}, testAgent, "no such file"},
		{map[string]string{testAgent: dir}, testAgent, "is not a regular file"},
	} {
		_, err := ReadPinned(tc.agents, 1<<20)
		var ae *AgentError
		if !errors.As(err, &ae) || ae.Agent != tc.agent || !strings.Contains(ae.Err.Error(), tc.want) {
			t.Errorf("ReadPinned(%v) = %v, want %s: ...%s...", tc.agents, err, tc.agent, tc.want)
		}
	}
	if _, err := ReadPinned(map[string]string{testAgent: jwks}, 8); err == nil || !strings.Contains(err.Error(), "is larger than 8 bytes") {
		t.Errorf("a file above the bound: %v", err)
	}
}

// TestAgents: a signed request is verified and counted, an unsigned one is
// neither; a nil Agents checks nothing.
func TestAgents(t *testing.T) {
	s := newSigner(t)
	var counted []Outcome
	a, err := NewAgents(&Config{Pinned: map[string]map[string]*Key{testAgent: {Thumbprint(s.pub): {ID: Thumbprint(s.pub), Ed25519: s.pub}}}},
		func(o Outcome) { counted = append(counted, o) })
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	r := newRequest("GET", "/", "www.example.com", "Signature-Agent", `"`+testAgent+`"`)
	s.sign(t, r, "sig1", `("@authority" "signature-agent")`+s.params(time.Now(), ""))
	if res := a.Check(r); res.Outcome != Verified || res.Agent != testAgent {
		t.Errorf("signed: %+v", res)
	}
	if res := a.Check(newRequest("GET", "/", "www.example.com")); res.Outcome != None {
		t.Errorf("unsigned: %+v", res)
	}
	if len(counted) != 1 || counted[0] != Verified {
		t.Errorf("counted %v, want [verified]", counted)
	}
	var none *Agents
	if res := none.Check(r); res.Outcome != None {
		t.Errorf("nil Agents: %+v", res)
	}
	none.Close()
	if _, err := NewAgents(&Config{Pinned: map[string]map[string]*Key{"http://agent.example": {}}}, nil); err == nil {
		t.Error("NewAgents pinned an http agent")
	}
}
