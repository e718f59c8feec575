// Package readfile reads the files a configuration names (IP range lists,
// key sets, the site's robots.txt) with the checks they share: a regular
// file only, at most a given size, and errors that name the path once.
package readfile

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Bounded reads at most maxSize bytes of the regular file at path, so that
// a wrong path (a device, a FIFO, a huge file) cannot hang or exhaust the
// config load.
func Bounded(path string, maxSize int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, PathError(err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > maxSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSize)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, PathError(err)
	}
	defer f.Close()
	limit := maxSize
	if limit < math.MaxInt64 {
		limit++ // one byte more tells a file that grew after the Stat
	}
	data, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, PathError(err)
	}
	if int64(len(data)) > maxSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSize)
	}
	return data, nil
}

// PathError turns "open /x: no such file or directory" into
// "/x: no such file or directory".
func PathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}
