package signature

import (
	"crypto/x509"
	"encoding/base64"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/internal/field"
	"github.com/robotsguard/robotsguard/uaclass"
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
	} else if fe := (*field.Error)(nil); !errors.As(err, &fe) || fe.Path != "web_bot_auth.trusted_agents.http://agent.example" {
		t.Errorf("NewAgents: %v, want an error at web_bot_auth.trusted_agents.http://agent.example", err)
	}
}

// TestAgentsPinned (issue 29, item 6): Check says whether a verified
// signature's key was pinned; one verified with the keys of the agent's
// own directory is not.
func TestAgentsPinned(t *testing.T) {
	pinned, own := newSigner(t), newSigner(t)
	dir := startDirServer(t, serveJWKS(jwksOf(own)))
	pool := x509.NewCertPool()
	pool.AddCert(dir.Certificate())
	a, err := NewAgents(&Config{
		Pinned: map[string]map[string]*Key{testAgent + "/": {Thumbprint(pinned.pub): {ID: Thumbprint(pinned.pub), Ed25519: pinned.pub}}},
		Fetch:  true,
		directories: DirectoryOptions{Wait: 5 * time.Second, rootCAs: pool,
			allowAddr: func(ip netip.Addr) bool { return ip.IsLoopback() }},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	now := time.Now()
	r := newRequest("GET", "/", "www.example.com", "Signature-Agent", `"`+testAgent+`"`)
	pinned.sign(t, r, "sig1", `("@authority" "signature-agent")`+pinned.params(now, ""))
	if res := a.Check(r); res.Outcome != Verified || !res.Pinned {
		t.Errorf("pinned agent: %+v", res)
	}
	r = newRequest("GET", "/", "www.example.com", "Signature-Agent", `sig1="`+dir.URL+`"`)
	own.sign(t, r, "sig1", `("@authority" "signature-agent";key="sig1")`+own.params(now, ""))
	if res := a.Check(r); res.Outcome != Verified || res.Agent != dir.URL || res.Pinned {
		t.Errorf("agent verified by its own directory: %+v", res)
	}
}

// TestIdentify: an agent verified with pinned keys takes the
// classification of the origin it signs for, with a Verified verdict; one
// verified with its own directory's keys is identified only (issue 29,
// item 6): a known agent's entry or what its User-Agent names, the
// verdict unchanged, not signed. An invalid signature makes the client an
// impostor, as what it claims (ai when it claims no bot); other outcomes
// change nothing.
func TestIdentify(t *testing.T) {
	c, err := uaclass.New(uaclass.Options{CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	browser := c.Classify("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
	gptbot := c.Classify("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.1; +https://openai.com/gptbot")
	selfbot := c.Classify("SelfBot/1.0 (+https://self.example/bot)")
	if browser.Class != uaclass.Browser || gptbot.Token() != "gptbot" || selfbot.Token() != "selfbot" {
		t.Fatalf("classified %v, %v %q and %v %q", browser.Class, gptbot.Class, gptbot.Token(), selfbot.Class, selfbot.Token())
	}
	chatgpt := c.SignedAgent("https://chatgpt.com", browser)
	for _, tc := range []struct {
		name    string
		res     Result
		ua      uaclass.Result
		class   uaclass.Class
		token   string
		verdict uaclass.Verdict
		signed  bool
	}{
		{"pinned known agent", Result{Outcome: Verified, Agent: "https://chatgpt.com", Pinned: true}, browser, chatgpt.Class, "chatgpt", uaclass.Verified, true},
		{"pinned other agent", Result{Outcome: Verified, Agent: testAgent, Pinned: true}, browser, uaclass.AI, "", uaclass.Verified, true},
		{"pinned other agent, bot UA", Result{Outcome: Verified, Agent: testAgent, Pinned: true}, selfbot, uaclass.AI, "", uaclass.Verified, true},
		{"own directory, known agent", Result{Outcome: Verified, Agent: "https://chatgpt.com"}, browser, chatgpt.Class, "chatgpt", uaclass.NotClaimed, false},
		{"own directory, other agent, browser UA", Result{Outcome: Verified, Agent: testAgent}, browser, uaclass.AI, "", uaclass.NotClaimed, false},
		{"own directory, other agent, bot UA", Result{Outcome: Verified, Agent: testAgent}, selfbot, selfbot.Class, "selfbot", uaclass.NotClaimed, false},
		{"own directory, other agent, GPTBot UA", Result{Outcome: Verified, Agent: testAgent}, gptbot, uaclass.AI, "gptbot", uaclass.NotClaimed, false},
		{"invalid, no agent, browser", Result{Outcome: Invalid}, browser, uaclass.AI, "", uaclass.Impostor, false},
		{"invalid, no agent, gptbot", Result{Outcome: Invalid}, gptbot, uaclass.AI, "gptbot", uaclass.Impostor, false},
		{"unverified", Result{Outcome: Unverified, Agent: testAgent}, browser, uaclass.Browser, "", uaclass.NotClaimed, false},
		{"unsigned", Result{}, gptbot, uaclass.AI, "gptbot", uaclass.NotClaimed, false},
	} {
		ua, v, signed := tc.res.Identify(c, tc.ua, uaclass.NotClaimed)
		if ua.Class != tc.class || ua.Token() != tc.token || v != tc.verdict || signed != tc.signed {
			t.Errorf("%s: %v %q %v %v, want %v %q %v %v", tc.name, ua.Class, ua.Token(), v, signed, tc.class, tc.token, tc.verdict, tc.signed)
		}
	}
}
