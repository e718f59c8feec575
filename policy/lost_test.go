package policy

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// bigRobots is a 20 MB robots.txt (issue 26, mistake 7): a group for
// BigBot that the 500 KiB cut falls in, then the whole "*" group, then
// two more groups.
func bigRobots() []byte {
	var b bytes.Buffer
	b.WriteString("User-agent: BigBot\n")
	for i := 0; b.Len() < MaxSize+1000; i++ {
		fmt.Fprintf(&b, "Disallow: /big/%d\n", i)
	}
	b.WriteString("\nUser-agent: *\n")
	for i := 0; b.Len() < 20<<20; i++ {
		fmt.Fprintf(&b, "Disallow: /generated/%d\n", i)
	}
	b.WriteString("User-agent: Googlebot\nUser-agent: Bingbot\nAllow: /\n# the end\nDisallow: /x") // no line end
	return b.Bytes()
}

// TestLostSameFromHead: what the cut loses is counted the same from the
// whole file in memory (Parse, as caddy robots lint reads it) and from the
// first MaxSize+1 bytes with the rest streamed in small pieces
// (ParseHeadRest, as a handler reads it); the count is the lines' own:
// every Disallow after the cut, the "*" ones, and the groups named.
func TestLostSameFromHead(t *testing.T) {
	data := bigRobots()
	whole := Parse(data)
	head, err := ParseHeadRest(data[:MaxSize+1], int64(len(data)), iotestHalf(bytes.NewReader(data[MaxSize+1:])))
	if err != nil {
		t.Fatal(err)
	}
	lw, lh := whole.Lost(), head.Lost()
	// Count the lost rules by hand: every rule line after the cut.
	cut := bytes.LastIndexByte(data[:MaxSize], '\n') + 1
	rules := bytes.Count(data[cut:], []byte("\nDisallow:")) + bytes.Count(data[cut:], []byte("\nAllow:"))
	if bytes.HasPrefix(data[cut:], []byte("Disallow:")) {
		rules++
	}
	star := bytes.Count(data[cut:], []byte("\nDisallow: /generated/"))
	if lw.Rules != rules || lw.StarRules != star || lw.Bytes != int64(len(data)-cut) || lw.Cut == nil || lw.Cut.Agents[0].Name != "BigBot" {
		t.Errorf("Parse: lost %d rules (%d for *) of %d bytes, cut %v; want %d (%d), %d bytes, in BigBot", lw.Rules, lw.StarRules, lw.Bytes, lw.Cut, rules, star, len(data)-cut)
	}
	if got, want := fmt.Sprint(lh.Rules, lh.StarRules, lh.Bytes, lh.Agents, lh.MoreAgents), fmt.Sprint(lw.Rules, lw.StarRules, lw.Bytes, lw.Agents, lw.MoreAgents); got != want {
		t.Errorf("ParseHeadRest lost %s, Parse %s", got, want)
	}
	if got, want := fmt.Sprint(lw.Agents), "[* Googlebot Bingbot]"; got != want {
		t.Errorf("lost groups %s, want %s", got, want)
	}
	msg := func(r *Robots) string {
		for _, d := range r.Lint() {
			if d.Code == CodeTruncated {
				return d.Message
			}
		}
		return ""
	}
	want := fmt.Sprintf(`file is larger than 512000 bytes: the last %d bytes are ignored, with %d rules: the end of the group for "BigBot" (line 1) and the groups for "*", "Googlebot", "Bingbot" are lost; every rule for "*" is lost (%d)`, len(data)-cut, rules, star)
	if msg(whole) != want || msg(head) != want {
		t.Errorf("truncated finding:\n Parse         %s\n ParseHeadRest %s\nwant           %s", msg(whole), msg(head), want)
	}
	// Without the rest (a body fetched up to MaxSize+1 bytes), the count
	// says how far it goes.
	if m := msg(ParseHead(data[:MaxSize+200], int64(len(data)))); !strings.Contains(m, fmt.Sprintf("in the first %d of them (the rest was not read)", MaxSize+200-cut)) {
		t.Errorf("head only: %s", m)
	}
	if all, s := head.RuleCount(); s != 0 || all == 0 {
		t.Errorf("rules kept %d, for * %d; want some, none for *", all, s)
	}
	// A cut in the "*" group leaves some of its rules: not every one lost.
	small := Parse(append([]byte("User-agent: *\n"), data[len("User-agent: BigBot\n"):]...))
	if m := msg(small); strings.Contains(m, "every rule") || !strings.Contains(m, `the end of the group for "*" (line 1)`) {
		t.Errorf("cut in the * group: %s", m)
	}
	// Within MaxSize nothing is lost.
	if l := Parse([]byte("User-agent: *\nDisallow: /\n")).Lost(); l.Rules != 0 || l.Bytes != 0 || l.Cut != nil {
		t.Errorf("small file lost %+v", l)
	}
}

// TestLostAgentsBounded: a file whose ignored end names more agents than a
// Lost keeps counts the others.
func TestLostAgentsBounded(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("User-agent: *\n")
	for b.Len() < MaxSize+10 {
		b.WriteString("Disallow: /x\n")
	}
	for i := range maxLostAgents + 5 {
		fmt.Fprintf(&b, "User-agent: bot%d\nDisallow: /\n", i)
	}
	l := Parse(b.Bytes()).Lost()
	if len(l.Agents) != maxLostAgents || l.MoreAgents != 5 {
		t.Errorf("agents kept %d, more %d", len(l.Agents), l.MoreAgents)
	}
}

// iotestHalf reads in small pieces, so that lines span reads.
func iotestHalf(r io.Reader) io.Reader { return &smallReader{r} }

type smallReader struct{ r io.Reader }

func (s *smallReader) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), 7)]) }

// BenchmarkParseHeadRest20MB: a handler's reading of the 20 MB file: the
// head parsed, the rest's 20 MB streamed through the counter.
func BenchmarkParseHeadRest20MB(b *testing.B) {
	data := bigRobots()
	b.SetBytes(int64(len(data) - MaxSize - 1))
	for b.Loop() {
		if _, err := ParseHeadRest(data[:MaxSize+1], int64(len(data)), bytes.NewReader(data[MaxSize+1:])); err != nil {
			b.Fatal(err)
		}
	}
}
