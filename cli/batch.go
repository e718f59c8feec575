package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// maxBatchLine bounds one line of "check --batch".
const maxBatchLine = 1 << 20

// batchError answers a batch line that could not be read.
type batchError struct {
	Error string `json:"error"`
}

// batch answers JSON Lines queries {"robots", "ua", "url"} in order;
// "robots" may be left out to use the site's file. A bad or over-long line
// gets an error object of its own and the run goes on.
func (ck *Checker) batch(in io.Reader, out io.Writer, siteRobots []byte) error {
	enc := json.NewEncoder(out)
	return eachLine(in, maxBatchLine, func(line []byte, tooLong bool) error {
		line = bytes.TrimSpace(line)
		if len(line) == 0 && !tooLong {
			return nil
		}
		var q struct {
			Robots *string `json:"robots"`
			UA     *string `json:"ua"`
			URL    *string `json:"url"`
		}
		var res any
		switch err := json.Unmarshal(line, &q); {
		case tooLong:
			res = batchError{fmt.Sprintf("line longer than %d bytes", maxBatchLine)}
		case err != nil:
			res = batchError{"invalid JSON: " + err.Error()}
		case q.UA == nil || q.URL == nil || q.Robots == nil && siteRobots == nil:
			res = batchError{`want an object with "robots", "ua" and "url"`}
		default:
			robots := siteRobots
			if q.Robots != nil {
				robots = []byte(*q.Robots)
			}
			r, err := ck.Check(robots, *q.UA, *q.URL)
			if err != nil {
				res = batchError{err.Error()}
			} else {
				res = r
			}
		}
		return enc.Encode(res)
	})
}

// eachLine calls fn for each line of in, without its line end. A line
// longer than max is not kept: fn gets it empty with tooLong set, and the
// reading goes on with the next line.
func eachLine(in io.Reader, max int, fn func(line []byte, tooLong bool) error) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var buf []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			buf = append(buf, chunk...)
			if len(bytes.TrimRight(buf, "\r\n")) > max {
				tooLong, buf = true, buf[:0]
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(chunk) > 0 || tooLong {
			if ferr := fn(bytes.TrimRight(buf, "\r\n"), tooLong); ferr != nil {
				return ferr
			}
		}
		buf, tooLong = buf[:0], false
		if err == io.EOF {
			return nil
		}
	}
}
