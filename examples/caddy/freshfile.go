package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/logging"
)

func init() {
	caddy.RegisterModule(FreshFile{})
}

// FreshFile is Caddy's file log writer (output file), but the file is
// emptied when this Caddy process first opens it: the demo's decision log
// (Caddyfile.example) begins afresh at every start, so that `caddy robots
// report` counts this run's decisions only, and a config reload keeps
// writing to it. It takes the options of output file. It is a module of
// this demo's Caddy only: elsewhere, write output file.
type FreshFile struct {
	logging.FileWriter
}

// CaddyModule returns the Caddy module information.
func (FreshFile) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "caddy.logging.writers.fresh_file",
		New: func() caddy.Module { return new(FreshFile) },
	}
}

// WriterKey names the writer in Caddy's pool of open writers, which keeps
// it open across config reloads.
func (f FreshFile) WriterKey() string { return "fresh_file:" + f.Filename }

// emptied holds the files this process has emptied.
var emptied sync.Map

// OpenWriter empties the file the first time this process opens it, then
// opens it as output file does.
func (f FreshFile) OpenWriter() (io.WriteCloser, error) {
	if _, done := emptied.LoadOrStore(f.Filename, true); !done {
		if err := os.Truncate(f.Filename, 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return f.FileWriter.OpenWriter()
}

// UnmarshalCaddyfile reads output fresh_file <path> [{ ... }], as output
// file.
func (f *FreshFile) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return f.FileWriter.UnmarshalCaddyfile(d)
}

// Interface guards.
var (
	_ caddy.Provisioner     = (*FreshFile)(nil)
	_ caddy.WriterOpener    = (*FreshFile)(nil)
	_ caddyfile.Unmarshaler = (*FreshFile)(nil)
)
