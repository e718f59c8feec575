package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsguard/robotsguard/cli"
	"github.com/robotsguard/robotsguard/enforce"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/source"
	"github.com/robotsguard/robotsguard/uaclass"
)

func init() {
	env := &cli.Caddy{
		Adapt:        adaptConfig,
		Site:         cliSite,
		AdminAddress: caddycmd.DetermineAdminAPIAddress,
		AdminRequest: caddycmd.AdminAPIRequest,
		Load:         func(cfg []byte) error { return caddy.Load(cfg, true) },
		Stop:         caddy.Stop,
	}
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "robots",
		Usage: cli.Usage,
		Short: cli.Short,
		Long:  cli.Long,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.AddCommand(cli.Commands(env)...)
		},
	})
}

// adaptConfig adapts a config file to JSON with one of Caddy's config
// adapters, for the commands that read a site's settings.
func adaptConfig(adapter, file string, body []byte) ([]byte, []string, error) {
	a := caddyconfig.GetAdapter(adapter)
	if a == nil {
		return nil, nil, cli.ErrUnknownAdapter
	}
	out, warnings, err := a.Adapt(body, map[string]any{"filename": file})
	if err != nil {
		return nil, nil, err
	}
	ws := make([]string, len(warnings))
	for i, w := range warnings {
		ws[i] = w.String()
	}
	return out, ws, nil
}

// siteHandler is a robots_guard handler read from a config, as the
// offline commands use it ([cli.Site]): never provisioned, it lends them
// its reading of robots.txt and its decision.
type siteHandler struct{ h *Handler }

// cliSite returns the handler that raw configures, or the defaults.
func cliSite(raw json.RawMessage) (cli.Site, error) {
	h := &Handler{}
	if raw != nil {
		if err := json.Unmarshal(raw, h); err != nil {
			return nil, err
		}
	}
	return siteHandler{h}, nil
}

func (s siteHandler) Robots(ctx context.Context) ([]byte, error) {
	data, _, err := loadRobots(ctx, s.h)
	return data, err
}

func (s siteHandler) Bots() []uaclass.Bot { return s.h.Bots }
func (s siteHandler) OwnRobots() bool     { return s.h.Robots == "" }

func (s siteHandler) Ranges(ctx context.Context) (map[string][]*uaclass.RangeList, []string, error) {
	_, src, err := verifierOptions(s.h.Verify, s.h.Bots)
	if err != nil {
		return nil, nil, err
	}
	lists, failed := source.ReadRangeLists(ctx, src, caddy.DefaultStorage)
	return lists, failed, nil
}
func (s siteHandler) BlockClasses() []string { return s.h.BlockClasses }

// Prepare checks the settings as Provision does and builds the classifier
// and the engine, with the header rules Provision sets.
func (s siteHandler) Prepare(now func() time.Time) error {
	h := s.h
	set, err := h.checkConfig()
	if err != nil {
		return err
	}
	cfg := set.engine
	cfg.Now = now
	if h.classifier, err = uaclass.New(uaclass.Options{Extra: h.Bots, CacheBytes: -1}); err != nil {
		return fmt.Errorf("bots: %v", err)
	}
	if h.engine, err = enforce.New(cfg, nil); err != nil {
		return err
	}
	h.reader = &enforce.Reader{Classifier: h.classifier, Engine: h.engine, Canonical: h.Canonical != "off"}
	return nil
}

func (s siteHandler) Classify(ua string) uaclass.Result       { return s.h.classifier.Classify(ua) }
func (s siteHandler) Additions(r *policy.Robots) policy.Added { return s.h.additions(r) }

func (s siteHandler) Reader() *enforce.Reader { return s.h.reader }
