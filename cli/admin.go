package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// adminFlags adds the flags that locate a running Caddy's admin API, as
// Caddy's own reload and stop commands name them.
func adminFlags(c *cobra.Command) {
	adminAddressFlags(c)
	c.Flags().String("zone", "", "only this zone (default: every zone)")
}

// adminAddressFlags adds the flags that locate the admin API, without
// --zone (the review page picks zones itself).
func adminAddressFlags(c *cobra.Command) {
	c.Flags().String("address", "", "admin API address of the running Caddy (default: from --config, else localhost:2019)")
	c.Flags().StringP("config", "c", "", "config file to read the admin address from")
	c.Flags().StringP("adapter", "a", "", "adapter of the config file")
}

// adminRequest sends one request to the admin API the flags name and
// decodes its JSON answer into out.
func adminRequest(env *Caddy, cmd *cobra.Command, method, uri string, body, out any) error {
	addr, _ := cmd.Flags().GetString("address")
	config, _ := cmd.Flags().GetString("config")
	adapter, _ := cmd.Flags().GetString("adapter")
	addr, err := env.AdminAddress(addr, nil, config, adapter)
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
	resp, err := adminAPIRequest(env, addr, method, uri, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("reading the admin API's answer: %v", err)
	}
	return nil
}

// adminAPIRequest is [Caddy.AdminRequest] with errors an operator can act
// on: a refused connection asks whether Caddy runs with its admin API
// there, and the admin API's JSON error is shown as its message.
func adminAPIRequest(env *Caddy, addr, method, uri string, body io.Reader) (*http.Response, error) {
	resp, err := env.AdminRequest(addr, method, uri, nil, body)
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

// adminUnreachable is the exit cause the admin commands share.
const adminUnreachable = `the admin API cannot be reached (the message asks
whether Caddy runs with its admin API at the address)`

// blockedExitCodes, unblockExitCodes and reviewExitCodes are the
// exit-status paragraphs of the admin commands, each with the causes of
// its own command only.
const (
	blockedExitCodes = `
Exit status: 0 when the list was read, also when it is empty (no block, or
no zone named --zone); 1 when ` + adminUnreachable + `.`
	unblockExitCodes = `
Exit status: 0 on success, also when IP had no block; 1 when IP is not
an address or a CIDR range, or when ` + adminUnreachable + ` or refuses
the request (an unknown --zone).`
	reviewExitCodes = `
Exit status: none while it serves the page: it runs until interrupted
(Ctrl-C ends it by the signal, 130 in a shell); 1 at once when
` + adminUnreachable + ` or answers /robots_guard/stats with an error,
or when --listen is not a loopback address or cannot be listened on.`
)
