package review

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/robotsguard/robotsguard/uaclass"
)

// series counts requests per time step, class and outcome, in a ring of
// slots. Adding takes no lock: the first add of a new step marks its slot
// as being reset (a negative stamp), clears it, then stamps it; an add that
// finds the mark waits the few nanoseconds of the clearing, so that no
// count is lost to it.
type series struct {
	step   int64 // nanoseconds
	slots  int
	stamps []atomic.Int64  // the step each slot holds (step number + 1; 0: empty; negated while it is reset)
	counts []atomic.Uint32 // [slot][class][outcome]
	latest atomic.Int64    // the latest step number seen
}

func newSeries(step time.Duration, slots int) *series {
	return &series{
		step: int64(step), slots: slots,
		stamps: make([]atomic.Int64, slots),
		counts: make([]atomic.Uint32, slots*numClasses*int(numOutcomes)),
	}
}

func (s *series) add(t int64, c uaclass.Class, o Outcome) {
	if int(c) >= numClasses || o >= numOutcomes || t < 0 {
		return
	}
	n := t / s.step
	slot := int(n % int64(s.slots))
	stamp := &s.stamps[slot]
	for {
		old := stamp.Load()
		if old == n+1 {
			break
		}
		if old > n+1 || -old > n+1 {
			return // older than the ring holds
		}
		if old < 0 {
			runtime.Gosched() // another add is clearing the slot
			continue
		}
		if stamp.CompareAndSwap(old, -(n + 1)) {
			base := slot * numClasses * int(numOutcomes)
			for i := base; i < base+numClasses*int(numOutcomes); i++ {
				s.counts[i].Store(0)
			}
			stamp.Store(n + 1)
			break
		}
	}
	s.counts[(slot*numClasses+int(c))*int(numOutcomes)+int(o)].Add(1)
	for {
		l := s.latest.Load()
		if n <= l || s.latest.CompareAndSwap(l, n) {
			return
		}
	}
}

// view returns the ring's counts for the steps up to the one holding end,
// oldest first, per class and outcome; classes without a count are left
// out.
func (s *series) view(end time.Time) SeriesView {
	last := end.UnixNano() / s.step
	first := last - int64(s.slots) + 1
	v := SeriesView{Start: time.Unix(0, first*s.step).UTC(), Step: time.Duration(s.step).Seconds(), Points: s.slots, Classes: map[string]map[string][]uint32{}}
	for c := range numClasses {
		var arrays [numOutcomes][]uint32
		seen := false
		for n := first; n <= last; n++ {
			slot := int(((n % int64(s.slots)) + int64(s.slots)) % int64(s.slots))
			if n < 0 || s.stamps[slot].Load() != n+1 {
				continue
			}
			for o := range numOutcomes {
				x := s.counts[(slot*numClasses+c)*int(numOutcomes)+int(o)].Load()
				if x == 0 {
					continue
				}
				if arrays[o] == nil {
					arrays[o] = make([]uint32, s.slots)
				}
				arrays[o][n-first] = x
				seen = true
			}
		}
		if !seen {
			continue
		}
		m := map[string][]uint32{}
		for o := range numOutcomes {
			if arrays[o] != nil {
				m[o.String()] = arrays[o]
			}
		}
		v.Classes[uaclass.Class(c).String()] = m
	}
	return v
}
