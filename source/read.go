package source

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/robotsguard/robotsguard/internal/readfile"
	"github.com/robotsguard/robotsguard/policy"
	"github.com/robotsguard/robotsguard/upstream"
)

// errChanging reports that the file changed while it was read.
var errChanging = errors.New("robots.txt changed while it was read")

// readRobots reads the start of the file that policy.ParseHead uses (the
// first policy.MaxSize+1 bytes; the rest of a larger file is never read),
// following symbolic links (Kubernetes ConfigMaps). Only a regular file is
// read: a FIFO or a device could block or never end. It returns
// errChanging, with what it read, when the file's size or time changed
// during the read.
func readRobots(path string) ([]byte, fileStamp, error) {
	// Refuse anything but a regular file before opening it: opening a FIFO
	// blocks until a writer comes.
	if st, err := os.Stat(path); err != nil {
		return nil, fileStamp{}, err
	} else if !st.Mode().IsRegular() {
		return nil, fileStamp{}, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fileStamp{}, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return nil, fileStamp{}, err
	}
	if !before.Mode().IsRegular() {
		return nil, fileStamp{}, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, policy.MaxSize+1))
	if err != nil {
		return nil, fileStamp{}, err
	}
	file := fileStamp{size: before.Size(), modTime: before.ModTime(), hash: sha256.Sum256(data), read: true}
	last := data
	if file.size > int64(len(data)) {
		// Only the last byte of the rest: whether the file ends a line.
		last = make([]byte, 1)
		if _, err := f.ReadAt(last, file.size-1); err != nil {
			last = nil
		}
	}
	file.endsLine = len(last) == 0 && file.size == 0 || len(last) > 0 && (last[len(last)-1] == '\n' || last[len(last)-1] == '\r')
	after, err := f.Stat()
	if err != nil {
		return nil, fileStamp{}, err
	}
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) || file.size <= policy.MaxSize && int64(len(data)) != file.size {
		return data, file, errChanging
	}
	return data, file, nil
}

// Read reads the site's robots.txt that a robots option names, once, as
// a Source reads it, for the commands that work without a running Caddy
// ("caddy robots check --config", the review tools): a file (its first
// policy.MaxSize+1 bytes, all that counts), or a URL fetched with the
// given Host and header fields, redirects and status classes as a Source
// follows them. It returns nil data and no error when the site has no
// rules: no robots option, or an application that answers 4xx (RFC 9309:
// unavailable). A missing or unreadable file, and a URL that cannot be
// fetched (5xx, timeout, connection error, redirect not followed), are
// errors: a running handler would keep the rules it had. from says where
// the file came from, for messages.
func Read(ctx context.Context, robots, host string, header map[string]string) (data []byte, from string, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	switch {
	case robots == "":
		return nil, "no robots option", nil
	case !upstream.IsURL(robots):
		data, _, err := readRobots(robots)
		if errors.Is(err, errChanging) {
			err = nil // what was read is what a handler would install at start
		}
		if err != nil {
			return nil, robots, fmt.Errorf("robots: %v", readfile.PathError(err))
		}
		return data, robots, nil
	}
	f, err := upstream.New(FetchOptions(robots, host, header))
	if err != nil {
		return nil, robots, fmt.Errorf("robots: %v", err)
	}
	res := f.Fetch(ctx, upstream.Validators{})
	from = f.URL() + " (" + res.Cause() + ")"
	switch {
	case res.Outcome == upstream.Fetched && res.Header.Get(ServedHeader) != "":
		return nil, from, fmt.Errorf("robots: %s: %v", f.URL(), ErrOwnFile)
	case res.Outcome == upstream.Fetched:
		return res.Body, from, nil
	case res.Outcome == upstream.Unavailable:
		return nil, from + ": no rules", nil
	}
	return nil, from, fmt.Errorf("robots: %s could not be fetched: %s", f.URL(), res.Cause())
}
