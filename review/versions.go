package review

import (
	"sync"
	"sync/atomic"
)

// versions are the robots.txt versions that violations were judged
// against, oldest first, with their text while it fits the bounds.
type versions struct {
	mu    sync.Mutex
	list  []*version
	bytes int
	last  atomic.Pointer[version]
}

type version struct {
	id          string
	text        []byte // nil once dropped for room
	first       int64
	last        atomic.Int64
	violations  atomic.Uint64
	robotsReads atomic.Uint64
}

// note records a violation judged against version id at t, or a read of
// it; text is kept the first time.
func (vs *versions) note(id string, text []byte, t int64, violation bool) {
	v := vs.last.Load()
	if v == nil || v.id != id {
		v = vs.find(id, text, t)
	}
	if v.last.Load() < t {
		v.last.Store(t)
	}
	if violation {
		v.violations.Add(1)
	} else {
		v.robotsReads.Add(1)
	}
}

func (vs *versions) find(id string, text []byte, t int64) *version {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	for _, v := range vs.list {
		if v.id == id {
			vs.last.Store(v)
			return v
		}
	}
	v := &version{id: id, first: t}
	if len(text) <= MaxVersionBytes {
		v.text = text
		vs.bytes += len(text)
	}
	v.last.Store(t)
	vs.list = append(vs.list, v)
	// Drop the oldest versions, then the oldest texts, to stay in bounds.
	for len(vs.list) > MaxVersions {
		vs.bytes -= len(vs.list[0].text)
		vs.list = vs.list[1:]
	}
	for i := 0; vs.bytes > MaxVersionBytes && i < len(vs.list)-1; i++ {
		vs.bytes -= len(vs.list[i].text)
		vs.list[i].text = nil
	}
	vs.last.Store(v)
	return v
}

// text returns the text of version id, if it is kept.
func (vs *versions) text(id string) ([]byte, bool) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	for _, v := range vs.list {
		if v.id == id && v.text != nil {
			return v.text, true
		}
	}
	return nil, false
}
