package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/report"
)

func blockedCommand(env *Caddy) *cobra.Command {
	c := &cobra.Command{
		Use:   "blocked [--address ADDR | --config FILE] [--zone NAME] [--json]",
		Short: "Lists the clients a running Caddy's robots_guard holds blocked",
		Long: `
Lists the blocks in force in a running Caddy, from its admin API
(GET /robots_guard/blocked on --address, the admin address in --config,
else localhost:2019).

Output: a table with one row per block: SITE (the site whose decision made
it, with its zone when the zone is shared and so named otherwise), IP, TOKEN
("(whole IP)" for traps, bad agents and impostors; "(crawler: token
examplebot)" for a crawler's block: every address of the network in IP, or
"(every address)" of a verified crawler), BLOCKED FOR (time left), REASON (what
made the block: trap, disallowed (strikes for disallowed paths), rate
(strikes for ignoring Retry-After), class (block_class), invalid,
bad_agent, impostor; unknown for a block stored before blocks carried
their reason), OFFENSES (blocks so far; each doubles the cooldown) and
READ ROBOTS.TXT; then "N blocked". --json writes {"zones": {"NAME":
[{"site", "ip", "token", "until", "offenses", "reason", "read_robots",
"crawler"}]}}.
` + blockedExitCodes,
		Example: `  caddy robots blocked
  caddy robots blocked --zone shop --json
  caddy robots blocked --config /etc/caddy/Caddyfile`,
		Args: cobra.NoArgs,
	}
	adminFlags(c)
	c.Flags().Bool("json", false, "write the list as JSON")
	c.RunE = runE(func(cmd *cobra.Command, _ []string) error {
		zone, _ := cmd.Flags().GetString("zone")
		asJSON, _ := cmd.Flags().GetBool("json")
		uri := "/robots_guard/blocked"
		if zone != "" {
			uri += "?zone=" + url.QueryEscape(zone)
		}
		var ans struct {
			Zones map[string][]enforce.BlockedClient `json:"zones"`
		}
		if err := adminRequest(env, cmd, "GET", uri, nil, &ans); err != nil {
			return err
		}
		if asJSON {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(ans)
		}
		writeBlocked(cmd.OutOrStdout(), ans.Zones, time.Now())
		return nil
	})
	return c
}

// writeBlocked prints the blocks of each zone as a table.
func writeBlocked(w io.Writer, zones map[string][]enforce.BlockedClient, now time.Time) {
	total := 0
	for _, bs := range zones {
		total += len(bs)
	}
	if total == 0 {
		fmt.Fprintln(w, "0 blocked")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SITE\tIP\tTOKEN\tBLOCKED FOR\tREASON\tOFFENSES\tREAD ROBOTS.TXT")
	n, dry := 0, 0
	for _, zone := range slices.Sorted(maps.Keys(zones)) {
		for _, b := range zones[zone] {
			token := b.Token
			switch {
			case b.Crawler != "":
				token = "(crawler: " + b.Crawler + ")" // every address of IP, its network
			case token == "":
				token = "(whole IP)"
			}
			until := b.Until.Sub(now).Round(time.Second).String()
			if b.DryRun {
				until += " (dry run: not enforced)"
				dry++
			} else {
				n++
			}
			// The site whose decision made the block; its zone, the
			// state it is held in, where that is another name (shared).
			site := cmp.Or(b.Site, zone)
			if site != zone {
				site += " (zone " + zone + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%v\n", site, b.IP, token, until, b.Reason, b.Offenses, b.ReadRobots)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "%d blocked", n)
	if dry > 0 {
		fmt.Fprintf(w, ", %d more in dry run (not enforced)", dry)
	}
	fmt.Fprintln(w)
}

// unblockRequest is the body of the admin API's POST /robots_guard/unblock.
type unblockRequest struct {
	IP   string `json:"ip"`
	Zone string `json:"zone,omitempty"`
}

func unblockCommand(env *Caddy) *cobra.Command {
	c := &cobra.Command{
		Use:   "unblock IP|CIDR [--address ADDR | --config FILE] [--zone NAME]",
		Short: "Lifts every block of a client IP, or of an IP range, in a running Caddy's robots_guard",
		Long: `
Lifts every block of IP, or of every address in CIDR (the address's own
block and each of its tokens', and those of the crawlers of its network,
or of a verified crawler seen there), in every zone, or in --zone, and
forgets their strikes and offenses, through the admin API
(POST /robots_guard/unblock {"ip": "...", "zone": "..."}). Clients are
tracked by prefix (ipv4_prefix, ipv6_prefix), so an IPv6 address lifts
the block of its /64.

Output: "IP: N blocks lifted; its strikes and offenses are forgotten".
` + unblockExitCodes,
		Example: `  caddy robots unblock 203.0.113.7
  caddy robots unblock 2001:db8::7 --zone shop --address localhost:2019
  caddy robots unblock 198.51.100.0/24`,
		Args: cobra.ExactArgs(1),
	}
	adminFlags(c)
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		p, err := enforce.ParseUnblock(args[0])
		if err != nil {
			return fmt.Errorf("IP: %v", err)
		}
		zone, _ := cmd.Flags().GetString("zone")
		var ans struct {
			IP     string `json:"ip"`
			Lifted int    `json:"lifted"`
		}
		if err := adminRequest(env, cmd, "POST", "/robots_guard/unblock", unblockRequest{IP: p.String(), Zone: zone}, &ans); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %s lifted; its strikes and offenses are forgotten\n", ans.IP, report.Plural(ans.Lifted, "block"))
		return nil
	})
	return c
}
