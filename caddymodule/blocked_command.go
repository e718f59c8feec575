package caddymodule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"text/tabwriter"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/enforce"
)

// adminFlags adds the flags that locate a running Caddy's admin API, as
// Caddy's own reload and stop commands name them.
func adminFlags(c *cobra.Command) {
	c.Flags().String("address", "", "admin API address of the running Caddy (default: from --config, else localhost:2019)")
	c.Flags().StringP("config", "c", "", "config file to read the admin address from")
	c.Flags().StringP("adapter", "a", "", "adapter of the config file")
	c.Flags().String("zone", "", "only this zone (default: every zone)")
}

// adminRequest sends one request to the admin API the flags name and
// decodes its JSON answer into out.
func adminRequest(cmd *cobra.Command, method, uri string, body, out any) error {
	addr, _ := cmd.Flags().GetString("address")
	config, _ := cmd.Flags().GetString("config")
	adapter, _ := cmd.Flags().GetString("adapter")
	addr, err := caddycmd.DetermineAdminAPIAddress(addr, nil, config, adapter)
	if err != nil {
		return fmt.Errorf("finding the admin API: %v", err)
	}
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	resp, err := caddycmd.AdminAPIRequest(addr, method, uri, nil, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("reading the admin API's answer: %v", err)
	}
	return nil
}

func blockedCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "blocked [--address ADDR | --config FILE] [--zone NAME] [--json]",
		Short: "Lists the clients a running Caddy's robots_guard holds blocked",
		Args:  cobra.NoArgs,
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
		if err := adminRequest(cmd, "GET", uri, nil, &ans); err != nil {
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
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ZONE\tIP\tTOKEN\tBLOCKED FOR\tOFFENCES\tREAD ROBOTS.TXT")
	n, dry := 0, 0
	for _, zone := range slices.Sorted(maps.Keys(zones)) {
		for _, b := range zones[zone] {
			token := b.Token
			if token == "" {
				token = "(whole IP)"
			}
			until := b.Until.Sub(now).Round(time.Second).String()
			if b.DryRun {
				until += " (dry run: not enforced)"
				dry++
			} else {
				n++
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%v\n", zone, b.IP, token, until, b.Offenses, b.ReadRobots)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "%d blocked", n)
	if dry > 0 {
		fmt.Fprintf(w, ", %d more in dry run (not enforced)", dry)
	}
	fmt.Fprintln(w)
}

func unblockCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "unblock IP|CIDR [--address ADDR | --config FILE] [--zone NAME]",
		Short: "Lifts every block of a client IP, or of an IP range, in a running Caddy's robots_guard",
		Args:  cobra.ExactArgs(1),
	}
	adminFlags(c)
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		p, err := parseUnblock(args[0])
		if err != nil {
			return fmt.Errorf("IP: %v", err)
		}
		zone, _ := cmd.Flags().GetString("zone")
		var ans struct {
			IP     string `json:"ip"`
			Lifted int    `json:"lifted"`
		}
		if err := adminRequest(cmd, "POST", "/robots_guard/unblock", unblockRequest{IP: p.String(), Zone: zone}, &ans); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %d block(s) lifted; its strikes and offences are forgotten\n", ans.IP, ans.Lifted)
		return nil
	})
	return c
}
