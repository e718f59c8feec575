package cli

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/review"
)

func reviewCommand(env *Caddy) *cobra.Command {
	c := &cobra.Command{
		Use:   "review [--listen ADDR] [--open] [--address ADDR | --config FILE]",
		Short: "Opens the review page of a running Caddy's robots_guard in a browser",
		Long: `
Serves the review page of a running Caddy on a loopback address and prints
its URL: per bot its class, verification (impostors claiming a bot in a
row of their own), allowed, refused, throttled and blocked requests, its
own robots.txt reads and, when it broke a rule after its address read
robots.txt ("read robots.txt, ignored it"), when the address read it; the
rules it broke (each linked to its line in the latest robots.txt version
it was judged against, the same rule under several versions listed once)
and its top paths; a per-minute chart over the last hour, 6 or 24 hours,
fitted to the span of the data it has; filters by zone and class; the
blocked clients, each with why it is blocked and an Unblock button.

The page and its data come from the admin API's /robots_guard/ endpoints.
A browser cannot open those itself (Caddy's admin API refuses a
navigation that carries no Origin), so this command passes the page's
requests on; it answers only loopback Host names, and an unblock only from
its own page, and the admin API still checks the request's origin.
The same JSON is at GET /robots_guard/stats for scripts.

Output: the page's URL on standard output; it runs until interrupted.
` + reviewExitCodes,
		Example: `  caddy robots review
  caddy robots review --listen 127.0.0.1:2020 --open
  caddy robots review --config /etc/caddy/Caddyfile`,
		Args: cobra.NoArgs,
	}
	adminAddressFlags(c)
	c.Flags().String("listen", "127.0.0.1:0", "loopback address to serve the page on")
	c.Flags().Bool("open", false, "open the page in the default browser")
	c.RunE = runE(func(cmd *cobra.Command, _ []string) error {
		listen, _ := cmd.Flags().GetString("listen")
		open, _ := cmd.Flags().GetBool("open")
		addr, _ := cmd.Flags().GetString("address")
		config, _ := cmd.Flags().GetString("config")
		adapter, _ := cmd.Flags().GetString("adapter")
		addr, err := env.AdminAddress(addr, nil, config, adapter)
		if err != nil {
			return fmt.Errorf("finding the admin API: %v", err)
		}
		// Check now that Caddy answers, so a mistake shows at once.
		resp, err := adminAPIRequest(env, addr, http.MethodGet, "/robots_guard/stats", nil)
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
			return adminAPIRequest(env, addr, method, uri, body)
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
