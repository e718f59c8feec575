package source

import (
	"fmt"
	"slices"
	"strings"

	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/uaclass"
)

// Added returns what a handler's served robots.txt adds to the site's
// file owner, with c its classifier and blocked its block_class entries, in groups of their own after it (policy.Serve): a
// "Disallow: /" group for the tokens of each blocked class or part of
// class ai (uaclass.Classifier.Shutout, whose Note the group's comment
// says), one group with the trap paths for "*" and every agent the owner
// names (RFC 9309 combines the groups that name one agent; no comment
// names it a trap), and the configured sitemaps the owner does not list.
func Added(owner *policy.Robots, c *uaclass.Classifier, blocked, traps, sitemaps []string) policy.Added {
	var a policy.Added
	for _, name := range blocked {
		if s := c.Shutout(name); len(s.Tokens) > 0 {
			a.Groups = append(a.Groups, policy.AddedGroup{Note: "block_class " + s.Name + ": " + s.Note, Agents: s.Tokens, Rules: []policy.Rule{{Pattern: "/"}}})
		}
	}
	if len(traps) > 0 {
		g := policy.AddedGroup{Agents: []string{"*"}}
		for _, t := range owner.Agents() {
			if t != "*" {
				g.Agents = append(g.Agents, t)
			}
		}
		for _, t := range traps {
			g.Rules = append(g.Rules, policy.Rule{Pattern: t})
		}
		a.Groups = append(a.Groups, g)
	}
	listed := owner.Values(policy.KeySitemap)
	for _, s := range sitemaps {
		if !slices.Contains(listed, s) {
			a.Sitemaps = append(a.Sitemaps, s)
		}
	}
	return a
}

// Contradicted refuses a robots file whose lines allow what a trap or a
// block_class entry adds (policy.Contradictions): the served file would
// allow it, so it would be neither trapped nor blocked there.
func Contradicted(file string, cs []policy.Contradiction) error {
	msgs := make([]string, len(cs))
	for i, c := range cs {
		msgs[i] = c.String()
	}
	return fmt.Errorf("robots_guard: robots %s: %s: a crawler that obeys the served robots.txt may fetch that, so robots_guard would neither trap nor block it there; remove or narrow the site's line, or change trap or block_class (see docs/served-robots.md)", file, strings.Join(msgs, "; "))
}
