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
	c.Flags().String("address", "", "admin API address of the running Caddy (default: from --config, else localhost:2019)")
	c.Flags().StringP("config", "c", "", "config file to read the admin address from")
	c.Flags().StringP("adapter", "a", "", "adapter of the config file")
	c.Flags().String("zone", "", "only this zone (default: every zone)")
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

// adminExitCodes is the exit-status paragraph of the admin commands.
const adminExitCodes = `
Exit status: 0 on success; 1 when the admin API cannot be reached (the
message asks whether Caddy runs with its admin API at the address) or
refuses the request (an unknown zone, a bad IP).`
