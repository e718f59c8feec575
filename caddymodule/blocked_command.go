package caddymodule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/report"
	"github.com/robotsguard/robotsguard/review"
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
	resp, err := adminAPIRequest(addr, method, uri, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("reading the admin API's answer: %v", err)
	}
	return nil
}

// adminAPIRequest is caddycmd.AdminAPIRequest with errors an operator can
// act on: a refused connection asks whether Caddy runs with its admin API
// there, and the admin API's JSON error is shown as its message.
func adminAPIRequest(addr, method, uri string, body io.Reader) (*http.Response, error) {
	resp, err := caddycmd.AdminAPIRequest(addr, method, uri, nil, body)
	if err == nil {
		return resp, nil
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) || strings.Contains(err.Error(), "connection refused") {
		return nil, fmt.Errorf("%v: is Caddy running with its admin API at %s? (--address or --config name another)", err, addr)
	}
	if _, js, ok := strings.Cut(err.Error(), ": {"); ok {
		var apiErr struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte("{"+js), &apiErr) == nil && apiErr.Error != "" {
			return nil, fmt.Errorf("admin API at %s: %s", addr, apiErr.Error)
		}
	}
	return nil, err
}

// adminExitCodes is the exit-status paragraph of the admin commands.
const adminExitCodes = `
Exit status: 0 on success; 1 when the admin API cannot be reached (the
message asks whether Caddy runs with its admin API at the address) or
refuses the request (an unknown zone, a bad IP).`

func blockedCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "blocked [--address ADDR | --config FILE] [--zone NAME] [--json]",
		Short: "Lists the clients a running Caddy's robots_guard holds blocked",
		Long: `
Lists the blocks in force in a running Caddy, from its admin API
(GET /robots_guard/blocked on --address, the admin address in --config,
else localhost:2019).

Output: a table with one row per block: ZONE, IP, TOKEN ("(whole IP)" for
traps, bad agents and impostors), BLOCKED FOR (time left), OFFENSES (blocks
so far; each doubles the cooldown) and READ ROBOTS.TXT; then "N blocked".
--json writes {"zones": {"NAME": [{"ip", "token", "until", "offenses",
"read_robots"}]}}.
` + adminExitCodes,
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
	total := 0
	for _, bs := range zones {
		total += len(bs)
	}
	if total == 0 {
		fmt.Fprintln(w, "0 blocked")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ZONE\tIP\tTOKEN\tBLOCKED FOR\tOFFENSES\tREAD ROBOTS.TXT")
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
		Long: `
Lifts every block of IP, or of every address in CIDR (the address's own
block and each of its tokens'), in every zone, or in --zone, and forgets
their strikes and offenses, through the admin API
(POST /robots_guard/unblock {"ip": "...", "zone": "..."}). Clients are
tracked by prefix (ipv4_prefix, ipv6_prefix), so an IPv6 address lifts
the block of its /64.

Output: "IP: N blocks lifted; its strikes and offenses are forgotten".
` + adminExitCodes,
		Example: `  caddy robots unblock 203.0.113.7
  caddy robots unblock 2001:db8::7 --zone shop --address localhost:2019
  caddy robots unblock 198.51.100.0/24`,
		Args: cobra.ExactArgs(1),
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
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %s lifted; its strikes and offenses are forgotten\n", ans.IP, report.Plural(ans.Lifted, "block"))
		return nil
	})
	return c
}

func reviewCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "review [--listen ADDR] [--open] [--address ADDR | --config FILE]",
		Short: "Opens the review page of a running Caddy's robots_guard in a browser",
		Long: `
Serves the review page of a running Caddy on a loopback address and prints
its URL: per bot its class, verification, allowed, refused, throttled and
blocked requests, whether it read robots.txt and ignored it, the rules it
broke (each linked to its line in the robots.txt version it was judged
against) and its top paths; a per-minute chart of the last 24 hours;
filters by zone and class; the blocked clients, each with an Unblock
button.

The page and its data come from the admin API's /robots_guard/ endpoints.
A browser cannot open those itself (Caddy's admin API refuses a
navigation that carries no Origin), so this command passes the page's
requests on; it answers only loopback Host names, and an unblock only from
its own page, and the admin API still checks the request's origin.
The same JSON is at GET /robots_guard/stats for scripts.

Output: the page's URL on standard output; it runs until interrupted.
` + adminExitCodes,
		Example: `  caddy robots review
  caddy robots review --listen 127.0.0.1:2020 --open
  caddy robots review --config /etc/caddy/Caddyfile`,
		Args: cobra.NoArgs,
	}
	adminFlags(c)
	c.Flags().String("listen", "127.0.0.1:0", "loopback address to serve the page on")
	c.Flags().Bool("open", false, "open the page in the default browser")
	c.RunE = runE(func(cmd *cobra.Command, _ []string) error {
		listen, _ := cmd.Flags().GetString("listen")
		open, _ := cmd.Flags().GetBool("open")
		addr, _ := cmd.Flags().GetString("address")
		config, _ := cmd.Flags().GetString("config")
		adapter, _ := cmd.Flags().GetString("adapter")
		addr, err := caddycmd.DetermineAdminAPIAddress(addr, nil, config, adapter)
		if err != nil {
			return fmt.Errorf("finding the admin API: %v", err)
		}
		// Check now that Caddy answers, so a mistake shows at once.
		resp, err := adminAPIRequest(addr, http.MethodGet, "/robots_guard/stats", nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		host, _, err := net.SplitHostPort(listen)
		if err != nil {
			return fmt.Errorf("--listen: %v", err)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return fmt.Errorf("--listen: %s is not a loopback address: the page can lift blocks", host)
		}
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return err
		}
		url := "http://" + ln.Addr().String() + "/"
		fmt.Fprintln(cmd.OutOrStdout(), url)
		if open {
			openBrowser(url)
		}
		v := &review.Viewer{Admin: func(method, uri string, body io.Reader) (*http.Response, error) {
			return adminAPIRequest(addr, method, uri, body)
		}}
		srv := &http.Server{Handler: v, ReadHeaderTimeout: 10 * time.Second}
		return srv.Serve(ln)
	})
	return c
}

// openBrowser asks the desktop to open url; failures are ignored (the URL
// is printed).
func openBrowser(url string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	_ = cmd.Start()
}
