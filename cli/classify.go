package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/uaclass"
)

func classifyCommand(env *Caddy) *cobra.Command {
	c := &cobra.Command{
		Use:   "classify [--config FILE [--site NAME]] [--verify ADDR] [UA...]",
		Short: "Classifies User-Agent strings",
		Long: `
Classifies User-Agents as the robots_guard handler does, from the
arguments or, one per line, from standard input; with --config, with the
site's bot entries, and saying whether its block_class shuts the class out.

Output: one JSON object per User-Agent: ua, class (browser, search, ai,
seo, social, monitor, script, bad, bot, unknown), tokens (the product
tokens robots.txt groups are matched against), and where known bot,
operator, verify (how a claim is verified: dns, ranges), user_triggered,
blocked_class.

With --verify ADDR, each line also says what the site's lists of IP
ranges make of the claim from ADDR: verification.verdict (verified,
impostor, unverified, dns: left to reverse DNS, which classify does not
do; none: nothing to verify), the list that holds ADDR (list: source,
from file, url or storage, format, prefixes, created, fetched, age), or
else the lists checked. The site's files are read and its URLs fetched
once, the copy in Caddy's default storage standing in for a URL that
fails (said on standard error).

Exit status: 0 on success; 1 when a flag or the config is wrong.`,
		Example: `  caddy robots classify 'curl/8.5.0' 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)'
  cut -d'"' -f6 access.log | sort -u | caddy robots classify --config /etc/caddy/Caddyfile`,
	}
	siteFlags(c)
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		site, err := siteOf(env, cmd)
		if err != nil {
			return err
		}
		var v *claimChecker
		if addr, _ := cmd.Flags().GetString("verify"); addr != "" {
			if v, err = newClaimChecker(cmd.Context(), site, addr, cmd.ErrOrStderr()); err != nil {
				return err
			}
		}
		return classify(site.Bots(), site.BlockClasses(), cmd.InOrStdin(), cmd.OutOrStdout(), args, v)
	})
	c.Flags().String("verify", "", "say what the site's IP range lists make of each claim from this address")
	return c
}

// classifyResult is one line of "caddy robots classify".
type classifyResult struct {
	UA            string   `json:"ua"`
	Class         string   `json:"class"`
	Tokens        []string `json:"tokens"`
	Bot           string   `json:"bot,omitempty"`
	Operator      string   `json:"operator,omitempty"`
	Verify        string   `json:"verify,omitempty"`
	UserTriggered bool     `json:"user_triggered,omitempty"`
	// Purposes are what the bot does with what it fetches (train-ai,
	// search, ai-input, user-triggered), with their source.
	Purposes      []string `json:"purposes,omitempty"`
	PurposeSource string   `json:"purpose_source,omitempty"`
	// BlockedClass is set when the site's block_class shuts the class, or
	// the client's part of class ai, out.
	BlockedClass bool `json:"blocked_class,omitempty"`
	// Verification is what the site's lists make of the claim from the
	// --verify address.
	Verification *claimCheck `json:"verification,omitempty"`
}

// classify classifies User-Agents with the site's bot entries and says
// which of them the site's block classes shut out.
func classify(bots []uaclass.Bot, blockClasses []string, in io.Reader, out io.Writer, args []string, v *claimChecker) error {
	c, err := uaclass.New(uaclass.Options{Extra: bots, CacheBytes: -1})
	if err != nil {
		return fmt.Errorf("bots: %v", err)
	}
	blocked := map[uaclass.Class]bool{}
	var parts uaclass.AIParts // block_class ai-training, ai-search, ai-user
	for _, name := range blockClasses {
		if p, err := uaclass.ParseAIPart(name); err == nil {
			parts |= p
		} else if bc, err := uaclass.ParseClass(name); err == nil {
			blocked[bc] = true
		}
	}
	enc := json.NewEncoder(out)
	one := func(ua string) error {
		r := c.Classify(ua)
		res := classifyResult{UA: ua, Class: r.Class.String(), Tokens: r.Tokens, UserTriggered: r.UserTriggered(), Purposes: r.Purposes().List(), BlockedClass: blocked[r.Class] || r.AIParts()&parts != 0}
		if r.Bot != nil {
			res.PurposeSource = r.Bot.PurposeSource
		}
		if res.Tokens == nil {
			res.Tokens = []string{}
		}
		if b := r.Bot; b != nil {
			res.Bot, res.Operator, res.Verify = b.Name, b.Operator, b.Verify
		}
		if v != nil {
			res.Verification = v.check(r)
		}
		return enc.Encode(res)
	}
	if len(args) > 0 {
		for _, ua := range args {
			if err := one(ua); err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if err := one(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}
