package cli

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/robotsguard/robotsguard/uaclass"
)

// TestClaimChecker: classify --verify names the list that holds the
// address, with where it came from and its age (since its creationTime,
// else since it was fetched); outside a ranges crawler's lists, an
// impostor with the lists checked; without a loaded list, unverified; a
// dns crawler outside its lists, dns; a browser, none.
func TestClaimChecker(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	parse := func(doc, source string, read time.Time, cached bool) *uaclass.RangeList {
		l, err := uaclass.ParseRangeList([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		l.Source, l.Read, l.Cached = source, read, cached
		return uaclass.NewRanges(l).Load()
	}
	url := parse(`{"creationTime": "2026-12-01T12:00:00.000000", "prefixes": [{"ipv4Prefix": "20.171.206.0/24"}]}`, "https://openai.com/gptbot.json", now.Add(-time.Hour), false)
	stored := parse(`{"prefixes": [{"ipv4Prefix": "20.171.206.0/24"}]}`, "https://openai.com/chatgpt-user.json", now.Add(-3*time.Hour), true)
	file := parse("66.249.64.0/27\n", "/etc/caddy/googlebot.txt", now.Add(-2*time.Hour), false)
	c := &claimChecker{ip: netip.MustParseAddr("20.171.206.5"), now: now, lists: map[string][]*uaclass.RangeList{
		"gptbot": {url}, "chatgpt-user": {nil, stored}, "googlebot": {file}, "oai-searchbot": {nil},
	}}
	cls, err := uaclass.New(uaclass.Options{CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	for ua, want := range map[string]string{
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.3; +https://openai.com/gptbot":           `{"address":"20.171.206.5","verdict":"verified","list":{"source":"https://openai.com/gptbot.json","from":"url","format":"prefixes","prefixes":1,"created":"2026-12-01T12:00:00Z","fetched":"2026-12-02T11:00:00Z","age":"24h0m0s"}}`,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot":        `{"address":"20.171.206.5","verdict":"verified","list":{"source":"https://openai.com/chatgpt-user.json","from":"storage","format":"prefixes","prefixes":1,"fetched":"2026-12-02T09:00:00Z","age":"3h0m0s"}}`,
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)":                                         `{"address":"20.171.206.5","verdict":"dns","lists":[{"source":"/etc/caddy/googlebot.txt","from":"file","format":"text","prefixes":1,"fetched":"2026-12-02T10:00:00Z","age":"2h0m0s"}],"note":"not in the lists; the server checks it by reverse DNS"}`,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.3; +https://openai.com/searchbot": `{"address":"20.171.206.5","verdict":"unverified","note":"no list of the crawler's ranges is loaded: the server refuses the claim as unverified"}`,
		"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0":                                           `{"address":"20.171.206.5","verdict":"none"}`,
	} {
		got, _ := json.Marshal(c.check(cls.Classify(ua)))
		if string(got) != want {
			t.Errorf("%.40s:\n got %s\nwant %s", ua, got, want)
		}
	}
	c.ip = netip.MustParseAddr("10.0.0.1")
	got, _ := json.Marshal(c.check(cls.Classify("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.3; +https://openai.com/gptbot")))
	if !strings.HasPrefix(string(got), `{"address":"10.0.0.1","verdict":"impostor","lists":[{"source":"https://openai.com/gptbot.json"`) {
		t.Errorf("outside: %s", got)
	}
}
