package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestClassifyCommand: one JSON object per User-Agent, from arguments or
// standard input.
func TestClassifyCommand(t *testing.T) {
	var out bytes.Buffer
	if err := classify(nil, nil, strings.NewReader("curl/8.5.0\n\nMozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0\n"), &out, nil, nil); err != nil {
		t.Fatal(err)
	}
	want := `{"ua":"curl/8.5.0","class":"script","tokens":["curl"],"bot":"curl"}
{"ua":"","class":"unknown","tokens":[]}
{"ua":"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0","class":"browser","tokens":[]}
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	if err := classify(nil, nil, nil, &out, []string{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"}, nil); err != nil {
		t.Fatal(err)
	}
	if want := `{"ua":"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot","class":"ai","tokens":["chatgpt-user"],"bot":"ChatGPT-User","operator":"OpenAI","verify":"ranges","user_triggered":true,"purposes":["user-triggered"],"purpose_source":"https://developers.openai.com/api/docs/bots"}` + "\n"; out.String() != want {
		t.Errorf("got %s", out.String())
	}
}
